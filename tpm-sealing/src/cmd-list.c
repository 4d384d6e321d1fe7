/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs-auth list [NAME]: for each key of the config dir (or NAME), its
 * seals (NAME.sealed, NAME.sealed.previous, NAME.sealed.new) with what
 * each is bound to, and the recovery copy each holds: kind, KDF and cost.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "exit-codes.h"
#include "keyfile-describe.h"
#include "log.h"

static const struct {
        const char *label, *suffix;
} seals[] = {
        { "current", "" },
        { "previous", BA_PREVIOUS_SUFFIX },
        { "new", BA_PENDING_SUFFIX },
};

/* One seal and its recovery copy; returns 0, or the exit code of a file that does not load (logged). */
static int list_seal(const char *dir, const char *name, size_t i) {
        char path[4096], desc[BA_NAME_MAX + sizeof(BA_DESCRIPTION_PREFIX)], line[192];
        struct ba_keyfile kf;
        int r;

        snprintf(path, sizeof(path), "%s/%s" BA_KEYFILE_SUFFIX "%s", dir, name, seals[i].suffix);
        snprintf(desc, sizeof(desc), BA_DESCRIPTION_PREFIX "%s", name);
        if (access(path, F_OK) < 0) {
                printf("  seal %-9s none\n", seals[i].label);
                return 0;
        }
        r = ba_keyfile_load(path, desc, &kf);
        if (r != 0) {
                printf("  seal %-9s %s: unusable (exit code %d, see the message)\n", seals[i].label, path, r);
                return r;
        }
        ba_binding_summary(&kf, line, sizeof(line));
        printf("  seal %-9s %s: %s%s\n", seals[i].label, path, line,
               i == 2 ? " (the new key of an unfinished rekey)" : "");
        if (kf.has_recovery) {
                ba_recovery_describe(&kf.recovery, line, sizeof(line));
                printf("  recovery       %s (in %s)\n", line, path);
        }
        return 0;
}

static int list_key(const char *dir, const char *name) {
        int first = 0;

        printf("btrfs:%s\n", name);
        for (size_t i = 0; i < sizeof(seals) / sizeof(seals[0]); i++) {
                int r = list_seal(dir, name, i);

                if (r != 0 && first == 0)
                        first = r;
        }
        fflush(stdout);
        return first;
}

/* NAME of NAME.sealed, NAME.sealed.previous or NAME.sealed.new; false for anything else. */
static bool key_name_of(const char *file, char *name, size_t len) {
        const char *p = strstr(file, BA_KEYFILE_SUFFIX);

        while (p) {
                const char *rest = p + strlen(BA_KEYFILE_SUFFIX);

                if ((*rest == '\0' || strcmp(rest, BA_PREVIOUS_SUFFIX) == 0 || strcmp(rest, BA_PENDING_SUFFIX) == 0) &&
                    (size_t) (p - file) < len) {
                        memcpy(name, file, (size_t) (p - file));
                        name[p - file] = '\0';
                        return ba_name_valid(name);
                }
                p = strstr(p + 1, BA_KEYFILE_SUFFIX);
        }
        return false;
}

static int compare_strings(const void *x, const void *y) {
        return strcmp(*(char *const *) x, *(char *const *) y);
}

/* The NAMEs of the key files in dir, sorted, each once; returns their number or -errno. */
static int collect_names(const char *dir, char ***ret) {
        char name[BA_NAME_MAX + 1], **names = NULL;
        struct dirent *de;
        size_t n = 0, cap = 0;
        DIR *d = opendir(dir);

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                if (!key_name_of(de->d_name, name, sizeof(name)))
                        continue;
                if (n == cap) {
                        char **more = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));

                        if (!more)
                                break;
                        names = more;
                }
                names[n] = strdup(name);
                if (!names[n])
                        break;
                n++;
        }
        closedir(d);
        if (de) { /* out of memory */
                while (n > 0)
                        free(names[--n]);
                free(names);
                return -ENOMEM;
        }
        if (n > 0)
                qsort(names, n, sizeof(*names), compare_strings);
        *ret = names;
        return (int) n;
}

static int list_dir(const char *dir) {
        char **names = NULL;
        int n, first = 0, keys = 0;

        n = collect_names(dir, &names);
        if (n == -ENOENT)
                return log_fail(BA_EXIT_NO_KEYFILE, "%s does not exist: no key is enrolled there.", dir);
        if (n < 0) {
                log_error_errno(n, "Cannot read %s", dir);
                return BA_EXIT_FAILURE;
        }
        for (int i = 0; i < n; i++) {
                if (i == 0 || strcmp(names[i], names[i - 1]) != 0) {
                        int r = list_key(dir, names[i]);

                        if (r != 0 && first == 0)
                                first = r;
                        keys++;
                }
        }
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        if (keys == 0)
                log_info("No key files in %s.", dir);
        return first;
}

int ba_cmd_list(const struct ba_args *a) {
        char p[4096];
        bool any = false;

        if (!a->target)
                return list_dir(a->config_dir);
        for (size_t i = 0; i < sizeof(seals) / sizeof(seals[0]) && !any; i++) {
                snprintf(p, sizeof(p), "%s%s", a->key_path, seals[i].suffix);
                any = access(p, F_OK) == 0;
        }
        if (!any)
                return log_fail(BA_EXIT_NO_KEYFILE, "Key file %s does not exist, nor a previous or new seal next to "
                                "it: enroll the key first, or check the NAME and --config-dir.", a->key_path);
        return list_key(a->config_dir, a->target);
}
