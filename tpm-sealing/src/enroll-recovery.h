/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "keyfile.h"
#include "pin.h"
#include "recovery.h"
#include "secure.h"

/* What enroll adds besides the TPM seal. */
enum ba_recovery_mode {
        BA_RECOVERY_DEFAULT,    /* no option given: a recovery key when stdout is a terminal, else refused */
        BA_RECOVERY_KEY,        /* --recovery-key: generated, printed once on stdout */
        BA_RECOVERY_PASSPHRASE, /* --recovery-passphrase: asked for, with a warning */
        BA_RECOVERY_NONE,       /* --no-recovery */
};

/*
 * Settles BA_RECOVERY_DEFAULT before any work: a recovery key when stdout
 * is a terminal; otherwise the key would go to a file, a pipe or a log
 * nobody chose, so enroll refuses and says what to pass.  Returns 0 or
 * BA_EXIT_USAGE after logging.
 */
int ba_enroll_recovery_mode(enum ba_recovery_mode *mode);

/*
 * Adds kf's recovery copy of key as mode says (cost: NULL for the default
 * of its kind).  For a recovery key, *shown gets its raw bytes, for
 * ba_recovery_key_show once everything else worked.  Returns an exit code.
 */
int ba_enroll_recovery_add(enum ba_recovery_mode mode, const struct ba_recovery_cost *cost, const struct ba_ask *ask,
                           const struct ba_secret *key, struct ba_keyfile *kf, struct ba_secret *shown);

/* Prints the recovery key raw in its typed form on stdout, the only place it ever goes.  Returns an exit code. */
int ba_recovery_key_show(const struct ba_secret *raw, const char *description);
