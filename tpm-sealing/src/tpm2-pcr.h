/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"
#include "log.h"
#include "policy.h"
#include "tpm2-context.h"

/* Extended into the lock PCR by "btrfs-auth lock": docs/tpm-sealing.md documents it. */
#define BA_LOCK_EVENT "btrfs-auth-lock-v1"
#define BA_LOCK_PCR_DEFAULT 15

/* Current sha256-bank values of the PCRs in mask; returns an exit code after logging. */
int ba_tpm_pcr_read(struct ba_tpm *t, uint32_t mask, ba_pcr_values values);

/* TPM2_PCR_Event: the TPM hashes data with each active bank's algorithm and extends it; returns an exit code. */
int ba_tpm_pcr_event(struct ba_tpm *t, unsigned pcr, const void *data, size_t len);
/* ba_tpm_pcr_event(pcr, BA_LOCK_EVENT). */
int ba_tpm_pcr_lock(struct ba_tpm *t, unsigned pcr);

/* The PCRs whose current values differ from the key file's; returns an exit code. */
int ba_tpm_pcr_mismatch(struct ba_tpm *t, const struct ba_keyfile *kf, ba_pcr_values current, uint32_t *mismatch);

/* One line per differing PCR, at the given level, naming the lock PCR as such. */
void ba_log_pcr_mismatch(enum ba_log_level level, const struct ba_keyfile *kf, const ba_pcr_values current, uint32_t mismatch);

struct ba_lockout_info {
        bool in_lockout;
        uint32_t counter, max_tries, interval, recovery;
};
int ba_tpm_lockout_info(struct ba_tpm *t, struct ba_lockout_info *info);
