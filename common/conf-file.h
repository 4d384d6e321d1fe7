/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/*
 * btrfs-auth.conf, read one way by btrfs-auth and its generator: lines
 * KEY=VALUE as a systemd EnvironmentFile= has them.  Blanks around KEY and
 * VALUE do not count, lines starting with # or ; are comments, one pair of
 * matching quotes around VALUE is removed, and the last assignment wins.
 */
#define BA_CONF_FILE "btrfs-auth.conf"

/* Seconds the load unit waits for /dev/tpmrm0, and the tool with it. */
#define BA_CONF_TPM_WAIT "BTRFS_AUTH_TPM_WAIT"
#define BA_CONF_TPM_WAIT_DEFAULT 30
#define BA_CONF_TPM_WAIT_MAX 600
/* Seconds for a person to answer a PIN or recovery prompt: the unit's and systemd-ask-password's timeout. */
#define BA_CONF_PIN_TIMEOUT "BTRFS_AUTH_PIN_TIMEOUT"
#define BA_CONF_PIN_TIMEOUT_MAX 3600

/*
 * *ret: the value of key in the file at path (malloc'ed), or NULL when the
 * file or the key is missing.  Returns 0, or -errno when the file exists
 * but cannot be read.
 */
int ba_conf_value(const char *path, const char *key, char **ret);

/* A number of seconds 0..max in decimal; -EINVAL for anything else. */
int ba_conf_seconds(const char *value, unsigned max, unsigned *ret);

/*
 * The value of key in <config_dir>/btrfs-auth.conf, malloc'ed, or NULL
 * when the file or the key is missing.  A file that exists but cannot be
 * read is logged as a warning and taken as unset.
 */
char *ba_conf_get(const char *config_dir, const char *key);

/*
 * key of <config_dir>/btrfs-auth.conf as seconds 0..max into *ret: true
 * when it is set and valid; false when it is unset, or invalid (logged as
 * ignored), leaving *ret alone.
 */
bool ba_conf_get_seconds(const char *config_dir, const char *key, unsigned max, unsigned *ret);
