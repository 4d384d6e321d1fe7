/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "crypto.h"

int ba_sha256(const struct ba_iovec *v, size_t n, uint8_t out[BA_DIGEST_SIZE]) {
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned int len = 0;
        int ok;

        if (!ctx)
                return -ENOMEM;
        ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
        for (size_t i = 0; ok && i < n; i++)
                ok = EVP_DigestUpdate(ctx, v[i].data, v[i].len);
        ok = ok && EVP_DigestFinal_ex(ctx, out, &len) && len == BA_DIGEST_SIZE;
        EVP_MD_CTX_free(ctx);
        return ok ? 0 : -EIO;
}

int ba_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *data, size_t data_len,
                   uint8_t out[BA_DIGEST_SIZE]) {
        unsigned int len = 0;

        if (key_len > INT32_MAX)
                return -EINVAL;
        /* OpenSSL cleanses its copy of the key when the one-shot HMAC returns. */
        if (!HMAC(EVP_sha256(), key, (int) key_len, data, data_len, out, &len) || len != BA_DIGEST_SIZE)
                return -EIO;
        return 0;
}

int ba_digest_equal(const uint8_t *a, const uint8_t *b, size_t len) {
        return CRYPTO_memcmp(a, b, len) == 0;
}
