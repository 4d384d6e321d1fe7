/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Key-file writer and strict parser: round trips, and every way a file can be cut or damaged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "fileio.h"
#include "fixture.h"
#include "keyfile.h"

#define MAX_RECORDS 32

struct rec {
        uint16_t type;
        uint32_t len;
        const uint8_t *val;
};

static char err[256];

static int parse(const uint8_t *buf, size_t len, struct ba_keyfile *kf) {
        err[0] = '\0';
        return ba_keyfile_parse(buf, len, kf, err, sizeof(err));
}

static uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* Record offsets of a well-formed file. */
static size_t split(const uint8_t *buf, size_t len, struct rec *out, size_t *offsets) {
        size_t off = BA_KEYFILE_HEADER_SIZE, n = 0, end = len - BA_KEYFILE_TRAILER_SIZE;

        while (off < end) {
                assert_true(n < MAX_RECORDS);
                out[n].type = (uint16_t) (buf[off] | buf[off + 1] << 8);
                out[n].len = le32(buf + off + 2);
                out[n].val = buf + off + BA_KEYFILE_RECORD_HEADER_SIZE;
                if (offsets)
                        offsets[n] = off;
                off += BA_KEYFILE_RECORD_HEADER_SIZE + out[n].len;
                n++;
        }
        assert_int_equal(off, end);
        return n;
}

static uint8_t *build(const struct rec *recs, size_t n, size_t *len) {
        size_t total = BA_KEYFILE_HEADER_SIZE + BA_KEYFILE_TRAILER_SIZE, off = BA_KEYFILE_HEADER_SIZE;
        uint8_t *buf;

        for (size_t i = 0; i < n; i++)
                total += BA_KEYFILE_RECORD_HEADER_SIZE + recs[i].len;
        buf = calloc(1, total);
        assert_non_null(buf);
        memcpy(buf, BA_KEYFILE_MAGIC, BA_KEYFILE_MAGIC_SIZE);
        buf[8] = BA_KEYFILE_VERSION;
        for (size_t i = 0; i < n; i++) {
                buf[off] = (uint8_t) recs[i].type;
                buf[off + 1] = (uint8_t) (recs[i].type >> 8);
                put32(buf + off + 2, recs[i].len);
                if (recs[i].len)
                        memcpy(buf + off + BA_KEYFILE_RECORD_HEADER_SIZE, recs[i].val, recs[i].len);
                off += BA_KEYFILE_RECORD_HEADER_SIZE + recs[i].len;
        }
        ba_fixture_refix(buf, total);
        *len = total;
        return buf;
}

static void assert_err_contains(const char *needle) {
        if (!strstr(err, needle))
                fail_msg("error message \"%s\" does not mention \"%s\"", err, needle);
}

static void assert_same_marshalled_public(const TPM2B_PUBLIC *a, const TPM2B_PUBLIC *b) {
        uint8_t x[sizeof(TPM2B_PUBLIC)], y[sizeof(TPM2B_PUBLIC)];
        size_t xl = 0, yl = 0;

        assert_int_equal(Tss2_MU_TPM2B_PUBLIC_Marshal(a, x, sizeof(x), &xl), TSS2_RC_SUCCESS);
        assert_int_equal(Tss2_MU_TPM2B_PUBLIC_Marshal(b, y, sizeof(y), &yl), TSS2_RC_SUCCESS);
        assert_int_equal(xl, yl);
        assert_memory_equal(x, y, xl);
}

