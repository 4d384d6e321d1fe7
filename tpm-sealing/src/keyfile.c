/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "keyfile.h"

#define SEALED_ATTRS_COMMON (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT)

void ba_keyfile_init(struct ba_keyfile *kf) {
        memset(kf, 0, sizeof(*kf));
        kf->version = BA_KEYFILE_VERSION;
        kf->pcr_bank = TPM2_ALG_SHA256;
        kf->lock_pcr = -1;
}

bool ba_lock_pcr_allowed(unsigned pcr) {
        return pcr <= 15;
}

static int check_fail(char *err, size_t err_len, const char *what) {
        snprintf(err, err_len, "%s", what);
        return -EINVAL;
}

static int check_parent_name(const TPM2B_NAME *n, char *err, size_t err_len) {
        static const struct { uint16_t alg; uint16_t size; } algs[] = {
                { TPM2_ALG_SHA1, 20 }, { TPM2_ALG_SHA256, 32 }, { TPM2_ALG_SHA384, 48 }, { TPM2_ALG_SHA512, 64 },
        };
        uint16_t alg;

        if (n->size < 2)
                return check_fail(err, err_len, "parent name is too short");
        alg = (uint16_t) (n->name[0] << 8 | n->name[1]);
        for (size_t i = 0; i < ELEMENTSOF(algs); i++)
                if (algs[i].alg == alg && n->size == 2 + algs[i].size)
                        return 0;
        return check_fail(err, err_len, "parent name has an unknown hash algorithm or a wrong length");
}

static int check_public(const struct ba_keyfile *kf, char *err, size_t err_len) {
        const TPMT_PUBLIC *p = &kf->public.publicArea;
        TPMA_OBJECT want = SEALED_ATTRS_COMMON | (kf->pin ? 0 : TPMA_OBJECT_NODA);

        if (p->type != TPM2_ALG_KEYEDHASH || p->nameAlg != TPM2_ALG_SHA256)
                return check_fail(err, err_len, "sealed object is not a sha256 keyed-hash object");
        if (p->parameters.keyedHashDetail.scheme.scheme != TPM2_ALG_NULL)
                return check_fail(err, err_len, "sealed object has a signing scheme, it is not a sealed data object");
        if (p->objectAttributes != want)
                return check_fail(err, err_len,
                                  "sealed object attributes are not fixedTPM|fixedParent (+noDA without PIN)");
        if (p->authPolicy.size != BA_DIGEST_SIZE ||
            memcmp(p->authPolicy.buffer, kf->policy_digest, BA_DIGEST_SIZE) != 0)
                return check_fail(err, err_len, "sealed object's policy differs from the recorded policy digest");
        if (p->unique.keyedHash.size != BA_DIGEST_SIZE)
                return check_fail(err, err_len, "sealed object's unique field is not a sha256 digest");
        if (kf->private.size == 0)
                return check_fail(err, err_len, "sealed object's private part is empty");
        return 0;
}

static int check_signed_pcrs(const struct ba_keyfile *kf, char *err, size_t err_len) {
        const struct ba_signed_pcrs *sp = &kf->signed_pcrs;

        if (sp->pcr_mask == 0)
                return 0;
        if (sp->pcr_mask & ~BA_PCR_ALL_MASK)
                return check_fail(err, err_len, "signed PCR selection names a PCR above 23");
        if (sp->pcr_mask & kf->pcr_mask)
                return check_fail(err, err_len, "a PCR is both sealed to a value and signed");
        if (sp->key_name.size != BA_SIGNER_NAME_SIZE ||
            (sp->key_name.name[0] << 8 | sp->key_name.name[1]) != TPM2_ALG_SHA256)
                return check_fail(err, err_len, "the PCR signing key's name is not a sha256 TPM name");
        return 0;
}

static int check_policy(const struct ba_keyfile *kf, char *err, size_t err_len) {
        uint8_t digest[BA_DIGEST_SIZE];
        int r;

        if (kf->pcr_bank != TPM2_ALG_SHA256)
                return check_fail(err, err_len, "PCR bank is not sha256");
        if (kf->pcr_mask & ~BA_PCR_ALL_MASK)
                return check_fail(err, err_len, "PCR selection names a PCR above 23");
        if (kf->pcr_mask == 0 && kf->signed_pcrs.pcr_mask == 0 && !kf->pin)
                return check_fail(err, err_len, "policy has neither PCRs nor a PIN");
        r = check_signed_pcrs(kf, err, err_len);
        if (r < 0)
                return r;
        if (kf->lock_pcr >= 0 &&
            (!ba_lock_pcr_allowed((unsigned) kf->lock_pcr) || !(kf->pcr_mask & (UINT32_C(1) << kf->lock_pcr))))
                return check_fail(err, err_len, "lock PCR is not a lockable PCR of the selection");
        if (ba_policy_digest(kf->pcr_mask, kf->pcr_values, kf->pin, &kf->signed_pcrs, digest) < 0)
                return check_fail(err, err_len, "cannot compute the policy digest");
        if (memcmp(digest, kf->policy_digest, BA_DIGEST_SIZE) != 0)
                return check_fail(err, err_len, "policy digest does not match the recorded PCR values, signing key "
                                  "and PIN flag");
        return 0;
}

