/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "strv.h"

#define AUTH_KEY_OPTION "auth_key="
#define AUTH_KEY_PREFIX "btrfs:"

/* Adds NAME for every "auth_key=btrfs:NAME" in the comma-separated mount
 * options.  Every occurrence counts, not only the last one: requiring one
 * key too many can only stop a mount, never let one through without its
 * key.  Values the kernel would refuse are logged (naming where) and
 * skipped; the kernel then refuses the mount itself.
 * Returns the number of names found, or -ENOMEM. */
int mountopts_auth_keys(const char *options, const char *where, struct strv *names);

/* Whether the comma-separated options contain exactly flag. */
bool mountopts_has(const char *options, const char *flag);
