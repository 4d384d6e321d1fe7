/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <tss2/tss2_tpm2_types.h>

#include "util.h"

typedef uint8_t ba_pcr_values[BA_PCR_COUNT][BA_DIGEST_SIZE];

/* One sha256-bank selection; an empty mask gives count 0. */
void ba_pcr_selection(uint32_t mask, TPML_PCR_SELECTION *sel);

/* The digest PolicyPCR compares: H(values of the selected PCRs, ascending). */
int ba_pcr_digest(uint32_t mask, const ba_pcr_values values, uint8_t out[BA_DIGEST_SIZE]);

/*
 * The sealed object's authPolicy, computed in software so that explicit
 * (future) PCR values can be sealed to: PolicyPCR over the mask (omitted
 * when the mask is empty), then PolicyAuthValue when a PIN is used.
 */
int ba_policy_digest(uint32_t mask, const ba_pcr_values values, bool pin, uint8_t out[BA_DIGEST_SIZE]);
