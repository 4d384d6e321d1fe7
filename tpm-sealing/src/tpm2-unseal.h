/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <tss2/tss2_tpm2_types.h>

#include "keyfile.h"
#include "pcr-pubkey.h"
#include "pcr-signature.h"
#include "secure.h"
#include "tpm2-context.h"

/* What the signed part of a key's policy needs (signed-policy.c); NULL for keys without one. */
struct ba_signed_proof {
        const struct ba_pcr_pubkey *key;
        const struct ba_pcr_signature *sig;
};

/* Loads the key file's sealed object under t->srk; returns an exit code after logging. */
int ba_tpm_load_sealed(struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR *ret);

/*
 * Satisfies the key file's policy in a salted, response-encrypted policy
 * session and unseals into *out (allocated here).  A policy failure is
 * explained by naming the PCRs that changed; returns an exit code.
 */
int ba_tpm_unseal(struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR object, const TPM2B_AUTH *auth,
                  const struct ba_signed_proof *proof, struct ba_secret *out);
