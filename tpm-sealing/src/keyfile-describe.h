/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "keyfile.h"

/* "recovery key, Argon2id m=32 MiB t=1 p=4, AES-256-GCM" or "passphrase, scrypt N=2^16 r=8 p=1, AES-256-GCM". */
void ba_recovery_describe(const struct ba_recovery_record *rec, char *buf, size_t len);

/* One line of what a seal is bound to: "PCRs 7,8,9,15 (lock 15), signed PCRs 11, PIN". */
void ba_binding_summary(const struct ba_keyfile *kf, char *buf, size_t len);
