/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "keyfile.h"

/* Reads and parses a key file; with expected, its description must be that.  Returns an exit code after logging. */
int ba_keyfile_load(const char *path, const char *expected, struct ba_keyfile *kf);
/* Writes kf to path atomically (fileio.h); without replace an existing file is an error.  Returns an exit code. */
int ba_keyfile_store(const char *path, const struct ba_keyfile *kf, bool replace);
