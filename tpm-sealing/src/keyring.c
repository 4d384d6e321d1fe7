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
        /*
         * Made in the process keyring, where this process possesses it and
         * may narrow its permissions, then linked into ring: a key added to
         * @u straight away is not possessed unless the session keyring links
         * @u, and its owner alone may not change its permissions.
         */
        id = add_key("logon", description, payload, len, KEY_SPEC_PROCESS_KEYRING);
        if (id < 0)
                return -errno;
        if (keyctl_setperm(id, BA_LOGON_KEY_PERM) < 0 || keyctl_link(id, ring) < 0) {
                int r = -errno;

                /* A key others could rewrite is not one to mount with. */
                (void) keyctl_invalidate(id);
                return r;
        }
        (void) keyctl_unlink(id, KEY_SPEC_PROCESS_KEYRING);
        *ret = id;
        return 0;
}

int ba_keyring_forget_cached(const char *description) {
        long id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", description, 0);

        if (id < 0)
                return errno == ENOKEY || errno == ENOENT ? 0 : -errno;
        return keyctl_invalidate((key_serial_t) id) < 0 ? -errno : 1;
}

int ba_keyring_find_logon(const char *description, key_serial_t ring, key_serial_t *ret) {
        long id = keyctl_search(ring, "logon", description, 0);

        if (id < 0)
                return errno == ENOKEY || errno == ENOENT ? -ENOKEY : -errno;
        *ret = (key_serial_t) id;
        return 0;
}
