/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "args.h"
#include "keyfile.h"
#include "secure.h"

/*
 * Seals key under this TPM's SRK into kf (parent name, PCR selection and
 * values, policy digest, public and private parts): the PCRs of
 * a->pcr_mask take their current values, except those in
 * a->pcr_value_mask (a->pcr_values) and the lock PCR a->lock_pcr (zero
 * unless given).  auth->data, when set, is the PIN's TPM2B_AUTH.  Returns
 * an exit code after logging.
 */
int ba_seal_to_tpm(const struct ba_args *a, const struct ba_secret *key, const struct ba_secret *auth,
                   struct ba_keyfile *kf);
