/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Whole regular file, at most max bytes (-EFBIG beyond); -errno otherwise.
 * *ret is followed by a NUL byte that *ret_len does not count, so a text
 * file reads as a string.
 */
int ba_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len);

/* Reads all of fd into buf of size bytes (*ret_len: how many); -EFBIG if there is more. */
int ba_read_fd(int fd, uint8_t *buf, size_t size, size_t *ret_len);

/*
 * Writes a file of the given mode so that path either keeps its old content
 * or has the whole new one, even across a crash: temp file in the same
 * directory, fsync, rename (or link when !replace, which fails with
 * -EEXIST instead of overwriting), fsync of the directory.  A symlink at
 * path is replaced, never followed.
 */
int ba_write_file_atomic_mode(const char *path, const void *data, size_t len, bool replace, mode_t mode);
/* The same, mode 0600: what the tool writes is key material or key state. */
int ba_write_file_atomic(const char *path, const void *data, size_t len, bool replace);

/* fsync of the directory holding path, after a rename or unlink in it. */
int ba_fsync_dir_of(const char *path);

/* Creates every missing directory of path's parent with mode (existing ones are left as they are). */
int ba_mkdir_parents(const char *path, mode_t mode);
