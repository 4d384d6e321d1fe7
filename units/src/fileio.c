/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#define READ_MAX (1024 * 1024)

int read_file_full(const char *path, char **ret) {
        size_t len = 0, cap = 4096;
        char *buf;
        FILE *f;

        f = fopen(path, "re");
        if (!f)
                return -errno;

        buf = malloc(cap);
        if (!buf) {
                fclose(f);
                return -ENOMEM;
        }

        for (;;) {
                size_t k = fread(buf + len, 1, cap - len - 1, f);

                len += k;
                if (k == 0)
                        break;
                if (len + 1 == cap) {
                        char *nbuf = cap >= READ_MAX ? NULL : realloc(buf, cap * 2);

                        if (!nbuf) {
                                int e = cap >= READ_MAX ? -EFBIG : -ENOMEM;

                                free(buf);
                                fclose(f);
                                return e;
                        }
                        buf = nbuf;
                        cap *= 2;
                }
        }

        if (ferror(f)) {
                int e = errno ? -errno : -EIO;

                free(buf);
                fclose(f);
                return e;
        }
        fclose(f);
        buf[len] = '\0';
        *ret = buf;
        return 0;
}

int mkdir_parents(const char *path) {
        char *copy = strdup(path);
        int r = 0;

        if (!copy)
                return -ENOMEM;

        for (char *p = copy + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(copy, 0755) < 0 && errno != EEXIST) {
                        r = -errno;
                        break;
                }
                *p = '/';
        }
        free(copy);
        return r;
}

int write_file(const char *path, const char *contents) {
        size_t len = strlen(contents);
        int fd, r = 0;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;

        for (size_t done = 0; done < len;) {
                ssize_t k = write(fd, contents + done, len - done);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                done += (size_t) k;
        }

        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}
