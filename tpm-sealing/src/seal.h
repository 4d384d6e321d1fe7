/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "keyfile.h"
#include "policy.h"
#include "secure.h"
#include "tpm2-context.h"

/* What a new seal binds the key to. */
struct ba_seal_binding {
        uint32_t pcr_mask;       /* the PCRs sealed to a value, the lock PCR among them */
        uint32_t pcr_value_mask; /* those whose value is given in pcr_values; the others take their current one */
        ba_pcr_values pcr_values;
        int lock_pcr;            /* -1: none; sealed to zero (its value at TPM startup) unless given */
        const char *signed_policy_key; /* PEM public key that signs PCR values; NULL: kf keeps its own */
        uint32_t signed_mask;          /* the PCRs it signs; 0: kf's, else PCR 11 */
        bool require_coverage;   /* refuse a binding that misses the initramfs or command line (boot-chain.h) */
};

/*
 * Seals key under the SRK of the TPM at tpm into kf (parent name, PCR
 * selection and values, policy digest, public and private parts) as b
 * says.  A kf that already names its parent (reseal, rekey) is sealed to
 * that SRK or not at all.  auth->data, when set, is the PIN's TPM2B_AUTH.
 * Returns an exit code after logging.
 */
int ba_seal_to_tpm(const struct ba_tpm_target *tpm, const struct ba_seal_binding *b, const struct ba_secret *key,
                   const struct ba_secret *auth, struct ba_keyfile *kf);
