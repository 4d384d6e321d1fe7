/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The root an appliance image was built with, pinned by its builder in
 * the signed boot image's btrfs-auth.conf: SHA-256 over the partition's
 * first BTRFS_AUTH_PROVISION_SIZE bytes.  The first boot compares before
 * it rewrites anything, so a root changed after the build (in transit, on
 * the powered-off disk) never receives a key of the machine's own.
 */
#define BA_CONF_PROVISION_DIGEST "BTRFS_AUTH_PROVISION_DIGEST"
#define BA_CONF_PROVISION_SIZE "BTRFS_AUTH_PROVISION_SIZE"

/* Returns 0 when device's first size_text bytes hash to digest_hex, else an exit code after logging. */
int ba_image_digest_check(const char *device, const char *digest_hex, const char *size_text);
