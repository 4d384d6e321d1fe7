/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs-auth wipe NAME --recovery | --seal=current|previous|new: removes one
 * way to open btrfs:NAME, as systemd-cryptenroll --wipe-slot does for
 * LUKS, says what it removed and updates the initramfs, which carries
 * copies of the key files.  The last way to open the key goes only with
 * --force.
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
#include "keyfile-describe.h"
#include "log.h"

struct wipe_paths {
        char *current, *previous, *pending;
};

static void paths_free(struct wipe_paths *p) {
        free(p->current);
        free(p->previous);
        free(p->pending);
}

static bool exists(const char *path) {
        return access(path, F_OK) == 0;
}

static int remove_file(const char *path) {
        int r;

        if (unlink(path) < 0) {
                log_error_errno(errno, "Cannot remove %s", path);
                return BA_EXIT_FAILURE;
        }
        r = ba_fsync_dir_of(path);
        if (r < 0)
                log_warning("Cannot sync the directory of %s: %s", path, strerror(-r));
        return 0;
}

/* The recovery copy out of one key file, rewritten in place (atomically); *removed says whether it had one. */
static int strip_recovery(const char *path, const char *description, bool *removed) {
        struct ba_keyfile kf;
        char how[128];
        int r;

        *removed = false;
        if (!exists(path))
                return 0;
        r = ba_keyfile_load(path, description, &kf);
        if (r != 0 || !kf.has_recovery)
                return r;
        ba_recovery_describe(&kf.recovery, how, sizeof(how));
        kf.has_recovery = false;
        memset(&kf.recovery, 0, sizeof(kf.recovery));
        r = ba_keyfile_store(path, &kf, true);
        if (r == 0) {
                log_info("Removed the recovery copy (%s) from %s.", how, path);
                *removed = true;
        }
        return r;
}

static int wipe_recovery(const char *description, const struct wipe_paths *p) {
        bool cur = false, prev = false;
        int r;

        r = strip_recovery(p->current, description, &cur);
        if (r == 0)
                r = strip_recovery(p->previous, description, &prev);
        if (r != 0)
                return r;
        if (!cur && !prev) {
                log_info("%s has no recovery copy: nothing was removed.", description);
                return -ENOENT;
        }
        log_warning("%s now opens only through the TPM (and any copy of the raw key): if the TPM refuses it, "
                    "nothing else does.", description);
        return 0;
}

/* NAME.sealed goes; NAME.sealed.previous, if any, takes its place (the state before the last reseal). */
static int wipe_current(const char *description, const struct wipe_paths *p, bool force) {
        if (exists(p->previous)) {
                if (rename(p->previous, p->current) < 0) {
                        log_error_errno(errno, "Cannot move %s over %s", p->previous, p->current);
                        return BA_EXIT_FAILURE;
                }
                (void) ba_fsync_dir_of(p->current);
                log_info("Removed the current seal of %s; %s (the seal before the last reseal) took its place as "
                         "%s.", description, p->previous, p->current);
                return 0;
        }
        if (!force)
                return log_fail(BA_EXIT_FAILURE, "%s is the last seal of %s and holds its recovery copy: without it "
                                "nothing opens the key but a copy of the raw key. Nothing was removed; pass --force "
                                "to remove it all the same.", p->current, description);
        if (remove_file(p->current) != 0)
                return BA_EXIT_FAILURE;
        log_info("Removed %s: %s is no longer enrolled on this machine.", p->current, description);
        return 0;
}

static int wipe_pending(const char *description, const struct wipe_paths *p, bool force) {
        if (!force)
                return log_fail(BA_EXIT_FAILURE, "%s holds the new key of an unfinished rekey of %s: the filesystem "
                                "may use that key already, and then only this file opens it. Finish the rekey "
                                "(btrfs-auth rekey NAME --device=DEV); nothing was removed. Pass --force only if "
                                "the rekey never started changing the filesystem.", p->pending, description);
        if (remove_file(p->pending) != 0)
                return BA_EXIT_FAILURE;
        log_info("Removed %s: the unfinished rekey of %s is abandoned.", p->pending, description);
        return 0;
}

/* 0: removed something; -ENOENT: nothing to remove (said so); else an exit code. */
static int wipe(const struct ba_args *a, const struct wipe_paths *p) {
        const char *seal = a->wipe_seal ? a->wipe_seal : "";

        if (!exists(p->current) && strcmp(seal, "new") != 0)
                return log_fail(BA_EXIT_NO_KEYFILE, "Key file %s does not exist: nothing to wipe.", p->current);
        if (exists(p->pending) && strcmp(seal, "new") != 0 && strcmp(seal, "previous") != 0)
                return log_fail(BA_EXIT_FAILURE, "A rekey of %s is unfinished (%s exists): finish it first "
                                "(btrfs-auth rekey NAME --device=DEV); nothing was removed.", a->description,
                                p->pending);
        if (a->wipe_recovery)
                return wipe_recovery(a->description, p);
        if (strcmp(seal, "current") == 0)
                return wipe_current(a->description, p, a->force);
        if (!exists(strcmp(seal, "new") == 0 ? p->pending : p->previous)) {
                log_info("%s has no %s seal: nothing was removed.", a->description, seal);
                return -ENOENT;
        }
        if (strcmp(seal, "new") == 0)
                return wipe_pending(a->description, p, a->force);
        if (remove_file(p->previous) != 0)
                return BA_EXIT_FAILURE;
        log_info("Removed the previous seal of %s (%s); %s remains.", a->description, p->previous, p->current);
        return 0;
}

int ba_cmd_wipe(const struct ba_args *a) {
        struct wipe_paths p = {
                .current = strdup(a->key_path),
                .previous = ba_key_path_with(a->key_path, BA_PREVIOUS_SUFFIX),
                .pending = ba_key_path_with(a->key_path, BA_PENDING_SUFFIX),
        };
        int r;

        if (!p.current || !p.previous || !p.pending) {
                paths_free(&p);
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        }
        r = wipe(a, &p);
        paths_free(&p);
        if (r == -ENOENT)
                return BA_EXIT_OK;
        return r == 0 ? ba_update_initramfs(a->config_dir, !a->update_initramfs) : r;
}
