/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "keyfile-describe.h"

void ba_recovery_describe(const struct ba_recovery_record *rec, char *buf, size_t len) {
        const char *kind = rec->kind == BA_RECOVERY_KIND_KEY ? "recovery key" : "passphrase";

        if (rec->kdf == BA_RECOVERY_KDF_SCRYPT)
                snprintf(buf, len, "%s, scrypt N=2^%u r=%u p=%u, AES-256-GCM", kind, rec->log_n, rec->r, rec->p);
        else
                snprintf(buf, len, "%s, Argon2id m=%u MiB t=%u p=%u, AES-256-GCM", kind, rec->m_cost / 1024,
                         rec->t_cost, rec->lanes);
}

static void append(char *buf, size_t len, const char *text) {
        size_t n = strlen(buf);

        if (n < len)
                snprintf(buf + n, len - n, "%s%s", n ? ", " : "", text);
}

void ba_binding_summary(const struct ba_keyfile *kf, char *buf, size_t len) {
        char pcrs[64], part[96];

        buf[0] = '\0';
        if (kf->pcr_mask) {
                ba_pcr_mask_format(kf->pcr_mask, pcrs, sizeof(pcrs));
                if (kf->lock_pcr >= 0)
                        snprintf(part, sizeof(part), "PCRs %s (lock %d)", pcrs, kf->lock_pcr);
                else
                        snprintf(part, sizeof(part), "PCRs %s (no lock)", pcrs);
                append(buf, len, part);
        }
        if (kf->signed_pcrs.pcr_mask) {
                ba_pcr_mask_format(kf->signed_pcrs.pcr_mask, pcrs, sizeof(pcrs));
                snprintf(part, sizeof(part), "signed PCRs %s", pcrs);
                append(buf, len, part);
        }
        if (kf->pin)
                append(buf, len, "PIN");
}
