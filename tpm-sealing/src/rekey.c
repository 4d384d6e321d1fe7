/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rekey engine behind "btrfs-auth rekey" and the first boot of an image (provision.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrfstune.h"
#include "device-check.h"
#include "exit-codes.h"
#include "fileio.h"
#include "key-source.h"
#include "keyfile-io.h"
#include "log.h"
#include "passphrase.h"
#include "pin-prompt.h"
#include "raw-key.h"
#include "recovery.h"
#include "rekey.h"
#include "seal.h"

void ba_rekey_free(struct ba_rekey *k) {
        ba_secret_free(&k->old_key);
        ba_secret_free(&k->new_key);
        ba_secret_free(&k->pass);
        free(k->pending_path);
}

static int get_old_key(struct ba_rekey *k) {
        enum ba_key_source source;

        if (k->key_file)
                return ba_key_read_file(k->key_file, &k->old_key);
        return ba_key_obtain(&k->unseal, &k->old, NULL, &k->old_key, &source, &k->pass);
}

/* The passphrase of the current recovery copy, asked for unless it was the way in. */
static int get_passphrase(struct ba_rekey *k) {
        struct ba_secret check = { 0 };
        int r;

        if (k->pass.data || !k->old.has_recovery)
                return 0;
        log_info("The new key gets a recovery copy under the same %s as the current one.",
                 ba_recovery_noun(&k->old.recovery));
        r = ba_passphrase_unlock(&k->old, &k->unseal.pass_ask, k->unseal.recovery_tries, &check, &k->pass);
        ba_secret_free(&check);
        return r;
}

/* The new key's recovery copy: the same kind and secret; the same Argon2id cost, or the default for a
 * version-1 (scrypt) copy, which is renewed as Argon2id. */
static int seal_pending_recovery(struct ba_rekey *k) {
        const struct ba_recovery_record *old = &k->old.recovery;
        struct ba_recovery_cost cost = { .t_cost = old->t_cost, .m_cost = old->m_cost, .lanes = old->lanes };

        if (!k->old.has_recovery)
                return 0;
        if (old->version == 1)
                ba_recovery_default_cost(old->kind, &cost);
        if (ba_recovery_seal(&k->new_key, &k->pass, old->kind, &cost, k->old.description, &k->pending.recovery) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot encrypt the recovery copy of the new key.");
        return 0;
}

/* The new key file: the current one's binding, this TPM's SRK, a fresh seal and recovery copy. */
static int seal_pending(struct ba_rekey *k) {
        struct ba_secret auth = { 0 };
        struct ba_seal_binding b = {
                .pcr_mask = k->old.pcr_mask,
                /* The current file's sealed values; a first boot takes this boot's. */
                .pcr_value_mask = k->provisioning ? 0 : k->old.pcr_mask,
                .lock_pcr = k->old.lock_pcr,
                .signed_policy_key = k->signed_policy_key,
                .signed_mask = k->signed_mask,
        };
        int r = 0;

        k->pending = k->old;
        k->pending.has_created = true;
        k->pending.created = (uint64_t) time(NULL);
        memcpy(b.pcr_values, k->old.pcr_values, sizeof(b.pcr_values));
        r = seal_pending_recovery(k);
        if (r == 0 && k->old.pin)
                r = ba_pin_get_auth(&k->unseal.pin_ask, k->old.description, BA_ASK_NEW, &auth);
        if (r == 0)
                r = ba_seal_to_tpm(&k->unseal.tpm, &b, &k->new_key, &auth, &k->pending);
        ba_secret_free(&auth);
        return r;
}

static int write_new_key_copy(struct ba_rekey *k) {
        int r;

        if (!k->recovery_file)
                return 0;
        r = ba_write_file_atomic(k->recovery_file, k->new_key.data, k->new_key.len, false);
        if (r < 0) {
                log_error_errno(r, "Cannot write the new key to %s (it must not exist yet)", k->recovery_file);
                return BA_EXIT_FAILURE;
        }
        log_info("Wrote the new key to %s (mode 0600): keep it offline as recovery material.", k->recovery_file);
        return 0;
}

static int start_pending(struct ba_rekey *k) {
        int r;

        r = k->new_key_file ? ba_key_read_file(k->new_key_file, &k->new_key) : ba_key_generate(&k->new_key);
        if (r == 0)
                r = get_passphrase(k);
        if (r == 0)
                r = seal_pending(k);
        if (r == 0)
                r = write_new_key_copy(k);
        if (r == 0)
                r = ba_keyfile_store(k->pending_path, &k->pending, false);
        if (r == 0)
                log_info("Wrote the new key's sealed file %s; it replaces %s when the change is done.",
                         k->pending_path, k->key_path);
        return r;
}

/* An interrupted rekey: the new key from NAME.sealed.new (TPM, passphrase) or --new-key-file. */
static int resume_pending(struct ba_rekey *k) {
        int r;

        log_info("Resuming the rekey of %s started earlier (%s exists).", k->old.description, k->pending_path);
        r = ba_keyfile_load(k->pending_path, k->old.description, &k->pending);
        if (r != 0)
                return r;
        if (k->new_key_file)
                return ba_key_read_file(k->new_key_file, &k->new_key);
        if (k->pass.data && k->pending.has_recovery &&
            ba_recovery_open(&k->pending.recovery, &k->pass, k->pending.description, &k->new_key) == 0)
                return 0;
        r = ba_key_unseal(&k->unseal, &k->pending, &k->new_key);
        if (r != 0 && k->pending.has_recovery)
                r = ba_passphrase_unlock(&k->pending, &k->unseal.pass_ask, k->unseal.recovery_tries, &k->new_key, NULL);
        return r;
}

static int verify(struct ba_rekey *k, const struct ba_secret *key) {
        return ba_superblock_verify(k->sb, key->data, key->len);
}

static int change_filesystem(struct ba_rekey *k) {
        int r;

        if (verify(k, &k->new_key) == 1) {
                log_info("%s already verifies with the new key: the filesystem part is done.", k->device);
                return 0;
        }
        if (verify(k, &k->old_key) != 1)
                return log_fail(BA_EXIT_NOT_AUTHENTIC, "Neither the current nor the new key of %s authenticates the "
                                "superblock of %s: wrong device, or a modified superblock. Nothing was changed.",
                                k->old.description, k->device);
        r = ba_btrfstune_rekey(k->btrfstune, k->device, &k->old_key, &k->new_key);
        if (r == 0)
                r = ba_device_read(k->device, k->sb, &k->info);
        if (r == 0 && verify(k, &k->new_key) != 1)
                r = log_fail(BA_EXIT_REKEY, "btrfstune finished, but the superblock of %s does not verify with the "
                             "new key; both key files are kept. Run btrfs-auth rekey again.", k->device);
        return r;
}

/* NAME.sealed.new becomes NAME.sealed; an older seal of the old key (NAME.sealed.previous) goes. */
static int retire_old(struct ba_rekey *k) {
        char *prev = ba_key_path_with(k->key_path, BA_PREVIOUS_SUFFIX);
        int r = 0;

        if (rename(k->pending_path, k->key_path) < 0) {
                log_error_errno(errno, "Cannot rename %s to %s; run btrfs-auth rekey again to finish",
                                k->pending_path, k->key_path);
                free(prev);
                return BA_EXIT_FAILURE;
        }
        if (prev && unlink(prev) < 0 && errno != ENOENT)
                r = log_error_errno(errno, "Cannot remove %s, a seal of the old key; remove it", prev);
        free(prev);
        if (ba_fsync_dir_of(k->key_path) < 0)
                log_warning("Cannot sync the directory of %s.", k->key_path);
        return r < 0 ? BA_EXIT_FAILURE : 0;
}

/* No key file yet (first boot of an image): the binding comes from the caller, the UUID from the device. */
static void provisioning_keyfile(struct ba_rekey *k) {
        ba_keyfile_init(&k->old);
        snprintf(k->old.description, sizeof(k->old.description), "%s", k->description);
        k->old.pcr_mask = k->provision_pcrs;
        k->old.lock_pcr = k->provision_lock_pcr;
        if (k->provision_lock_pcr >= 0)
                k->old.pcr_mask |= UINT32_C(1) << k->provision_lock_pcr;
        memcpy(k->old.fs_uuid, k->info.fsid, BA_UUID_SIZE);
        k->old.has_fs_uuid = true;
}

static int load_current(struct ba_rekey *k) {
        int r;

        if (k->provisioning) {
                r = ba_device_read(k->device, k->sb, &k->info);
                if (r == 0)
                        provisioning_keyfile(k);
                return r;
        }
        r = ba_keyfile_load(k->key_path, k->description, &k->old);
        if (r == 0)
                r = ba_device_read(k->device, k->sb, &k->info);
        if (r == 0)
                r = ba_device_check_uuid(k->device, &k->info, &k->old);
        return r;
}

int ba_rekey_run(struct ba_rekey *k) {
        int r;

        k->pending_path = ba_key_path_with(k->key_path, BA_PENDING_SUFFIX);
        if (!k->pending_path)
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        r = load_current(k);
        if (r == 0)
                r = get_old_key(k);
        if (r != 0)
                return r;
        k->have_pending = access(k->pending_path, F_OK) == 0;
        r = k->have_pending ? resume_pending(k) : start_pending(k);
        if (r == 0 && k->pending_ready)
                r = k->pending_ready(k, k->pending_data);
        if (r == 0)
                r = change_filesystem(k);
        if (r == 0)
                r = retire_old(k);
        return r;
}
