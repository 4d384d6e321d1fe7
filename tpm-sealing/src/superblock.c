/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "superblock.h"

/*
 * Leading part of struct btrfs_super_block (linux 6.1, fs/btrfs/ctree.h),
 * spelled out so the compiler checks the offsets we read against the
 * kernel's layout: fsid at 32, magic at 64, csum_type at 196.
 */
struct btrfs_super_prefix {
        uint8_t csum[32];
        uint8_t fsid[16];
        uint64_t bytenr;
        uint64_t flags;
        uint64_t magic;
        uint64_t generation;
        uint64_t root;
        uint64_t chunk_root;
        uint64_t log_root;
        uint64_t unused_log_root_transid;
        uint64_t total_bytes;
        uint64_t bytes_used;
        uint64_t root_dir_objectid;
        uint64_t num_devices;
        uint32_t sectorsize;
        uint32_t nodesize;
        uint32_t unused_leafsize;
        uint32_t stripesize;
        uint32_t sys_chunk_array_size;
        uint64_t chunk_root_generation;
        uint64_t compat_flags;
        uint64_t compat_ro_flags;
        uint64_t incompat_flags;
        uint16_t csum_type;
} __attribute__((packed));

_Static_assert(offsetof(struct btrfs_super_prefix, fsid) == 32, "fsid offset");
_Static_assert(offsetof(struct btrfs_super_prefix, magic) == 64, "magic offset");
_Static_assert(offsetof(struct btrfs_super_prefix, csum_type) == 196, "csum_type offset");

int ba_superblock_read(const char *path, uint8_t sb[BA_SB_SIZE]) {
        size_t got = 0;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        while (got < BA_SB_SIZE) {
                ssize_t n = pread(fd, sb + got, BA_SB_SIZE - got, (off_t) (BA_SB_OFFSET + got));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : -ENODATA;
                        break;
                }
                got += (size_t) n;
        }
        close(fd);
        return r;
}

int ba_superblock_parse(const uint8_t sb[BA_SB_SIZE], struct ba_sb_info *info) {
        const size_t magic_off = offsetof(struct btrfs_super_prefix, magic);
        const size_t type_off = offsetof(struct btrfs_super_prefix, csum_type);

        if (memcmp(sb + magic_off, BA_SB_MAGIC, 8) != 0)
                return -EMEDIUMTYPE;
        memcpy(info->fsid, sb + offsetof(struct btrfs_super_prefix, fsid), BA_UUID_SIZE);
        info->csum_type = (uint16_t) (sb[type_off] | sb[type_off + 1] << 8);
        return 0;
}

int ba_superblock_verify(const uint8_t sb[BA_SB_SIZE], const uint8_t *key, size_t key_len) {
        uint8_t mac[BA_DIGEST_SIZE];
        int r;

        r = ba_hmac_sha256(key, key_len, sb + BA_SB_CSUM_SIZE, BA_SB_SIZE - BA_SB_CSUM_SIZE, mac);
        if (r < 0)
                return r;
        r = ba_digest_equal(mac, sb, BA_DIGEST_SIZE);
        explicit_bzero(mac, sizeof(mac));
        return r;
}
