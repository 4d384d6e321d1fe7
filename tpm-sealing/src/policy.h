/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <tss2/tss2_tpm2_types.h>

#include "util.h"

typedef uint8_t ba_pcr_values[BA_PCR_COUNT][BA_DIGEST_SIZE];

/* One sha256-bank selection; an empty mask gives count 0. */
void ba_pcr_selection(uint32_t mask, TPML_PCR_SELECTION *sel);

/* The digest PolicyPCR compares: H(values of the selected PCRs, ascending). */
int ba_pcr_digest(uint32_t mask, const ba_pcr_values values, uint8_t out[BA_DIGEST_SIZE]);

/*
 * PCRs whose expected values are not sealed in but signed: the policy
 * holds TPM2_PolicyAuthorize for the key that signs them (systemd-measure
 * signs PCR 11 of a unified kernel image), so any boot image that key
 * signed satisfies it.  A pcr_mask of 0 means no such step.
 */
struct ba_signed_pcrs {
        uint32_t pcr_mask;
        TPM2B_NAME key_name; /* TPM name of the signing key: sha256 alg id + digest */
};

/*
 * The sealed object's authPolicy, computed in software so that explicit
 * (future) PCR values can be sealed to: PolicyAuthorize for the signing
 * key when signed (may be NULL), PolicyPCR over the mask (omitted when the
 * mask is empty), then PolicyAuthValue when a PIN is used.  The order is
 * the one a load satisfies it in (tpm2-unseal.c).  With only a mask and
 * no signer, this is also the digest a PCR signature signs.
 */
int ba_policy_digest(uint32_t mask, const ba_pcr_values values, bool pin, const struct ba_signed_pcrs *signer,
                     uint8_t out[BA_DIGEST_SIZE]);
