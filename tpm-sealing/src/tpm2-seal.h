/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <tss2/tss2_tpm2_types.h>

#include "secure.h"
#include "tpm2-context.h"
#include "util.h"

/*
 * Creates the sealed data object under t->srk: fixedTPM|fixedParent,
 * userWithAuth clear (only the policy can authorize it), noDA unless a PIN
 * (auth) is given.  Returns an exit code after logging.
 */
int ba_tpm_seal(struct ba_tpm *t, const struct ba_secret *key, const TPM2B_AUTH *auth,
                const uint8_t policy[BA_DIGEST_SIZE], TPM2B_PUBLIC *ret_public, TPM2B_PRIVATE *ret_private);
