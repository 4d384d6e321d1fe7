/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "boot-chain.h"
#include "exit-codes.h"
#include "fileio.h"
#include "log.h"
#include "pcr-pubkey.h"
#include "seal.h"
#include "signed-policy.h"
#include "tpm2-pcr.h"
#include "tpm2-seal.h"

/* PCRs 12 and 13 are zero when nothing came from outside the UKI: that is what binding them asserts. */
#define ZERO_MEANS_NOTHING_ADDED ((UINT32_C(1) << 12) | (UINT32_C(1) << 13))

static void warn_unmeasured(uint32_t mask, const ba_pcr_values values) {
        static const uint8_t zero[BA_DIGEST_SIZE];

        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if ((mask & ~ZERO_MEANS_NOTHING_ADDED & (UINT32_C(1) << i)) &&
                    memcmp(values[i], zero, BA_DIGEST_SIZE) == 0)
                        log_warning("PCR %u is all zeros: nothing was measured into it, so binding to it "
                                    "proves nothing about this boot.", i);
}

/* Current values by default; given values win; the lock PCR gets its value at TPM startup (zeros). */
static int choose_pcr_values(const struct ba_seal_binding *b, struct ba_tpm *t, struct ba_keyfile *kf) {
        uint32_t lock_bit = b->lock_pcr >= 0 ? UINT32_C(1) << b->lock_pcr : 0;
        uint32_t read_mask = b->pcr_mask & ~b->pcr_value_mask & ~lock_bit;
        int r;

        kf->pcr_mask = b->pcr_mask;
        kf->lock_pcr = b->lock_pcr;
        r = ba_tpm_pcr_read(t, read_mask, kf->pcr_values);
        if (r != 0)
                return r;
        warn_unmeasured(read_mask, kf->pcr_values);
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (b->pcr_value_mask & (UINT32_C(1) << i))
                        memcpy(kf->pcr_values[i], b->pcr_values[i], BA_DIGEST_SIZE);
        if (lock_bit && !(b->pcr_value_mask & lock_bit))
                memset(kf->pcr_values[b->lock_pcr], 0, BA_DIGEST_SIZE);
        if (b->lock_pcr >= 0 && b->lock_pcr != BA_LOCK_PCR_DEFAULT)
                log_warning("Lock PCR %d: make sure nothing else extends it before btrfs-auth load runs, and "
                            "that its boot-time value is the sealed one.", b->lock_pcr);
        return 0;
}

/* --signed-policy: PolicyAuthorize for that key over the signed PCRs; otherwise kf keeps its own (reseal). */
static int choose_signer(const struct ba_seal_binding *b, struct ba_keyfile *kf) {
        struct ba_pcr_pubkey key;
        int r;

        if (!b->signed_policy_key)
                return 0;
        r = ba_pcr_pubkey_load(b->signed_policy_key, &key);
        if (r != 0)
                return r;
        kf->signed_pcrs.key_name = key.name;
        if (b->signed_mask)
                kf->signed_pcrs.pcr_mask = b->signed_mask;
        else if (!kf->signed_pcrs.pcr_mask)
                kf->signed_pcrs.pcr_mask = UINT32_C(1) << 11;
        if (kf->signed_pcrs.pcr_mask & kf->pcr_mask)
                return log_fail(BA_EXIT_USAGE, "A PCR cannot be both signed and sealed to a value.");
        return 0;
}

int ba_seal_to_tpm(const struct ba_tpm_target *tpm, const struct ba_seal_binding *b, const struct ba_secret *key,
                   const struct ba_secret *auth, struct ba_keyfile *kf) {
        const TPM2B_NAME recorded = kf->parent_name;
        struct ba_tpm t;
        int r;

        r = ba_tpm_open(&t, tpm);
        if (r != 0)
                return r;
        /*
         * Resealing or rekeying an existing file: the key goes back to the SRK
         * the file names, salted to it, never to whatever sits at 0x81000001.
         */
        r = ba_tpm_get_srk(&t, kf->parent_name.size ? &recorded : NULL);
        if (r == 0)
                r = ba_tpm_srk_name(&t, &kf->parent_name);
        if (r == 0)
                r = choose_pcr_values(b, &t, kf);
        if (r == 0)
                r = choose_signer(b, kf);
        if (r == 0 && b->require_coverage)
                r = ba_boot_chain_require(kf);
        if (r == 0 && ba_policy_digest(kf->pcr_mask, kf->pcr_values, kf->pin, &kf->signed_pcrs, kf->policy_digest) < 0)
                r = log_fail(BA_EXIT_FAILURE, "Cannot compute the policy digest (libcrypto failure).");
        if (r == 0)
                r = ba_tpm_seal(&t, key, auth->data ? (const TPM2B_AUTH *) auth->data : NULL, kf->policy_digest,
                                &kf->public, &kf->private);
        ba_tpm_close(&t);
        return r;
}

