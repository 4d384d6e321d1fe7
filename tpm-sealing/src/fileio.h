/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure.h"

/* Whole regular file, at most max bytes (-EFBIG beyond); -errno otherwise. */
int ba_read_file(const char *path, size_t max, uint8_t **ret, size_t *ret_len);

/* Reads all of fd into a secret buffer of s->size bytes; -EFBIG if there is more. */
int ba_read_fd_secret(int fd, struct ba_secret *s);

/*
 * Writes a mode-0600 file so that path either keeps its old content or
 * has the whole new one, even across a crash: temp file in the same
 * directory, fsync, rename (or link when !replace, which fails with
 * -EEXIST instead of overwriting), fsync of the directory.
 */
int ba_write_file_atomic(const char *path, const void *data, size_t len, bool replace);

/* fsync of the directory holding path, after a rename or unlink in it. */
int ba_fsync_dir_of(const char *path);
