/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "fixture.h"

static void pattern(uint8_t *p, size_t n, uint8_t seed) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) (seed + i * 37);
}

static void fake_tpm_blobs(struct ba_keyfile *kf, int variant) {
        TPMT_PUBLIC *p = &kf->public.publicArea;

        p->type = TPM2_ALG_KEYEDHASH;
        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (kf->pin ? 0 : TPMA_OBJECT_NODA);
        p->authPolicy.size = BA_DIGEST_SIZE;
        memcpy(p->authPolicy.buffer, kf->policy_digest, BA_DIGEST_SIZE);
        p->parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
        p->unique.keyedHash.size = BA_DIGEST_SIZE;
        pattern(p->unique.keyedHash.buffer, BA_DIGEST_SIZE, (uint8_t) (0x40 + variant));
        kf->private.size = 146;
        pattern(kf->private.buffer, kf->private.size, (uint8_t) (0x90 + variant));
        kf->parent_name.size = 34;
        kf->parent_name.name[0] = 0x00;
        kf->parent_name.name[1] = 0x0b;
        pattern(kf->parent_name.name + 2, 32, 0x11);
}

static void variant_policy(struct ba_keyfile *kf, int variant) {
        switch (variant) {
        case BA_FIXTURE_PCR7:
                kf->pcr_mask = 1u << 7;
                break;
        case BA_FIXTURE_PIN_ONLY:
                kf->pin = true;
                break;
        case BA_FIXTURE_LOCK_UUID:
                kf->pcr_mask = 1u << 0 | 1u << 2 | 1u << 7 | 1u << 15;
                kf->lock_pcr = 15;
                kf->pin = true;
                kf->has_fs_uuid = true;
                pattern(kf->fs_uuid, BA_UUID_SIZE, 0x5a);
                kf->has_created = true;
                kf->created = 1700000000;
                break;
        case BA_FIXTURE_RECOVERY:
                kf->pcr_mask = 1u << 7 | 1u << 15;
                kf->lock_pcr = 15;
                kf->has_fs_uuid = true;
                pattern(kf->fs_uuid, BA_UUID_SIZE, 0x3c);
                kf->has_recovery = true;
                kf->recovery.version = 1;
                kf->recovery.kind = BA_RECOVERY_KIND_PASSPHRASE;
                kf->recovery.kdf = BA_RECOVERY_KDF_SCRYPT;
                kf->recovery.log_n = 16;
                kf->recovery.r = 8;
                kf->recovery.p = 1;
                pattern(kf->recovery.salt, BA_RECOVERY_SALT_SIZE, 0x21);
                kf->recovery.aead = BA_RECOVERY_AEAD_AES256GCM;
                pattern(kf->recovery.nonce, BA_RECOVERY_NONCE_SIZE, 0x65);
                pattern(kf->recovery.tag, BA_RECOVERY_TAG_SIZE, 0x77);
                kf->recovery.ct_len = 32;
                pattern(kf->recovery.ct, 32, 0x99);
                break;
        case BA_FIXTURE_RECOVERY_KEY:
                kf->pcr_mask = 1u << 7 | 1u << 8 | 1u << 9 | 1u << 15;
                kf->lock_pcr = 15;
                kf->has_recovery = true;
                kf->recovery.version = 2;
                kf->recovery.kind = BA_RECOVERY_KIND_KEY;
                kf->recovery.kdf = BA_RECOVERY_KDF_ARGON2ID;
                kf->recovery.t_cost = 1;
                kf->recovery.m_cost = 32 * 1024;
                kf->recovery.lanes = 4;
                pattern(kf->recovery.salt, BA_RECOVERY_SALT_SIZE, 0x2b);
                kf->recovery.aead = BA_RECOVERY_AEAD_AES256GCM;
                pattern(kf->recovery.nonce, BA_RECOVERY_NONCE_SIZE, 0x6d);
                pattern(kf->recovery.tag, BA_RECOVERY_TAG_SIZE, 0x7f);
                kf->recovery.ct_len = 32;
                pattern(kf->recovery.ct, 32, 0xa1);
                break;
        case BA_FIXTURE_SIGNED:
                kf->pcr_mask = 1u << 7 | 1u << 12 | 1u << 13 | 1u << 15;
                kf->lock_pcr = 15;
                kf->signed_pcrs.pcr_mask = 1u << 11;
                kf->signed_pcrs.key_name.size = BA_SIGNER_NAME_SIZE;
                kf->signed_pcrs.key_name.name[1] = 0x0b;
                pattern(kf->signed_pcrs.key_name.name + 2, BA_DIGEST_SIZE, 0xc3);
                break;
        default:
                kf->pcr_mask = BA_PCR_ALL_MASK & ~(1u << 16 | 1u << 23);
                break;
        }
}

void ba_fixture_keyfile(struct ba_keyfile *kf, int variant) {
        ba_keyfile_init(kf);
        snprintf(kf->description, sizeof(kf->description), "btrfs:fixture-%d", variant);
        variant_policy(kf, variant);
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (kf->pcr_mask & (1u << i) && (int) i != kf->lock_pcr)
                        pattern(kf->pcr_values[i], BA_DIGEST_SIZE, (uint8_t) i);
        if (ba_policy_digest(kf->pcr_mask, kf->pcr_values, kf->pin, &kf->signed_pcrs, kf->policy_digest) < 0)
                abort();
        fake_tpm_blobs(kf, variant);
}

uint8_t *ba_fixture_bytes(int variant, size_t *len) {
        struct ba_keyfile kf;
        uint8_t *buf = NULL;
        char err[256];

        ba_fixture_keyfile(&kf, variant);
        if (ba_keyfile_serialize(&kf, &buf, len, err, sizeof(err)) < 0) {
                fprintf(stderr, "fixture %d does not serialize: %s\n", variant, err);
                abort();
        }
        return buf;
}

void ba_fixture_refix(uint8_t *buf, size_t len) {
        uint32_t body;

        if (len < BA_KEYFILE_HEADER_SIZE + BA_KEYFILE_TRAILER_SIZE)
                return;
        body = (uint32_t) (len - BA_KEYFILE_HEADER_SIZE - BA_KEYFILE_TRAILER_SIZE);
        buf[12] = (uint8_t) body;
        buf[13] = (uint8_t) (body >> 8);
        buf[14] = (uint8_t) (body >> 16);
        buf[15] = (uint8_t) (body >> 24);
        if (ba_keyfile_seal_checksum(buf, len) < 0)
                abort();
}

int ba_superblock_sign(uint8_t sb[BA_SB_SIZE], const uint8_t *key, size_t key_len) {
        memset(sb, 0, BA_SB_CSUM_SIZE);
        return ba_hmac_sha256(key, key_len, sb + BA_SB_CSUM_SIZE, BA_SB_SIZE - BA_SB_CSUM_SIZE, sb);
}
