/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

static int read_all(int fd, uint8_t *buf, size_t cap, size_t *ret_len) {
        size_t len = 0;

        while (len < cap) {
                ssize_t n = read(fd, buf + len, cap - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        *ret_len = len;
        return 0;
}

int ba_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len) {
        struct stat st;
        uint8_t *buf;
        size_t len = 0;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                close(fd);
                return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        }
        buf = malloc(max + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        r = read_all(fd, buf, max + 1, &len);
        close(fd);
        if (r == 0 && len > max)
                r = -EFBIG;
        if (r < 0) {
                free(buf);
                return r;
        }
        buf[len] = '\0';
        *ret = buf;
        *ret_len = len;
        return 0;
}

int ba_read_fd(int fd, uint8_t *buf, size_t size, size_t *ret_len) {
        uint8_t extra;
        size_t more = 0;
        int r;

        r = read_all(fd, buf, size, ret_len);
        if (r < 0 || *ret_len < size)
                return r;
        r = read_all(fd, &extra, 1, &more);
        if (r < 0)
                return r;
        return more > 0 ? -EFBIG : 0;
}

static int write_all(int fd, const uint8_t *data, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, data, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                data += n;
                len -= (size_t) n;
        }
        return 0;
}

int ba_fsync_dir_of(const char *path) {
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        int fd, r = 0;

        if (!slash)
                strcpy(dir, ".");
        else if (slash == path)
                strcpy(dir, "/");
        else if ((size_t) (slash - path) < sizeof(dir)) {
                memcpy(dir, path, (size_t) (slash - path));
                dir[slash - path] = '\0';
        } else
                return -ENAMETOOLONG;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fsync(fd) < 0)
                r = -errno;
        close(fd);
        return r;
}

static int make_temp(const char *path, mode_t mode, char *tmp, size_t tmp_len) {
        const char *slash = strrchr(path, '/');
        int n, fd;

        if (slash)
                n = snprintf(tmp, tmp_len, "%.*s/.%s.XXXXXX", (int) (slash - path), path, slash + 1);
        else
                n = snprintf(tmp, tmp_len, ".%s.XXXXXX", path);
        if (n < 0 || (size_t) n >= tmp_len)
                return -ENAMETOOLONG;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fchmod(fd, mode) < 0) {
                n = -errno;
                close(fd);
                unlink(tmp);
                return n;
        }
        return fd;
}

static int put_in_place(const char *tmp, const char *path, bool replace) {
        if (replace)
                return rename(tmp, path) < 0 ? -errno : 0;
        if (link(tmp, path) == 0)
                return unlink(tmp) < 0 ? -errno : 0;
        /* Some file systems (vfat) have no hard links; renameat2 still refuses to overwrite. */
        if (errno != EPERM && errno != EOPNOTSUPP)
                return -errno;
        return renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0 ? -errno : 0;
}

int ba_write_file_atomic_mode(const char *path, const void *data, size_t len, bool replace, mode_t mode) {
        char tmp[PATH_MAX];
        int fd, r;

        fd = make_temp(path, mode, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        r = write_all(fd, data, len);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0)
                r = put_in_place(tmp, path, replace);
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        return ba_fsync_dir_of(path);
}

int ba_write_file_atomic(const char *path, const void *data, size_t len, bool replace) {
        return ba_write_file_atomic_mode(path, data, len, replace, 0600);
}

int ba_mkdir_parents(const char *path, mode_t mode) {
        char *copy = strdup(path);
        int r = 0;

        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(copy, mode) < 0 && errno != EEXIST) {
                        r = -errno;
                        break;
                }
                *p = '/';
        }
        free(copy);
        return r;
}
