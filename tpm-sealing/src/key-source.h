/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "keyfile.h"
#include "pin.h"
#include "secure.h"
#include "tpm2-context.h"

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

/* How a sealed key is got out: which TPM, where this boot's PCR signature is, how to ask a person. */
struct ba_unseal_opts {
        struct ba_tpm_target tpm;
        const char *pcr_signature;  /* this boot's signed PCR values; NULL: systemd-stub's */
        const char *pcr_public_key; /* the key that signs them; NULL: systemd-stub's */
        struct ba_ask pin_ask;
        unsigned pin_tries;         /* PIN attempts when a person types it */
        struct ba_ask pass_ask;
        unsigned recovery_tries;    /* recovery key or passphrase attempts; 0: never ask */
};

/* Unseals kf's key with the TPM, asking for the PIN if it has one.  Returns an exit code after logging. */
int ba_key_unseal(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, struct ba_secret *key);

/*
 * The key of kf: from the TPM, then (with previous_of, the path kf was
 * read from) <previous_of>.previous, then the recovery copy
 * (o->recovery_tries tries).  *pass, when not NULL, keeps what opened the
 * recovery copy (ba_recovery_input) if that was the way in.  Returns an exit code.
 */
int ba_key_obtain(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const char *previous_of,
                  struct ba_secret *key, enum ba_key_source *source, struct ba_secret *pass);

/* key_path followed by suffix (NAME.sealed.new, .previous), malloc'ed; NULL when out of memory. */
char *ba_key_path_with(const char *key_path, const char *suffix);
