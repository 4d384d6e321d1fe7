/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pieces of a signed PCR policy that need no TPM: systemd's signature file, the signer's key, the digest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <tss2/tss2_mu.h>

#include "crypto.h"
#include "pcr-pubkey.h"
#include "pcr-signature.h"
#include "policy.h"

static char err[256];

static void hex32(const char *hex, uint8_t out[32]) {
        assert_int_equal(ba_hex_decode(hex, out, 32), 0);
}

#define FP "a46d4af83098795a99394820a3308a6cf3afb5fca0945a24c6fa67dcb7c914fa"
#define POL "df99d0a7f352cb418a125ec8f564799735306f94f289f68ff62232526d9ecfcf"
#define OTHER "0000000000000000000000000000000000000000000000000000000000000001"
/* "signature!" */
#define SIG "c2lnbmF0dXJlIQ=="

static int find(const char *json, const char *fp, const char *pol, struct ba_pcr_signature *out) {
        uint8_t f[32], p[32];

        hex32(fp, f);
        hex32(pol, p);
        memset(err, 0, sizeof(err));
        return ba_pcr_signature_find(json, strlen(json), 1u << 11, f, p, out, err, sizeof(err));
}

static void assert_err_contains(const char *needle) {
        if (!strstr(err, needle))
                fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
}

/* The shape systemd-measure sign prints, with another bank and other phases around the one wanted. */
static void test_signature_found(void **state) {
        static const char json[] =
                "{\"sha1\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"eA==\"}],\n"
                " \"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" OTHER "\",\"sig\":\"eHg=\"},\n"
                "             {\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"" SIG "\"}]}\n";
        struct ba_pcr_signature s;
        uint8_t want[32];

        (void) state;
        assert_int_equal(find(json, FP, POL, &s), 0);
        hex32(POL, want);
        assert_memory_equal(s.policy, want, 32);
        assert_int_equal(s.sig_len, 10);
        assert_memory_equal(s.sig, "signature!", 10);
}

static void test_signature_not_there(void **state) {
        static const char json[] = "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" OTHER
                                   "\",\"sig\":\"" SIG "\"}]}";
        static const char multi[] = "{\"sha256\":[{\"pcrs\":[7,11],\"pkfp\":\"" FP "\",\"pol\":\"" POL
                                    "\",\"sig\":\"" SIG "\"}]}";
        struct ba_pcr_signature s;

        (void) state;
        assert_int_equal(find(json, FP, POL, &s), -ENOENT);
        assert_err_contains("1 signature for PCR 11 by this key, none for the current value");
        assert_int_equal(find(json, OTHER, POL, &s), -ENOENT);
        assert_err_contains("only by other keys");
        assert_int_equal(find(multi, FP, POL, &s), -ENOENT); /* signed for PCRs 7+11, not 11 alone */
        assert_err_contains("no signature for PCR 11");
        assert_int_equal(find("{\"sha384\":[]}", FP, POL, &s), -ENOENT);
        assert_err_contains("sha256");
        assert_int_equal(find("{\"sha256\":[]}", FP, POL, &s), -ENOENT);
}

static void test_signature_malformed(void **state) {
        static const struct {
                const char *json, *needle;
        } cases[] = {
                { "", "not JSON" },
                { "{\"sha256\":[", "not JSON" },
                { "[]", "not a JSON object" },
                { "{} x", "data after" },
                { "{\"sha256\":{}}", "not a list" },
                { "{\"sha256\":[7]}", "not an object" },
                { "{\"sha256\":[{\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"" SIG "\"}]}", "\"pcrs\"" },
                { "{\"sha256\":[{\"pcrs\":[],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"" SIG "\"}]}", "\"pcrs\"" },
                { "{\"sha256\":[{\"pcrs\":[24],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"" SIG "\"}]}", "0..23" },
                { "{\"sha256\":[{\"pcrs\":[\"11\"],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"" SIG "\"}]}",
                  "0..23" },
                { "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"xyz\",\"pol\":\"" POL "\",\"sig\":\"" SIG "\"}]}", "pkfp" },
                { "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":7,\"sig\":\"" SIG "\"}]}", "pol" },
                { "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\"}]}", "\"sig\"" },
                { "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"abc\"}]}", "base64" },
                { "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"a!==\"}]}", "base64" },
                { "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"\"}]}", "base64" },
        };
        struct ba_pcr_signature s;

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                assert_int_equal(find(cases[i].json, FP, POL, &s), -EBADMSG);
                assert_err_contains(cases[i].needle);
        }
}

static void test_signature_too_long(void **state) {
        size_t n = (BA_PCR_SIGNATURE_MAX + 3) / 3 * 4 + 4, off;
        char *json = malloc(n + 256);
        struct ba_pcr_signature s;

        (void) state;
        assert_non_null(json);
        off = (size_t) sprintf(json, "{\"sha256\":[{\"pcrs\":[11],\"pkfp\":\"" FP "\",\"pol\":\"" POL "\",\"sig\":\"");
        memset(json + off, 'A', n);
        strcpy(json + off + n, "\"}]}");
        assert_int_equal(find(json, FP, POL, &s), -EBADMSG);
        assert_err_contains("at most 512 bytes");
        free(json);
}

static char *pem_of(EVP_PKEY *pk) {
        BIO *bio = BIO_new(BIO_s_mem());
        char *data = NULL, *copy;
        long len;

        assert_non_null(bio);
        assert_int_equal(PEM_write_bio_PUBKEY(bio, pk), 1);
        len = BIO_get_mem_data(bio, &data);
        copy = strndup(data, (size_t) len);
        BIO_free(bio);
        return copy;
}

