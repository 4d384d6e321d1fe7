/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "secure.h"
#include "util.h"

/* NAME.rollback (docs/key-file-format.md, "Rollback anchor"). */
struct ba_rollback_anchor {
        uint32_t record_handle;
        uint32_t counter_handle;
        uint64_t counter_at_enroll;
        uint8_t fsid[BA_UUID_SIZE];
};

#define BA_ROLLBACK_ANCHOR_BYTES 72

/* Returns 0 or -EIO (libcrypto). */
int ba_rollback_anchor_encode(const struct ba_rollback_anchor *a, const struct ba_secret *key,
                              uint8_t out[BA_ROLLBACK_ANCHOR_BYTES]);
/* -EBADMSG: not an anchor; -EPERM: its HMAC does not verify with key; -EIO: libcrypto. */
int ba_rollback_anchor_decode(const uint8_t in[BA_ROLLBACK_ANCHOR_BYTES], const struct ba_secret *key,
                              struct ba_rollback_anchor *a);
