/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fstab.h"
#include "log.h"

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_octal(char c) {
        return c >= '0' && c <= '7';
}

/* Decodes \NNN in place, like libmount's unmangle(). */
static void unmangle(char *s) {
        char *t = s;

        while (*s) {
                if (s[0] == '\\' && is_octal(s[1]) && is_octal(s[2]) && is_octal(s[3])) {
                        *t++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
                        s += 4;
                } else {
                        *t++ = *s++;
                }
        }
        *t = '\0';
}

/* Returns the next field of *p (terminated in place), or NULL. */
static char *next_field(char **p) {
        char *s = *p, *start;

        while (is_blank(*s))
                s++;
        if (*s == '\0') {
                *p = s;
                return NULL;
        }
        start = s;
        while (*s && !is_blank(*s))
                s++;
        if (*s)
                *s++ = '\0';
        *p = s;
        unmangle(start);
        return start;
}

int fstab_parse_line(char *line, struct fstab_entry *ret) {
        char *p = line, *type, *options;

        while (is_blank(*p))
                p++;
        if (*p == '\0' || *p == '#')
                return 0;

        ret->what = next_field(&p);
        ret->where = next_field(&p);
        if (!ret->where)
                return -EINVAL;
        type = next_field(&p);
        options = type ? next_field(&p) : NULL;
        ret->type = type ? type : (char *) "";
        ret->options = options ? options : (char *) "";
        return 1;
}

int fstab_parse_file(const char *path, fstab_entry_fn fn, void *userdata) {
        struct fstab_entry e;
        size_t cap = 0;
        char *line = NULL;
        unsigned n = 0;
        int r = 0;
        FILE *f;

        f = fopen(path, "re");
        if (!f) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "Failed to open %s, ignoring it", path);
                return 0;
        }

        while (getline(&line, &cap, f) >= 0) {
                n++;
                r = fstab_parse_line(line, &e);
                if (r == -EINVAL) {
                        log_warning("%s:%u: no mount point, ignoring line.", path, n);
                        continue;
                }
                if (r == 0)
                        continue;
                r = fn(&e, path, n, userdata);
                if (r < 0)
                        break;
        }
        if (r >= 0 && ferror(f))
                log_warning("Failed to read all of %s.", path);

        free(line);
        fclose(f);
        return r < 0 ? r : 0;
}
