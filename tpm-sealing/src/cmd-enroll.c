/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "crypto.h"
#include "enroll-recovery.h"
#include "exit-codes.h"
#include "fileio.h"
#include "raw-key.h"
#include "rollback.h"
#include "pin-prompt.h"
#include "log.h"
#include "seal.h"

/* Refuse before any PIN prompt or TPM work, so nothing is wasted on a doomed enrollment. */
static int check_outputs(const struct ba_args *a) {
        if (!a->force && access(a->key_path, F_OK) == 0)
                return log_fail(BA_EXIT_FAILURE, "Key file %s already exists; pass --force to replace it.",
                                a->key_path);
        if (a->recovery_file && access(a->recovery_file, F_OK) == 0)
                return log_fail(BA_EXIT_FAILURE, "Recovery file %s already exists; refusing to overwrite a key "
                                "someone may rely on. Choose another path.", a->recovery_file);
        return 0;
}

static int bind_device(const struct ba_args *a, const struct ba_secret *key, struct ba_keyfile *kf) {
        uint8_t sb[BA_SB_SIZE];
        struct ba_sb_info info;
        int r;

        if (a->has_uuid) {
                memcpy(kf->fs_uuid, a->uuid, BA_UUID_SIZE);
                kf->has_fs_uuid = true;
                return 0;
        }
        if (!a->device)
                return 0;
        r = ba_device_read(a->device, sb, &info);
        if (r == 0)
                r = ba_device_verify_key(a->device, sb, &info, key->data, key->len, a->description);
        if (r != 0)
                return r;
        memcpy(kf->fs_uuid, info.fsid, BA_UUID_SIZE);
        kf->has_fs_uuid = true;
        return 0;
}

static int write_recovery(const struct ba_args *a, const struct ba_secret *key) {
        int r;

        if (!a->generate)
                return 0;
        r = ba_write_file_atomic(a->recovery_file, key->data, key->len, false);
        if (r == -EEXIST)
                return log_fail(BA_EXIT_FAILURE, "Recovery file %s already exists; refusing to overwrite it.",
                                a->recovery_file);
        if (r < 0) {
                log_error_errno(r, "Cannot write recovery file %s", a->recovery_file);
                return BA_EXIT_FAILURE;
        }
        log_info("Wrote the generated key to %s (mode 0600): keep it offline as recovery material, and use it "
                 "with mkfs.btrfs --auth-key-file.", a->recovery_file);
        return 0;
}

static int ensure_config_dir(const struct ba_args *a) {
        /* Only for NAME targets: an explicit path's directory is the caller's business. */
        if (!a->target_is_name)
                return 0;
        if (mkdir(a->config_dir, 0700) < 0 && errno != EEXIST) {
                log_error_errno(errno, "Cannot create %s", a->config_dir);
                return BA_EXIT_FAILURE;
        }
        return 0;
}

static void report(const struct ba_args *a, const struct ba_keyfile *kf) {
        char pcrs[64];

        if (kf->pcr_mask == 0) {
                log_info("Sealed %s to a PIN only in %s.", kf->description, a->key_path);
                return;
        }
        ba_pcr_mask_format(kf->pcr_mask, pcrs, sizeof(pcrs));
        log_info("Sealed %s to sha256 PCRs %s%s%s in %s.", kf->description, pcrs,
                 kf->lock_pcr >= 0 ? " (lock PCR included)" : "", kf->pin ? " and a PIN" : "", a->key_path);
}

static int seal(const struct ba_args *a, const struct ba_secret *key, const struct ba_secret *auth,
                struct ba_keyfile *kf) {
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        struct ba_seal_binding b;

        ba_args_seal_binding(a, &b);
        return ba_seal_to_tpm(&tpm, &b, key, auth, kf);
}

/* The recovery copy's cost from --argon2-memory/--argon2-time, or NULL for the default of its kind. */
static const struct ba_recovery_cost *cost_override(const struct ba_args *a, enum ba_recovery_mode mode,
                                                    struct ba_recovery_cost *cost) {
        if (!a->argon2_memory_mib && !a->argon2_time)
                return NULL;
        ba_recovery_default_cost(mode == BA_RECOVERY_KEY ? BA_RECOVERY_KIND_KEY : BA_RECOVERY_KIND_PASSPHRASE, cost);
        if (a->argon2_memory_mib)
                cost->m_cost = a->argon2_memory_mib * 1024;
        if (a->argon2_time)
                cost->t_cost = a->argon2_time;
        return cost;
}

/* The recovery key goes out before the key file is written: a key file never holds a copy nobody was shown. */
static int store(const struct ba_args *a, const struct ba_keyfile *kf, const struct ba_secret *shown) {
        int r = 0;

        if (shown->data)
                r = ba_recovery_key_show(shown, kf->description);
        if (r == 0)
                r = ensure_config_dir(a);
        if (r == 0)
                r = ba_keyfile_store(a->key_path, kf, a->force);
        if (r != 0 && shown->data)
                log_error("The recovery key printed above belongs to no key file: discard it.");
        return r;
}

/* NAME.rollback beside NAME.sealed, and the TPM's indexes it names. */
static int enroll_rollback(const struct ba_args *a, const struct ba_secret *key, const struct ba_keyfile *kf) {
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        int r = ensure_config_dir(a);

        return r ? r : ba_rollback_enroll(&tpm, a->rollback_index, a->signed_policy_key, kf->fs_uuid, key,
                                          a->rollback_path);
}

int ba_cmd_enroll(const struct ba_args *a) {
        struct ba_secret key = { 0 }, auth = { 0 }, shown = { 0 };
        enum ba_recovery_mode mode = a->recovery_mode;
        struct ba_recovery_cost cost;
        struct ba_keyfile kf;
        int r;

        ba_keyfile_init(&kf);
        snprintf(kf.description, sizeof(kf.description), "%s", a->description);
        kf.pin = a->pin;
        kf.has_created = true;
        kf.created = (uint64_t) time(NULL);
        r = check_outputs(a);
        if (r == 0)
                r = ba_enroll_recovery_mode(&mode);
        if (r == 0)
                r = a->generate ? ba_key_generate(&key) : ba_key_read_file(a->key_file, &key);
        if (r == 0)
                r = bind_device(a, &key, &kf);
        if (r == 0)
                r = ba_enroll_recovery_add(mode, cost_override(a, mode, &cost), &a->pass_ask, &key, &kf, &shown);
        if (r == 0 && a->pin)
                r = ba_pin_get_auth(&a->pin_ask, kf.description, BA_ASK_NEW, &auth);
        if (r == 0)
                r = seal(a, &key, &auth, &kf);
        if (r == 0)
                r = write_recovery(a, &key);
        if (r == 0 && a->rollback_index)
                r = enroll_rollback(a, &key, &kf);
        ba_secret_free(&auth);
        ba_secret_free(&key);
        if (r == 0)
                r = store(a, &kf, &shown);
        ba_secret_free(&shown);
        if (r == 0)
                report(a, &kf);
        return r;
}
