/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only helper for the integration tests (never installed):
 *   mksb IMAGE KEYFILE UUID [GENERATION [OFFSET]]
 *                               write a 1 MiB image with a signed hmac-sha256 btrfs superblock at 64 KiB
 *                               (generation 1 unless given); with OFFSET, write a superblock copy for that
 *                               offset into the existing IMAGE instead (65536, 67108864: primary, backup)
 *   contains FILE HEX           exit 0 if FILE contains the bytes, 1 if not
 *   refix FILE                  recompute a key file's length field and checksum (a forger's fix-up)
 *   pcr-extend OLDHEX DIGESTHEX print sha256(old || digest)
 *   record-offset FILE TYPE     print the offset of the value of a key-file record (TYPE decimal)
 *   gen-seeds DIR               write the fuzzer's seed corpus (fixture key files, no real keys)
 *   scrypt-recovery FILE KEY PASS  give key file FILE a version-1 (scrypt, N=2^10) recovery copy of the raw
 *                               key in KEY under the passphrase in PASS (its first line), as btrfs-auth
 *                               wrote them before Argon2id: for the test that such files keep working
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "fileio.h"
#include "fixture.h"
#include "keyfile.h"
#include "recovery.h"
#include "superblock.h"
#include "util.h"

static int die(const char *what) {
        fprintf(stderr, "ba-test-helper: %s: %s\n", what, errno ? strerror(errno) : "invalid input");
        return 2;
}

static int mksb(const char *image, const char *keyfile, const char *uuid, uint64_t generation, uint64_t offset) {
        uint8_t sb[BA_SB_SIZE] = { 0 }, *key = NULL;
        size_t key_len = 0;
        bool new_image = offset == 0;
        int fd, r;

        if (ba_uuid_parse(uuid, sb + 32) < 0)
                return die("bad UUID");
        if (ba_read_file(keyfile, 4096, &key, &key_len) < 0)
                return die(keyfile);
        if (new_image)
                offset = BA_SB_OFFSET;
        ba_put_le(sb + 48, offset, 8);          /* bytenr */
        memcpy(sb + 64, BA_SB_MAGIC, 8);
        ba_put_le(sb + 72, generation, 8);
        ba_put_le(sb + 112, 1 << 20, 8);        /* total_bytes */
        ba_put_le(sb + 136, 1, 8);              /* num_devices */
        ba_put_le(sb + 144, 4096, 4);           /* sectorsize */
        ba_put_le(sb + 148, 16384, 4);          /* nodesize */
        ba_put_le(sb + 156, 4096, 4);           /* stripesize */
        ba_put_le(sb + 196, BA_SB_CSUM_TYPE_HMAC_SHA256, 2);
        r = ba_superblock_sign(sb, key, key_len);
        explicit_bzero(key, key_len);
        free(key);
        if (r < 0)
                return die("HMAC");
        fd = open(image, new_image ? O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC : O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0 || (new_image && ftruncate(fd, 1 << 20) < 0) ||
            pwrite(fd, sb, sizeof(sb), (off_t) offset) != sizeof(sb))
                return die(image);
        return close(fd) < 0 ? die(image) : 0;
}

static int contains(const char *path, const char *hex) {
        size_t n = strlen(hex) / 2, len = 0;
        uint8_t needle[256], *buf = NULL;
        int found;

        if (n == 0 || n > sizeof(needle) || ba_hex_decode(hex, needle, n) < 0)
                return die("bad hex needle");
        if (ba_read_file(path, 64 << 20, &buf, &len) < 0)
                return die(path);
        found = memmem(buf, len, needle, n) != NULL;
        free(buf);
        return found ? 0 : 1;
}

static int refix(const char *path) {
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        if (ba_read_file(path, 1 << 20, &buf, &len) < 0)
                return die(path);
        ba_fixture_refix(buf, len);
        r = ba_write_file_atomic(path, buf, len, true);
        free(buf);
        return r < 0 ? die(path) : 0;
}

static int pcr_extend(const char *old_hex, const char *digest_hex) {
        uint8_t old[32], digest[32], out[32];
        char hex[65];

        if (ba_hex_decode(old_hex, old, 32) < 0 || ba_hex_decode(digest_hex, digest, 32) < 0)
                return die("bad hex");
        if (ba_sha256((const struct ba_iovec[]) { { old, 32 }, { digest, 32 } }, 2, out) < 0)
                return die("sha256");
        ba_hex_encode(out, 32, hex);
        puts(hex);
        return 0;
}

