/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "keyfile.h"
#include "pcr-pubkey.h"
#include "pcr-signature.h"
#include "tpm2-context.h"

/* The variable systemd-stub sets when it measured a unified kernel image into PCR 11. */
#define BA_STUB_PCR_EFIVAR "/sys/firmware/efi/efivars/StubPcrKernelImage-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"

/* The PCR public key systemd's tools leave on this machine, if any (enroll's default). */
const char *ba_pcr_public_key_find(void);

/* The PEM public key at path.  Returns 0 or BA_EXIT_PCR_PUBLIC_KEY after logging. */
int ba_pcr_pubkey_load(const char *path, struct ba_pcr_pubkey *key);

/* What a load of a key with a signed PCR policy reads besides the key file. */
struct ba_signed_input {
        struct ba_pcr_pubkey key;
        char *json;       /* tpm2-pcr-signature.json */
        size_t json_len;
        char *json_path;  /* where it came from, for messages */
};

/*
 * Reads the PCR public key (key_path, or systemd-stub's copy of the
 * UKI's .pcrpkey) and the signature file (sig_path, or the stub's copy of
 * .pcrsig); the key must be the one kf was sealed to.  Needs no TPM.
 * Returns an exit code after logging: 15 not booted through a UKI, 16 no
 * signature, 19 key missing or not the sealed one.
 */
int ba_signed_input_read(const char *sig_path, const char *key_path, const struct ba_keyfile *kf,
                         struct ba_signed_input *in);
void ba_signed_input_free(struct ba_signed_input *in);

/*
 * The signature for the signed PCRs' current values (one PCR_Read).
 * Returns an exit code after logging: 17 malformed file, 18 no signature
 * for these values (naming the literal PCRs that differ as well).
 */
int ba_signed_select(struct ba_tpm *t, const struct ba_keyfile *kf, const struct ba_signed_input *in,
                     struct ba_pcr_signature *sig);
