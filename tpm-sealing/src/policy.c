/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "crypto.h"
#include "policy.h"

void ba_pcr_selection(uint32_t mask, TPML_PCR_SELECTION *sel) {
        memset(sel, 0, sizeof(*sel));
        if ((mask & BA_PCR_ALL_MASK) == 0)
                return;
        sel->count = 1;
        sel->pcrSelections[0].hash = TPM2_ALG_SHA256;
        sel->pcrSelections[0].sizeofSelect = 3;
        sel->pcrSelections[0].pcrSelect[0] = mask & 0xff;
        sel->pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
        sel->pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;
}

int ba_pcr_digest(uint32_t mask, const ba_pcr_values values, uint8_t out[BA_DIGEST_SIZE]) {
        struct ba_iovec v[BA_PCR_COUNT];
        size_t n = 0;

        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (mask & (UINT32_C(1) << i))
                        v[n++] = (struct ba_iovec) { values[i], BA_DIGEST_SIZE };
        return ba_sha256(v, n, out);
}

static int extend_policy_pcr(uint8_t digest[BA_DIGEST_SIZE], uint32_t mask, const ba_pcr_values values) {
        uint8_t cc[4], sel_buf[sizeof(TPML_PCR_SELECTION)], pcr_digest[BA_DIGEST_SIZE];
        TPML_PCR_SELECTION sel;
        size_t sel_len = 0;
        int r;

        ba_pcr_selection(mask, &sel);
        if (Tss2_MU_TPML_PCR_SELECTION_Marshal(&sel, sel_buf, sizeof(sel_buf), &sel_len) != TSS2_RC_SUCCESS)
                return -EINVAL;
        r = ba_pcr_digest(mask, values, pcr_digest);
        if (r < 0)
                return r;
        ba_put_be(cc, TPM2_CC_PolicyPCR, 4);
        return ba_sha256((const struct ba_iovec[]) {
                                 { digest, BA_DIGEST_SIZE },
                                 { cc, sizeof(cc) },
                                 { sel_buf, sel_len },
                                 { pcr_digest, BA_DIGEST_SIZE },
                         }, 4, digest);
}

static int extend_policy_auth_value(uint8_t digest[BA_DIGEST_SIZE]) {
        uint8_t cc[4];

        ba_put_be(cc, TPM2_CC_PolicyAuthValue, 4);
        return ba_sha256((const struct ba_iovec[]) {
                                 { digest, BA_DIGEST_SIZE },
                                 { cc, sizeof(cc) },
                         }, 2, digest);
}

/* PolicyAuthorize restarts the digest: H(H(0^32 || CC || keyName) || policyRef), policyRef empty. */
static int extend_policy_authorize(uint8_t digest[BA_DIGEST_SIZE], const TPM2B_NAME *key_name) {
        uint8_t cc[4];
        int r;

        ba_put_be(cc, TPM2_CC_PolicyAuthorize, 4);
        memset(digest, 0, BA_DIGEST_SIZE);
        r = ba_sha256((const struct ba_iovec[]) {
                              { digest, BA_DIGEST_SIZE },
                              { cc, sizeof(cc) },
                              { key_name->name, key_name->size },
                      }, 3, digest);
        if (r < 0)
                return r;
        return ba_sha256((const struct ba_iovec[]) { { digest, BA_DIGEST_SIZE } }, 1, digest);
}

int ba_policy_digest(uint32_t mask, const ba_pcr_values values, bool pin, const struct ba_signed_pcrs *signer,
                     uint8_t out[BA_DIGEST_SIZE]) {
        uint8_t digest[BA_DIGEST_SIZE] = { 0 };
        int r;

        if (mask & ~BA_PCR_ALL_MASK)
                return -EINVAL;
        if (signer && signer->pcr_mask != 0) {
                if (signer->key_name.size == 0 || signer->key_name.size > sizeof(signer->key_name.name))
                        return -EINVAL;
                r = extend_policy_authorize(digest, &signer->key_name);
                if (r < 0)
                        return r;
        }
        if (mask != 0) {
                r = extend_policy_pcr(digest, mask, values);
                if (r < 0)
                        return r;
        }
        if (pin) {
                r = extend_policy_auth_value(digest);
                if (r < 0)
                        return r;
        }
        memcpy(out, digest, BA_DIGEST_SIZE);
        return 0;
}
