/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <keyutils.h>

/* "user"/"@u" (default), "session"/"@s", "process"/"@p", "thread"/"@t", "user-session"/"@us", or a key id. */
int ba_keyring_parse(const char *s, key_serial_t *ret);
/* Human name for messages: "user keyring" or "keyring 1234". */
const char *ba_keyring_name(key_serial_t ring, char *buf, size_t len);

/*
 * Adds a logon key and takes write and setattr from everyone: no other
 * process can update its payload, revoke it or change its permissions
 * (possessor: view, search, link; owner: view).  Refuses descriptions not
 * starting with "btrfs:" (-EINVAL).
 */
#define BA_LOGON_KEY_PERM (KEY_POS_VIEW | KEY_POS_SEARCH | KEY_POS_LINK | KEY_USR_VIEW)
int ba_keyring_add_logon(const char *description, const uint8_t *payload, size_t len, key_serial_t ring,
                         key_serial_t *ret);

/*
 * Invalidates the "user" key description in root's user keyring, as
 * systemd-ask-password --keyname leaves a typed secret there for a few
 * minutes.  Returns 1 when one was there, 0 when not, or -errno.
 */
int ba_keyring_forget_cached(const char *description);

/* The logon key with this description in ring (or a keyring linked from it): 0, -ENOKEY, or -errno. */
int ba_keyring_find_logon(const char *description, key_serial_t ring, key_serial_t *ret);
