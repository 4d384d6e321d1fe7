/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "keyfile.h"

/*
 * Which parts of the boot chain a binding covers.  The initramfs and the
 * kernel command line live on the unauthenticated boot partition: a key
 * that does not depend on them is released to any initramfs an offline
 * attacker writes (docs/threat-model.md).
 */
enum {
        BA_COVERS_INITRAMFS = 1 << 0,
        BA_COVERS_CMDLINE = 1 << 1,
        BA_COVERS_BOTH = BA_COVERS_INITRAMFS | BA_COVERS_CMDLINE,
};

/*
 * Signed PCR 11 or a sealed PCR 11 (systemd-stub measures the whole UKI)
 * cover both; with GRUB, PCR 9 covers the initramfs and PCR 8 the command
 * line; PCR 12 the command line systemd-stub takes from outside the UKI.
 * A sealed value of all zeros means nothing was measured and covers
 * nothing.
 */
unsigned ba_boot_chain_coverage(const struct ba_keyfile *kf);

/* Refuses (exit code 2, after saying what is missing and what to do) a binding that does not cover both. */
int ba_boot_chain_require(const struct ba_keyfile *kf);

/* Whether this boot went through systemd-stub, which measured a unified kernel image into PCR 11. */
bool ba_booted_uki(void);

/* What each PCR of the binding stands for, and what is not bound; for "btrfs-auth status". */
void ba_boot_chain_describe(FILE *f, const struct ba_keyfile *kf);
