/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the PCR signature file parser: with Secure Boot
 * off, whoever writes the disk writes /.extra/tpm2-pcr-signature.json.
 * Each input is searched for the signature of the seed's key and policy
 * (so the fuzzer can reach a match) and for another one.  Beyond "no
 * crash, no sanitizer report": a refusal always says why, and a match is
 * always for the policy asked for with a signature of a sane length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcr-signature.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The fingerprint and policy of the seeds in corpus-pcr-signature/. */
static const char fp_hex[] = "a46d4af83098795a99394820a3308a6cf3afb5fca0945a24c6fa67dcb7c914fa";
static const char pol_hex[] = "df99d0a7f352cb418a125ec8f564799735306f94f289f68ff62232526d9ecfcf";

static void try_find(const uint8_t *data, size_t size, const uint8_t fp[BA_DIGEST_SIZE],
                     const uint8_t pol[BA_DIGEST_SIZE]) {
        struct ba_pcr_signature sig;
        char err[256] = "";
        int r;

        r = ba_pcr_signature_find((const char *) data, size, 1u << 11, fp, pol, &sig, err, sizeof(err));
        if (r == 0 && (memcmp(sig.policy, pol, BA_DIGEST_SIZE) != 0 || sig.sig_len == 0 ||
                       sig.sig_len > BA_PCR_SIGNATURE_MAX))
                abort(); /* a match that is not what was asked for */
        if (r != 0 && (err[0] == '\0' || (r != -EBADMSG && r != -ENOENT && r != -ENOMEM)))
                abort(); /* refused without saying why, or with an unexpected code */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t fp[BA_DIGEST_SIZE], pol[BA_DIGEST_SIZE], other[BA_DIGEST_SIZE] = { 1 };

        if (ba_hex_decode(fp_hex, fp, sizeof(fp)) < 0 || ba_hex_decode(pol_hex, pol, sizeof(pol)) < 0)
                abort();
        try_find(data, size, fp, pol);
        try_find(data, size, fp, other);
        return 0;
}