static void assert_keyfiles_equal(const struct ba_keyfile *a, const struct ba_keyfile *b) {
        assert_string_equal(a->description, b->description);
        assert_int_equal(a->has_fs_uuid, b->has_fs_uuid);
        assert_memory_equal(a->fs_uuid, b->fs_uuid, BA_UUID_SIZE);
        assert_int_equal(a->pcr_bank, b->pcr_bank);
        assert_int_equal(a->pcr_mask, b->pcr_mask);
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (a->pcr_mask & (1u << i))
                        assert_memory_equal(a->pcr_values[i], b->pcr_values[i], BA_DIGEST_SIZE);
        assert_int_equal(a->lock_pcr, b->lock_pcr);
        assert_int_equal(a->pin, b->pin);
        assert_memory_equal(a->policy_digest, b->policy_digest, BA_DIGEST_SIZE);
        assert_int_equal(a->parent_name.size, b->parent_name.size);
        assert_memory_equal(a->parent_name.name, b->parent_name.name, a->parent_name.size);
        assert_same_marshalled_public(&a->public, &b->public);
        assert_int_equal(a->private.size, b->private.size);
        assert_memory_equal(a->private.buffer, b->private.buffer, a->private.size);
        assert_int_equal(a->signed_pcrs.pcr_mask, b->signed_pcrs.pcr_mask);
        assert_int_equal(a->signed_pcrs.key_name.size, b->signed_pcrs.key_name.size);
        assert_memory_equal(a->signed_pcrs.key_name.name, b->signed_pcrs.key_name.name, a->signed_pcrs.key_name.size);
        assert_int_equal(a->has_created, b->has_created);
        assert_int_equal(a->created, b->created);
        assert_int_equal(a->has_recovery, b->has_recovery);
        if (a->has_recovery)
                assert_memory_equal(&a->recovery, &b->recovery, sizeof(a->recovery));
}

static void test_round_trip(void **state) {
        (void) state;
        for (int v = 0; v < BA_FIXTURE_COUNT; v++) {
                struct ba_keyfile in, out;
                uint8_t *buf, *again = NULL;
                size_t len, again_len = 0;

                ba_fixture_keyfile(&in, v);
                buf = ba_fixture_bytes(v, &len);
                assert_int_equal(parse(buf, len, &out), 0);
                assert_keyfiles_equal(&in, &out);
                /* The writer is canonical: what it reads back it writes byte for byte. */
                assert_int_equal(ba_keyfile_serialize(&out, &again, &again_len, err, sizeof(err)), 0);
                assert_int_equal(again_len, len);
                assert_memory_equal(again, buf, len);
                free(again);
                free(buf);
        }
}

static void test_every_truncation(void **state) {
        (void) state;
        for (int v = 0; v < BA_FIXTURE_COUNT; v++) {
                size_t len;
                uint8_t *buf = ba_fixture_bytes(v, &len);
                struct ba_keyfile kf;

                for (size_t k = 0; k < len; k++) {
                        uint8_t *cut = malloc(k ? k : 1);

                        memcpy(cut, buf, k);
                        assert_int_not_equal(parse(cut, k, &kf), 0);
                        /* Also with the header length and checksum forged to fit: the record walk must catch it. */
                        ba_fixture_refix(cut, k);
                        /* Cutting exactly an optional trailing record (creation time, recovery copy) leaves a
                         * valid file. */
                        if (parse(cut, k, &kf) == 0 &&
                            !(v == BA_FIXTURE_LOCK_UUID && len - k == BA_KEYFILE_RECORD_HEADER_SIZE + 8) &&
                            !(v == BA_FIXTURE_RECOVERY &&
                              len - k == BA_KEYFILE_RECORD_HEADER_SIZE + BA_RECOVERY_FIXED_SIZE + 32) &&
                            !(v == BA_FIXTURE_RECOVERY_KEY &&
                              len - k == BA_KEYFILE_RECORD_HEADER_SIZE + BA_RECOVERY_V2_FIXED_SIZE + 32))
                                fail_msg("variant %d truncated to %zu bytes (refixed) parses", v, k);
                        free(cut);
                }
                free(buf);
        }
}

static const int64_t length_deltas[] = { -1, 1, -6, 6, 31, -32, 0x7fffffff, 0xffffffff };

static void test_every_length_field(void **state) {
        (void) state;
        for (int v = 0; v < BA_FIXTURE_COUNT; v++) {
                size_t len, offsets[MAX_RECORDS], n;
                uint8_t *buf = ba_fixture_bytes(v, &len);
                struct rec recs[MAX_RECORDS];
                struct ba_keyfile kf;

                n = split(buf, len, recs, offsets);
                for (size_t i = 0; i < n; i++)
                        for (size_t d = 0; d < sizeof(length_deltas) / sizeof(length_deltas[0]); d++) {
                                uint8_t *bad = malloc(len);

                                memcpy(bad, buf, len);
                                put32(bad + offsets[i] + 2, (uint32_t) (recs[i].len + length_deltas[d]));
                                ba_fixture_refix(bad, len);
                                if (parse(bad, len, &kf) == 0)
                                        fail_msg("variant %d record %zu with length %u+%lld parses", v, i,
                                                 recs[i].len, (long long) length_deltas[d]);
                                free(bad);
                        }
                free(buf);
        }
}

