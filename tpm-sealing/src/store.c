/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exit-codes.h"
#include "log.h"
#include "store.h"

int ba_wait_for_device(const char *dev, unsigned wait_seconds, const char *what) {
        struct timespec tick = { 0, 100 * 1000 * 1000 };

        for (unsigned i = 0; access(dev, F_OK) < 0; i++) {
                if (i >= wait_seconds * 10)
                        return log_fail(BA_EXIT_DEVICE, "The %s %s did not appear within %u s: check the disk, or "
                                        "the setting in btrfs-auth.conf.", what, dev, wait_seconds);
                if (i == 0)
                        log_info("Waiting up to %u s for the %s %s.", wait_seconds, what, dev);
                nanosleep(&tick, NULL);
        }
        return 0;
}

static int private_namespace(void) {
        if (unshare(CLONE_NEWNS) < 0)
                return log_error_errno(errno, "Cannot make a mount namespace for the key store (unshare)");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return log_error_errno(errno, "Cannot make the key store's mounts private");
        return 0;
}

static int make_keydir(const char *top, struct ba_store *st) {
        if (asprintf(&st->keydir, "%s/btrfs-auth", top) < 0) {
                st->keydir = NULL;
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        }
        if (mkdir(st->keydir, 0700) < 0 && errno != EEXIST) {
                log_error_errno(errno, "Cannot create %s", st->keydir);
                return BA_EXIT_FAILURE;
        }
        return 0;
}

static int mount_store(const char *dev, const char *fstype) {
        const char *type = fstype && *fstype ? fstype : "vfat";
        const char *opts = strcmp(type, "vfat") == 0 ? "umask=0077" : NULL;

        if (private_namespace() < 0)
                return BA_EXIT_FAILURE;
        if ((mkdir("/run/btrfs-auth", 0700) < 0 && errno != EEXIST) ||
            (mkdir(BA_STORE_MOUNT, 0700) < 0 && errno != EEXIST)) {
                log_error_errno(errno, "Cannot create the mount point " BA_STORE_MOUNT);
                return BA_EXIT_FAILURE;
        }
        if (mount(dev, BA_STORE_MOUNT, type, MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0) {
                log_error_errno(errno, "Cannot mount the key store %s (%s) on " BA_STORE_MOUNT
                                ": is it the image's EFI system partition? (dosfstools can check it)", dev, type);
                return BA_EXIT_DEVICE;
        }
        log_debug("Mounted the key store %s on " BA_STORE_MOUNT ".", dev);
        return 0;
}

int ba_store_open(const char *dev, const char *fstype, unsigned wait_seconds, struct ba_store *st) {
        struct stat s;
        int r;

        memset(st, 0, sizeof(*st));
        if (stat(dev, &s) == 0 && S_ISDIR(s.st_mode))
                return make_keydir(dev, st);
        r = ba_wait_for_device(dev, wait_seconds, "key store");
        if (r == 0)
                r = mount_store(dev, fstype);
        if (r != 0)
                return r;
        st->mounted = true;
        r = make_keydir(BA_STORE_MOUNT, st);
        if (r != 0)
                ba_store_close(st);
        return r;
}

void ba_store_close(struct ba_store *st) {
        sync();
        if (st->mounted && umount2(BA_STORE_MOUNT, 0) < 0)
                log_warning("Cannot unmount the key store " BA_STORE_MOUNT ": %s", strerror(errno));
        st->mounted = false;
        free(st->keydir);
        st->keydir = NULL;
}