static void test_pubkey(void **state) {
        EVP_PKEY *pk = EVP_RSA_gen(2048);
        struct ba_pcr_pubkey k;
        uint8_t buf[sizeof(TPMT_PUBLIC)], want[32], *der = NULL;
        size_t len = 0;
        char *pem;
        int dlen;

        (void) state;
        assert_non_null(pk);
        pem = pem_of(pk);
        assert_int_equal(ba_pcr_pubkey_from_pem((uint8_t *) pem, strlen(pem), &k, err, sizeof(err)), 0);
        /* systemd's pkfp: SHA-256 of the PKCS#1 RSAPublicKey DER. */
        dlen = i2d_PublicKey(pk, &der);
        assert_true(dlen > 0);
        assert_int_equal(ba_sha256((const struct ba_iovec[]) { { der, (size_t) dlen } }, 1, want), 0);
        assert_memory_equal(k.fingerprint, want, 32);
        /* The TPM name: sha256 alg id, then the hash of the marshalled public area. */
        assert_int_equal(k.public.publicArea.parameters.rsaDetail.exponent, 65537);
        assert_int_equal(k.public.publicArea.parameters.rsaDetail.keyBits, 2048);
        assert_int_equal(Tss2_MU_TPMT_PUBLIC_Marshal(&k.public.publicArea, buf, sizeof(buf), &len), TSS2_RC_SUCCESS);
        assert_int_equal(ba_sha256((const struct ba_iovec[]) { { buf, len } }, 1, want), 0);
        assert_int_equal(k.name.size, 34);
        assert_memory_equal(k.name.name, "\x00\x0b", 2);
        assert_memory_equal(k.name.name + 2, want, 32);
        OPENSSL_free(der);
        free(pem);
        EVP_PKEY_free(pk);
}

static void test_pubkey_refused(void **state) {
        EVP_PKEY *ec = EVP_EC_gen("P-256"), *small = EVP_RSA_gen(1024);
        struct ba_pcr_pubkey k;
        char *pem;

        (void) state;
        assert_non_null(ec);
        assert_non_null(small);
        pem = pem_of(ec);
        assert_int_equal(ba_pcr_pubkey_from_pem((uint8_t *) pem, strlen(pem), &k, err, sizeof(err)), -EBADMSG);
        assert_err_contains("not an RSA key");
        free(pem);
        pem = pem_of(small);
        assert_int_equal(ba_pcr_pubkey_from_pem((uint8_t *) pem, strlen(pem), &k, err, sizeof(err)), -EBADMSG);
        assert_err_contains("1024 bits");
        free(pem);
        assert_int_equal(ba_pcr_pubkey_from_pem((const uint8_t *) "hello", 5, &k, err, sizeof(err)), -EBADMSG);
        assert_err_contains("not a PEM public key");
        EVP_PKEY_free(ec);
        EVP_PKEY_free(small);
}

/* PolicyAuthorize rebuilt by hand: H(H(0^32 || CC_PolicyAuthorize || keyName) || empty policyRef). */
static void test_policy_authorize(void **state) {
        static const uint8_t cc[] = { 0x00, 0x00, 0x01, 0x6a };
        struct ba_signed_pcrs sp = { .pcr_mask = 1u << 11, .key_name = { .size = 34 } };
        uint8_t zero[32] = { 0 }, step[32], want[32], got[32], pcr_only[32];
        ba_pcr_values v = { { 0 } };

        (void) state;
        sp.key_name.name[1] = 0x0b;
        memset(sp.key_name.name + 2, 0x5c, 32);
        assert_int_equal(ba_sha256((const struct ba_iovec[]) { { zero, 32 }, { cc, 4 }, { sp.key_name.name, 34 } }, 3,
                                   step), 0);
        assert_int_equal(ba_sha256((const struct ba_iovec[]) { { step, 32 } }, 1, want), 0);
        assert_int_equal(ba_policy_digest(0, v, false, &sp, got), 0);
        assert_memory_equal(got, want, 32);
        /* The sealed PCRs and the PIN continue from there, in that order. */
        memset(v[7], 7, 32);
        assert_int_equal(ba_policy_digest(1u << 7, v, true, &sp, got), 0);
        assert_memory_not_equal(got, want, 32);
        /* No signer, or one for no PCRs: the plain digest. */
        assert_int_equal(ba_policy_digest(1u << 7, v, false, NULL, pcr_only), 0);
        sp.pcr_mask = 0;
        assert_int_equal(ba_policy_digest(1u << 7, v, false, &sp, got), 0);
        assert_memory_equal(got, pcr_only, 32);
}

/* The digest systemd-measure signs is a PolicyPCR digest from zero: the pair measured on Debian 12's tool. */
static void test_policy_matches_systemd_measure(void **state) {
        ba_pcr_values v = { { 0 } };
        uint8_t got[32], want[32];

        (void) state;
        hex32("633632e1fa7b036514b67f7c267b92edfb28f2fc34e4708d19eed9c5810762f1", v[11]);
        hex32(POL, want);
        assert_int_equal(ba_policy_digest(1u << 11, v, false, NULL, got), 0);
        assert_memory_equal(got, want, 32);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_signature_found),
                cmocka_unit_test(test_signature_not_there),
                cmocka_unit_test(test_signature_malformed),
                cmocka_unit_test(test_signature_too_long),
                cmocka_unit_test(test_pubkey),
                cmocka_unit_test(test_pubkey_refused),
                cmocka_unit_test(test_policy_authorize),
                cmocka_unit_test(test_policy_matches_systemd_measure),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
