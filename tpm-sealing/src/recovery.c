/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recovery copy's encryption: AES-256-GCM under the key recovery-kdf.c derives. */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "recovery.h"

#define AAD_PREFIX_V1 "btrfs-auth recovery v1"
#define AAD_PREFIX_V2 "btrfs-auth recovery v2"
#define PARAMS_SIZE 14

typedef int (*aad_update_fn)(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl);

/*
 * Associated data: a prefix naming the version (with its NUL), for version
 * 2 the kind, KDF and costs as the record stores them, then the key's
 * description: a copy moved to another key, or relabelled, does not open.
 */
static int add_aad(EVP_CIPHER_CTX *ctx, aad_update_fn update, const struct ba_recovery_record *rec,
                   const char *description) {
        uint8_t params[PARAMS_SIZE];
        int n = 0;

        if (rec->version == 1)
                return update(ctx, NULL, &n, (const uint8_t *) AAD_PREFIX_V1, sizeof(AAD_PREFIX_V1)) &&
                       update(ctx, NULL, &n, (const uint8_t *) description, (int) strlen(description));
        params[0] = rec->kind;
        params[1] = rec->kdf;
        ba_put_le(params + 2, rec->t_cost, 4);
        ba_put_le(params + 6, rec->m_cost, 4);
        ba_put_le(params + 10, rec->lanes, 4);
        return update(ctx, NULL, &n, (const uint8_t *) AAD_PREFIX_V2, sizeof(AAD_PREFIX_V2)) &&
               update(ctx, NULL, &n, params, sizeof(params)) &&
               update(ctx, NULL, &n, (const uint8_t *) description, (int) strlen(description));
}

static int seal_key(struct ba_recovery_record *rec, const struct ba_secret *kek, const struct ba_secret *key,
                    const char *description) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int n = 0, fin = 0, ok;

        if (!ctx)
                return -ENOMEM;
        ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, BA_RECOVERY_NONCE_SIZE, NULL) &&
             EVP_EncryptInit_ex(ctx, NULL, NULL, kek->data, rec->nonce) &&
             add_aad(ctx, EVP_EncryptUpdate, rec, description) &&
             EVP_EncryptUpdate(ctx, rec->ct, &n, key->data, (int) key->len) &&
             EVP_EncryptFinal_ex(ctx, rec->ct + n, &fin) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, BA_RECOVERY_TAG_SIZE, rec->tag) &&
             (size_t) (n + fin) == key->len;
        EVP_CIPHER_CTX_free(ctx);
        return ok ? 0 : -EIO;
}

int ba_recovery_seal_record(const struct ba_secret *key, const struct ba_secret *secret, const char *description,
                            struct ba_recovery_record *rec) {
        struct ba_secret kek = { 0 };
        int r;

        if (key->len < 1 || key->len > BA_KEY_MAX_SIZE)
                return -EINVAL;
        rec->aead = BA_RECOVERY_AEAD_AES256GCM;
        rec->ct_len = (uint8_t) key->len;
        r = ba_random_bytes(rec->salt, sizeof(rec->salt));
        if (r == 0)
                r = ba_random_bytes(rec->nonce, sizeof(rec->nonce));
        if (r == 0)
                r = ba_recovery_derive(rec, secret, &kek);
        if (r == 0)
                r = seal_key(rec, &kek, key, description);
        ba_secret_free(&kek);
        return r;
}

int ba_recovery_seal(const struct ba_secret *key, const struct ba_secret *secret, uint8_t kind,
                     const struct ba_recovery_cost *cost, const char *description, struct ba_recovery_record *out) {
        memset(out, 0, sizeof(*out));
        out->version = 2;
        out->kind = kind;
        out->kdf = BA_RECOVERY_KDF_ARGON2ID;
        out->t_cost = cost->t_cost;
        out->m_cost = cost->m_cost;
        out->lanes = cost->lanes;
        return ba_recovery_seal_record(key, secret, description, out);
}

static int open_key(const struct ba_recovery_record *rec, const struct ba_secret *kek, const char *description,
                    struct ba_secret *key) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int n = 0, fin = 0, ok;
        uint8_t tag[BA_RECOVERY_TAG_SIZE];

        if (!ctx)
                return -ENOMEM;
        memcpy(tag, rec->tag, sizeof(tag));
        ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, BA_RECOVERY_NONCE_SIZE, NULL) &&
             EVP_DecryptInit_ex(ctx, NULL, NULL, kek->data, rec->nonce) &&
             add_aad(ctx, EVP_DecryptUpdate, rec, description) &&
             EVP_DecryptUpdate(ctx, key->data, &n, rec->ct, rec->ct_len) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, BA_RECOVERY_TAG_SIZE, tag);
        if (!ok) {
                EVP_CIPHER_CTX_free(ctx);
                return -EIO;
        }
        /* Only the tag check can fail here: a wrong secret or an altered record. */
        ok = EVP_DecryptFinal_ex(ctx, key->data + n, &fin) && (size_t) (n + fin) == rec->ct_len;
        EVP_CIPHER_CTX_free(ctx);
        key->len = ok ? rec->ct_len : 0;
        return ok ? 0 : -EACCES;
}

int ba_recovery_open(const struct ba_recovery_record *rec, const struct ba_secret *secret,
                     const char *description, struct ba_secret *key) {
        struct ba_secret kek = { 0 };
        int r;

        r = ba_secret_new(key, BA_KEY_MAX_SIZE);
        if (r < 0)
                return r;
        r = ba_recovery_derive(rec, secret, &kek);
        if (r == 0)
                r = open_key(rec, &kek, description, key);
        ba_secret_free(&kek);
        if (r < 0)
                ba_secret_free(key);
        return r;
}
