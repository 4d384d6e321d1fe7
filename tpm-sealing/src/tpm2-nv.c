/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "policy.h"
#include "tpm2-authorize.h"
#include "tpm2-nv.h"
#include "tpm2-rc.h"

static bool undefined_handle(TSS2_RC rc) {
        return ba_tpm2_rc_base(rc) == TPM2_RC_HANDLE;
}

int ba_tpm_nv_read_public(struct ba_tpm *t, uint32_t index, TPM2B_NV_PUBLIC *pub, ESYS_TR *obj) {
        TPM2B_NV_PUBLIC *p = NULL;
        TPM2B_NAME *name = NULL;
        TSS2_RC rc;

        *obj = ESYS_TR_NONE;
        rc = Esys_TR_FromTPMPublic(t->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, obj);
        if (rc != TSS2_RC_SUCCESS) {
                *obj = ESYS_TR_NONE;
                return undefined_handle(rc) ? -ENOENT : log_tpm2_rc(rc, "Reading an NV index (TPM2_NV_ReadPublic)");
        }
        rc = Esys_NV_ReadPublic(t->esys, *obj, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &p, &name);
        if (rc != TSS2_RC_SUCCESS) {
                (void) Esys_TR_Close(t->esys, obj);
                return log_tpm2_rc(rc, "Reading an NV index (TPM2_NV_ReadPublic)");
        }
        *pub = *p;
        Esys_Free(p);
        Esys_Free(name);
        return 0;
}

int ba_tpm_nv_define(struct ba_tpm *t, uint32_t index, uint16_t size, TPMA_NV attrs, const TPM2B_DIGEST *auth_policy,
                     ESYS_TR *obj) {
        const TPM2B_AUTH empty = { 0 };
        TPM2B_NV_PUBLIC pub = {
                .nvPublic = {
                        .nvIndex = index,
                        .nameAlg = TPM2_ALG_SHA256,
                        .attributes = attrs,
                        .authPolicy = *auth_policy,
                        .dataSize = size,
                },
        };
        TSS2_RC rc;

        rc = Esys_NV_DefineSpace(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &pub,
                                 obj);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        *obj = ESYS_TR_NONE;
        if (ba_tpm2_rc_classify(rc) == BA_TPM_ERR_BAD_AUTH)
                return log_fail(BA_EXIT_TPM, "Defining TPM NV index 0x%08x needs the owner hierarchy's "
                                "authorization, which is not empty on this TPM: provision with an empty owner "
                                "password, then set one.", (unsigned) index);
        return log_tpm2_rc(rc, "Defining a TPM NV index (TPM2_NV_DefineSpace)");
}

int ba_tpm_nv_read(struct ba_tpm *t, ESYS_TR obj, uint16_t size, uint8_t *out) {
        TPM2B_MAX_NV_BUFFER *data = NULL;
        TSS2_RC rc;

        rc = Esys_NV_Read(t->esys, obj, obj, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, size, 0, &data);
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Reading a TPM NV index (TPM2_NV_Read)");
        if (data->size != size) {
                Esys_Free(data);
                return log_fail(BA_EXIT_TPM, "The TPM returned %u bytes of an NV index, not %u.", data->size, size);
        }
        memcpy(out, data->buffer, size);
        Esys_Free(data);
        return 0;
}

/* A fresh policy session for one command: the TPM resets a policy session's digest after each use. */
static int signed_session(struct ba_tpm *t, uint32_t signed_mask, const struct ba_pcr_pubkey *key,
                          const struct ba_pcr_signature *sig, ESYS_TR *session) {
        int r = ba_tpm_start_session(t, TPM2_SE_POLICY, 0, session);

        if (r == 0)
                r = ba_tpm_policy_authorize(t, *session, signed_mask, key, sig);
        if (r != 0)
                ba_tpm_flush(t, session);
        return r;
}

/* NV_Write of buf, or NV_WriteLock without one, in a signed policy session; started over on PCR_CHANGED. */
static int nv_signed(struct ba_tpm *t, ESYS_TR obj, const TPM2B_MAX_NV_BUFFER *buf, uint32_t signed_mask,
                     const struct ba_pcr_pubkey *key, const struct ba_pcr_signature *sig) {
        const char *what = buf ? "Writing a TPM NV index (TPM2_NV_Write)" :
                                 "Write-locking a TPM NV index (TPM2_NV_WriteLock)";

        for (unsigned attempt = 1; attempt <= BA_PCR_CHANGED_ATTEMPTS; attempt++) {
                ESYS_TR session;
                TSS2_RC rc;
                int r = signed_session(t, signed_mask, key, sig, &session);

                if (r == -EAGAIN)
                        continue;
                if (r != 0)
                        return r;
                rc = buf ? Esys_NV_Write(t->esys, obj, obj, session, ESYS_TR_NONE, ESYS_TR_NONE, buf, 0) :
                           Esys_NV_WriteLock(t->esys, obj, obj, session, ESYS_TR_NONE, ESYS_TR_NONE);
                ba_tpm_flush(t, &session);
                if (ba_tpm2_rc_base(rc) == TPM2_RC_PCR_CHANGED)
                        continue;
                return rc == TSS2_RC_SUCCESS ? 0 : log_tpm2_rc(rc, what);
        }
        return log_fail(BA_EXIT_TPM, "%s failed %u times because PCRs kept changing meanwhile.", what,
                        BA_PCR_CHANGED_ATTEMPTS);
}

int ba_tpm_nv_write_signed(struct ba_tpm *t, ESYS_TR obj, const uint8_t *data, uint16_t len, bool lock,
                           uint32_t signed_mask, const struct ba_pcr_pubkey *key, const struct ba_pcr_signature *sig) {
        TPM2B_MAX_NV_BUFFER buf = { .size = len };
        int r;

        if (len > sizeof(buf.buffer))
                return log_fail(BA_EXIT_FAILURE, "Internal error: %u bytes do not fit one NV write.", len);
        memcpy(buf.buffer, data, len);
        r = nv_signed(t, obj, &buf, signed_mask, key, sig);
        if (r == 0 && lock)
                r = nv_signed(t, obj, NULL, signed_mask, key, sig);
        return r;
}

int ba_tpm_nv_undefine(struct ba_tpm *t, ESYS_TR obj) {
        TSS2_RC rc = Esys_NV_UndefineSpace(t->esys, ESYS_TR_RH_OWNER, obj, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                                           ESYS_TR_NONE);

        if (rc == TSS2_RC_SUCCESS)
                return 0;
        if (ba_tpm2_rc_classify(rc) == BA_TPM_ERR_BAD_AUTH)
                return log_fail(BA_EXIT_TPM, "Deleting a TPM NV index needs the owner hierarchy's authorization, "
                                "which is not empty on this TPM.");
        return log_tpm2_rc(rc, "Deleting a TPM NV index (TPM2_NV_UndefineSpace)");
}

int ba_nv_signed_write_policy(const TPM2B_NAME *key_name, TPM2B_DIGEST *out) {
        const struct ba_signed_pcrs signer = { .pcr_mask = 1, .key_name = *key_name };
        static const ba_pcr_values none;

        out->size = BA_DIGEST_SIZE;
        return ba_policy_digest(0, none, false, &signer, out->buffer) < 0 ? -EINVAL : 0;
}
