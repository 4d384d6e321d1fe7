/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small pure pieces: parsing helpers, policy arithmetic, superblock check, atomic files, PIN hashing, keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-file.h"
#include "crypto.h"
#include "fixture.h"
#include "fileio.h"
#include "raw-key.h"
#include "keyring.h"
#include "log.h"
#include "pin.h"
#include "policy.h"
#include "superblock.h"
#include "util.h"

static void test_hex_uuid(void **state) {
        uint8_t b[4], u[BA_UUID_SIZE];
        char s[BA_UUID_STRING_MAX], h[9];

        (void) state;
        assert_int_equal(ba_hex_decode("00aBcDff", b, 4), 0);
        assert_int_equal(b[1], 0xab);
        ba_hex_encode(b, 4, h);
        assert_string_equal(h, "00abcdff");
        assert_int_equal(ba_hex_decode("00abcdf", b, 4), -EINVAL);
        assert_int_equal(ba_hex_decode("00abcdfg", b, 4), -EINVAL);
        assert_int_equal(ba_uuid_parse("0123abcd-89AB-cdef-0123-456789abcdef", u), 0);
        ba_uuid_format(u, s);
        assert_string_equal(s, "0123abcd-89ab-cdef-0123-456789abcdef");
        assert_int_equal(ba_uuid_parse("0123abcd89ab-cdef-0123-456789abcdef0", u), -EINVAL);
        assert_int_equal(ba_uuid_parse("0123abcd-89ab-cdef-0123-456789abcde", u), -EINVAL);
}

static void test_numbers_and_pcr_lists(void **state) {
        unsigned v;
        uint32_t m;
        char buf[64];

        (void) state;
        assert_int_equal(ba_parse_uint("15", 23, &v), 0);
        assert_int_equal(v, 15);
        assert_int_equal(ba_parse_uint("24", 23, &v), -ERANGE);
        assert_int_equal(ba_parse_uint("+1", 23, &v), -EINVAL);
        assert_int_equal(ba_parse_uint("", 23, &v), -EINVAL);
        assert_int_equal(ba_parse_uint("99999999999", UINT32_MAX, &v), -EINVAL);
        assert_int_equal(ba_parse_pcr_list("0-2,7,14-15", &m), 0);
        assert_int_equal(m, 0xc087);
        ba_pcr_mask_format(m, buf, sizeof(buf));
        assert_string_equal(buf, "0,1,2,7,14,15");
        assert_int_equal(ba_parse_pcr_list("none", &m), 0);
        assert_int_equal(m, 0);
        ba_pcr_mask_format(0, buf, sizeof(buf));
        assert_string_equal(buf, "none");
        assert_int_equal(ba_parse_pcr_list("7,", &m), -EINVAL);
        assert_int_equal(ba_parse_pcr_list("-7", &m), -EINVAL);
        assert_int_equal(ba_parse_pcr_list("7-", &m), -EINVAL);
        assert_int_equal(ba_parse_pcr_list("0-23", &m), 0);
        assert_int_equal(m, BA_PCR_ALL_MASK);
        /* TPM NV indexes: the owner's range only (platform, endorsement and persistent handles refused). */
        assert_int_equal(ba_parse_nv_index("0x01b7a000", &m), 0);
        assert_int_equal(m, 0x01b7a000);
        assert_int_equal(ba_parse_nv_index("0x01ffffff", &m), 0);
        assert_int_equal(ba_parse_nv_index("0x00ffffff", &m), -EINVAL);
        assert_int_equal(ba_parse_nv_index("0x02000000", &m), -EINVAL);
        assert_int_equal(ba_parse_nv_index("0x81000001", &m), -EINVAL);
        assert_int_equal(ba_parse_nv_index("0x01b7a000x", &m), -EINVAL);
        assert_int_equal(ba_parse_nv_index("", &m), -EINVAL);
        assert_int_equal(ba_parse_nv_index(NULL, &m), -EINVAL);
}

