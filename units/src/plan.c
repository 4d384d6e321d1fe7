/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "log.h"
#include "mountopts.h"
#include "plan.h"

static struct mount_need *find_or_add(struct plan *p, char *unit) {
        struct mount_need *m;

        for (size_t i = 0; i < p->n_mounts; i++)
                if (strcmp(p->mounts[i].unit, unit) == 0) {
                        free(unit);
                        return &p->mounts[i];
                }

        m = reallocarray(p->mounts, p->n_mounts + 1, sizeof(*m));
        if (!m) {
                free(unit);
                return NULL;
        }
        p->mounts = m;
        m = &p->mounts[p->n_mounts++];
        *m = (struct mount_need) { .unit = unit, .keys = STRV_INIT };
        return m;
}

static int merge_keys(struct strv *into, const struct strv *from) {
        for (size_t i = 0; i < from->n; i++) {
                int r = strv_add_unique(into, from->v[i]);

                if (r < 0)
                        return r;
        }
        return 0;
}

int plan_add_mount(struct plan *p, const char *where, const char *options, const char *source) {
        struct strv keys = STRV_INIT;
        struct mount_need *m;
        char *unit;
        int r;

        r = mountopts_auth_keys(options, where, &keys);
        if (r <= 0)
                goto out;

        r = unit_name_from_path(where, ".mount", &unit);
        if (r == -ENOMEM)
                goto out;
        if (r < 0) {
                log_warning("%s: cannot build a mount unit name for \"%s\" (%s); "
                            "systemd cannot either, so nothing will mount it: ignoring it.",
                            source, where, strerror(-r));
                r = 0;
                goto out;
        }

        log_debug("%s: %s needs %zu key(s).", source, unit, keys.n);
        m = find_or_add(p, unit);
        r = m ? merge_keys(&m->keys, &keys) : -ENOMEM;
out:
        strv_done(&keys);
        return r < 0 ? r : 0;
}

int plan_add_preload(struct plan *p, const char *name) {
        int r = strv_add_unique(&p->preload, name);

        return r < 0 ? r : 0;
}

int plan_all_keys(const struct plan *p, struct strv *ret) {
        int r = merge_keys(ret, &p->preload);

        for (size_t i = 0; r >= 0 && i < p->n_mounts; i++)
                r = merge_keys(ret, &p->mounts[i].keys);
        if (r < 0)
                return r;
        strv_sort(ret);
        return 0;
}

void plan_done(struct plan *p) {
        for (size_t i = 0; i < p->n_mounts; i++) {
                free(p->mounts[i].unit);
                strv_done(&p->mounts[i].keys);
        }
        free(p->mounts);
        p->mounts = NULL;
        p->n_mounts = 0;
        strv_done(&p->preload);
}
