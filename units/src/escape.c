/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* systemd's UNIT_NAME_MAX counts the terminating NUL. */
#define UNIT_NAME_MAX 256

static bool char_is_plain(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.';
}

static char *escape_byte(unsigned char c, char *t) {
        static const char hex[] = "0123456789abcdef";

        *t++ = '\\';
        *t++ = 'x';
        *t++ = hex[c >> 4];
        *t++ = hex[c & 15];
        return t;
}

int escape_unit_string(const char *s, char **ret) {
        char *buf, *t;

        buf = malloc(strlen(s) * 4 + 1);
        if (!buf)
                return -ENOMEM;
        t = buf;

        /* A leading dot would make a hidden file of the unit. */
        if (*s == '.')
                t = escape_byte((unsigned char) *s++, t);

        for (; *s; s++) {
                if (*s == '/')
                        *t++ = '-';
                else if (char_is_plain(*s))
                        *t++ = *s;
                else
                        t = escape_byte((unsigned char) *s, t);
        }
        *t = '\0';
        *ret = buf;
        return 0;
}

/* Appends component [c, c+len) to out (which has room) after a '/'. */
static int append_component(char *out, size_t *o, const char *c, size_t len) {
        if (len == 1 && c[0] == '.')
                return 0;
        if (len == 2 && c[0] == '.' && c[1] == '.')
                return -EINVAL;
        if (len > NAME_MAX)
                return -EINVAL;
        out[(*o)++] = '/';
        memcpy(out + *o, c, len);
        *o += len;
        return 0;
}

/* Normalises an absolute path the way systemd's path_simplify() does and
 * refuses what path_is_normalized() refuses. "" stands for "/". */
static int path_normalize(const char *path, char **ret) {
        size_t o = 0;
        char *out;
        int r;

        if (path[0] != '/' || strlen(path) >= PATH_MAX)
                return -EINVAL;

        out = malloc(strlen(path) + 1);
        if (!out)
                return -ENOMEM;

        for (const char *p = path; *p;) {
                size_t len;

                while (*p == '/')
                        p++;
                len = strcspn(p, "/");
                if (len == 0)
                        break;
                r = append_component(out, &o, p, len);
                if (r < 0) {
                        free(out);
                        return r;
                }
                p += len;
        }
        out[o] = '\0';
        *ret = out;
        return 0;
}

int escape_unit_path(const char *path, char **ret) {
        char *norm;
        int r;

        r = path_normalize(path, &norm);
        if (r < 0)
                return r;

        if (norm[0] == '\0') {
                free(norm);
                *ret = strdup("-");
                return *ret ? 0 : -ENOMEM;
        }

        r = escape_unit_string(norm + 1, ret);
        free(norm);
        return r;
}

static int join_checked(const char *a, const char *b, const char *c, char **ret) {
        size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
        char *s;

        if (la + lb + lc >= UNIT_NAME_MAX)
                return -ENAMETOOLONG;

        s = malloc(la + lb + lc + 1);
        if (!s)
                return -ENOMEM;
        memcpy(s, a, la);
        memcpy(s + la, b, lb);
        memcpy(s + la + lb, c, lc + 1);
        *ret = s;
        return 0;
}

int unit_name_from_path(const char *path, const char *suffix, char **ret) {
        char *escaped;
        int r;

        r = escape_unit_path(path, &escaped);
        if (r < 0)
                return r;
        r = join_checked("", escaped, suffix, ret);
        free(escaped);
        return r;
}

int unit_name_instance(const char *prefix, const char *instance, const char *suffix, char **ret) {
        char *escaped;
        int r;

        if (instance[0] == '\0')
                return -EINVAL;

        r = escape_unit_string(instance, &escaped);
        if (r < 0)
                return r;
        r = join_checked(prefix, escaped, suffix, ret);
        free(escaped);
        return r;
}
