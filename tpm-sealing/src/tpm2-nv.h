/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "pcr-pubkey.h"
#include "pcr-signature.h"
#include "tpm2-context.h"

/*
 * TPM NV indexes written only from a boot that satisfies a signed PCR
 * policy: TPMA_NV_POLICYWRITE with authPolicy = PolicyAuthorize(signer),
 * so any process may read them (empty auth value, TPMA_NV_AUTHREAD) but
 * only a boot image the signer signed for PCR 11 can write them.
 */
#define BA_NV_ATTRS_BASE (TPMA_NV_POLICYWRITE | TPMA_NV_WRITEDEFINE | TPMA_NV_AUTHREAD | TPMA_NV_NO_DA)

/* The index's public area; -ENOENT when the index is not defined.  Other failures: exit code after logging. */
int ba_tpm_nv_read_public(struct ba_tpm *t, uint32_t index, TPM2B_NV_PUBLIC *pub, ESYS_TR *obj);

/* Defines index (owner authorization, which must be empty) with size, attrs and auth_policy. */
int ba_tpm_nv_define(struct ba_tpm *t, uint32_t index, uint16_t size, TPMA_NV attrs, const TPM2B_DIGEST *auth_policy,
                     ESYS_TR *obj);

/* Reads size bytes from offset 0 with the (empty) auth value. */
int ba_tpm_nv_read(struct ba_tpm *t, ESYS_TR obj, uint16_t size, uint8_t *out);

/*
 * Writes data at offset 0 in a policy session satisfying PolicyAuthorize
 * for the signed PCRs, then, when lock, write-locks the index for good
 * (TPMA_NV_WRITEDEFINE).  Needs t->srk (the sessions are salted).
 */
int ba_tpm_nv_write_signed(struct ba_tpm *t, ESYS_TR obj, const uint8_t *data, uint16_t len, bool lock,
                           uint32_t signed_mask, const struct ba_pcr_pubkey *key, const struct ba_pcr_signature *sig);

/* Deletes the index with owner authorization. */
int ba_tpm_nv_undefine(struct ba_tpm *t, ESYS_TR obj);

/* authPolicy of an index only key may authorize writes to: PolicyAuthorize(key name, empty policyRef). */
int ba_nv_signed_write_policy(const TPM2B_NAME *key_name, TPM2B_DIGEST *out);
