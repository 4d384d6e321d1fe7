/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The recovery copy: Argon2id (and, read only, scrypt) + AES-256-GCM round
 * trips and what must not open them; the typed form of recovery keys, its
 * typo check and its tolerance of spaces and case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "passphrase.h"
#include "recovery-key.h"
#include "recovery.h"

/* The smallest accepted cost: keeps the test fast, under valgrind too. */
static const struct ba_recovery_cost cheap = { .t_cost = 1, .m_cost = BA_ARGON2_MEMORY_MIN_KIB, .lanes = 2 };

static void secret_from(struct ba_secret *s, const void *data, size_t len) {
        assert_int_equal(ba_secret_new(s, 256), 0);
        memcpy(s->data, data, len);
        s->len = len;
}

static void test_key(struct ba_secret *key) {
        assert_int_equal(ba_secret_new(key, 32), 0);
        for (size_t i = 0; i < 32; i++)
                key->data[i] = (uint8_t) (i * 7 + 1);
        key->len = 32;
}

static void sealed(struct ba_recovery_record *rec, struct ba_secret *key, uint8_t kind, const char *pass_text) {
        struct ba_secret pass;

        test_key(key);
        secret_from(&pass, pass_text, strlen(pass_text));
        assert_int_equal(ba_recovery_seal(key, &pass, kind, &cheap, "btrfs:root", rec), 0);
        ba_secret_free(&pass);
}

static int try_open(const struct ba_recovery_record *rec, const char *pass_text, const char *desc,
                    const struct ba_secret *want) {
        struct ba_secret pass, got = { 0 };
        int r;

        secret_from(&pass, pass_text, strlen(pass_text));
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
        sealed(&rec, &key, BA_RECOVERY_KIND_PASSPHRASE, "correct horse");
        assert_int_equal(rec.version, 2);
        assert_int_equal(rec.kind, BA_RECOVERY_KIND_PASSPHRASE);
        assert_int_equal(rec.kdf, BA_RECOVERY_KDF_ARGON2ID);
        assert_int_equal(rec.m_cost, BA_ARGON2_MEMORY_MIN_KIB);
        assert_int_equal(rec.aead, BA_RECOVERY_AEAD_AES256GCM);
        assert_int_equal(rec.ct_len, 32);
        assert_int_equal(ba_recovery_record_check(&rec, err, sizeof(err)), 0);
        assert_memory_not_equal(rec.ct, key.data, 32); /* the ciphertext is not the key */
        assert_int_equal(try_open(&rec, "correct horse", "btrfs:root", &key), 0);
        ba_secret_free(&key);
}

static void test_refusals(void **state) {
        struct ba_recovery_record rec, bad;
        struct ba_secret key;

        (void) state;
        sealed(&rec, &key, BA_RECOVERY_KIND_PASSPHRASE, "correct horse");
        assert_int_equal(try_open(&rec, "correct hors", "btrfs:root", &key), -EACCES);
        assert_int_equal(try_open(&rec, "correct horse ", "btrfs:root", &key), -EACCES);
        /* Bound to the key's name: moved to another key file it does not open. */
        assert_int_equal(try_open(&rec, "correct horse", "btrfs:home", &key), -EACCES);
        /* Any change of salt, nonce, tag, ciphertext, kind or cost. */
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
        bad.kind = BA_RECOVERY_KIND_KEY;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.t_cost = 2;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.lanes = 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EACCES);
        /* Out of bounds: refused before the KDF runs. */
        bad = rec;
        bad.m_cost = BA_ARGON2_MEMORY_MAX_KIB + 1;
        assert_int_equal(try_open(&bad, "correct horse", "btrfs:root", &key), -EINVAL);
        ba_secret_free(&key);
}

