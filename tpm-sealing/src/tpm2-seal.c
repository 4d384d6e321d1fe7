/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-rc.h"
#include "tpm2-seal.h"
#include "tpm2-session.h"

static void sealed_template(bool pin, const uint8_t policy[BA_DIGEST_SIZE], TPM2B_PUBLIC *tmpl) {
        memset(tmpl, 0, sizeof(*tmpl));
        tmpl->publicArea.type = TPM2_ALG_KEYEDHASH;
        tmpl->publicArea.nameAlg = TPM2_ALG_SHA256;
        tmpl->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                            (pin ? 0 : TPMA_OBJECT_NODA);
        tmpl->publicArea.authPolicy.size = BA_DIGEST_SIZE;
        memcpy(tmpl->publicArea.authPolicy.buffer, policy, BA_DIGEST_SIZE);
        tmpl->publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
}

static int create(struct ba_tpm *t, ESYS_TR session, const TPM2B_SENSITIVE_CREATE *sensitive,
                  const TPM2B_PUBLIC *tmpl, TPM2B_PUBLIC *ret_public, TPM2B_PRIVATE *ret_private) {
        const TPM2B_DATA outside = { 0 };
        const TPML_PCR_SELECTION creation_pcrs = { 0 };
        TPM2B_PRIVATE *priv = NULL;
        TPM2B_PUBLIC *pub = NULL;
        TSS2_RC rc;

        rc = Esys_Create(t->esys, t->srk, session, ESYS_TR_NONE, ESYS_TR_NONE, sensitive, tmpl, &outside,
                         &creation_pcrs, &priv, &pub, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Sealing the key (TPM2_Create)");
        *ret_public = *pub;
        *ret_private = *priv;
        Esys_Free(pub);
        Esys_Free(priv);
        return 0;
}

int ba_tpm_seal(struct ba_tpm *t, const struct ba_secret *key, const TPM2B_AUTH *auth,
                const uint8_t policy[BA_DIGEST_SIZE], TPM2B_PUBLIC *ret_public, TPM2B_PRIVATE *ret_private) {
        struct ba_secret buf;
        TPM2B_SENSITIVE_CREATE *sensitive;
        TPM2B_PUBLIC tmpl;
        ESYS_TR session = ESYS_TR_NONE;
        int r;

        if (key->len == 0 || key->len > sizeof(sensitive->sensitive.data.buffer))
                return log_fail(BA_EXIT_FAILURE, "Key size %zu is not sealable.", key->len);
        /* The key and PIN hash go into the command from locked, wiped memory. */
        if (ba_secret_new(&buf, sizeof(*sensitive)) < 0)
                return log_fail(BA_EXIT_FAILURE, "Out of memory for the sealing buffer.");
        sensitive = (TPM2B_SENSITIVE_CREATE *) buf.data;
        sensitive->sensitive.data.size = (uint16_t) key->len;
        memcpy(sensitive->sensitive.data.buffer, key->data, key->len);
        if (auth)
                sensitive->sensitive.userAuth = *auth;
        sealed_template(auth != NULL, policy, &tmpl);
        r = ba_tpm_start_session(t, TPM2_SE_HMAC, ba_session_attrs_create(), &session);
        if (r == 0)
                r = create(t, session, sensitive, &tmpl, ret_public, ret_private);
        ba_tpm_flush(t, &session);
        ba_secret_free(&buf);
        return r;
}
