/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs-auth confirm NAME: after a boot that unsealed the resealed
 * NAME.sealed, retire NAME.sealed.previous (which still unseals under the
 * old boot state) and update the initramfs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "exit-codes.h"
#include "fileio.h"
#include "initramfs.h"
#include "key-source.h"
#include "log.h"

static int check_this_boot(const struct ba_args *a) {
        char path[4096];
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        snprintf(path, sizeof(path), "%s/%s.source", a->state_dir, a->target);
        r = ba_read_file(path, 64, &buf, &len);
        if (r < 0)
                return log_fail(BA_EXIT_FAILURE, "This boot did not record how %s was loaded (%s: %s): confirm "
                                "after a boot through the initramfs that loads it, or pass --force.",
                                a->description, path, strerror(-r));
        r = len == strlen("sealed") && memcmp(buf, "sealed", len) == 0;
        if (!r)
                log_error("This boot loaded %s through its %.*s, not through %s: the new sealed copy did not "
                          "unseal. Keeping the previous one; reseal again (btrfs-auth reseal %s) and reboot.",
                          a->description, (int) len, (const char *) buf, a->key_path, a->target);
        free(buf);
        return r ? 0 : BA_EXIT_POLICY;
}

int ba_cmd_confirm(const struct ba_args *a) {
        struct ba_keyfile kf;
        char *prev;
        int r;

        r = ba_keyfile_load(a->key_path, a->description, &kf);
        if (r == 0 && !a->force)
                r = check_this_boot(a);
        if (r != 0)
                return r;
        prev = ba_key_path_with(a->key_path, BA_PREVIOUS_SUFFIX);
        if (!prev)
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        if (unlink(prev) < 0) {
                r = errno;
                if (r == ENOENT)
                        log_info("Nothing to confirm: %s has no previous sealed copy.", kf.description);
                else
                        log_error_errno(r, "Cannot remove %s", prev);
                free(prev);
                return r == ENOENT ? 0 : BA_EXIT_FAILURE;
        }
        r = ba_fsync_dir_of(prev);
        if (r < 0)
                log_warning("Cannot sync the directory of %s: %s", prev, strerror(-r));
        log_info("Confirmed %s: removed %s, which would still unseal under the old boot state.", a->key_path, prev);
        free(prev);
        return ba_update_initramfs(a->config_dir, !a->update_initramfs);
}
