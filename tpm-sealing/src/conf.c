/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

static char *strip(char *s) {
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                *--e = '\0';
        if (e - s >= 2 && (s[0] == '"' || s[0] == '\'') && e[-1] == s[0]) {
                e[-1] = '\0';
                s++;
        }
        return s;
}

char *ba_conf_get(const char *config_dir, const char *key) {
        char path[4096], line[1024], *value = NULL;
        size_t klen = strlen(key);
        FILE *f;

        snprintf(path, sizeof(path), "%s/btrfs-auth.conf", config_dir);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        while (fgets(line, sizeof(line), f)) {
                char *s = strip(line);

                if (strncmp(s, key, klen) != 0 || s[klen] != '=')
                        continue;
                free(value);
                value = strdup(strip(s + klen + 1));
        }
        fclose(f);
        return value;
}
