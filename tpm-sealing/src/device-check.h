/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"
#include "superblock.h"

/* The device's superblock, which must be an authenticated btrfs (csum_type 32). */
int ba_device_read(const char *dev, uint8_t sb[BA_SB_SIZE], struct ba_sb_info *info);
/* Refuses a device whose fsid is not the one the key file was enrolled for. */
int ba_device_check_uuid(const char *dev, const struct ba_sb_info *info, const struct ba_keyfile *kf);
/* Refuses a key that does not authenticate the superblock. */
int ba_device_verify_key(const char *dev, const uint8_t sb[BA_SB_SIZE], const struct ba_sb_info *info,
                         const uint8_t *key, size_t key_len, const char *description);
