/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Called for each word "key=value" (value NULL when there is no '=').
 * A negative return stops the parse and is returned. */
typedef int (*cmdline_item_fn)(const char *key, const char *value, void *userdata);

/* Splits like systemd's proc_cmdline_parse(): words are separated by
 * whitespace; single or double quotes anywhere in a word group text and
 * are removed; an unterminated quote runs to the end; backslashes are
 * kept as they are. */
int cmdline_parse(const char *line, cmdline_item_fn fn, void *userdata);

/* The kernel command line: $SYSTEMD_PROC_CMDLINE if set (its contents,
 * as systemd does for testing), else /proc/cmdline. */
int cmdline_read_proc(char **ret);

/* dracut's own additions, which dracut reads before /proc/cmdline:
 * ETCDIR/cmdline.d/ *.conf (in name order) and ETCDIR/cmdline, joined by
 * spaces.  Missing files give "". */
int cmdline_read_dracut(const char *etcdir, char **ret);
