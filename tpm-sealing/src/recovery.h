/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"
#include "secure.h"

/*
 * Argon2id costs of new recovery copies (docs/tpm-sealing.md says why).  A
 * recovery key has 256 random bits: no cost makes guessing it any harder,
 * so it gets a small one that unlocks fast on small machines.  A passphrase
 * has what a person chose: the cost is all that stands between it and
 * offline guessing, so it gets the expensive one, its memory capped at a
 * quarter of this machine's RAM (the initramfs that asks for it runs here).
 */
#define BA_ARGON2_LANES 4
#define BA_ARGON2_KEY_MEMORY_KIB (32u * 1024)
#define BA_ARGON2_KEY_TIME 1
#define BA_ARGON2_PASSPHRASE_MEMORY_KIB BA_ARGON2_MEMORY_MAX_KIB
#define BA_ARGON2_PASSPHRASE_MEMORY_FLOOR_KIB (64u * 1024)
#define BA_ARGON2_PASSPHRASE_TIME 4

struct ba_recovery_cost {
        uint32_t t_cost; /* passes */
        uint32_t m_cost; /* KiB */
        uint32_t lanes;
};

/* The default cost for kind (BA_RECOVERY_KIND_*) on this machine. */
void ba_recovery_default_cost(uint8_t kind, struct ba_recovery_cost *cost);

/*
 * A new recovery copy (version 2, Argon2id): key encrypted with AES-256-GCM
 * under Argon2id(secret, fresh salt), fresh nonce; the record's kind, KDF
 * and costs and the key's description are associated data.  secret is
 * what the KDF takes: the passphrase's bytes, or the recovery key's 32 raw
 * bytes.  Returns 0, -EINVAL (bad sizes or costs) or -EIO/-ENOMEM.
 */
int ba_recovery_seal(const struct ba_secret *key, const struct ba_secret *secret, uint8_t kind,
                     const struct ba_recovery_cost *cost, const char *description, struct ba_recovery_record *out);

/*
 * The same under the version, kind, KDF and costs already in *rec (salt,
 * nonce, tag and ciphertext are filled in): version 1 (scrypt) records
 * for the tests of reading them.
 */
int ba_recovery_seal_record(const struct ba_secret *key, const struct ba_secret *secret, const char *description,
                            struct ba_recovery_record *rec);

/*
 * Decrypts the recovery copy into *key (allocated here).  Returns 0,
 * -EACCES when the secret is wrong (or the record was altered),
 * -EINVAL when the record is out of range, -ENOMEM or -EIO.
 */
int ba_recovery_open(const struct ba_recovery_record *rec, const struct ba_secret *secret,
                     const char *description, struct ba_secret *key);

/* The key-encryption key: the record's KDF over secret, 32 bytes in secret memory (recovery-kdf.c). */
#define BA_RECOVERY_KEK_SIZE 32
int ba_recovery_derive(const struct ba_recovery_record *rec, const struct ba_secret *secret, struct ba_secret *kek);
