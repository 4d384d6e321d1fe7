/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "crypto.h"
#include "rollback-anchor.h"

#define ANCHOR_MAGIC "BAANCH01"
#define MAC_CONTEXT "btrfs-auth rollback anchor v1"
#define BODY 40

/* HMAC-SHA256(key, context || body): the context keeps it apart from the key's other uses. */
static int mac(const struct ba_secret *key, const uint8_t body[BODY], uint8_t out[BA_DIGEST_SIZE]) {
        uint8_t msg[sizeof(MAC_CONTEXT) - 1 + BODY];

        memcpy(msg, MAC_CONTEXT, sizeof(MAC_CONTEXT) - 1);
        memcpy(msg + sizeof(MAC_CONTEXT) - 1, body, BODY);
        return ba_hmac_sha256(key->data, key->len, msg, sizeof(msg), out) < 0 ? -EIO : 0;
}

/* Magic 8, record handle 4, counter handle 4, counter 8, UUID 16, HMAC 32; integers big-endian. */
int ba_rollback_anchor_encode(const struct ba_rollback_anchor *a, const struct ba_secret *key,
                              uint8_t out[BA_ROLLBACK_ANCHOR_BYTES]) {
        memcpy(out, ANCHOR_MAGIC, 8);
        ba_put_be(out + 8, a->record_handle, 4);
        ba_put_be(out + 12, a->counter_handle, 4);
        ba_put_be(out + 16, a->counter_at_enroll, 8);
        memcpy(out + 24, a->fsid, BA_UUID_SIZE);
        return mac(key, out, out + BODY);
}

int ba_rollback_anchor_decode(const uint8_t in[BA_ROLLBACK_ANCHOR_BYTES], const struct ba_secret *key,
                              struct ba_rollback_anchor *a) {
        uint8_t want[BA_DIGEST_SIZE];
        int r;

        if (memcmp(in, ANCHOR_MAGIC, 8) != 0)
                return -EBADMSG;
        r = mac(key, in, want);
        if (r == 0 && !ba_digest_equal(want, in + BODY, BA_DIGEST_SIZE))
                r = -EPERM;
        explicit_bzero(want, sizeof(want));
        if (r != 0)
                return r;
        a->record_handle = (uint32_t) ba_get_be(in + 8, 4);
        a->counter_handle = (uint32_t) ba_get_be(in + 12, 4);
        a->counter_at_enroll = ba_get_be(in + 16, 8);
        memcpy(a->fsid, in + 24, BA_UUID_SIZE);
        return 0;
}
