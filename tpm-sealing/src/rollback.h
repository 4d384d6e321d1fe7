/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "key-source.h"
#include "keyfile.h"
#include "secure.h"

/*
 * Anti-rollback: a disk put back from an older copy is refused at boot.
 * enroll --rollback-index writes NAME.rollback (BA_ROLLBACK_SUFFIX), the anchor, beside
 * NAME.sealed: which NV indexes hold the record (rollback-record.h), the
 * counter's value at enrollment and the filesystem's UUID, under an HMAC
 * with the filesystem's key so that no one without the key can make one.
 * docs/key-file-format.md describes it; docs/design.md says why.
 */
/*
 * enroll: defines the record and counter at handle and handle + 1 (owner
 * NV indexes) if missing, writable by the boot images signer_pem signs,
 * and writes the anchor for fsid to anchor_path.  Returns an exit code
 * after logging.
 */
int ba_rollback_enroll(const struct ba_tpm_target *tpm, uint32_t handle, const char *signer_pem,
                       const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key, const char *anchor_path);

/*
 * rekey: the anchor at anchor_path (if any) MACed again with new_key,
 * once the filesystem has it.  Returns an exit code after logging.
 */
int ba_rollback_anchor_rekey(const char *anchor_path, const struct ba_secret *old_key,
                             const struct ba_secret *new_key);

/*
 * load, with the key unsealed and before it goes to the keyring: when
 * anchor_path exists, the disk's newest authentic generation must not be
 * below the TPM's record, or the boot stops (exit 50) unless the person
 * at the console types kf's recovery key or passphrase to accept the
 * older disk; then this boot's generation is recorded.  device (or
 * NULL): a device or image to look at before /sys/class/block's.
 * Returns an exit code after logging; 0 also when there is no anchor.
 */
int ba_rollback_guard(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const struct ba_secret *key,
                      const char *anchor_path, const char *device);
