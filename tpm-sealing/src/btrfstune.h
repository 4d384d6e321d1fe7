/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "secure.h"

/*
 * Runs "btrfstune --auth-key-file OLD --new-auth-key-file NEW DEV" (the
 * patched btrfs-progs; resumable), the keys passed through pipes as
 * /proc/self/fd/3 and /4, never through a file or argv.  Returns 0, or
 * BA_EXIT_REKEY (or BA_EXIT_FAILURE) after logging.
 */
int ba_btrfstune_rekey(const char *btrfstune, const char *dev, const struct ba_secret *old_key,
                       const struct ba_secret *new_key);