/* Version 1 (scrypt) records, as enrolled machines have them, keep opening. */
static void test_scrypt_record(void **state) {
        struct ba_recovery_record rec = { .version = 1, .kind = BA_RECOVERY_KIND_PASSPHRASE,
                                          .kdf = BA_RECOVERY_KDF_SCRYPT, .log_n = 10, .r = 8, .p = 1 }, bad;
        struct ba_secret key, pass;

        (void) state;
        test_key(&key);
        secret_from(&pass, "old pass", 8);
        assert_int_equal(ba_recovery_seal_record(&key, &pass, "btrfs:root", &rec), 0);
        ba_secret_free(&pass);
        assert_int_equal(try_open(&rec, "old pass", "btrfs:root", &key), 0);
        assert_int_equal(try_open(&rec, "old pas", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.log_n = 11;
        assert_int_equal(try_open(&bad, "old pass", "btrfs:root", &key), -EACCES);
        bad = rec;
        bad.log_n = BA_RECOVERY_LOG_N_MAX + 1;
        assert_int_equal(try_open(&bad, "old pass", "btrfs:root", &key), -EINVAL);
        ba_secret_free(&key);
}

/* Two seals of the same key and passphrase share nothing but their parameters. */
static void test_fresh_salt_and_nonce(void **state) {
        struct ba_recovery_record a, b;
        struct ba_secret k1, k2;

        (void) state;
        sealed(&a, &k1, BA_RECOVERY_KIND_PASSPHRASE, "pw");
        sealed(&b, &k2, BA_RECOVERY_KIND_PASSPHRASE, "pw");
        assert_memory_not_equal(a.salt, b.salt, sizeof(a.salt));
        assert_memory_not_equal(a.nonce, b.nonce, sizeof(a.nonce));
        assert_memory_not_equal(a.ct, b.ct, a.ct_len);
        ba_secret_free(&k1);
        ba_secret_free(&k2);
}

static void test_bad_parameters(void **state) {
        struct ba_recovery_cost big = cheap;
        struct ba_recovery_record rec;
        struct ba_secret key, pass;

        (void) state;
        secret_from(&key, "k", 1);
        secret_from(&pass, "pw", 2);
        big.m_cost = BA_ARGON2_MEMORY_MAX_KIB + 1;
        assert_int_equal(ba_recovery_seal(&key, &pass, BA_RECOVERY_KIND_PASSPHRASE, &big, "btrfs:x", &rec), -EINVAL);
        big = cheap;
        big.t_cost = BA_ARGON2_TIME_MAX + 1;
        assert_int_equal(ba_recovery_seal(&key, &pass, BA_RECOVERY_KIND_PASSPHRASE, &big, "btrfs:x", &rec), -EINVAL);
        assert_int_equal(ba_recovery_seal(&key, &pass, 3, &cheap, "btrfs:x", &rec), -EINVAL);
        key.len = 0;
        assert_int_equal(ba_recovery_seal(&key, &pass, BA_RECOVERY_KIND_PASSPHRASE, &cheap, "btrfs:x", &rec), -EINVAL);
        ba_secret_free(&key);
        ba_secret_free(&pass);
}

/* The defaults: a recovery key is cheap, a passphrase dear, both within the bounds. */
static void test_default_costs(void **state) {
        struct ba_recovery_cost k, p;

        (void) state;
        ba_recovery_default_cost(BA_RECOVERY_KIND_KEY, &k);
        ba_recovery_default_cost(BA_RECOVERY_KIND_PASSPHRASE, &p);
        assert_true(k.m_cost >= BA_ARGON2_MEMORY_MIN_KIB && k.m_cost <= BA_ARGON2_MEMORY_MAX_KIB);
        assert_true(p.m_cost >= BA_ARGON2_PASSPHRASE_MEMORY_FLOOR_KIB && p.m_cost <= BA_ARGON2_MEMORY_MAX_KIB);
        assert_true((uint64_t) p.m_cost * p.t_cost > (uint64_t) k.m_cost * k.t_cost);
        assert_int_equal(k.lanes, BA_ARGON2_LANES);
}

/* ---- the typed form ------------------------------------------------------ */

static void raw_pattern(uint8_t raw[BA_RECOVERY_KEY_SIZE], uint8_t seed) {
        for (unsigned i = 0; i < BA_RECOVERY_KEY_SIZE; i++)
                raw[i] = (uint8_t) (seed + i * 37);
}

static int parse_text(const char *text, uint8_t raw[BA_RECOVERY_KEY_SIZE], struct ba_recovery_key_typo *typo) {
        return ba_recovery_key_parse(text, strlen(text), raw, typo);
}

static void test_key_format(void **state) {
        char text[BA_RECOVERY_KEY_TEXT_SIZE];
        uint8_t raw[BA_RECOVERY_KEY_SIZE], back[BA_RECOVERY_KEY_SIZE];
        struct ba_recovery_key_typo typo;

        (void) state;
        for (unsigned seed = 0; seed < 64; seed++) {
                raw_pattern(raw, (uint8_t) (seed * 5));
                ba_recovery_key_format(raw, text);
                assert_int_equal(strlen(text), 9 * 8 + 8);
                for (unsigned i = 0; i < strlen(text); i++)
                        if (i % 9 == 8)
                                assert_int_equal(text[i], '-');
                        else
                                assert_non_null(strchr("cbdefghijklnrtuv", text[i]));
                assert_int_equal(parse_text(text, back, &typo), 0);
                assert_memory_equal(back, raw, sizeof(raw));
        }
        /* Known answer: all zero bytes are all 'c'; the check of an all-zero group is zero too. */
        memset(raw, 0, sizeof(raw));
        ba_recovery_key_format(raw, text);
        assert_string_equal(text, "cccccccc-cccccccc-cccccccc-cccccccc-cccccccc-cccccccc-cccccccc-cccccccc-cccccccc");
}

/* Upper case, spaces for dashes, spaces around and inside groups, no separators at all. */
static void test_key_tolerance(void **state) {
        char text[BA_RECOVERY_KEY_TEXT_SIZE], typed[256];
        uint8_t raw[BA_RECOVERY_KEY_SIZE], back[BA_RECOVERY_KEY_SIZE];
        struct ba_recovery_key_typo typo;
        size_t n = 0;

        (void) state;
        raw_pattern(raw, 9);
        ba_recovery_key_format(raw, text);
        for (size_t i = 0; text[i]; i++)
                typed[n++] = text[i] == '-' ? ' ' : (char) (i % 2 ? text[i] - 'a' + 'A' : text[i]);
        typed[n] = '\0';
        assert_int_equal(parse_text(typed, back, &typo), 0);
        assert_memory_equal(back, raw, sizeof(raw));
        snprintf(typed, sizeof(typed), "  %.4s %s\t\n", text, text + 4);
        assert_int_equal(parse_text(typed, back, &typo), 0);
        assert_memory_equal(back, raw, sizeof(raw));
        n = 0;
        for (size_t i = 0; text[i]; i++)
                if (text[i] != '-')
                        typed[n++] = text[i];
        typed[n] = '\0';
        assert_int_equal(parse_text(typed, back, &typo), 0);
        assert_memory_equal(back, raw, sizeof(raw));
        snprintf(typed, sizeof(typed), "%s", text);
        typed[8] = typed[17] = ' ';
        memmove(typed + 27, typed + 26, strlen(typed + 26) + 1);
        typed[26] = '-'; /* "--" between groups 3 and 4 */
        assert_int_equal(parse_text(typed, back, &typo), 0);
        assert_memory_equal(back, raw, sizeof(raw));
}

static char other_modhex(char c, unsigned k) {
        static const char alphabet[] = "cbdefghijklnrtuv";
        const char *p = strchr(alphabet, c);

        return alphabet[((unsigned) (p - alphabet) + 1 + k % 15) % 16];
}

/* Every single substitution, anywhere, is caught and named by its group, before anything else. */
static void test_key_substitutions(void **state) {
        char text[BA_RECOVERY_KEY_TEXT_SIZE], typed[BA_RECOVERY_KEY_TEXT_SIZE];
        uint8_t raw[BA_RECOVERY_KEY_SIZE], back[BA_RECOVERY_KEY_SIZE];
        struct ba_recovery_key_typo typo;

        (void) state;
        raw_pattern(raw, 77);
        ba_recovery_key_format(raw, text);
        for (unsigned pos = 0; pos < strlen(text); pos++) {
                unsigned group = pos / 9 + 1, in_group = pos % 9 + 1;

                if (text[pos] == '-')
                        continue;
                for (unsigned k = 0; k < 15; k++) {
                        memcpy(typed, text, sizeof(text));
                        typed[pos] = other_modhex(text[pos], k);
                        assert_int_equal(parse_text(typed, back, &typo), -EINVAL);
                        assert_int_equal(typo.problem, BA_RK_CHECK);
                        /* A typo in the check group points at the group its character checks. */
                        assert_int_equal(typo.group, group <= 8 ? group : in_group);
                        assert_memory_equal(back, (uint8_t[BA_RECOVERY_KEY_SIZE]) { 0 }, sizeof(back));
                }
        }
}

/* Two neighbours swapped inside a group are caught too (when they differ). */
static void test_key_transpositions(void **state) {
        char text[BA_RECOVERY_KEY_TEXT_SIZE], typed[BA_RECOVERY_KEY_TEXT_SIZE];
        uint8_t raw[BA_RECOVERY_KEY_SIZE], back[BA_RECOVERY_KEY_SIZE];
        struct ba_recovery_key_typo typo;
        unsigned tested = 0;

        (void) state;
        for (unsigned seed = 0; seed < 8; seed++) {
                raw_pattern(raw, (uint8_t) (seed * 31 + 3));
                ba_recovery_key_format(raw, text);
                for (unsigned pos = 0; pos + 1 < 8 * 9; pos++) {
                        if (pos % 9 >= 7 || text[pos] == text[pos + 1])
                                continue;
                        memcpy(typed, text, sizeof(text));
                        typed[pos] = text[pos + 1];
                        typed[pos + 1] = text[pos];
                        assert_int_equal(parse_text(typed, back, &typo), -EINVAL);
                        assert_int_equal(typo.problem, BA_RK_CHECK);
                        assert_int_equal(typo.group, pos / 9 + 1);
                        tested++;
                }
        }
        assert_true(tested > 300);
}

static void expect_typo(const char *typed, enum ba_recovery_key_problem problem, unsigned group, const char *needle) {
        uint8_t back[BA_RECOVERY_KEY_SIZE];
        struct ba_recovery_key_typo typo;
        char why[200];

        assert_int_equal(parse_text(typed, back, &typo), -EINVAL);
        assert_int_equal(typo.problem, problem);
        assert_int_equal(typo.group, group);
        ba_recovery_key_typo_text(&typo, why, sizeof(why));
        if (!strstr(why, needle))
                fail_msg("'%s' does not say '%s'", why, needle);
}

static void test_key_shapes(void **state) {
        char text[BA_RECOVERY_KEY_TEXT_SIZE], typed[256];
        uint8_t raw[BA_RECOVERY_KEY_SIZE];

        (void) state;
        raw_pattern(raw, 1);
        ba_recovery_key_format(raw, text);
        snprintf(typed, sizeof(typed), "%s", text);
        typed[20] = 'a'; /* not modhex, in group 3 */
        expect_typo(typed, BA_RK_CHARACTER, 3, "typo in group 3");
        snprintf(typed, sizeof(typed), "%s", text);
        memmove(typed + 30, typed + 31, strlen(typed + 31) + 1); /* group 4 one short */
        expect_typo(typed, BA_RK_GROUP_LEN, 4, "typo in group 4: 7 characters");
        snprintf(typed, sizeof(typed), "%.71s", text); /* the check group left out */
        expect_typo(typed, BA_RK_NO_CHECK, 9, "lacks its last group");
        snprintf(typed, sizeof(typed), "%sc", text);
        expect_typo(typed, BA_RK_GROUP_LEN, 9, "typo in group 9: 9 characters");
        snprintf(typed, sizeof(typed), "%s-cccccccc", text);
        expect_typo(typed, BA_RK_LENGTH, 0, "80 characters, not 72");
        expect_typo("", BA_RK_LENGTH, 0, "0 characters");
        expect_typo("correct horse battery staple", BA_RK_CHARACTER, 1, "typo in group 1");
}

/* ---- what the KDF takes from what was typed ------------------------------- */

static char *log_buf;
static size_t log_len;
static FILE *log_f;

static void test_recovery_input(void **state) {
        struct ba_recovery_record rec = { .version = 2, .kind = BA_RECOVERY_KIND_KEY };
        char text[BA_RECOVERY_KEY_TEXT_SIZE];
        uint8_t raw[BA_RECOVERY_KEY_SIZE];
        struct ba_secret typed, input = { 0 };

        (void) state;
        log_f = open_memstream(&log_buf, &log_len);
        log_set_stream(log_f);
        raw_pattern(raw, 200);
        ba_recovery_key_format(raw, text);
        secret_from(&typed, text, strlen(text));
        assert_int_equal(ba_recovery_input(&rec, &typed, "btrfs:root", &input), 0);
        assert_int_equal(input.len, BA_RECOVERY_KEY_SIZE);
        assert_memory_equal(input.data, raw, sizeof(raw));
        ba_secret_free(&input);
        typed.data[12] = other_modhex((char) typed.data[12], 0); /* group 2 */
        assert_int_equal(ba_recovery_input(&rec, &typed, "btrfs:root", &input), BA_EXIT_RECOVERY_KEY_TYPO);
        assert_null(input.data);
        /* A passphrase goes to the KDF as typed. */
        rec.kind = BA_RECOVERY_KIND_PASSPHRASE;
        assert_int_equal(ba_recovery_input(&rec, &typed, "btrfs:root", &input), 0);
        assert_int_equal(input.len, typed.len);
        assert_memory_equal(input.data, typed.data, typed.len);
        ba_secret_free(&input);
        ba_secret_free(&typed);
        fflush(log_f);
        assert_non_null(strstr(log_buf, "For btrfs:root, the recovery key has a typo in group 2"));
        assert_non_null(strstr(log_buf, "nothing was tried with it"));
        assert_null(strstr(log_buf, text)); /* the key itself is never logged */
        log_set_stream(NULL);
        fclose(log_f);
        free(log_buf);
}

/* A recovery key round trip as enroll and load do it: raw bytes sealed, the typed form opens. */
static void test_recovery_key_copy(void **state) {
        struct ba_recovery_record rec;
        char text[BA_RECOVERY_KEY_TEXT_SIZE];
        struct ba_secret key, raw, typed, input = { 0 }, got = { 0 };

        (void) state;
        test_key(&key);
        assert_int_equal(ba_secret_new(&raw, BA_RECOVERY_KEY_SIZE), 0);
        assert_int_equal(ba_random_bytes(raw.data, BA_RECOVERY_KEY_SIZE), 0);
        raw.len = BA_RECOVERY_KEY_SIZE;
        assert_int_equal(ba_recovery_seal(&key, &raw, BA_RECOVERY_KIND_KEY, &cheap, "btrfs:root", &rec), 0);
        ba_recovery_key_format(raw.data, text);
        for (char *c = text; *c; c++)
                *c = *c == '-' ? ' ' : (char) (*c - 'a' + 'A');
        secret_from(&typed, text, strlen(text));
        assert_int_equal(ba_recovery_input(&rec, &typed, "btrfs:root", &input), 0);
        assert_int_equal(ba_recovery_open(&rec, &input, "btrfs:root", &got), 0);
        assert_memory_equal(got.data, key.data, key.len);
        ba_secret_free(&got);
        ba_secret_free(&input);
        ba_secret_free(&typed);
        ba_secret_free(&raw);
        ba_secret_free(&key);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_scrypt_record),
                cmocka_unit_test(test_fresh_salt_and_nonce),
                cmocka_unit_test(test_bad_parameters),
                cmocka_unit_test(test_default_costs),
                cmocka_unit_test(test_key_format),
                cmocka_unit_test(test_key_tolerance),
                cmocka_unit_test(test_key_substitutions),
                cmocka_unit_test(test_key_transpositions),
                cmocka_unit_test(test_key_shapes),
                cmocka_unit_test(test_recovery_input),
                cmocka_unit_test(test_recovery_key_copy),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