static void test_header_length_field(void **state) {
        static const int64_t deltas[] = { -1, 1, -100000, 0x7fffffff, 0xffffffff, 65536 };
        size_t len;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_PCR7, &len);
        struct ba_keyfile kf;
        uint32_t body = le32(buf + 12);

        (void) state;
        for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
                put32(buf + 12, (uint32_t) (body + deltas[d]));
                assert_int_equal(parse(buf, len, &kf), -EBADMSG);
        }
        free(buf);
}

static void test_bad_magic(void **state) {
        size_t len;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_PCR7, &len);
        struct ba_keyfile kf;

        (void) state;
        for (size_t i = 0; i < BA_KEYFILE_MAGIC_SIZE; i++) {
                buf[i] ^= 0x20;
                assert_int_equal(parse(buf, len, &kf), -EBADMSG);
                assert_err_contains("bad magic");
                buf[i] ^= 0x20;
        }
        assert_int_equal(parse((const uint8_t *) "", 0, &kf), -EBADMSG);
        assert_int_equal(parse((const uint8_t *) "hello world, not a key file at all......", 40, &kf), -EBADMSG);
        free(buf);
}

static void test_unknown_versions(void **state) {
        static const uint16_t versions[] = { 0, 2, 3, 0x0100, 0xffff };
        size_t len;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_PCR7, &len);
        struct ba_keyfile kf;

        (void) state;
        for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
                buf[8] = (uint8_t) versions[i];
                buf[9] = (uint8_t) (versions[i] >> 8);
                ba_fixture_refix(buf, len);
                assert_int_equal(parse(buf, len, &kf), -EPROTONOSUPPORT);
                assert_err_contains("version");
        }
        /* Cut inside the header it is reported as truncated, whatever its version says. */
        assert_int_equal(parse(buf, 12, &kf), -EBADMSG);
        free(buf);
}

static void test_header_flags(void **state) {
        size_t len;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_PCR7, &len);
        struct ba_keyfile kf;

        (void) state;
        buf[10] = 1;
        ba_fixture_refix(buf, len);
        assert_int_equal(parse(buf, len, &kf), -EPROTONOSUPPORT);
        assert_err_contains("flags");
        free(buf);
}

static uint8_t *rebuilt_with(int variant, size_t *len, void (*edit)(struct rec *recs, size_t *n)) {
        size_t orig_len, n;
        uint8_t *orig = ba_fixture_bytes(variant, &orig_len), *out;
        struct rec recs[MAX_RECORDS + 2];

        n = split(orig, orig_len, recs, NULL);
        edit(recs, &n);
        out = build(recs, n, len);
        free(orig);
        return out;
}

static const uint8_t extra_value[4] = { 1, 2, 3, 4 };

/* Inserted in type order, so only its unknown type can be the reason for refusal. */
static void insert_critical(struct rec *recs, size_t *n) {
        size_t at = 0;

        while (at < *n && recs[at].type < 0x7000)
                at++;
        memmove(recs + at + 1, recs + at, (*n - at) * sizeof(*recs));
        recs[at] = (struct rec) { 0x7000, sizeof(extra_value), extra_value };
        (*n)++;
}

static void append_ignorable(struct rec *recs, size_t *n) {
        recs[(*n)++] = (struct rec) { 0x8fff, sizeof(extra_value), extra_value };
}

static void test_unknown_records(void **state) {
        struct ba_keyfile kf;
        uint8_t *buf;
        size_t len;

        (void) state;
        buf = rebuilt_with(BA_FIXTURE_LOCK_UUID, &len, insert_critical);
        assert_int_equal(parse(buf, len, &kf), -EPROTONOSUPPORT);
        assert_err_contains("unknown critical record type 0x7000");
        free(buf);
        buf = rebuilt_with(BA_FIXTURE_LOCK_UUID, &len, append_ignorable);
        assert_int_equal(parse(buf, len, &kf), 0);
        free(buf);
}

