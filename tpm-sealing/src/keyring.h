/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <keyutils.h>

/* "user"/"@u" (default), "session"/"@s", "process"/"@p", "thread"/"@t", "user-session"/"@us", or a key id. */
int ba_keyring_parse(const char *s, key_serial_t *ret);
/* Human name for messages: "user keyring" or "keyring 1234". */
const char *ba_keyring_name(key_serial_t ring, char *buf, size_t len);

/* Adds (or updates) a logon key; refuses descriptions not starting with "btrfs:" (-EINVAL). */
int ba_keyring_add_logon(const char *description, const uint8_t *payload, size_t len, key_serial_t ring,
                         key_serial_t *ret);
