/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recovery copy's cryptography: scrypt + AES-256-GCM round trip, and what must not open it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "recovery.h"

#define LOG_N 10 /* the smallest accepted: keeps the test fast, under valgrind too */

static void secret_from(struct ba_secret *s, const char *text) {
        assert_int_equal(ba_secret_new(s, 256), 0);
        memcpy(s->data, text, strlen(text));
        s->len = strlen(text);
}

static void sealed(struct ba_recovery_record *rec, struct ba_secret *key, const char *pass_text) {
        struct ba_secret pass;

        assert_int_equal(ba_secret_new(key, 32), 0);
        for (size_t i = 0; i < 32; i++)
                key->data[i] = (uint8_t) (i * 7 + 1);
        key->len = 32;
        secret_from(&pass, pass_text);
        assert_int_equal(ba_recovery_seal(key, &pass, "btrfs:root", LOG_N, rec), 0);
        ba_secret_free(&pass);
}

static int try_open(const struct ba_recovery_record *rec, const char *pass_text, const char *desc,
                    const struct ba_secret *want) {
        struct ba_secret pass, got = { 0 };
        int r;

        secret_from(&pass, pass_text);
        r = ba_recovery_open(rec, &pass, desc, &got);
        ba_secret_free(&pass);
        if (r == 0) {
                assert_int_equal(got.len, want->len);
                assert_memory_equal(got.data, want->data, want->len);
        } else {
                assert_null(got.data);
        }
        ba_secret_free(&got);
        return r;
}

static void test_round_trip(void **state) {
        struct ba_recovery_record rec;
        struct ba_secret key;
        char err[128];

        (void) state;
        sealed(&rec, &key, "correct horse");
        assert_int_equal(rec.kdf, BA_RECOVERY_KDF_SCRYPT);
        assert_int_equal(rec.log_n, LOG_N);
        assert_int_equal(rec.aead, BA_RECOVERY_AEAD_AES256GCM);
        assert_int_equal(rec.ct_len, 32);
        assert_int_equal(ba_recovery_record_check(&rec, err, sizeof(err)), 0);
        /* The ciphertext is not the key. */
        assert_memory_not_equal(rec.ct, key.data, 32);
        assert_int_equal(try_open(&rec, "correct horse", "btrfs:root", &key), 0);
        ba_secret_free(&key);
}

static void test_refusals(void **state) {
        struct ba_recovery_record rec, bad;
        struct ba_secret key;

        (void) state;
        sealed(&rec, &key, "correct horse");
        assert_int_equal(try_open(&rec, "correct hors", "btrfs:root", &key), -EACCES);
        assert_int_equal(try_open(&rec, "correct horse ", "btrfs:root", &key), -EACCES);
        /* Bound to the key's name: moved to another key file it does not open. */
        assert_int_equal(try_open(&rec, "correct horse", "btrfs:home", &key), -EACCES);
        /* Any change of salt, nonce, tag, ciphertext or cost parameter. */
        bad = rec;
        bad.salt[0] ^= 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.nonce[11] ^= 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.tag[5] ^= 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.ct[31] ^= 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.log_n = LOG_N + 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        ba_secret_free(&key);
}

/* Two seals of the same key and passphrase share nothing but their parameters. */
static void test_fresh_salt_and_nonce(void **state) {
        struct ba_recovery_record a, b;
        struct ba_secret k1, k2;

        (void) state;
        sealed(&a, &k1, "pw");
        sealed(&b, &k2, "pw");
        assert_memory_not_equal(a.salt, b.salt, sizeof(a.salt));
        assert_memory_not_equal(a.nonce, b.nonce, sizeof(a.nonce));
        assert_memory_not_equal(a.ct, b.ct, a.ct_len);
        ba_secret_free(&k1);
        ba_secret_free(&k2);
}

static void test_bad_parameters(void **state) {
        struct ba_recovery_record rec;
        struct ba_secret key, pass;

        (void) state;
        secret_from(&key, "k");
        secret_from(&pass, "pw");
        assert_int_equal(ba_recovery_seal(&key, &pass, "btrfs:x", BA_RECOVERY_LOG_N_MIN - 1, &rec), -EINVAL);
        assert_int_equal(ba_recovery_seal(&key, &pass, "btrfs:x", BA_RECOVERY_LOG_N_MAX + 1, &rec), -EINVAL);
        key.len = 0;
        assert_int_equal(ba_recovery_seal(&key, &pass, "btrfs:x", LOG_N, &rec), -EINVAL);
        ba_secret_free(&key);
        ba_secret_free(&pass);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_fresh_salt_and_nonce),
                cmocka_unit_test(test_bad_parameters),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
