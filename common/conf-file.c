/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-file.h"
#include "log.h"

static char *strip(char *s) {
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                *--e = '\0';
        return s;
}

static char *unquote(char *s) {
        size_t len = strlen(s);

        if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
                s[len - 1] = '\0';
                return s + 1;
        }
        return s;
}

/* The value line assigns to key, or NULL. */
static char *assigned(char *line, const char *key) {
        char *s = strip(line), *eq;

        if (*s == '#' || *s == ';' || !(eq = strchr(s, '=')))
                return NULL;
        *eq = '\0';
        return strcmp(strip(s), key) == 0 ? unquote(strip(eq + 1)) : NULL;
}

int ba_conf_value(const char *path, const char *key, char **ret) {
        char *line = NULL, *value = NULL, *v;
        size_t cap = 0;
        int r = 0;
        FILE *f;

        *ret = NULL;
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (getline(&line, &cap, f) >= 0) {
                if (!(v = assigned(line, key)))
                        continue;
                free(value);
                value = strdup(v);
                if (!value) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r == 0 && ferror(f))
                r = -EIO;
        free(line);
        fclose(f);
        if (r < 0)
                free(value);
        else
                *ret = value;
        return r;
}

int ba_conf_seconds(const char *value, unsigned max, unsigned *ret) {
        unsigned long v;
        char *end;

        if (!value || *value < '0' || *value > '9')
                return -EINVAL;
        errno = 0;
        v = strtoul(value, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

char *ba_conf_get(const char *config_dir, const char *key) {
        char path[4096], *value;
        int r;

        snprintf(path, sizeof(path), "%s/" BA_CONF_FILE, config_dir);
        r = ba_conf_value(path, key, &value);
        if (r < 0)
                log_warning("Cannot read %s (%s): %s is taken as unset.", path, strerror(-r), key);
        return r < 0 ? NULL : value;
}

bool ba_conf_get_seconds(const char *config_dir, const char *key, unsigned max, unsigned *ret) {
        char *v = ba_conf_get(config_dir, key);
        bool ok = v && ba_conf_seconds(v, max, ret) == 0;

        if (v && !ok)
                log_warning("%s/" BA_CONF_FILE ": %s must be a number of seconds from 0 to %u, not '%s'; ignoring it.",
                            config_dir, key, max, v);
        free(v);
        return ok;
}
