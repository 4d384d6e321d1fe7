/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#define BA_CONF_UPDATE_INITRAMFS "BTRFS_AUTH_UPDATE_INITRAMFS"

/*
 * After key files changed: runs BTRFS_AUTH_UPDATE_INITRAMFS from
 * <config_dir>/btrfs-auth.conf with /bin/sh, else "update-initramfs -u -k
 * all" or "dracut --force --regenerate-all", whichever exists, so the
 * initramfs carries the new files.  With skip (--no-update-initramfs),
 * only a reminder.  Returns an exit code after logging.
 */
int ba_update_initramfs(const char *config_dir, bool skip);
