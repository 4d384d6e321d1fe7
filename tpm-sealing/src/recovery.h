/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"
#include "secure.h"

/* scrypt N = 2^16, r = 8, p = 1: 64 MiB and a fraction of a second per try. */
#define BA_RECOVERY_LOG_N_DEFAULT 16
#define BA_RECOVERY_R_DEFAULT 8
#define BA_RECOVERY_P_DEFAULT 1

/*
 * Encrypts key with AES-256-GCM under scrypt(passphrase, fresh salt),
 * fresh nonce, the key's description as associated data.  Returns 0,
 * -EINVAL (bad sizes) or -EIO (libcrypto or random failure).
 */
int ba_recovery_seal(const struct ba_secret *key, const struct ba_secret *passphrase, const char *description,
                     unsigned log_n, struct ba_recovery_record *out);

/*
 * Decrypts the recovery copy into *key (allocated here).  Returns 0,
 * -EACCES when the passphrase is wrong (or the record was altered),
 * -ENOMEM or -EIO.
 */
int ba_recovery_open(const struct ba_recovery_record *rec, const struct ba_secret *passphrase,
                     const char *description, struct ba_secret *key);