static int record_offset(const char *path, const char *type_str) {
        uint8_t *buf = NULL;
        size_t len = 0, off = BA_KEYFILE_HEADER_SIZE;
        unsigned type;

        if (ba_parse_uint(type_str, 0xffff, &type) < 0 || ba_read_file(path, 1 << 20, &buf, &len) < 0)
                return die(path);
        while (len >= BA_KEYFILE_TRAILER_SIZE && off + BA_KEYFILE_RECORD_HEADER_SIZE <= len - BA_KEYFILE_TRAILER_SIZE) {
                unsigned t = buf[off] | buf[off + 1] << 8;
                size_t rlen = buf[off + 2] | buf[off + 3] << 8 | (size_t) buf[off + 4] << 16 | (size_t) buf[off + 5] << 24;

                if (t == type) {
                        printf("%zu\n", off + BA_KEYFILE_RECORD_HEADER_SIZE);
                        free(buf);
                        return 0;
                }
                off += BA_KEYFILE_RECORD_HEADER_SIZE + rlen;
        }
        free(buf);
        errno = 0;
        return die("record not found");
}

static int gen_seeds(const char *dir) {
        for (int v = 0; v < BA_FIXTURE_COUNT; v++) {
                char path[4096];
                size_t len;
                uint8_t *buf = ba_fixture_bytes(v, &len);
                int r;

                snprintf(path, sizeof(path), "%s/seed-%d", dir, v);
                r = ba_write_file_atomic(path, buf, len, true);
                free(buf);
                if (r < 0)
                        return die(path);
        }
        return 0;
}

static int read_secret(const char *path, struct ba_secret *s, bool line) {
        uint8_t *buf = NULL;
        size_t len = 0;

        if (ba_read_file(path, 4096, &buf, &len) < 0 || ba_secret_new(s, len + 1) < 0)
                return -1;
        while (line && len > 0 && buf[len - 1] == '\n')
                len--;
        memcpy(s->data, buf, len);
        s->len = len;
        explicit_bzero(buf, len);
        free(buf);
        return 0;
}

static int scrypt_recovery(const char *path, const char *key_path, const char *pass_path) {
        struct ba_keyfile kf;
        struct ba_secret key = { 0 }, pass = { 0 };
        uint8_t *buf = NULL, *out = NULL;
        size_t len = 0, out_len = 0;
        char err[256];
        int r;

        if (ba_read_file(path, BA_KEYFILE_MAX_SIZE, &buf, &len) < 0 || ba_keyfile_parse(buf, len, &kf, err, sizeof(err)) < 0)
                return die(path);
        free(buf);
        if (read_secret(key_path, &key, false) < 0 || read_secret(pass_path, &pass, true) < 0)
                return die("reading the key or the passphrase");
        memset(&kf.recovery, 0, sizeof(kf.recovery));
        kf.recovery = (struct ba_recovery_record) { .version = 1, .kind = BA_RECOVERY_KIND_PASSPHRASE,
                                                   .kdf = BA_RECOVERY_KDF_SCRYPT, .log_n = 10, .r = 8, .p = 1 };
        kf.has_recovery = true;
        r = ba_recovery_seal_record(&key, &pass, kf.description, &kf.recovery);
        ba_secret_free(&key);
        ba_secret_free(&pass);
        if (r < 0 || ba_keyfile_serialize(&kf, &out, &out_len, err, sizeof(err)) < 0 ||
            ba_write_file_atomic(path, out, out_len, true) < 0)
                return die("sealing or writing the scrypt recovery copy");
        free(out);
        return 0;
}

int main(int argc, char **argv) {
        if (argc >= 5 && argc <= 7 && strcmp(argv[1], "mksb") == 0)
                return mksb(argv[2], argv[3], argv[4], argc > 5 ? strtoull(argv[5], NULL, 0) : 1,
                            argc > 6 ? strtoull(argv[6], NULL, 0) : 0);
        if (argc == 4 && strcmp(argv[1], "contains") == 0)
                return contains(argv[2], argv[3]);
        if (argc == 3 && strcmp(argv[1], "refix") == 0)
                return refix(argv[2]);
        if (argc == 4 && strcmp(argv[1], "pcr-extend") == 0)
                return pcr_extend(argv[2], argv[3]);
        if (argc == 4 && strcmp(argv[1], "record-offset") == 0)
                return record_offset(argv[2], argv[3]);
        if (argc == 3 && strcmp(argv[1], "gen-seeds") == 0)
                return gen_seeds(argv[2]);
        if (argc == 5 && strcmp(argv[1], "scrypt-recovery") == 0)
                return scrypt_recovery(argv[2], argv[3], argv[4]);
        fprintf(stderr, "usage: ba-test-helper mksb|contains|refix|pcr-extend|record-offset|gen-seeds|scrypt-recovery "
                "...\n");
        return 2;
}
