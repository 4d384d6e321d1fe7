/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "keyfile.h"
#include "pin.h"
#include "secure.h"

/* "recovery key" or "recovery passphrase": what the copy rec opens with, for messages. */
const char *ba_recovery_noun(const struct ba_recovery_record *rec);

/*
 * Asks for the recovery passphrase of the key `description` (prompt
 * "Recovery passphrase for btrfs:NAME: ", systemd-ask-password id
 * "btrfs-auth:recovery:btrfs:NAME"), as mode says: BA_ASK_NEW asks twice
 * on interactive sources.  Returns an exit code after logging.
 */
int ba_passphrase_get(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                      struct ba_secret *pass);

/*
 * What the KDF of the recovery copy rec takes from what was typed: the
 * passphrase as it is, or the recovery key's 32 raw bytes.  Returns 0, or
 * BA_EXIT_RECOVERY_KEY_TYPO after logging which group has the typo.
 */
int ba_recovery_input(const struct ba_recovery_record *rec, const struct ba_secret *typed, const char *description,
                      struct ba_secret *input);

/*
 * Opens the key file's recovery copy with its recovery key or passphrase,
 * asked for up to tries times (once from stdin).  On success *key holds
 * the key and, when keep is not NULL, *keep what the KDF took (see
 * ba_recovery_input), to make another copy under the same secret.
 * Returns 0, BA_EXIT_BAD_PASSPHRASE after the last wrong one,
 * BA_EXIT_RECOVERY_KEY_TYPO when the last had a typo, or another exit
 * code after logging.
 */
int ba_passphrase_unlock(const struct ba_keyfile *kf, const struct ba_ask *ask, unsigned tries,
                         struct ba_secret *key, struct ba_secret *keep);
