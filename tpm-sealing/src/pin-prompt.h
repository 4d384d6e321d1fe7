/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "pin.h"
#include "secure.h"

/*
 * Asks for the PIN of the key `description` and leaves its TPM2B_AUTH in
 * *auth (secret memory).  confirm asks twice when the source is
 * interactive.  Returns an exit code after logging.
 */
int ba_pin_get_auth(enum ba_pin_source src, const char *description, bool confirm, struct ba_secret *auth);
