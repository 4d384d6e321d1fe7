/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "recovery.h"

#define AAD_PREFIX "btrfs-auth recovery v1"
#define KEK_SIZE 32

/* The key-encryption key: scrypt(passphrase, salt, N, r, p), 32 bytes, in secret memory. */
static int derive_kek(const struct ba_recovery_record *rec, const struct ba_secret *pass, struct ba_secret *kek) {
        int r = ba_secret_new(kek, KEK_SIZE);

        if (r < 0)
                return r;
        if (!EVP_PBE_scrypt((const char *) pass->data, pass->len, rec->salt, sizeof(rec->salt),
                            UINT64_C(1) << rec->log_n, rec->r, rec->p, BA_RECOVERY_MEMORY_MAX + (UINT64_C(1) << 24),
                            kek->data, KEK_SIZE)) {
                ba_secret_free(kek);
                return -EIO;
        }
        kek->len = KEK_SIZE;
        return 0;
}

static int add_aad(EVP_CIPHER_CTX *ctx, const char *description) {
        int n = 0;

        return EVP_EncryptUpdate(ctx, NULL, &n, (const uint8_t *) AAD_PREFIX, sizeof(AAD_PREFIX)) &&
               EVP_EncryptUpdate(ctx, NULL, &n, (const uint8_t *) description, (int) strlen(description));
}

static int seal_key(struct ba_recovery_record *rec, const struct ba_secret *kek, const struct ba_secret *key,
                   const char *description) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int n = 0, fin = 0, ok;

        if (!ctx)
                return -ENOMEM;
        ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, BA_RECOVERY_NONCE_SIZE, NULL) &&
             EVP_EncryptInit_ex(ctx, NULL, NULL, kek->data, rec->nonce) && add_aad(ctx, description) &&
             EVP_EncryptUpdate(ctx, rec->ct, &n, key->data, (int) key->len) &&
             EVP_EncryptFinal_ex(ctx, rec->ct + n, &fin) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, BA_RECOVERY_TAG_SIZE, rec->tag) &&
             (size_t) (n + fin) == key->len;
        EVP_CIPHER_CTX_free(ctx);
        rec->ct_len = (uint8_t) key->len;
        return ok ? 0 : -EIO;
}

int ba_recovery_seal(const struct ba_secret *key, const struct ba_secret *passphrase, const char *description,
                     unsigned log_n, struct ba_recovery_record *out) {
        struct ba_secret kek = { 0 };
        int r;

        if (key->len < 1 || key->len > BA_KEY_MAX_SIZE || log_n < BA_RECOVERY_LOG_N_MIN ||
            log_n > BA_RECOVERY_LOG_N_MAX)
                return -EINVAL;
        memset(out, 0, sizeof(*out));
        out->kdf = BA_RECOVERY_KDF_SCRYPT;
        out->log_n = (uint8_t) log_n;
        out->r = BA_RECOVERY_R_DEFAULT;
        out->p = BA_RECOVERY_P_DEFAULT;
        out->aead = BA_RECOVERY_AEAD_AES256GCM;
        r = ba_random_bytes(out->salt, sizeof(out->salt));
        if (r == 0)
                r = ba_random_bytes(out->nonce, sizeof(out->nonce));
        if (r == 0)
                r = derive_kek(out, passphrase, &kek);
        if (r == 0)
                r = seal_key(out, &kek, key, description);
        ba_secret_free(&kek);
        return r;
}

static int open_key(const struct ba_recovery_record *rec, const struct ba_secret *kek, const char *description,
                   struct ba_secret *key) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int n = 0, fin = 0, aad = 0, ok;
        uint8_t tag[BA_RECOVERY_TAG_SIZE];

        if (!ctx)
                return -ENOMEM;
        memcpy(tag, rec->tag, sizeof(tag));
        ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, BA_RECOVERY_NONCE_SIZE, NULL) &&
             EVP_DecryptInit_ex(ctx, NULL, NULL, kek->data, rec->nonce) &&
             EVP_DecryptUpdate(ctx, NULL, &aad, (const uint8_t *) AAD_PREFIX, sizeof(AAD_PREFIX)) &&
             EVP_DecryptUpdate(ctx, NULL, &aad, (const uint8_t *) description, (int) strlen(description)) &&
             EVP_DecryptUpdate(ctx, key->data, &n, rec->ct, rec->ct_len) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, BA_RECOVERY_TAG_SIZE, tag);
        if (!ok) {
                EVP_CIPHER_CTX_free(ctx);
                return -EIO;
        }
        /* Only the tag check can fail here: a wrong passphrase or an altered record. */
        ok = EVP_DecryptFinal_ex(ctx, key->data + n, &fin) && (size_t) (n + fin) == rec->ct_len;
        EVP_CIPHER_CTX_free(ctx);
        key->len = ok ? rec->ct_len : 0;
        return ok ? 0 : -EACCES;
}

int ba_recovery_open(const struct ba_recovery_record *rec, const struct ba_secret *passphrase,
                     const char *description, struct ba_secret *key) {
        struct ba_secret kek = { 0 };
        int r;

        r = ba_secret_new(key, BA_KEY_MAX_SIZE);
        if (r < 0)
                return r;
        r = derive_kek(rec, passphrase, &kek);
        if (r == 0)
                r = open_key(rec, &kek, description, key);
        ba_secret_free(&kek);
        if (r < 0)
                ba_secret_free(key);
        return r;
}
