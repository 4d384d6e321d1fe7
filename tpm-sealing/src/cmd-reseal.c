/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs-auth reseal NAME: a new sealed copy of the same key bound to new
 * PCR values (given, or this boot's), for a planned firmware or boot
 * loader change.  The old file is kept as NAME.sealed.previous until
 * "btrfs-auth confirm NAME" after a boot that unsealed the new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "exit-codes.h"
#include "fileio.h"
#include "initramfs.h"
#include "key-source.h"
#include "log.h"
#include "passphrase.h"
#include "pin-prompt.h"
#include "raw-key.h"
#include "seal.h"
#include "tpm2-pcr.h"

/* The lock PCR was extended this boot: the TPM will not unseal, so go straight to the passphrase. */
static bool tpm_locked(const struct ba_args *a, const struct ba_keyfile *kf) {
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        ba_pcr_values current;
        struct ba_tpm t;
        bool locked = false;

        if (kf->lock_pcr < 0 || ba_tpm_open(&t, &tpm) != 0)
                return false;
        if (ba_tpm_pcr_read(&t, UINT32_C(1) << kf->lock_pcr, current) == 0)
                locked = memcmp(current[kf->lock_pcr], kf->pcr_values[kf->lock_pcr], BA_DIGEST_SIZE) != 0;
        ba_tpm_close(&t);
        return locked;
}

/* A raw key from --key-file must be the filesystem's: checked against its superblock when it is here. */
static int check_raw_key(const struct ba_keyfile *kf, const struct ba_secret *key) {
        char uuid[BA_UUID_STRING_MAX], dev[80];
        uint8_t sb[BA_SB_SIZE];
        struct ba_sb_info info;
        int r;

        if (kf->has_fs_uuid) {
                ba_uuid_format(kf->fs_uuid, uuid);
                snprintf(dev, sizeof(dev), "/dev/disk/by-uuid/%s", uuid);
                if (access(dev, F_OK) == 0) {
                        r = ba_device_read(dev, sb, &info);
                        return r != 0 ? r : ba_device_verify_key(dev, sb, &info, key->data, key->len, kf->description);
                }
        }
        log_warning("Cannot check the key in the given file against the filesystem (%s): make sure it is the right "
                    "one, or the new seal will not open it.", kf->has_fs_uuid ? "its device is not here" :
                    "the key file records no filesystem UUID");
        return 0;
}

static int get_key(const struct ba_args *a, const struct ba_keyfile *kf, struct ba_secret *key) {
        const struct ba_unseal_opts o = ba_args_unseal(a);
        enum ba_key_source source;
        int r;

        if (a->key_file) {
                r = ba_key_read_file(a->key_file, key);
                return r != 0 ? r : check_raw_key(kf, key);
        }
        if (tpm_locked(a, kf)) {
                log_info("PCR %d was extended by btrfs-auth lock during this boot, so the TPM no longer unseals "
                         "%s; asking for its %s.", kf->lock_pcr, kf->description, ba_recovery_noun(&kf->recovery));
                return ba_passphrase_unlock(kf, &a->pass_ask, a->recovery_tries, key, NULL);
        }
        return ba_key_obtain(&o, kf, ba_args_previous_of(a), key, &source, NULL);
}

/* The binding asked for: the old selection unless --pcrs, explicit values win, the lock PCR keeps its value. */
static void new_binding(const struct ba_args *a, const struct ba_keyfile *old, struct ba_seal_binding *b) {
        ba_args_seal_binding(a, b);
        b->pcr_mask = (a->pcrs_given ? a->pcr_mask : old->pcr_mask) | a->pcr_value_mask;
        b->lock_pcr = old->lock_pcr;
        if (old->lock_pcr >= 0) {
                uint32_t bit = UINT32_C(1) << old->lock_pcr;

                b->pcr_mask |= bit;
                if (!(a->pcr_value_mask & bit)) {
                        memcpy(b->pcr_values[old->lock_pcr], old->pcr_values[old->lock_pcr], BA_DIGEST_SIZE);
                        b->pcr_value_mask |= bit;
                }
        }
}

/* NAME.sealed.previous: the last file a boot confirmed; an unconfirmed reseal does not replace it. */
static int keep_previous(const struct ba_args *a) {
        char *prev = ba_key_path_with(a->key_path, BA_PREVIOUS_SUFFIX);
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        if (!prev)
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        if (access(prev, F_OK) == 0) {
                log_info("Keeping %s: the reseal before this one was not confirmed yet.", prev);
                free(prev);
                return 0;
        }
        r = ba_read_file(a->key_path, BA_KEYFILE_MAX_SIZE, &buf, &len);
        if (r == 0)
                r = ba_write_file_atomic(prev, buf, len, false);
        free(buf);
        if (r < 0) {
                log_error_errno(r, "Cannot keep the current key file as %s", prev);
                free(prev);
                return BA_EXIT_FAILURE;
        }
        free(prev);
        return 0;
}

static int seal_new(const struct ba_args *a, const struct ba_keyfile *old, const struct ba_secret *key,
                    struct ba_keyfile *kf) {
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        struct ba_secret auth = { 0 };
        struct ba_seal_binding b;
        int r = 0;

        new_binding(a, old, &b);
        *kf = *old;
        kf->has_created = true;
        kf->created = (uint64_t) time(NULL);
        if (kf->pin)
                r = ba_pin_get_auth(&a->pin_ask, kf->description, BA_ASK_NEW, &auth);
        if (r == 0)
                r = ba_seal_to_tpm(&tpm, &b, key, &auth, kf);
        ba_secret_free(&auth);
        return r;
}

int ba_cmd_reseal(const struct ba_args *a) {
        struct ba_secret key = { 0 };
        struct ba_keyfile old, kf;
        char pcrs[64];
        int r;

        r = ba_keyfile_load(a->key_path, a->description, &old);
        if (r == 0)
                r = get_key(a, &old, &key);
        if (r == 0)
                r = seal_new(a, &old, &key, &kf);
        ba_secret_free(&key);
        if (r == 0)
                r = keep_previous(a);
        if (r == 0)
                r = ba_keyfile_store(a->key_path, &kf, true);
        if (r != 0)
                return r;
        ba_pcr_mask_format(kf.pcr_mask, pcrs, sizeof(pcrs));
        log_info("Resealed %s to sha256 PCRs %s in %s; the previous copy stays until a boot confirms the new one "
                 "(btrfs-auth confirm %s).", kf.description, pcrs, a->key_path, a->target);
        return ba_update_initramfs(a->config_dir, !a->update_initramfs);
}
