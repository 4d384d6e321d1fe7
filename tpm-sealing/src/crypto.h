/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct ba_iovec {
        const void *data;
        size_t len;
};

/* SHA-256 over the concatenation of the pieces; -EIO if libcrypto fails. */
int ba_sha256(const struct ba_iovec *v, size_t n, uint8_t out[BA_DIGEST_SIZE]);
int ba_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *data, size_t data_len,
                   uint8_t out[BA_DIGEST_SIZE]);
/* Constant time; true when equal. */
int ba_digest_equal(const uint8_t *a, const uint8_t *b, size_t len);
