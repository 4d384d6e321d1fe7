/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "pcr-pubkey.h"
#include "pcr-signature.h"
#include "tpm2-context.h"

/*
 * The signed part of a policy, in the policy session: TPM2_PolicyPCR over
 * the signed PCRs (the TPM takes their current values), then
 * TPM2_PolicyAuthorize with a ticket from TPM2_VerifySignature of sig by
 * key.  The TPM itself checks that the session's digest is the signed one
 * and that key signed it; afterwards the session's digest is the one
 * PolicyAuthorize(key) gives, whatever PCR values were signed.  Returns an
 * exit code after logging.
 */
int ba_tpm_policy_authorize(struct ba_tpm *t, ESYS_TR session, uint32_t signed_mask, const struct ba_pcr_pubkey *key,
                            const struct ba_pcr_signature *sig);
