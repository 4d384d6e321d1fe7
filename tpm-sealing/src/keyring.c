/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "keyring.h"
#include "util.h"

static const struct {
        const char *name, *alias, *human;
        key_serial_t id;
} rings[] = {
        { "user", "@u", "user keyring", KEY_SPEC_USER_KEYRING },
        { "session", "@s", "session keyring", KEY_SPEC_SESSION_KEYRING },
        { "process", "@p", "process keyring", KEY_SPEC_PROCESS_KEYRING },
        { "thread", "@t", "thread keyring", KEY_SPEC_THREAD_KEYRING },
        { "user-session", "@us", "user session keyring", KEY_SPEC_USER_SESSION_KEYRING },
};

int ba_keyring_parse(const char *s, key_serial_t *ret) {
        unsigned id;

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(rings); i++)
                if (strcmp(s, rings[i].name) == 0 || strcmp(s, rings[i].alias) == 0) {
                        *ret = rings[i].id;
                        return 0;
                }
        if (ba_parse_uint(s, INT32_MAX, &id) < 0 || id == 0)
                return -EINVAL;
        *ret = (key_serial_t) id;
        return 0;
}

const char *ba_keyring_name(key_serial_t ring, char *buf, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(rings); i++)
                if (rings[i].id == ring)
                        return rings[i].human;
        snprintf(buf, len, "keyring %d", (int) ring);
        return buf;
}

int ba_keyring_add_logon(const char *description, const uint8_t *payload, size_t len, key_serial_t ring,
                         key_serial_t *ret) {
        key_serial_t id;

        /* The kernel's btrfs only looks keys up under this prefix; anything else would never be used. */
        if (!description || strncmp(description, BA_DESCRIPTION_PREFIX, strlen(BA_DESCRIPTION_PREFIX)) != 0)
                return -EINVAL;
        id = add_key("logon", description, payload, len, ring);
        if (id < 0)
                return -errno;
        *ret = id;
        return 0;
}
