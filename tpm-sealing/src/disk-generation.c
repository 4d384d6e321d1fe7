/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "disk-generation.h"
#include "exit-codes.h"
#include "log.h"
#include "superblock.h"

#define MAX_DEVICES 64
/* Offsets in struct btrfs_super_block (linux 6.1); superblock.c checks the leading ones against the layout. */
#define SB_FSID 32
#define SB_BYTENR 48
#define SB_MAGIC 64
#define SB_GENERATION 72
#define SB_NUM_DEVICES 136
#define SB_DEVID 201

static const uint64_t copy_offsets[] = { UINT64_C(65536), UINT64_C(1) << 26, UINT64_C(1) << 38 };

struct found {
        uint64_t devids[MAX_DEVICES];
        uint64_t num_devices;
        struct ba_disk_generation g;
};

int ba_sb_copy_authentic(const uint8_t sb[BA_SB_SIZE], uint64_t offset, const uint8_t fsid[BA_UUID_SIZE],
                         const struct ba_secret *key) {
        if (memcmp(sb + SB_MAGIC, BA_SB_MAGIC, 8) != 0 || memcmp(sb + SB_FSID, fsid, BA_UUID_SIZE) != 0 ||
            ba_get_le(sb + SB_BYTENR, 8) != offset)
                return 0;
        return ba_superblock_verify(sb, key->data, key->len);
}

static bool read_at(int fd, uint64_t offset, uint8_t sb[BA_SB_SIZE]) {
        size_t got = 0;

        while (got < BA_SB_SIZE) {
                ssize_t n = pread(fd, sb + got, BA_SB_SIZE - got, (off_t) (offset + got));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                got += (size_t) n;
        }
        return true;
}

static bool known_devid(const struct found *f, uint64_t devid) {
        for (unsigned i = 0; i < f->g.devices; i++)
                if (f->devids[i] == devid)
                        return true;
        return false;
}

/* The device's copies, when its primary is the filesystem's; a device read twice (two names) counts once. */
static int scan_device(int fd, const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key, struct found *f) {
        uint8_t sb[BA_SB_SIZE];
        uint64_t devid;
        int r;

        if (!read_at(fd, copy_offsets[0], sb))
                return 0;
        r = ba_sb_copy_authentic(sb, copy_offsets[0], fsid, key);
        devid = ba_get_le(sb + SB_DEVID, 8);
        if (r <= 0 || known_devid(f, devid) || f->g.devices == MAX_DEVICES)
                return r;
        f->devids[f->g.devices++] = devid;
        f->num_devices = ba_get_le(sb + SB_NUM_DEVICES, 8);
        for (size_t i = 0; i < ELEMENTSOF(copy_offsets); i++) {
                uint64_t gen;

                if (i > 0 && (!read_at(fd, copy_offsets[i], sb) ||
                              (r = ba_sb_copy_authentic(sb, copy_offsets[i], fsid, key)) <= 0)) {
                        if (r < 0)
                                return r;
                        continue;
                }
                gen = ba_get_le(sb + SB_GENERATION, 8);
                f->g.copies++;
                if (gen > f->g.newest)
                        f->g.newest = gen;
                if (i == 0 && (f->g.devices == 1 || gen < f->g.oldest_primary))
                        f->g.oldest_primary = gen;
        }
        return 0;
}

static int scan_path(const char *path, const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key,
                     struct found *f) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r;

        if (fd < 0)
                return 0;
        r = scan_device(fd, fsid, key, f);
        close(fd);
        return r;
}

/*
 * One pass over devices (when given) and /sys/class/block; devices that
 * cannot be opened (no medium, not yet in /dev) are skipped.
 */
static int scan_all(const char *const *devices, const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key,
                    struct found *f) {
        DIR *d = opendir("/sys/class/block");
        struct dirent *e;
        int r = 0;

        memset(f, 0, sizeof(*f));
        for (; devices && *devices && r == 0; devices++)
                r = scan_path(*devices, fsid, key, f);
        if (!d) {
                log_error_errno(errno, "Cannot list /sys/class/block to find the filesystem's devices");
                return BA_EXIT_DEVICE;
        }
        while (r == 0 && (e = readdir(d))) {
                char path[300];

                if (e->d_name[0] == '.' || strncmp(e->d_name, "ram", 3) == 0)
                        continue;
                snprintf(path, sizeof(path), "/dev/%s", e->d_name);
                r = scan_path(path, fsid, key, f);
        }
        closedir(d);
        return r < 0 ? log_fail(BA_EXIT_FAILURE, "Cannot compute HMAC-SHA256 (libcrypto failure).") : 0;
}

int ba_disk_generation_read(const char *const *devices, const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key,
                            unsigned wait_s, struct ba_disk_generation *g) {
        char uuid[BA_UUID_STRING_MAX];
        time_t deadline = time(NULL) + wait_s;
        struct found f;
        int r;

        for (;;) {
                r = scan_all(devices, fsid, key, &f);
                if (r != 0)
                        return r;
                if (f.g.devices > 0 && f.g.devices >= f.num_devices)
                        break;
                if (time(NULL) >= deadline)
                        break;
                sleep(1);
        }
        ba_uuid_format(fsid, uuid);
        if (f.g.devices == 0)
                return log_fail(BA_EXIT_DEVICE, "No device with an authentic superblock of btrfs %s appeared within "
                                "%u s: cannot tell how old the disk is.", uuid, wait_s);
        if (f.g.devices < f.num_devices)
                return log_fail(BA_EXIT_DEVICE, "Found %u of the %llu devices of btrfs %s within %u s: cannot tell how "
                                "old the missing ones are.", f.g.devices, (unsigned long long) f.num_devices, uuid,
                                wait_s);
        *g = f.g;
        return 0;
}