static void test_byte_order(void **state) {
        uint8_t b[8];

        (void) state;
        ba_put_le(b, UINT64_C(0x0807060504030201), 8);
        assert_memory_equal(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
        assert_true(ba_get_le(b, 8) == UINT64_C(0x0807060504030201));
        assert_int_equal(ba_get_le(b + 2, 2), 0x0403);
        ba_put_be(b, 0x01b7a000, 4);
        assert_memory_equal(b, "\x01\xb7\xa0\x00\x05", 5); /* only 4 bytes written */
        assert_int_equal(ba_get_be(b, 4), 0x01b7a000);
        ba_put_be(b, UINT64_MAX, 8);
        assert_true(ba_get_be(b, 8) == UINT64_MAX);
}

static void test_names(void **state) {
        (void) state;
        assert_true(ba_name_valid("root"));
        assert_true(ba_name_valid("home-2_x.y@z+1"));
        assert_false(ba_name_valid(""));
        assert_false(ba_name_valid(".x"));
        assert_false(ba_name_valid("-x"));             /* would read as an option in the load unit */
        assert_false(ba_name_valid("--keyring=@s"));
        assert_true(ba_name_valid("x-"));
        assert_false(ba_name_valid("a/b"));
        assert_false(ba_name_valid("a b"));
        assert_false(ba_name_valid("a:b"));
        assert_true(ba_description_valid("btrfs:root", 10));
        assert_false(ba_description_valid("btrfs:", 6));
        assert_false(ba_description_valid("btrfs:ro\0t", 10));
        assert_false(ba_description_valid("logon:root", 10));
}

static void test_keyring_names(void **state) {
        key_serial_t k;

        (void) state;
        assert_int_equal(ba_keyring_parse("@u", &k), 0);
        assert_int_equal(k, KEY_SPEC_USER_KEYRING);
        assert_int_equal(ba_keyring_parse("thread", &k), 0);
        assert_int_equal(k, KEY_SPEC_THREAD_KEYRING);
        assert_int_equal(ba_keyring_parse("@us", &k), 0);
        assert_int_equal(k, KEY_SPEC_USER_SESSION_KEYRING);
        assert_int_equal(ba_keyring_parse("42", &k), 0);
        assert_int_equal(k, 42);
        assert_int_equal(ba_keyring_parse("-3", &k), -EINVAL);
        /* Descriptions outside btrfs: are refused before the kernel is asked. */
        assert_int_equal(ba_keyring_add_logon("cryptsetup:x", (const uint8_t *) "k", 1, KEY_SPEC_SESSION_KEYRING, &k),
                         -EINVAL);
}

static void hex32(const char *hex, uint8_t out[32]) {
        assert_int_equal(ba_hex_decode(hex, out, 32), 0);
}

static void test_policy_known_answers(void **state) {
        ba_pcr_values v = { { 0 } };
        uint8_t got[32], want[32];

        (void) state;
        /* PolicyAuthValue alone: the well-known 8fcd21... digest. */
        assert_int_equal(ba_policy_digest(0, v, true, NULL, got), 0);
        hex32("8fcd2169ab92694e0c633f1ab772842b8241bbc20288981fc7ac1eddc1fddb0e", want);
        assert_memory_equal(got, want, 32);
}

/* PolicyPCR rebuilt by hand: H(0^32 || CC_PolicyPCR || TPML_PCR_SELECTION || H(values)). */
static void test_policy_pcr_by_hand(void **state) {
        static const uint8_t cc_sel[] = { 0x00, 0x00, 0x01, 0x7f, 0, 0, 0, 1, 0x00, 0x0b, 3, 0x80, 0x80, 0x00 };
        ba_pcr_values v = { { 0 } };
        uint8_t zero[32] = { 0 }, pcrd[32], want[32], got[32];

        (void) state;
        memset(v[7], 0x07, 32);
        memset(v[15], 0x0f, 32);
        assert_int_equal(ba_sha256((const struct ba_iovec[]) { { v[7], 32 }, { v[15], 32 } }, 2, pcrd), 0);
        assert_int_equal(ba_sha256((const struct ba_iovec[]) { { zero, 32 }, { cc_sel, sizeof(cc_sel) },
                                                               { pcrd, 32 } }, 3, want), 0);
        assert_int_equal(ba_policy_digest(1u << 7 | 1u << 15, v, false, NULL, got), 0);
        assert_memory_equal(got, want, 32);
        /* Order matters: PCR values are hashed in ascending PCR order. */
        assert_int_equal(ba_pcr_digest(1u << 7 | 1u << 15, v, got), 0);
        assert_memory_equal(got, pcrd, 32);
        assert_int_equal(ba_policy_digest(1u << 24, v, false, NULL, got), -EINVAL);
}

static void make_superblock(uint8_t sb[BA_SB_SIZE], const uint8_t *key, size_t key_len) {
        memset(sb, 0, BA_SB_SIZE);
        memset(sb + 32, 0xab, 16);
        memcpy(sb + 64, BA_SB_MAGIC, 8);
        sb[196] = BA_SB_CSUM_TYPE_HMAC_SHA256;
        assert_int_equal(ba_superblock_sign(sb, key, key_len), 0);
}

static void test_superblock(void **state) {
        uint8_t key[32], other[32], sb[BA_SB_SIZE];
        struct ba_sb_info info;

        (void) state;
        /* No zero bytes: HMAC pads short keys with zeros, so a trailing zero would not change the MAC. */
        for (int i = 0; i < 32; i++)
                key[i] = other[i] = (uint8_t) (i + 1);
        other[31] ^= 0x80;
        make_superblock(sb, key, sizeof(key));
        assert_int_equal(ba_superblock_parse(sb, &info), 0);
        assert_int_equal(info.csum_type, 32);
        assert_int_equal(info.fsid[0], 0xab);
        assert_int_equal(ba_superblock_verify(sb, key, sizeof(key)), 1);
        assert_int_equal(ba_superblock_verify(sb, other, sizeof(other)), 0);
        assert_int_equal(ba_superblock_verify(sb, key, 31), 0);
        /* Any covered byte, and the MAC itself, matter. */
        sb[4095] ^= 1;
        assert_int_equal(ba_superblock_verify(sb, key, sizeof(key)), 0);
        sb[4095] ^= 1;
        sb[0] ^= 1;
        assert_int_equal(ba_superblock_verify(sb, key, sizeof(key)), 0);
        sb[64] = 'x';
        assert_int_equal(ba_superblock_parse(sb, &info), -EMEDIUMTYPE);
}

static void test_superblock_read(void **state) {
        static const uint8_t key[32] = { 9 };
        char path[] = "/tmp/ba-test-sb-XXXXXX";
        uint8_t sb[BA_SB_SIZE], back[BA_SB_SIZE];
        int fd = mkstemp(path);

        (void) state;
        assert_true(fd >= 0);
        make_superblock(sb, key, sizeof(key));
        assert_int_equal(pwrite(fd, sb, 100, BA_SB_OFFSET), 100);
        assert_int_equal(ba_superblock_read(path, back), -ENODATA);
        assert_int_equal(pwrite(fd, sb, BA_SB_SIZE, BA_SB_OFFSET), BA_SB_SIZE);
        assert_int_equal(ba_superblock_read(path, back), 0);
        assert_memory_equal(sb, back, BA_SB_SIZE);
        close(fd);
        unlink(path);
        assert_int_equal(ba_superblock_read(path, back), -ENOENT);
}

static void test_atomic_files(void **state) {
        char dir[] = "/tmp/ba-test-dir-XXXXXX", path[64];
        uint8_t *buf = NULL;
        size_t len = 0;
        struct stat st;

        (void) state;
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/f", dir);
        assert_int_equal(ba_write_file_atomic(path, "one", 3, false), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        /* Without replace an existing file is never touched. */
        assert_int_equal(ba_write_file_atomic(path, "two", 3, false), -EEXIST);
        assert_int_equal(ba_read_file(path, 100, &buf, &len), 0);
        assert_int_equal(len, 3);
        assert_memory_equal(buf, "one", 3);
        free(buf);
        assert_int_equal(ba_write_file_atomic(path, "three", 5, true), 0);
        assert_int_equal(ba_read_file(path, 4, &buf, &len), -EFBIG);
        assert_int_equal(ba_read_file(dir, 4, &buf, &len), -EISDIR);
        /* No temporary file is left behind. */
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

/* What the generator writes: directories made on the way, mode 0644, text read back as a string. */
static void test_generator_files(void **state) {
        char dir[] = "/tmp/ba-test-gen-XXXXXX", path[96], sub[80], link_target[80];
        uint8_t *buf = NULL;
        size_t len = 0;
        struct stat st;

        (void) state;
        assert_non_null(mkdtemp(dir));
        snprintf(sub, sizeof(sub), "%s/a.d", dir);
        snprintf(path, sizeof(path), "%s/f.conf", sub);
        assert_int_equal(ba_mkdir_parents(path, 0755), 0);
        assert_int_equal(ba_mkdir_parents(path, 0755), 0);
        assert_int_equal(ba_write_file_atomic_mode(path, "[Unit]\n", 7, true, 0644), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_int_equal(ba_read_file(path, 7, &buf, &len), 0);
        assert_int_equal(len, 7);
        assert_string_equal((char *) buf, "[Unit]\n");
        free(buf);
        /* A symlink in the way is replaced, its target left alone. */
        snprintf(link_target, sizeof(link_target), "%s/target", dir);
        assert_int_equal(ba_write_file_atomic(link_target, "keep", 4, false), 0);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink(link_target, path), 0);
        assert_int_equal(ba_write_file_atomic_mode(path, "new", 3, true, 0644), 0);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(ba_read_file(link_target, 10, &buf, &len), 0);
        assert_string_equal((char *) buf, "keep");
        free(buf);
        /* A file where a directory should be. */
        snprintf(path, sizeof(path), "%s/target/x", dir);
        assert_int_equal(ba_mkdir_parents(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/target/x/y", dir);
        assert_int_equal(ba_mkdir_parents(path, 0755), -ENOTDIR);
        snprintf(path, sizeof(path), "%s/f.conf", sub);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(unlink(link_target), 0);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(rmdir(dir), 0);
}

/* One log for the tool and the generator: "<ident>: [level: ]message[: error]", -|err| returned. */
static void test_log(void **state) {
        char *out = NULL;
        size_t out_len = 0;
        FILE *f = open_memstream(&out, &out_len);

        (void) state;
        assert_non_null(f);
        log_set_stream(f);
        assert_int_equal(log_warning_errno(-ENOENT, "No %s", "file"), -ENOENT);
        assert_int_equal(log_error_errno(EACCES, "Denied"), -EACCES);
        assert_int_equal(log_error_errno(0, "Nothing"), 0);
        log_debug("hidden at the default level");
        assert_int_equal(log_oom(), -ENOMEM);
        assert_int_equal(log_fail(7, "exit %d", 7), 7);
        log_set_stream(NULL);
        fclose(f);
        assert_string_equal(out, "btrfs-auth: warning: No file: No such file or directory\n"
                                 "btrfs-auth: Denied: Permission denied\n"
                                 "btrfs-auth: Nothing\n"
                                 "btrfs-auth: Out of memory.\n"
                                 "btrfs-auth: exit 7\n");
        free(out);
}

static void test_key_read_and_generate(void **state) {
        char dir[] = "/tmp/ba-test-key-XXXXXX", path[64];
        uint8_t big[BA_KEY_MAX_SIZE + 1];
        struct ba_secret a = { 0 }, b = { 0 };

        (void) state;
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/k", dir);
        memset(big, 0x5a, sizeof(big));
        assert_int_equal(ba_write_file_atomic(path, big, BA_KEY_MAX_SIZE, true), 0);
        assert_int_equal(ba_key_read_file(path, &a), 0);
        assert_int_equal(a.len, BA_KEY_MAX_SIZE);
        assert_memory_equal(a.data, big, BA_KEY_MAX_SIZE);
        ba_secret_free(&a);
        /* Too long, empty or missing: refused, and nothing is left allocated. */
        assert_int_equal(ba_write_file_atomic(path, big, sizeof(big), true), 0);
        assert_int_not_equal(ba_key_read_file(path, &a), 0);
        assert_null(a.data);
        assert_int_equal(ba_write_file_atomic(path, big, 0, true), 0);
        assert_int_not_equal(ba_key_read_file(path, &a), 0);
        assert_null(a.data);
        assert_int_equal(unlink(path), 0);
        assert_int_not_equal(ba_key_read_file(path, &a), 0);
        assert_null(a.data);
        assert_int_equal(rmdir(dir), 0);
        /* Two generated keys: full size, and not the same. */
        assert_int_equal(ba_key_generate(&a), 0);
        assert_int_equal(ba_key_generate(&b), 0);
        assert_int_equal(a.len, BA_GENERATED_KEY_SIZE);
        assert_int_equal(b.len, BA_GENERATED_KEY_SIZE);
        assert_memory_not_equal(a.data, b.data, BA_GENERATED_KEY_SIZE);
        ba_secret_free(&a);
        ba_secret_free(&b);
}

static void test_pin_auth(void **state) {
        struct ba_secret pin;
        TPM2B_AUTH auth;
        uint8_t want[32];

        (void) state;
        assert_int_equal(ba_secret_new(&pin, BA_PIN_MAX), 0);
        memcpy(pin.data, "1234", 4);
        pin.len = 4;
        assert_int_equal(ba_pin_auth(&pin, &auth), 0);
        hex32("03ac674216f3e15c761ee1a5e255f067953623c8b388b4459e13f978d7c846f4", want);
        assert_int_equal(auth.size, 32);
        assert_memory_equal(auth.buffer, want, 32);
        /* SHA-256("403") ends in 0x00, which the TPM would strip: so must we. */
        memcpy(pin.data, "403", 3);
        pin.len = 3;
        assert_int_equal(ba_pin_auth(&pin, &auth), 0);
        hex32("d26eae87829adde551bf4b852f9da6b8c3c2db9b65b8b68870632a2db5f53e00", want);
        assert_int_equal(auth.size, 31);
        assert_memory_equal(auth.buffer, want, 31);
        ba_secret_free(&pin);
        assert_null(pin.data);
}

/* The generator reads the same file the same way (units/tests/test-parse.c); one parser, common/conf-file.c. */
static void test_conf_file(void **state) {
        char dir[] = "/tmp/ba-test-conf-XXXXXX", path[64];
        char *v;
        FILE *f;

        (void) state;
        assert_non_null(mkdtemp(dir));
        assert_null(ba_conf_get(dir, "BTRFS_AUTH_STORE"));
        snprintf(path, sizeof(path), "%s/btrfs-auth.conf", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("# BTRFS_AUTH_STORE=/commented\n; BTRFS_AUTH_STORE=/also\n"
              "  BTRFS_AUTH_UPDATE_INITRAMFS = \"/bin/update one\"  \n"
              "BTRFS_AUTH_STORE_FSTYPE='vfat'\nBTRFS_AUTH_STORE_FSTYPE=ext4\nBTRFS_AUTH_STOREX=no\n", f);
        fclose(f);
        assert_null(ba_conf_get(dir, "BTRFS_AUTH_STORE"));
        v = ba_conf_get(dir, "BTRFS_AUTH_UPDATE_INITRAMFS");
        assert_string_equal(v, "/bin/update one");
        free(v);
        v = ba_conf_get(dir, "BTRFS_AUTH_STORE_FSTYPE");
        assert_string_equal(v, "ext4");
        free(v);
        unlink(path);
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hex_uuid),
                cmocka_unit_test(test_numbers_and_pcr_lists),
                cmocka_unit_test(test_byte_order),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_keyring_names),
                cmocka_unit_test(test_policy_known_answers),
                cmocka_unit_test(test_policy_pcr_by_hand),
                cmocka_unit_test(test_superblock),
                cmocka_unit_test(test_superblock_read),
                cmocka_unit_test(test_atomic_files),
                cmocka_unit_test(test_generator_files),
                cmocka_unit_test(test_log),
                cmocka_unit_test(test_pin_auth),
                cmocka_unit_test(test_key_read_and_generate),
                cmocka_unit_test(test_conf_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
