/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <tss2/tss2_tpm2_types.h>

#include "util.h"

/*
 * The public key that signs PCR policies (systemd-measure sign), as the
 * TPM sees it: the template TPM2_LoadExternal takes, the TPM name that
 * TPM2_PolicyAuthorize binds, and systemd's fingerprint of it ("pkfp":
 * SHA-256 of the PKCS#1 RSAPublicKey DER), which selects signatures.
 */
struct ba_pcr_pubkey {
        TPM2B_PUBLIC public;
        TPM2B_NAME name;
        uint8_t fingerprint[BA_DIGEST_SIZE];
};

/* RSA keys of 2048..4096 bits in PEM (SubjectPublicKeyInfo); -EBADMSG with a reason in err otherwise. */
int ba_pcr_pubkey_from_pem(const uint8_t *pem, size_t len, struct ba_pcr_pubkey *out, char *err, size_t err_len);
