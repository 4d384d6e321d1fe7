/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs-auth rekey NAME --device DEV: a new HMAC key for the filesystem,
 * offline, resumable at every point.
 *
 *   1. the current key: --key-file, the TPM, or the recovery copy;
 *   2. the new key (generated or --new-key-file), sealed with the current
 *      file's PCR binding and encrypted with the same recovery key or passphrase,
 *      is written to NAME.sealed.new before anything else happens;
 *   3. btrfstune verifies every block with the current key, then changes
 *      it (itself resumable);
 *   4. once the superblock verifies with the new key, NAME.sealed.new
 *      replaces NAME.sealed and NAME.sealed.previous (an old seal) goes.
 *
 * Rerun after an interruption, it finds NAME.sealed.new and the device's
 * state and continues from there; both keys stay available until step 4.
 */
#include "commands.h"
#include "initramfs.h"
#include "log.h"
#include "provision.h"
#include "rekey.h"
#include "rollback.h"

int ba_cmd_rekey(const struct ba_args *a) {
        struct ba_rekey k = {
                .key_path = a->key_path,
                .description = a->description,
                .device = a->device,
                .btrfstune = a->btrfstune,
                .key_file = a->key_file,
                .new_key_file = a->new_key_file,
                .recovery_file = a->recovery_file,
                .unseal = ba_args_unseal(a),
        };
        char id[17];
        int r;

        r = ba_rekey_run(&k);
        /* NAME.rollback is MACed with the key: it follows the key, or the next boot refuses it. */
        if (r == 0)
                r = ba_rollback_anchor_rekey(a->rollback_path, &k.old_key, &k.new_key);
        if (r == 0)
                ba_key_id(&k.new_key, id);
        ba_rekey_free(&k);
        if (r != 0)
                return r;
        log_info("Changed the key of %s on %s (new key id %s); %s holds it, sealed and with its recovery copy if "
                 "the old one had one.", a->description, a->device, id, a->key_path);
        return ba_update_initramfs(a->config_dir, !a->update_initramfs);
}
