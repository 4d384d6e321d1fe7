/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/* The settings of the optional /etc/btrfs-auth/btrfs-auth.conf that shape
 * the units.  The file is EnvironmentFile-style KEY=VALUE lines, so the
 * tool may read other keys from it; unknown keys are ignored here. */
struct ba_conf {
        bool set;               /* any setting below was given */
        unsigned tpm_wait;      /* BTRFS_AUTH_TPM_WAIT: seconds to wait for /dev/tpmrm0 */
        unsigned pin_timeout;   /* BTRFS_AUTH_PIN_TIMEOUT: extra seconds for typing PINs */
};

/* Fills *conf with defaults, then with the valid settings of
 * <config_dir>/btrfs-auth.conf.  A missing file is fine; invalid values
 * are logged and ignored. */
void conf_read(const char *config_dir, struct ba_conf *conf);

/* The load unit's TimeoutStartSec=: the TPM wait, time for the TPM work
 * itself, and the PIN allowance. */
unsigned conf_start_timeout(const struct ba_conf *conf);
