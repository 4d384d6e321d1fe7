/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <tss2/tss2_mu.h>

#include "crypto.h"
#include "pcr-pubkey.h"

#define RSA_BITS_MIN 2048
#define RSA_BITS_MAX 4096

/*
 * A signing key with no scheme of its own, as systemd and tpm2-tools load
 * it: the signature brings the scheme.  The exponent is spelled out even
 * for 65537 (which the TPM would also accept as 0): the name depends on
 * it, and an equal name means an equal policy for all three.
 */
static int rsa_template(const BIGNUM *n, const BIGNUM *e, TPM2B_PUBLIC *pub, char *err, size_t err_len) {
        TPMT_PUBLIC *p = &pub->publicArea;
        int bits = BN_num_bits(n), nbytes = BN_num_bytes(n);

        if (bits < RSA_BITS_MIN || bits > RSA_BITS_MAX || bits % 8 != 0)
                return ba_reason(err, err_len, -EBADMSG, "the RSA key has %d bits; PCR signatures need %d to %d", bits,
                            RSA_BITS_MIN, RSA_BITS_MAX);
        if (BN_num_bits(e) > 32)
                return ba_reason(err, err_len, -EBADMSG, "the RSA public exponent does not fit the TPM's 32 bits");
        memset(pub, 0, sizeof(*pub));
        p->type = TPM2_ALG_RSA;
        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_DECRYPT | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH;
        p->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
        p->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
        p->parameters.rsaDetail.keyBits = (TPMI_RSA_KEY_BITS) bits;
        p->parameters.rsaDetail.exponent = (UINT32) BN_get_word(e);
        p->unique.rsa.size = (UINT16) nbytes;
        if (BN_bn2binpad(n, p->unique.rsa.buffer, nbytes) != nbytes)
                return ba_reason(err, err_len, -EBADMSG, "cannot encode the RSA modulus");
        return 0;
}

/* name = nameAlg || H(marshalled TPMT_PUBLIC) */
static int tpm_name(const TPM2B_PUBLIC *pub, TPM2B_NAME *name) {
        uint8_t buf[sizeof(TPMT_PUBLIC)];
        size_t len = 0;

        if (Tss2_MU_TPMT_PUBLIC_Marshal(&pub->publicArea, buf, sizeof(buf), &len) != TSS2_RC_SUCCESS)
                return -EINVAL;
        name->size = BA_DIGEST_SIZE + 2;
        name->name[0] = (uint8_t) (TPM2_ALG_SHA256 >> 8);
        name->name[1] = (uint8_t) TPM2_ALG_SHA256;
        return ba_sha256((const struct ba_iovec[]) { { buf, len } }, 1, name->name + 2);
}

static int fingerprint(EVP_PKEY *pk, uint8_t out[BA_DIGEST_SIZE]) {
        unsigned char *der = NULL;
        int len = i2d_PublicKey(pk, &der), r;

        if (len <= 0)
                return -EINVAL;
        r = ba_sha256((const struct ba_iovec[]) { { der, (size_t) len } }, 1, out);
        OPENSSL_free(der);
        return r;
}

static int from_pkey(EVP_PKEY *pk, struct ba_pcr_pubkey *out, char *err, size_t err_len) {
        BIGNUM *n = NULL, *e = NULL;
        int r;

        if (!EVP_PKEY_is_a(pk, "RSA"))
                return ba_reason(err, err_len, -EBADMSG, "not an RSA key: systemd-measure signs PCR policies with RSA");
        if (!EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n) ||
            !EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_E, &e)) {
                r = ba_reason(err, err_len, -EBADMSG, "cannot read the RSA modulus and exponent");
                goto out;
        }
        r = rsa_template(n, e, &out->public, err, err_len);
        if (r == 0 && (tpm_name(&out->public, &out->name) < 0 || fingerprint(pk, out->fingerprint) < 0))
                r = ba_reason(err, err_len, -EBADMSG, "cannot compute the key's TPM name and fingerprint");
out:
        BN_free(n);
        BN_free(e);
        return r;
}

int ba_pcr_pubkey_from_pem(const uint8_t *pem, size_t len, struct ba_pcr_pubkey *out, char *err, size_t err_len) {
        EVP_PKEY *pk;
        BIO *bio;
        int r;

        memset(out, 0, sizeof(*out));
        if (len > INT32_MAX)
                return ba_reason(err, err_len, -EBADMSG, "too large for a public key");
        bio = BIO_new_mem_buf(pem, (int) len);
        if (!bio)
                return -ENOMEM;
        pk = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
        BIO_free(bio);
        if (!pk)
                return ba_reason(err, err_len, -EBADMSG, "not a PEM public key (-----BEGIN PUBLIC KEY-----)");
        r = from_pkey(pk, out, err, err_len);
        EVP_PKEY_free(pk);
        return r;
}