static void duplicate_first(struct rec *recs, size_t *n) {
        memmove(recs + 1, recs, *n * sizeof(*recs));
        (*n)++;
}

static void swap_first_two(struct rec *recs, size_t *n) {
        struct rec t = recs[0];

        (void) n;
        recs[0] = recs[1];
        recs[1] = t;
}

static void test_duplicate_and_order(void **state) {
        struct ba_keyfile kf;
        uint8_t *buf;
        size_t len;

        (void) state;
        buf = rebuilt_with(BA_FIXTURE_PCR7, &len, duplicate_first);
        assert_int_equal(parse(buf, len, &kf), -EBADMSG);
        assert_err_contains("duplicated or out of order");
        free(buf);
        buf = rebuilt_with(BA_FIXTURE_PCR7, &len, swap_first_two);
        assert_int_equal(parse(buf, len, &kf), -EBADMSG);
        free(buf);
}

static void test_missing_records(void **state) {
        size_t len, n;
        uint8_t *orig = ba_fixture_bytes(BA_FIXTURE_LOCK_UUID, &len);
        struct rec recs[MAX_RECORDS], fewer[MAX_RECORDS];
        struct ba_keyfile kf;

        (void) state;
        n = split(orig, len, recs, NULL);
        for (size_t skip = 0; skip < n; skip++) {
                size_t m = 0, blen;
                uint8_t *buf;
                int r;

                for (size_t i = 0; i < n; i++)
                        if (i != skip)
                                fewer[m++] = recs[i];
                buf = build(fewer, m, &blen);
                r = parse(buf, blen, &kf);
                /* Only the creation time is optional without consequence; the others are required or
                 * inconsistent without (lock PCR and UUID are bound to the policy/validation). */
                if (recs[skip].type == BA_REC_CREATED || recs[skip].type == BA_REC_FS_UUID ||
                    recs[skip].type == BA_REC_LOCK_PCR)
                        assert_int_equal(r, 0);
                else if (r == 0)
                        fail_msg("file without record 0x%04x parses", recs[skip].type);
                free(buf);
        }
        free(orig);
}

/* The recovery record is optional and skippable: dropping it leaves a file that loads (the TPM path). */
static void test_missing_recovery(void **state) {
        size_t len, n, m = 0, blen;
        uint8_t *orig = ba_fixture_bytes(BA_FIXTURE_RECOVERY, &len), *buf;
        struct rec recs[MAX_RECORDS], fewer[MAX_RECORDS];
        struct ba_keyfile kf;

        (void) state;
        n = split(orig, len, recs, NULL);
        for (size_t i = 0; i < n; i++)
                if (recs[i].type != BA_REC_RECOVERY)
                        fewer[m++] = recs[i];
        assert_int_equal(m, n - 1);
        buf = build(fewer, m, &blen);
        assert_int_equal(parse(buf, blen, &kf), 0);
        assert_false(kf.has_recovery);
        free(buf);
        free(orig);
}

static void expect_recovery_refused(void (*edit)(struct ba_recovery_record *rec), const char *needle) {
        struct ba_keyfile kf;
        uint8_t *buf = NULL;
        size_t len = 0;

        ba_fixture_keyfile(&kf, BA_FIXTURE_RECOVERY);
        edit(&kf.recovery);
        assert_int_equal(ba_keyfile_serialize(&kf, &buf, &len, err, sizeof(err)), -EINVAL);
        assert_err_contains(needle);
}

static void kdf_unknown(struct ba_recovery_record *r) { r->kdf = 2; }
static void log_n_low(struct ba_recovery_record *r) { r->log_n = BA_RECOVERY_LOG_N_MIN - 1; }
static void log_n_high(struct ba_recovery_record *r) { r->log_n = BA_RECOVERY_LOG_N_MAX + 1; }
static void r_zero(struct ba_recovery_record *r) { r->r = 0; }
static void p_high(struct ba_recovery_record *r) { r->p = BA_RECOVERY_P_MAX + 1; }
static void memory_high(struct ba_recovery_record *r) { r->log_n = 22; r->r = 32; }
static void aead_unknown(struct ba_recovery_record *r) { r->aead = 7; }
static void ct_empty(struct ba_recovery_record *r) { r->ct_len = 0; }

