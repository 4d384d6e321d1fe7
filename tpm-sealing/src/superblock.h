/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Primary btrfs superblock: BTRFS_SUPER_INFO_OFFSET / _SIZE in the kernel's fs/btrfs/ctree.h (6.1). */
#define BA_SB_OFFSET 65536
#define BA_SB_SIZE 4096
#define BA_SB_CSUM_SIZE 32
#define BA_SB_CSUM_TYPE_HMAC_SHA256 32
#define BA_SB_MAGIC "_BHRfS_M"

struct ba_sb_info {
        uint8_t fsid[BA_UUID_SIZE];
        uint16_t csum_type;
};

/* -errno; -ENODATA when the device is shorter than the superblock's end. */
int ba_superblock_read(const char *path, uint8_t sb[BA_SB_SIZE]);

/* -EMEDIUMTYPE when the magic is not btrfs's. */
int ba_superblock_parse(const uint8_t sb[BA_SB_SIZE], struct ba_sb_info *info);

/* 1: HMAC-SHA256(key, sb[32..4095]) equals sb[0..31]; 0: it does not; <0: crypto failure. */
int ba_superblock_verify(const uint8_t sb[BA_SB_SIZE], const uint8_t *key, size_t key_len);
