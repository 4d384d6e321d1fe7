/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "secure.h"
#include "util.h"

#define BA_MEASURE_SUFFIX ".measure"

/*
 * What the lock measures for a key it loaded, so that a boot with another
 * key (an attacker's key file and filesystem) shows in the lock PCR:
 * HMAC-SHA256(key, "btrfs-auth measure v1" NUL description NUL fsid),
 * with 16 zero bytes when no filesystem UUID is known.  It reveals
 * nothing about the key (the same idea as systemd's tpm2-measure-pcr=).
 */
int ba_key_measurement(const struct ba_secret *key, const char *description, const uint8_t *fsid,
                       uint8_t out[BA_DIGEST_SIZE]);

/* <state_dir>/<name>.measure holds it in hex until the lock runs.  Returns 0 or -errno. */
int ba_measurement_record(const char *state_dir, const char *name, const uint8_t m[BA_DIGEST_SIZE]);

/* Every recorded measurement, in the order of the files' names; *out is malloc'ed.  Returns 0 or -errno. */
int ba_measurements_read(const char *state_dir, uint8_t (**out)[BA_DIGEST_SIZE], size_t *n);
