/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "keyfile.h"
#include "pin.h"
#include "secure.h"

/*
 * Asks for the recovery passphrase of the key `description` (prompt
 * "Recovery passphrase for btrfs:NAME: ", systemd-ask-password id
 * "btrfs-auth:recovery:btrfs:NAME"), as mode says: BA_ASK_NEW asks twice
 * on interactive sources.  Returns an exit code after logging.
 */
int ba_passphrase_get(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                      struct ba_secret *pass);

/*
 * Opens the key file's recovery copy with passphrases asked for up to
 * tries times (once from stdin).  On success *key holds the key and, when
 * keep_pass is not NULL, *keep_pass the passphrase that opened it.
 * Returns 0, BA_EXIT_BAD_PASSPHRASE after the last wrong one, or another
 * exit code after logging.
 */
int ba_passphrase_unlock(const struct ba_keyfile *kf, const struct ba_ask *ask, unsigned tries,
                         struct ba_secret *key, struct ba_secret *keep_pass);