static void test_recovery_ranges(void **state) {
        (void) state;
        expect_recovery_refused(kdf_unknown, "key derivation");
        expect_recovery_refused(log_n_low, "scrypt N");
        expect_recovery_refused(log_n_high, "scrypt N");
        expect_recovery_refused(r_zero, "r or p");
        expect_recovery_refused(p_high, "r or p");
        expect_recovery_refused(memory_high, "1 GiB");
        expect_recovery_refused(aead_unknown, "cipher");
        expect_recovery_refused(ct_empty, "length");
}

/* The same ranges hold when parsing: a record written by hand with log2 N = 23 asks too much. */
static void test_recovery_parse_refused(void **state) {
        size_t len, offsets[MAX_RECORDS], n;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_RECOVERY, &len);
        struct rec recs[MAX_RECORDS];
        struct ba_keyfile kf;

        (void) state;
        n = split(buf, len, recs, offsets);
        assert_int_equal(recs[n - 1].type, BA_REC_RECOVERY);
        buf[offsets[n - 1] + BA_KEYFILE_RECORD_HEADER_SIZE + 1] = 23;
        ba_fixture_refix(buf, len);
        assert_int_equal(parse(buf, len, &kf), -BA_ERECOVERY_COST);
        assert_err_contains("scrypt N");
        free(buf);
}

/* One byte of the version-2 record changed (and the file's checksum forged to fit): refused as said. */
static void expect_v2_byte(size_t at, uint32_t value, int bytes, int code, const char *needle) {
        size_t len, offsets[MAX_RECORDS], n;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_RECOVERY_KEY, &len), *v;
        struct rec recs[MAX_RECORDS];
        struct ba_keyfile kf;

        n = split(buf, len, recs, offsets);
        assert_int_equal(recs[n - 1].type, BA_REC_RECOVERY_V2);
        v = buf + offsets[n - 1] + BA_KEYFILE_RECORD_HEADER_SIZE;
        for (int i = 0; i < bytes; i++)
                v[at + (size_t) i] = (uint8_t) (value >> (8 * i));
        ba_fixture_refix(buf, len);
        assert_int_equal(parse(buf, len, &kf), code);
        assert_err_contains(needle);
        free(buf);
}

static void test_recovery_v2_altered(void **state) {
        (void) state;
        expect_v2_byte(0, 7, 1, -BA_ERECOVERY_BAD, "unknown kind");
        expect_v2_byte(1, BA_RECOVERY_KDF_SCRYPT, 1, -BA_ERECOVERY_BAD, "key derivation");
        expect_v2_byte(2, 0, 4, -BA_ERECOVERY_BAD, "below the minimum");
        expect_v2_byte(2, BA_ARGON2_TIME_MAX + 1, 4, -BA_ERECOVERY_COST, "beyond the bound");
        expect_v2_byte(6, BA_ARGON2_MEMORY_MAX_KIB + 1, 4, -BA_ERECOVERY_COST, "memory cost is beyond the bound of 1 GiB");
        expect_v2_byte(6, 0xffffffffu, 4, -BA_ERECOVERY_COST, "memory cost");
        expect_v2_byte(6, 1024, 4, -BA_ERECOVERY_BAD, "below the minimum");
        expect_v2_byte(10, BA_ARGON2_LANES_MAX + 1, 4, -BA_ERECOVERY_COST, "lanes");
        expect_v2_byte(14 + BA_RECOVERY_SALT_SIZE, 9, 1, -BA_ERECOVERY_BAD, "cipher");
}

/* The version-2 record cut short at every length, the file framed around it again: a damaged recovery copy. */
static void test_recovery_v2_truncated(void **state) {
        size_t len, n, blen;
        uint8_t *orig = ba_fixture_bytes(BA_FIXTURE_RECOVERY_KEY, &len), *buf;
        struct rec recs[MAX_RECORDS];
        struct ba_keyfile kf;

        (void) state;
        n = split(orig, len, recs, NULL);
        for (uint32_t cut = 0; cut < BA_RECOVERY_V2_FIXED_SIZE + 1; cut++) {
                struct rec shorter[MAX_RECORDS];

                memcpy(shorter, recs, n * sizeof(recs[0]));
                shorter[n - 1].len = cut;
                buf = build(shorter, n, &blen);
                assert_int_equal(parse(buf, blen, &kf), -BA_ERECOVERY_BAD);
                assert_err_contains("recovery copy");
                free(buf);
        }
        free(orig);
}

