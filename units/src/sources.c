/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "escape.h"
#include "fstab.h"
#include "key-name.h"
#include "log.h"
#include "mountopts.h"
#include "sources.h"

struct cmdline_state {
        char *rootflags;
        char *usrflags;
        bool usr_given;
};

/* systemd joins repeated rootflags= with ',' rather than keeping the last. */
static int append_flags(char **flags, const char *value) {
        char *joined;

        if (asprintf(&joined, "%s%s%s", *flags ? *flags : "", *flags ? "," : "", value) < 0)
                return -ENOMEM;
        free(*flags);
        *flags = joined;
        return 0;
}

static int cmdline_item(const char *key, const char *value, void *userdata) {
        struct cmdline_state *s = userdata;

        if (strcmp(key, "rootflags") == 0 && value)
                return append_flags(&s->rootflags, value);
        if (strcmp(key, "mount.usrflags") == 0 && value) {
                s->usr_given = true;
                return append_flags(&s->usrflags, value);
        }
        if ((strcmp(key, "mount.usr") == 0 || strcmp(key, "mount.usrfstype") == 0) && value)
                s->usr_given = true;
        return 0;
}

static int parse_all_cmdlines(const char *etcdir, struct cmdline_state *s) {
        char *proc = NULL, *dracut = NULL;
        int r;

        r = cmdline_read_proc(&proc);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                log_warning_errno(r, "Failed to read the kernel command line, ignoring it");

        r = cmdline_read_dracut(etcdir, &dracut);
        if (r >= 0)
                r = cmdline_parse(dracut, cmdline_item, s);
        if (r >= 0 && proc)
                r = cmdline_parse(proc, cmdline_item, s);

        free(proc);
        free(dracut);
        return r;
}

int gather_cmdline(struct plan *p, const char *etcdir) {
        struct cmdline_state s = { 0 };
        int r;

        r = parse_all_cmdlines(etcdir, &s);
        if (r >= 0 && s.rootflags)
                r = plan_add_mount(p, "/sysroot", s.rootflags, "kernel command line");
        /* Like systemd, /usr without its own flags gets the root's. */
        if (r >= 0 && s.usr_given && (s.usrflags || s.rootflags))
                r = plan_add_mount(p, "/sysusr/usr", s.usrflags ? s.usrflags : s.rootflags,
                                   "kernel command line");

        free(s.rootflags);
        free(s.usrflags);
        return r;
}

/* Whether where names the same directory as the normalised path target. */
static bool path_is(const char *where, const char *target) {
        char *a = NULL, *b = NULL;
        bool same;

        same = escape_unit_path(where, &a) >= 0 && escape_unit_path(target, &b) >= 0 &&
               strcmp(a, b) == 0;
        free(a);
        free(b);
        return same;
}

struct fstab_ctx {
        struct plan *plan;
        bool sysroot;
};

static int fstab_entry(const struct fstab_entry *e, const char *path, unsigned line, void *userdata) {
        struct fstab_ctx *c = userdata;
        char source[4096], *where;
        int r;

        if (strcmp(e->type, "swap") == 0 || e->where[0] != '/')
                return 0;
        if (c->sysroot && !path_is(e->where, "/usr") && !mountopts_has(e->options, "x-initrd.mount"))
                return 0;
        if (!c->plan->in_initrd && path_is(e->where, "/")) {
                log_debug("%s:%u: the root file system was mounted by the initrd, skipping it.", path, line);
                return 0;
        }

        snprintf(source, sizeof(source), "%s:%u", path, line);
        if (asprintf(&where, "%s%s", c->sysroot ? "/sysroot" : "", e->where) < 0)
                return -ENOMEM;
        r = plan_add_mount(c->plan, where, e->options, source);
        free(where);
        return r;
}

int gather_fstab(struct plan *p, const char *path, bool sysroot) {
        struct fstab_ctx c = { .plan = p, .sysroot = sysroot };

        return fstab_parse_file(path, fstab_entry, &c);
}

#define SEALED_SUFFIX ".sealed"

static int sealed_filter(const struct dirent *de) {
        size_t len = strlen(de->d_name), sl = strlen(SEALED_SUFFIX);

        return de->d_name[0] != '.' && len > sl && strcmp(de->d_name + len - sl, SEALED_SUFFIX) == 0;
}

int gather_keydir(struct plan *p, const char *keydir) {
        struct dirent **list = NULL;
        int n, r = 0;

        n = scandir(keydir, &list, sealed_filter, alphasort);
        if (n < 0) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "Failed to list %s, loading only the keys mounts name", keydir);
                return 0;
        }

        for (int i = 0; i < n; i++) {
                list[i]->d_name[strlen(list[i]->d_name) - strlen(SEALED_SUFFIX)] = '\0';
                if (!ba_name_valid(list[i]->d_name))
                        log_warning("%s/%s%s is not named after a valid key NAME; btrfs-auth would refuse it, "
                                    "not loading it.", keydir, list[i]->d_name, SEALED_SUFFIX);
                else if (r >= 0)
                        r = plan_add_preload(p, list[i]->d_name);
                free(list[i]);
        }
        free(list);
        return r;
}
