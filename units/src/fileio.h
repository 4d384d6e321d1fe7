/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Reads a whole (small) file into a NUL-terminated string.  Files over
 * 1 MiB are refused with -EFBIG: nothing this generator reads is that
 * large, and a huge one must not eat the initrd's memory. */
int read_file_full(const char *path, char **ret);

/* Creates every missing directory of path's parent, mode 0755. */
int mkdir_parents(const char *path);

/* Writes contents to path (replacing it), mode 0644. */
int write_file(const char *path, const char *contents);
