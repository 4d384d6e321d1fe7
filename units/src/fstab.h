/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct fstab_entry {
        char *what;
        char *where;
        char *type;     /* "" when the line has no third field */
        char *options;  /* "" when the line has no fourth field */
};

/* Called per entry; a negative return stops the parse and is returned. */
typedef int (*fstab_entry_fn)(const struct fstab_entry *e, const char *path, unsigned line, void *userdata);

/* Splits one line into fields in place, decoding the \NNN octal escapes
 * fstab(5) uses for spaces and the like.  Returns 1 for an entry, 0 for a
 * blank or comment line, -EINVAL for a line without a mount point. */
int fstab_parse_line(char *line, struct fstab_entry *ret);

/* Parses a whole fstab; a missing file is fine (0).  Malformed lines are
 * logged and skipped: one bad line must not hide the others. */
int fstab_parse_file(const char *path, fstab_entry_fn fn, void *userdata);
