/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "plan.h"

#define DROPIN_NAME "50-btrfs-auth.conf"

/* Writes the drop-ins for the plan below dest (the generator's normal
 * directory).  0 or a negative errno, already logged. */
int write_plan(const struct plan *p, const char *dest);
