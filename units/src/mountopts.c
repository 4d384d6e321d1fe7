/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "key-name.h"
#include "log.h"
#include "mountopts.h"

/* Handles one option [opt, opt+len); returns 1 if a name was taken. */
static int one_option(const char *opt, size_t len, const char *where, struct strv *names) {
        const size_t ol = strlen(AUTH_KEY_OPTION), pl = strlen(AUTH_KEY_PREFIX);
        char *name;
        int r;

        if (len == ol - 1 && strncmp(opt, AUTH_KEY_OPTION, len) == 0) {
                log_warning("Mount option \"auth_key\" for %s has no value; expected auth_key=btrfs:NAME.", where);
                return 0;
        }
        if (len < ol || strncmp(opt, AUTH_KEY_OPTION, ol) != 0)
                return 0;

        opt += ol;
        len -= ol;
        if (len <= pl || strncmp(opt, AUTH_KEY_PREFIX, pl) != 0) {
                log_warning("Mount option \"auth_key=%.*s\" for %s is not of the form auth_key=btrfs:NAME; "
                            "the kernel will refuse it, not loading any key for it.", (int) len, opt, where);
                return 0;
        }

        name = strndup(opt + pl, len - pl);
        if (!name)
                return -ENOMEM;
        if (!ba_name_valid(name)) {
                log_warning("Mount option \"auth_key=btrfs:%s\" for %s names no valid key (letters, digits, "
                            "_ - . @ +, not starting with . or -); the kernel will refuse the mount, not loading "
                            "any key for it.", name, where);
                free(name);
                return 0;
        }
        r = strv_add_unique(names, name);
        free(name);
        return r < 0 ? r : 1;
}

int mountopts_auth_keys(const char *options, const char *where, struct strv *names) {
        int found = 0;

        for (const char *p = options; *p;) {
                size_t len = strcspn(p, ",");
                int r;

                if (len > 0) {
                        r = one_option(p, len, where, names);
                        if (r < 0)
                                return r;
                        found += r;
                }
                p += len;
                if (*p == ',')
                        p++;
        }
        return found;
}

bool mountopts_has(const char *options, const char *flag) {
        size_t fl = strlen(flag);

        for (const char *p = options; *p;) {
                size_t len = strcspn(p, ",");

                if (len == fl && strncmp(p, flag, fl) == 0)
                        return true;
                p += len;
                if (*p == ',')
                        p++;
        }
        return false;
}