/* A key file holds one recovery copy: version 1 and 2 side by side are refused. */
static void test_two_recoveries(void **state) {
        size_t l1, l2, n1, n2, blen, m = 0;
        uint8_t *f1 = ba_fixture_bytes(BA_FIXTURE_RECOVERY, &l1), *f2 = ba_fixture_bytes(BA_FIXTURE_RECOVERY_KEY, &l2);
        struct rec r1[MAX_RECORDS], r2[MAX_RECORDS], both[MAX_RECORDS];
        uint8_t *buf;
        struct ba_keyfile kf;

        (void) state;
        n1 = split(f1, l1, r1, NULL);
        n2 = split(f2, l2, r2, NULL);
        for (size_t i = 0; i < n1; i++)
                both[m++] = r1[i];
        both[m++] = r2[n2 - 1];
        buf = build(both, m, &blen);
        assert_int_equal(parse(buf, blen, &kf), -BA_ERECOVERY_BAD);
        assert_err_contains("second recovery copy");
        free(buf);
        free(f1);
        free(f2);
}

static void test_trailing_data(void **state) {
        size_t len;
        uint8_t *buf = ba_fixture_bytes(BA_FIXTURE_PCR7, &len), *longer = calloc(1, len + 7);
        struct ba_keyfile kf;

        (void) state;
        memcpy(longer, buf, len);
        assert_int_equal(parse(longer, len + 7, &kf), -EBADMSG);
        free(longer);
        free(buf);
}

static void test_every_byte_flip(void **state) {
        (void) state;
        for (int v = 0; v < BA_FIXTURE_COUNT; v++) {
                size_t len;
                uint8_t *buf = ba_fixture_bytes(v, &len), *bad = malloc(len);
                struct ba_keyfile kf;

                for (size_t i = 0; i < len; i++) {
                        memcpy(bad, buf, len);
                        bad[i] ^= 0xff;
                        /* The checksum catches every single-byte change... */
                        assert_int_not_equal(parse(bad, len, &kf), 0);
                        /* ...and once a forger fixes it up, whatever is accepted must be consistent enough
                         * to be written and read back unchanged. */
                        ba_fixture_refix(bad, len);
                        if (parse(bad, len, &kf) == 0) {
                                struct ba_keyfile back;
                                uint8_t *again = NULL;
                                size_t again_len = 0;

                                assert_int_equal(ba_keyfile_serialize(&kf, &again, &again_len, err, sizeof(err)), 0);
                                assert_int_equal(parse(again, again_len, &back), 0);
                                assert_keyfiles_equal(&kf, &back);
                                free(again);
                        }
                }
                free(bad);
                free(buf);
        }
}

static void expect_refused(struct ba_keyfile *kf, const char *needle) {
        uint8_t *buf = NULL;
        size_t len = 0;

        assert_int_equal(ba_keyfile_serialize(kf, &buf, &len, err, sizeof(err)), -EINVAL);
        assert_null(buf);
        assert_err_contains(needle);
}

