/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"
#include "superblock.h"

/* Key files with made-up TPM blobs (no key inside), consistent enough to pass every check. */
enum {
        BA_FIXTURE_PCR7,        /* PCR 7, no PIN */
        BA_FIXTURE_PIN_ONLY,    /* no PCRs, PIN */
        BA_FIXTURE_LOCK_UUID,   /* PCRs 0,2,7,15, lock PCR 15, UUID, creation time, PIN */
        BA_FIXTURE_MANY_PCRS,   /* PCRs 0..15 and 17..22 */
        BA_FIXTURE_RECOVERY,    /* PCRs 7,15, lock PCR 15, UUID, recovery copy (made-up ciphertext) */
        BA_FIXTURE_SIGNED,      /* PCR 11 signed (made-up key name), PCRs 7,12,13,15 sealed, lock PCR 15 */
        BA_FIXTURE_RECOVERY_KEY, /* PCRs 7,8,9,15, lock PCR 15, recovery copy version 2 (Argon2id, recovery key) */
        BA_FIXTURE_COUNT,
};

void ba_fixture_keyfile(struct ba_keyfile *kf, int variant);
/* Serialized fixture; aborts on failure (fixtures are always valid). */
uint8_t *ba_fixture_bytes(int variant, size_t *len);

/* Header length field and trailer checksum made to fit len again, as a forger would. */
void ba_fixture_refix(uint8_t *buf, size_t len);

/* A superblock made to verify with key: the HMAC written into sb[0..31], as mkfs.btrfs would. */
int ba_superblock_sign(uint8_t sb[BA_SB_SIZE], const uint8_t *key, size_t key_len);
