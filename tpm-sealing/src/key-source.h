/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "args.h"
#include "keyfile.h"
#include "secure.h"

/* Where a key came from, as recorded for "btrfs-auth confirm". */
enum ba_key_source {
        BA_SOURCE_NONE,
        BA_SOURCE_SEALED,   /* NAME.sealed through the TPM */
        BA_SOURCE_PREVIOUS, /* NAME.sealed.previous through the TPM */
        BA_SOURCE_RECOVERY, /* the recovery copy: recovery key or passphrase */
        BA_SOURCE_KEY_FILE, /* a raw key file given by the administrator */
        BA_SOURCE_PROVISIONED, /* made on this first boot of an image (provision.c) */
};
const char *ba_key_source_name(enum ba_key_source s);

/* Unseals kf's key with the TPM, asking for the PIN if it has one.  Returns an exit code after logging. */
int ba_key_unseal(const struct ba_args *a, const struct ba_keyfile *kf, struct ba_secret *key);

/*
 * The key of kf (NAME.sealed, read from a->key_path): from the TPM, then
 * (for NAME targets, when allow_previous) NAME.sealed.previous, then the
 * recovery copy (a->recovery_tries tries).  *pass, when not NULL, keeps
 * what opened the recovery copy (ba_recovery_input) if that was the way in.  Returns an exit code.
 */
int ba_key_obtain(const struct ba_args *a, const struct ba_keyfile *kf, bool allow_previous, struct ba_secret *key,
                  enum ba_key_source *source, struct ba_secret *pass);

/* <config-dir>/NAME.sealed<suffix> for NAME targets, a->key_path<suffix> otherwise; malloc'ed. */
char *ba_key_path_with(const struct ba_args *a, const char *suffix);
