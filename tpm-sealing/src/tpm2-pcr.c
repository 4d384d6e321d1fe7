/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-pcr.h"
#include "tpm2-rc.h"

static uint32_t selection_mask(const TPML_PCR_SELECTION *sel) {
        for (uint32_t i = 0; i < sel->count && i < TPM2_NUM_PCR_BANKS; i++) {
                const TPMS_PCR_SELECTION *s = &sel->pcrSelections[i];
                uint32_t m = 0;

                if (s->hash != TPM2_ALG_SHA256)
                        continue;
                for (unsigned b = 0; b < s->sizeofSelect && b < 3; b++)
                        m |= (uint32_t) s->pcrSelect[b] << (8 * b);
                return m;
        }
        return 0;
}

static int store_values(uint32_t got, const TPML_DIGEST *d, ba_pcr_values values) {
        uint32_t k = 0;

        if (d->count != ba_popcount(got))
                return log_fail(BA_EXIT_TPM, "The TPM returned %u PCR values for %u selected PCRs.",
                                d->count, ba_popcount(got));
        for (unsigned i = 0; i < BA_PCR_COUNT; i++) {
                if (!(got & (UINT32_C(1) << i)))
                        continue;
                if (d->digests[k].size != BA_DIGEST_SIZE)
                        return log_fail(BA_EXIT_TPM, "The TPM returned a %u-byte value for sha256 PCR %u.",
                                        d->digests[k].size, i);
                memcpy(values[i], d->digests[k++].buffer, BA_DIGEST_SIZE);
        }
        return 0;
}

int ba_tpm_pcr_read(struct ba_tpm *t, uint32_t mask, ba_pcr_values values) {
        uint32_t todo = mask & BA_PCR_ALL_MASK;

        /* One PCR_Read returns at most 8 digests; ask again for the rest. */
        while (todo) {
                TPML_PCR_SELECTION sel, *out_sel = NULL;
                TPML_DIGEST *digests = NULL;
                uint32_t got;
                TSS2_RC rc;
                int r;

                ba_pcr_selection(todo, &sel);
                rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, NULL, &out_sel, &digests);
                if (rc != TSS2_RC_SUCCESS)
                        return log_tpm2_rc(rc, "Reading PCRs");
                got = selection_mask(out_sel) & todo;
                r = got ? store_values(got, digests, values) :
                          log_fail(BA_EXIT_TPM, "The TPM returns no sha256 value for PCR selection 0x%06x: "
                                   "the sha256 PCR bank is not active.", todo);
                Esys_Free(out_sel);
                Esys_Free(digests);
                if (r != 0)
                        return r;
                todo &= ~got;
        }
        return 0;
}

int ba_tpm_pcr_event(struct ba_tpm *t, unsigned pcr, const void *data, size_t len) {
        TPM2B_EVENT event = { .size = (UINT16) len };
        TPML_DIGEST_VALUES *digests = NULL;
        TSS2_RC rc;

        if (len > sizeof(event.buffer))
                return log_fail(BA_EXIT_FAILURE, "Internal error: a %zu-byte PCR event.", len);
        memcpy(event.buffer, data, len);
        rc = Esys_PCR_Event(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &event,
                            &digests);
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Extending the lock PCR");
        Esys_Free(digests);
        return 0;
}

int ba_tpm_pcr_lock(struct ba_tpm *t, unsigned pcr) {
        return ba_tpm_pcr_event(t, pcr, BA_LOCK_EVENT, sizeof(BA_LOCK_EVENT) - 1);
}

int ba_tpm_pcr_mismatch(struct ba_tpm *t, const struct ba_keyfile *kf, ba_pcr_values current, uint32_t *mismatch) {
        int r;

        *mismatch = 0;
        r = ba_tpm_pcr_read(t, kf->pcr_mask, current);
        if (r != 0)
                return r;
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if ((kf->pcr_mask & (UINT32_C(1) << i)) &&
                    memcmp(current[i], kf->pcr_values[i], BA_DIGEST_SIZE) != 0)
                        *mismatch |= UINT32_C(1) << i;
        return 0;
}

void ba_log_pcr_mismatch(enum ba_log_level level, const struct ba_keyfile *kf, const ba_pcr_values current, uint32_t mismatch) {
        char now[2 * BA_DIGEST_SIZE + 1], sealed[2 * BA_DIGEST_SIZE + 1];

        for (unsigned i = 0; i < BA_PCR_COUNT; i++) {
                if (!(mismatch & (UINT32_C(1) << i)))
                        continue;
                ba_hex_encode(current[i], BA_DIGEST_SIZE, now);
                ba_hex_encode(kf->pcr_values[i], BA_DIGEST_SIZE, sealed);
                log_full(level, "PCR %u (sha256) is %s, sealed to %s.", i, now, sealed);
                if (kf->lock_pcr == (int) i)
                        log_full(level, "PCR %u is this key's lock PCR: the key was already loaded and locked "
                                 "during this boot (btrfs-auth lock); it unseals again after a reboot.", i);
        }
}

static int get_property(struct ba_tpm *t, TPM2_PT first, uint32_t count, TPMS_CAPABILITY_DATA **cap) {
        TPMI_YES_NO more;
        TSS2_RC rc;

        rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES, first,
                                count, &more, cap);
        return rc == TSS2_RC_SUCCESS ? 0 : log_tpm2_rc(rc, "Reading TPM properties");
}

int ba_tpm_lockout_info(struct ba_tpm *t, struct ba_lockout_info *info) {
        TPMS_CAPABILITY_DATA *cap = NULL;
        int r;

        memset(info, 0, sizeof(*info));
        r = get_property(t, TPM2_PT_PERMANENT, 1, &cap);
        if (r != 0)
                return r;
        if (cap->data.tpmProperties.count == 1 && cap->data.tpmProperties.tpmProperty[0].property == TPM2_PT_PERMANENT)
                info->in_lockout = cap->data.tpmProperties.tpmProperty[0].value & TPMA_PERMANENT_INLOCKOUT;
        Esys_Free(cap);
        r = get_property(t, TPM2_PT_LOCKOUT_COUNTER, 4, &cap);
        if (r != 0)
                return r;
        for (uint32_t i = 0; i < cap->data.tpmProperties.count; i++) {
                const TPMS_TAGGED_PROPERTY *p = &cap->data.tpmProperties.tpmProperty[i];

                if (p->property == TPM2_PT_LOCKOUT_COUNTER)
                        info->counter = p->value;
                else if (p->property == TPM2_PT_MAX_AUTH_FAIL)
                        info->max_tries = p->value;
                else if (p->property == TPM2_PT_LOCKOUT_INTERVAL)
                        info->interval = p->value;
                else if (p->property == TPM2_PT_LOCKOUT_RECOVERY)
                        info->recovery = p->value;
        }
        Esys_Free(cap);
        return 0;
}
