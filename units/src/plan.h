/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "conf.h"
#include "strv.h"

#define LOAD_UNIT_PREFIX "btrfs-auth-load@"
#define LOAD_UNIT_SUFFIX ".service"
#define LOCK_UNIT        "btrfs-auth-lock.service"

/* One mount unit and the keys (raw NAMEs) it must not start without. */
struct mount_need {
        char *unit;
        struct strv keys;
};

/* Everything the generator found, before anything is written. */
struct plan {
        bool in_initrd;
        struct mount_need *mounts;
        size_t n_mounts;
        struct strv preload;    /* keys loaded only so the lock comes after them */
        struct ba_conf conf;
};

/* Records the auth_key= names in options for the mount at where.  A mount
 * without one is ignored; one whose unit name cannot be built is logged
 * (with source, e.g. "/etc/fstab:3") and skipped.  0 or -ENOMEM. */
int plan_add_mount(struct plan *p, const char *where, const char *options, const char *source);

int plan_add_preload(struct plan *p, const char *name);

/* Every key name in the plan, sorted, without duplicates. */
int plan_all_keys(const struct plan *p, struct strv *ret);

void plan_done(struct plan *p);
