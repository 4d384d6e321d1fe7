/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "keyfile.h"

struct writer {
        uint8_t *buf;
        size_t len;
        size_t cap;
        bool overflow;
};

static void put_record(struct writer *w, uint16_t type, const void *v, size_t len) {
        if (w->overflow || len > w->cap - w->len - BA_KEYFILE_RECORD_HEADER_SIZE) {
                w->overflow = true;
                return;
        }
        ba_put_le(w->buf + w->len, type, 2);
        ba_put_le(w->buf + w->len + 2, (uint32_t) len, 4);
        if (len > 0)
                memcpy(w->buf + w->len + BA_KEYFILE_RECORD_HEADER_SIZE, v, len);
        w->len += BA_KEYFILE_RECORD_HEADER_SIZE + len;
}

static void put_pcr_records(struct writer *w, const struct ba_keyfile *kf) {
        uint8_t bank[2], mask[4], values[BA_PCR_COUNT * BA_DIGEST_SIZE];
        size_t n = 0;

        ba_put_le(bank, kf->pcr_bank, 2);
        ba_put_le(mask, kf->pcr_mask, 4);
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (kf->pcr_mask & (UINT32_C(1) << i))
                        memcpy(values + BA_DIGEST_SIZE * n++, kf->pcr_values[i], BA_DIGEST_SIZE);
        put_record(w, BA_REC_PCR_BANK, bank, sizeof(bank));
        put_record(w, BA_REC_PCR_MASK, mask, sizeof(mask));
        put_record(w, BA_REC_PCR_VALUES, values, n * BA_DIGEST_SIZE);
}

static int put_tpm_records(struct writer *w, const struct ba_keyfile *kf) {
        uint8_t pub[sizeof(TPM2B_PUBLIC)], priv[sizeof(TPM2B_PRIVATE)];
        size_t pub_len = 0, priv_len = 0;

        if (Tss2_MU_TPM2B_PUBLIC_Marshal(&kf->public, pub, sizeof(pub), &pub_len) != TSS2_RC_SUCCESS ||
            Tss2_MU_TPM2B_PRIVATE_Marshal(&kf->private, priv, sizeof(priv), &priv_len) != TSS2_RC_SUCCESS)
                return -EINVAL;
        put_record(w, BA_REC_PARENT_NAME, kf->parent_name.name, kf->parent_name.size);
        put_record(w, BA_REC_TPM_PUBLIC, pub, pub_len);
        put_record(w, BA_REC_TPM_PRIVATE, priv, priv_len);
        if (kf->signed_pcrs.pcr_mask != 0) {
                uint8_t v[4 + BA_SIGNER_NAME_SIZE];

                ba_put_le(v, kf->signed_pcrs.pcr_mask, 4);
                memcpy(v + 4, kf->signed_pcrs.key_name.name, BA_SIGNER_NAME_SIZE);
                put_record(w, BA_REC_SIGNED_PCRS, v, sizeof(v));
        }
        return 0;
}

static void put_recovery(struct writer *w, const struct ba_recovery_record *rec) {
        uint8_t v[BA_RECOVERY_V2_FIXED_SIZE + BA_KEY_MAX_SIZE], *q = v;

        if (rec->version == 1) {
                *q++ = rec->kdf;
                *q++ = rec->log_n;
                ba_put_le(q, rec->r, 4);
                ba_put_le(q + 4, rec->p, 4);
                q += 8;
        } else {
                *q++ = rec->kind;
                *q++ = rec->kdf;
                ba_put_le(q, rec->t_cost, 4);
                ba_put_le(q + 4, rec->m_cost, 4);
                ba_put_le(q + 8, rec->lanes, 4);
                q += 12;
        }
        memcpy(q, rec->salt, BA_RECOVERY_SALT_SIZE);
        q += BA_RECOVERY_SALT_SIZE;
        *q++ = rec->aead;
        memcpy(q, rec->nonce, BA_RECOVERY_NONCE_SIZE);
        q += BA_RECOVERY_NONCE_SIZE;
        memcpy(q, rec->tag, BA_RECOVERY_TAG_SIZE);
        q += BA_RECOVERY_TAG_SIZE;
        memcpy(q, rec->ct, rec->ct_len);
        q += rec->ct_len;
        put_record(w, rec->version == 1 ? BA_REC_RECOVERY : BA_REC_RECOVERY_V2, v, (size_t) (q - v));
}

/* Records go out in ascending type order: the parser insists on it. */
static int put_records(struct writer *w, const struct ba_keyfile *kf) {
        uint8_t pin = kf->pin, lock, created[8];

        put_record(w, BA_REC_DESCRIPTION, kf->description, strlen(kf->description));
        if (kf->has_fs_uuid)
                put_record(w, BA_REC_FS_UUID, kf->fs_uuid, BA_UUID_SIZE);
        put_pcr_records(w, kf);
        if (kf->lock_pcr >= 0) {
                lock = (uint8_t) kf->lock_pcr;
                put_record(w, BA_REC_LOCK_PCR, &lock, 1);
        }
        put_record(w, BA_REC_PIN, &pin, 1);
        put_record(w, BA_REC_POLICY_DIGEST, kf->policy_digest, BA_DIGEST_SIZE);
        if (put_tpm_records(w, kf) < 0)
                return -EINVAL;
        if (kf->has_created) {
                ba_put_le(created, kf->created, 8);
                put_record(w, BA_REC_CREATED, created, sizeof(created));
        }
        if (kf->has_recovery)
                put_recovery(w, &kf->recovery);
        return w->overflow ? -EFBIG : 0;
}

int ba_keyfile_serialize(const struct ba_keyfile *kf, uint8_t **ret, size_t *ret_len, char *err, size_t err_len) {
        struct writer w = { .cap = BA_KEYFILE_MAX_SIZE - BA_KEYFILE_TRAILER_SIZE };
        int r;

        r = ba_keyfile_check(kf, err, err_len);
        if (r < 0)
                return r;
        w.buf = calloc(1, BA_KEYFILE_MAX_SIZE);
        if (!w.buf)
                return -ENOMEM;
        memcpy(w.buf, BA_KEYFILE_MAGIC, BA_KEYFILE_MAGIC_SIZE);
        ba_put_le(w.buf + 8, BA_KEYFILE_VERSION, 2);
        ba_put_le(w.buf + 10, 0, 2);
        w.len = BA_KEYFILE_HEADER_SIZE;
        r = put_records(&w, kf);
        if (r < 0) {
                free(w.buf);
                return r;
        }
        ba_put_le(w.buf + 12, (uint32_t) (w.len - BA_KEYFILE_HEADER_SIZE), 4);
        w.len += BA_KEYFILE_TRAILER_SIZE;
        r = ba_keyfile_seal_checksum(w.buf, w.len);
        if (r < 0) {
                free(w.buf);
                return r;
        }
        *ret = w.buf;
        *ret_len = w.len;
        return 0;
}
