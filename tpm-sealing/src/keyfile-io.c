/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exit-codes.h"
#include "fileio.h"
#include "keyfile-io.h"
#include "log.h"

static int read_error(const char *path, int r) {
        if (r == -ENOENT)
                return log_fail(BA_EXIT_NO_KEYFILE, "Key file %s does not exist: enroll the key first "
                                "(btrfs-auth enroll), or check the NAME and --config-dir.", path);
        if (r == -EFBIG)
                return log_fail(BA_EXIT_BAD_KEYFILE, "Key file %s is larger than %d bytes: it is not a btrfs-auth "
                                "key file.", path, BA_KEYFILE_MAX_SIZE);
        log_error_errno(r, "Cannot read key file %s", path);
        return BA_EXIT_FAILURE;
}

int ba_keyfile_load(const char *path, const char *expected, struct ba_keyfile *kf) {
        char err[256] = "";
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        r = ba_read_file(path, BA_KEYFILE_MAX_SIZE, &buf, &len);
        if (r < 0)
                return read_error(path, r);
        r = ba_keyfile_parse(buf, len, kf, err, sizeof(err));
        free(buf);
        if (r == -BA_ERECOVERY_BAD)
                return log_fail(BA_EXIT_BAD_RECOVERY_RECORD, "Key file %s has a damaged recovery copy: %s. Nothing "
                                "was done; re-enroll the key (or restore the file from a backup).", path, err);
        if (r == -BA_ERECOVERY_COST)
                return log_fail(BA_EXIT_RECOVERY_COST, "Key file %s: %s; refusing to run the key derivation on it "
                                "(a forged or damaged file). Nothing was done; re-enroll the key.", path, err);
        if (r < 0)
                return log_fail(BA_EXIT_BAD_KEYFILE, "Key file %s is unusable: %s. Re-enroll from the recovery key.",
                                path, err);
        if (expected && strcmp(kf->description, expected) != 0)
                return log_fail(BA_EXIT_BAD_KEYFILE, "Key file %s holds the key %s, not %s: it was renamed or copied. "
                                "Re-enroll it under the right NAME.", path, kf->description, expected);
        return 0;
}

int ba_keyfile_store(const char *path, const struct ba_keyfile *kf, bool replace) {
        char err[256] = "";
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        r = ba_keyfile_serialize(kf, &buf, &len, err, sizeof(err));
        if (r == -EINVAL)
                return log_fail(BA_EXIT_FAILURE, "Refusing to write an inconsistent key file: %s.", err);
        if (r < 0) {
                log_error_errno(r, "Cannot encode the key file");
                return BA_EXIT_FAILURE;
        }
        r = ba_write_file_atomic(path, buf, len, replace);
        free(buf);
        if (r == -EEXIST)
                return log_fail(BA_EXIT_FAILURE, "Key file %s already exists; pass --force to replace it.", path);
        if (r < 0) {
                log_error_errno(r, "Cannot write key file %s", path);
                return BA_EXIT_FAILURE;
        }
        return 0;
}
