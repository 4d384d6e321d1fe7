/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "pin.h"
#include "secure.h"

/*
 * Asks for the PIN of the key `description` and leaves its TPM2B_AUTH in
 * *auth (secret memory), asking as mode says.  Returns an exit code after logging.
 */
int ba_pin_get_auth(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                    struct ba_secret *auth);
