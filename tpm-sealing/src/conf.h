/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The value of KEY in <config_dir>/btrfs-auth.conf (KEY=VALUE lines as in
 * a systemd EnvironmentFile=, one pair of quotes removed), malloc'ed, or
 * NULL when the file or the key is missing.  The last assignment wins.
 */
char *ba_conf_get(const char *config_dir, const char *key);