static int recovery_fail(char *err, size_t err_len, int code, const char *what) {
        snprintf(err, err_len, "%s", what);
        return -code;
}

static int check_scrypt(const struct ba_recovery_record *rec, char *err, size_t err_len) {
        if (rec->kind != BA_RECOVERY_KIND_PASSPHRASE || rec->kdf != BA_RECOVERY_KDF_SCRYPT)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy (version 1) uses an unknown key "
                                     "derivation function");
        if (rec->log_n < BA_RECOVERY_LOG_N_MIN || rec->r < 1 || rec->p < 1)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy's scrypt N, r or p is below "
                                     "the minimum (N 2^10, r 1, p 1)");
        if (rec->log_n > BA_RECOVERY_LOG_N_MAX)
                return recovery_fail(err, err_len, BA_ERECOVERY_COST, "recovery copy's scrypt N is beyond the "
                                     "bound (2^10..2^22)");
        if (rec->r > BA_RECOVERY_R_MAX || rec->p > BA_RECOVERY_P_MAX)
                return recovery_fail(err, err_len, BA_ERECOVERY_COST, "recovery copy's scrypt r or p is beyond the "
                                     "bound (r 32, p 16)");
        if ((UINT64_C(128) * rec->r << rec->log_n) > BA_RECOVERY_MEMORY_MAX)
                return recovery_fail(err, err_len, BA_ERECOVERY_COST, "recovery copy's scrypt parameters need more "
                                     "than 1 GiB of memory");
        return 0;
}

static int check_argon2(const struct ba_recovery_record *rec, char *err, size_t err_len) {
        if (rec->kind != BA_RECOVERY_KIND_KEY && rec->kind != BA_RECOVERY_KIND_PASSPHRASE)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy is of an unknown kind (neither "
                                     "a recovery key nor a passphrase)");
        if (rec->kdf != BA_RECOVERY_KDF_ARGON2ID)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy uses an unknown key derivation "
                                     "function");
        if (rec->t_cost < 1 || rec->lanes < 1 || rec->m_cost < BA_ARGON2_MEMORY_MIN_KIB)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy's Argon2id cost is below the "
                                     "minimum (1 pass, 1 lane, 8 MiB)");
        if (rec->m_cost > BA_ARGON2_MEMORY_MAX_KIB)
                return recovery_fail(err, err_len, BA_ERECOVERY_COST, "recovery copy's Argon2id memory cost is "
                                     "beyond the bound of 1 GiB");
        if (rec->t_cost > BA_ARGON2_TIME_MAX || rec->lanes > BA_ARGON2_LANES_MAX)
                return recovery_fail(err, err_len, BA_ERECOVERY_COST, "recovery copy's Argon2id passes or lanes are "
                                     "beyond the bound (16 each)");
        return 0;
}

int ba_recovery_record_check(const struct ba_recovery_record *rec, char *err, size_t err_len) {
        int r;

        if (rec->version == 1)
                r = check_scrypt(rec, err, err_len);
        else if (rec->version == 2)
                r = check_argon2(rec, err, err_len);
        else
                r = recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy has an unknown version");
        if (r < 0)
                return r;
        if (rec->aead != BA_RECOVERY_AEAD_AES256GCM)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy uses an unknown cipher");
        if (rec->ct_len < 1 || rec->ct_len > BA_KEY_MAX_SIZE)
                return recovery_fail(err, err_len, BA_ERECOVERY_BAD, "recovery copy's encrypted key has a bad "
                                     "length");
        return 0;
}

int ba_keyfile_check(const struct ba_keyfile *kf, char *err, size_t err_len) {
        int r;

        if (kf->version != BA_KEYFILE_VERSION)
                return check_fail(err, err_len, "unsupported format version");
        if (!ba_description_valid(kf->description, strnlen(kf->description, sizeof(kf->description))))
                return check_fail(err, err_len, "key description is not btrfs:NAME");
        r = check_policy(kf, err, err_len);
        if (r < 0)
                return r;
        r = check_parent_name(&kf->parent_name, err, err_len);
        if (r < 0)
                return r;
        if (kf->has_recovery) {
                /* For writers, an inconsistency like any other. */
                if (ba_recovery_record_check(&kf->recovery, err, err_len) < 0)
                        return -EINVAL;
        }
        return check_public(kf, err, err_len);
}

int ba_keyfile_seal_checksum(uint8_t *buf, size_t len) {
        if (len < BA_KEYFILE_TRAILER_SIZE)
                return -EINVAL;
        return ba_sha256((const struct ba_iovec[]) { { buf, len - BA_KEYFILE_TRAILER_SIZE } }, 1,
                         buf + len - BA_KEYFILE_TRAILER_SIZE);
}
