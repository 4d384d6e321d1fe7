/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tpm2-context.h"
#include "util.h"

/*
 * Locks each PCR of pcrs (ascending): extends it with every key
 * measurement in order (measure.h), then with the lock event.  After that
 * no key sealed with that PCR as its lock PCR unseals until the next boot,
 * and the PCR's value says which keys were loaded.  Returns an exit code
 * after logging.
 */
int ba_lock(struct ba_tpm *t, uint32_t pcrs, const uint8_t (*m)[BA_DIGEST_SIZE], size_t n);

/* The lock PCRs the key files in config_dir name (NAME.sealed); 15 when none names one. */
uint32_t ba_lock_pcrs_of(const char *config_dir);
