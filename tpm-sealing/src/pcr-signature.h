/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define BA_PCR_SIGNATURE_MAX 512 /* an RSA-4096 signature */
#define BA_PCR_SIGNATURE_FILE_MAX 65536

/* Where systemd-stub hands a UKI's .pcrsig and .pcrpkey sections to the initrd. */
#define BA_PCR_SIGNATURE_DEFAULT "/.extra/tpm2-pcr-signature.json"
#define BA_PCR_PUBLIC_KEY_DEFAULT "/.extra/tpm2-pcr-public-key.pem"

/*
 * One signed PCR policy from systemd's tpm2-pcr-signature.json: in the
 * "sha256" array, an object {"pcrs": [11], "pkfp": hex, "pol": hex,
 * "sig": base64}; "pol" is the PolicyPCR digest of the expected values,
 * "sig" an RSASSA-PKCS1-v1_5 SHA-256 signature over it.
 */
struct ba_pcr_signature {
        uint8_t policy[BA_DIGEST_SIZE];
        uint8_t sig[BA_PCR_SIGNATURE_MAX];
        size_t sig_len;
};

/*
 * Finds the signature for exactly the PCRs of mask, made by the key with
 * fingerprint pkfp, for the policy digest policy.  Returns 0; -EBADMSG
 * when the file is not well-formed (err says where); -ENOENT when it is,
 * but holds no such signature (err says what it holds instead).
 */
int ba_pcr_signature_find(const char *text, size_t len, uint32_t mask, const uint8_t pkfp[BA_DIGEST_SIZE],
                          const uint8_t policy[BA_DIGEST_SIZE], struct ba_pcr_signature *out, char *err,
                          size_t err_len);