static void test_inconsistent_refused(void **state) {
        struct ba_keyfile kf;

        (void) state;
        ba_fixture_keyfile(&kf, BA_FIXTURE_PCR7);
        kf.pcr_values[7][0] ^= 1;
        expect_refused(&kf, "policy digest");
        ba_fixture_keyfile(&kf, BA_FIXTURE_PCR7);
        kf.public.publicArea.objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
        expect_refused(&kf, "attributes");
        ba_fixture_keyfile(&kf, BA_FIXTURE_PCR7);
        snprintf(kf.description, sizeof(kf.description), "cryptsetup:x");
        expect_refused(&kf, "btrfs:NAME");
        ba_fixture_keyfile(&kf, BA_FIXTURE_PCR7);
        kf.lock_pcr = 15;
        expect_refused(&kf, "lock PCR");
        ba_fixture_keyfile(&kf, BA_FIXTURE_LOCK_UUID);
        kf.lock_pcr = 16;
        expect_refused(&kf, "lock PCR");
        ba_fixture_keyfile(&kf, BA_FIXTURE_MANY_PCRS);
        kf.lock_pcr = 17;
        expect_refused(&kf, "lock PCR");
        ba_fixture_keyfile(&kf, BA_FIXTURE_PIN_ONLY);
        kf.pin = false;
        expect_refused(&kf, "neither PCRs nor a PIN");
        ba_fixture_keyfile(&kf, BA_FIXTURE_PCR7);
        kf.pcr_bank = TPM2_ALG_SHA1;
        expect_refused(&kf, "sha256");
        ba_fixture_keyfile(&kf, BA_FIXTURE_PCR7);
        kf.parent_name.size = 33;
        expect_refused(&kf, "parent name");
        /* The signing key is part of the policy: another key's name does not match the sealed digest. */
        ba_fixture_keyfile(&kf, BA_FIXTURE_SIGNED);
        kf.signed_pcrs.key_name.name[5] ^= 1;
        expect_refused(&kf, "policy digest");
        ba_fixture_keyfile(&kf, BA_FIXTURE_SIGNED);
        kf.signed_pcrs.pcr_mask |= 1u << 7;
        expect_refused(&kf, "both sealed to a value and signed");
        ba_fixture_keyfile(&kf, BA_FIXTURE_SIGNED);
        kf.signed_pcrs.key_name.name[1] = 0x04;
        expect_refused(&kf, "sha256 TPM name");
        ba_fixture_keyfile(&kf, BA_FIXTURE_SIGNED);
        kf.pcr_mask = 0;
        kf.lock_pcr = -1;
        assert_int_equal(ba_policy_digest(0, kf.pcr_values, false, &kf.signed_pcrs, kf.policy_digest), 0);
        memcpy(kf.public.publicArea.authPolicy.buffer, kf.policy_digest, BA_DIGEST_SIZE);
        assert_int_equal(ba_keyfile_check(&kf, err, sizeof(err)), 0); /* signed PCRs alone are a policy */
}

/* The committed fuzz seeds must stay valid key files, or the fuzzer starts from nothing. */
static void test_seed_corpus(void **state) {
        const char *dir = getenv("BA_SEED_DIR");
        struct dirent *de;
        unsigned count = 0;
        DIR *d;

        (void) state;
        if (!dir)
                fail_msg("BA_SEED_DIR is not set: cannot check the seed corpus");
        d = opendir(dir);
        if (!d)
                fail_msg("cannot open seed corpus %s: %s", dir, strerror(errno));
        while ((de = readdir(d))) {
                char path[4096];
                uint8_t *buf = NULL;
                size_t len = 0;
                struct ba_keyfile kf;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                assert_int_equal(ba_read_file(path, BA_KEYFILE_MAX_SIZE, &buf, &len), 0);
                if (parse(buf, len, &kf) != 0)
                        fail_msg("seed %s does not parse: %s", path, err);
                free(buf);
                count++;
        }
        closedir(d);
        assert_true(count >= BA_FIXTURE_COUNT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_every_truncation),
                cmocka_unit_test(test_every_length_field),
                cmocka_unit_test(test_header_length_field),
                cmocka_unit_test(test_bad_magic),
                cmocka_unit_test(test_unknown_versions),
                cmocka_unit_test(test_header_flags),
                cmocka_unit_test(test_unknown_records),
                cmocka_unit_test(test_duplicate_and_order),
                cmocka_unit_test(test_missing_records),
                cmocka_unit_test(test_trailing_data),
                cmocka_unit_test(test_missing_recovery),
                cmocka_unit_test(test_recovery_ranges),
                cmocka_unit_test(test_recovery_parse_refused),
                cmocka_unit_test(test_recovery_v2_altered),
                cmocka_unit_test(test_recovery_v2_truncated),
                cmocka_unit_test(test_two_recoveries),
                cmocka_unit_test(test_every_byte_flip),
                cmocka_unit_test(test_inconsistent_refused),
                cmocka_unit_test(test_seed_corpus),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
