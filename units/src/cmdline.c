/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "fileio.h"
#include "log.h"

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Copies the next word of *p into out (which has room for all of *p) and
 * advances *p.  Returns false at the end of the line. */
static bool next_word(const char **p, char *out) {
        const char *s = *p;
        char quote = 0;
        size_t o = 0;

        while (is_space(*s))
                s++;
        if (*s == '\0') {
                *p = s;
                return false;
        }

        for (; *s; s++) {
                if (quote) {
                        if (*s == quote)
                                quote = 0;
                        else
                                out[o++] = *s;
                } else if (*s == '"' || *s == '\'') {
                        quote = *s;
                } else if (is_space(*s)) {
                        break;
                } else {
                        out[o++] = *s;
                }
        }
        out[o] = '\0';
        *p = s;
        return true;
}

int cmdline_parse(const char *line, cmdline_item_fn fn, void *userdata) {
        char *word;
        int r = 0;

        word = malloc(strlen(line) + 1);
        if (!word)
                return -ENOMEM;

        while (next_word(&line, word)) {
                char *value = strchr(word, '=');

                if (value)
                        *value++ = '\0';
                if (word[0] == '\0')
                        continue;
                r = fn(word, value, userdata);
                if (r < 0)
                        break;
                r = 0;
        }

        free(word);
        return r;
}

/* Nothing this generator reads is near 1 MiB, and a huge file must not eat the initrd's memory. */
#define TEXT_MAX (1024 * 1024)

/* A whole (small) text file as a string; -EFBIG beyond TEXT_MAX. */
static int read_text(const char *path, char **ret) {
        uint8_t *buf;
        size_t len;
        int r = ba_read_file(path, TEXT_MAX, &buf, &len);

        if (r == 0)
                *ret = (char *) buf;
        return r;
}

int cmdline_read_proc(char **ret) {
        const char *e = secure_getenv("SYSTEMD_PROC_CMDLINE");

        if (e) {
                *ret = strdup(e);
                return *ret ? 0 : -ENOMEM;
        }
        return read_text("/proc/cmdline", ret);
}

/* Appends " " + the contents of path to *buf; a missing file adds nothing. */
static int append_file(char **buf, const char *path) {
        char *content = NULL, *joined;
        int r;

        r = read_text(path, &content);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                log_warning_errno(r, "Failed to read %s, ignoring it", path);
                return 0;
        }

        if (asprintf(&joined, "%s %s", *buf, content) < 0) {
                free(content);
                return -ENOMEM;
        }
        free(content);
        free(*buf);
        *buf = joined;
        return 0;
}

static int conf_filter(const struct dirent *de) {
        size_t len = strlen(de->d_name);

        return de->d_name[0] != '.' && len > 5 && strcmp(de->d_name + len - 5, ".conf") == 0;
}

/* Appends etcdir/cmdline.d/ *.conf in name order, as dracut reads them. */
static int append_conf_dir(char **buf, const char *etcdir) {
        struct dirent **list = NULL;
        char *dir, *path;
        int n, r = 0;

        if (asprintf(&dir, "%s/cmdline.d", etcdir) < 0)
                return -ENOMEM;

        n = scandir(dir, &list, conf_filter, alphasort);
        if (n < 0 && errno != ENOENT)
                log_warning_errno(errno, "Failed to list %s, ignoring it", dir);

        for (int i = 0; i < n; i++) {
                if (r >= 0 && asprintf(&path, "%s/%s", dir, list[i]->d_name) < 0)
                        r = -ENOMEM;
                else if (r >= 0) {
                        r = append_file(buf, path);
                        free(path);
                }
                free(list[i]);
        }
        free(list);
        free(dir);
        return r;
}

int cmdline_read_dracut(const char *etcdir, char **ret) {
        char *buf, *path;
        int r;

        buf = strdup("");
        if (!buf)
                return -ENOMEM;

        r = append_conf_dir(&buf, etcdir);
        if (r >= 0 && asprintf(&path, "%s/cmdline", etcdir) < 0)
                r = -ENOMEM;
        else if (r >= 0) {
                r = append_file(&buf, path);
                free(path);
        }
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret = buf;
        return 0;
}
