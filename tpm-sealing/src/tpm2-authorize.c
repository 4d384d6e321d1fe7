/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "crypto.h"
#include "exit-codes.h"
#include "log.h"
#include "policy.h"
#include "tpm2-authorize.h"
#include "tpm2-rc.h"

/* The TPM's proof that key signed the policy digest: aHash = H(approvedPolicy || policyRef), policyRef empty. */
static int verify(struct ba_tpm *t, const struct ba_pcr_pubkey *key, const struct ba_pcr_signature *sig,
                  TPMT_TK_VERIFIED **ticket) {
        TPMT_SIGNATURE s = { .sigAlg = TPM2_ALG_RSASSA };
        TPM2B_DIGEST digest = { .size = BA_DIGEST_SIZE };
        ESYS_TR handle = ESYS_TR_NONE;
        TSS2_RC rc;

        if (ba_sha256((const struct ba_iovec[]) { { sig->policy, BA_DIGEST_SIZE } }, 1, digest.buffer) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot hash the signed policy (libcrypto failure).");
        s.signature.rsassa.hash = TPM2_ALG_SHA256;
        s.signature.rsassa.sig.size = (UINT16) sig->sig_len;
        memcpy(s.signature.rsassa.sig.buffer, sig->sig, sig->sig_len);
        /* In the owner hierarchy: a ticket from the null hierarchy would not satisfy PolicyAuthorize. */
        rc = Esys_LoadExternal(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, &key->public,
                               ESYS_TR_RH_OWNER, &handle);
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Loading the PCR signing public key (TPM2_LoadExternal)");
        rc = Esys_VerifySignature(t->esys, handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest, &s, ticket);
        ba_tpm_flush(t, &handle);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        if (ba_tpm2_rc_base(rc) != TPM2_RC_SIGNATURE)
                return log_tpm2_rc(rc, "Checking the PCR signature (TPM2_VerifySignature)");
        return log_fail(BA_EXIT_PCR_SIGNATURE_REJECTED, "The TPM rejects the PCR signature: the key sealed to did not "
                        "make it (forged or damaged), although the signature file names that key. This boot image is "
                        "not one the key holder signed.");
}

int ba_tpm_policy_authorize(struct ba_tpm *t, ESYS_TR session, uint32_t signed_mask, const struct ba_pcr_pubkey *key,
                            const struct ba_pcr_signature *sig) {
        const TPM2B_DIGEST current = { 0 }; /* empty: the TPM takes the PCRs' current values */
        const TPM2B_NONCE no_ref = { 0 };
        TPM2B_DIGEST approved = { .size = BA_DIGEST_SIZE };
        TPMT_TK_VERIFIED *ticket = NULL;
        TPML_PCR_SELECTION sel;
        TSS2_RC rc;
        int r;

        r = verify(t, key, sig, &ticket);
        if (r != 0)
                return r;
        memcpy(approved.buffer, sig->policy, BA_DIGEST_SIZE);
        ba_pcr_selection(signed_mask, &sel);
        rc = Esys_PolicyPCR(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &current, &sel);
        if (rc == TSS2_RC_SUCCESS)
                rc = Esys_PolicyAuthorize(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &approved,
                                          &no_ref, &key->name, ticket);
        Esys_Free(ticket);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        /* Only a second PolicyPCR in a session can see this; the caller starts over. */
        if (ba_tpm2_rc_base(rc) == TPM2_RC_PCR_CHANGED)
                return -EAGAIN;
        /* The digest of this session's PolicyPCR is not the one signed: the signed PCRs changed meanwhile. */
        if (ba_tpm2_rc_base(rc) == TPM2_RC_VALUE || ba_tpm2_rc_classify(rc) == BA_TPM_ERR_POLICY)
                return log_fail(BA_EXIT_PCR_NOT_SIGNED, "The TPM refuses the signed PCR policy: the signed PCRs "
                                "no longer hold the values the signature is for.");
        return log_tpm2_rc(rc, "Applying the signed PCR policy (TPM2_PolicyAuthorize)");
}
