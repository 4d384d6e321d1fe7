/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "device-check.h"
#include "exit-codes.h"
#include "log.h"

int ba_device_read(const char *dev, uint8_t sb[BA_SB_SIZE], struct ba_sb_info *info) {
        char uuid[BA_UUID_STRING_MAX];
        int r;

        r = ba_superblock_read(dev, sb);
        if (r == -ENODATA)
                return log_fail(BA_EXIT_NOT_AUTHENTIC, "%s is too small to hold a btrfs superblock.", dev);
        if (r < 0) {
                log_error_errno(r, "Cannot read the btrfs superblock of %s", dev);
                return BA_EXIT_DEVICE;
        }
        if (ba_superblock_parse(sb, info) < 0)
                return log_fail(BA_EXIT_NOT_AUTHENTIC, "%s is not a btrfs filesystem (no btrfs magic at 64 KiB).", dev);
        ba_uuid_format(info->fsid, uuid);
        if (info->csum_type != BA_SB_CSUM_TYPE_HMAC_SHA256)
                return log_fail(BA_EXIT_NOT_AUTHENTIC, "%s (btrfs %s) has checksum type %u, not %d (hmac-sha256): "
                                "it is not an authenticated btrfs.", dev, uuid, info->csum_type,
                                BA_SB_CSUM_TYPE_HMAC_SHA256);
        return 0;
}

int ba_device_check_uuid(const char *dev, const struct ba_sb_info *info, const struct ba_keyfile *kf) {
        char have[BA_UUID_STRING_MAX], want[BA_UUID_STRING_MAX];

        if (!kf->has_fs_uuid || memcmp(kf->fs_uuid, info->fsid, BA_UUID_SIZE) == 0)
                return 0;
        ba_uuid_format(info->fsid, have);
        ba_uuid_format(kf->fs_uuid, want);
        return log_fail(BA_EXIT_NOT_AUTHENTIC, "%s holds btrfs %s, but %s was enrolled for btrfs %s: wrong device, "
                        "or the filesystem was recreated (then re-enroll).", dev, have, kf->description, want);
}

int ba_device_verify_key(const char *dev, const uint8_t sb[BA_SB_SIZE], const struct ba_sb_info *info,
                         const uint8_t *key, size_t key_len, const char *description) {
        char uuid[BA_UUID_STRING_MAX];
        int r;

        r = ba_superblock_verify(sb, key, key_len);
        if (r < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute HMAC-SHA256 (libcrypto failure).");
        if (r == 1) {
                ba_uuid_format(info->fsid, uuid);
                log_debug("%s authenticates the superblock of btrfs %s on %s.", description, uuid, dev);
                return 0;
        }
        ba_uuid_format(info->fsid, uuid);
        return log_fail(BA_EXIT_NOT_AUTHENTIC, "The key %s is not the key of btrfs %s on %s: the superblock's "
                        "HMAC does not verify (another key, or a modified superblock).", description, uuid, dev);
}
