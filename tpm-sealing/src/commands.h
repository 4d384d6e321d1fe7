/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "args.h"
#include "keyfile.h"
#include "superblock.h"

/* Each returns an exit code (exit-codes.h), having logged what went wrong. */
int ba_cmd_enroll(const struct ba_args *a);
int ba_cmd_load(const struct ba_args *a);
int ba_cmd_lock(const struct ba_args *a);
int ba_cmd_status(const struct ba_args *a);
int ba_cmd_reseal(const struct ba_args *a);
int ba_cmd_confirm(const struct ba_args *a);
int ba_cmd_rekey(const struct ba_args *a);
int ba_cmd_unprovision(const struct ba_args *a);
int ba_cmd_list(const struct ba_args *a);
int ba_cmd_wipe(const struct ba_args *a);

/* Reads and parses a key file; with expected, its description must be that. */
int ba_keyfile_load(const char *path, const char *expected, struct ba_keyfile *kf);
int ba_keyfile_store(const char *path, const struct ba_keyfile *kf, bool replace);

/* The device's superblock, which must be an authenticated btrfs (csum_type 32). */
int ba_device_read(const char *dev, uint8_t sb[BA_SB_SIZE], struct ba_sb_info *info);
/* Refuses a device whose fsid is not the one the key file was enrolled for. */
int ba_device_check_uuid(const char *dev, const struct ba_sb_info *info, const struct ba_keyfile *kf);
/* Refuses a key that does not authenticate the superblock. */
int ba_device_verify_key(const char *dev, const uint8_t sb[BA_SB_SIZE], const struct ba_sb_info *info,
                         const uint8_t *key, size_t key_len, const char *description);
