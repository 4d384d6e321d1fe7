/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "conf-file.h"
#include "crypto.h"
#include "exit-codes.h"
#include "fileio.h"
#include "key-source.h"
#include "keyring.h"
#include "lock.h"
#include "log.h"
#include "measure.h"
#include "provision-record.h"
#include "provision.h"
#include "rollback.h"
#include "store.h"
#include "tpm2-pcr.h"

struct device_state {
        uint8_t sb[BA_SB_SIZE];
        struct ba_sb_info info;
};

static int add_to_keyring(const struct ba_args *a, const struct ba_keyfile *kf, const struct ba_secret *key) {
        char buf[32];
        key_serial_t id;
        int r;

        r = ba_keyring_add_logon(kf->description, key->data, key->len, a->keyring, &id);
        if (r == -EINVAL)
                return log_fail(BA_EXIT_KEYRING, "Refusing to add %s: logon key descriptions must start with "
                                BA_DESCRIPTION_PREFIX ".", kf->description);
        if (r < 0) {
                log_error_errno(r, "Cannot add the logon key %s to the %s (add_key)", kf->description,
                                ba_keyring_name(a->keyring, buf, sizeof(buf)));
                return BA_EXIT_KEYRING;
        }
        log_info("Loaded %s into the %s (key %d).", kf->description, ba_keyring_name(a->keyring, buf, sizeof(buf)),
                 (int) id);
        return 0;
}

/* m: the loaded key's measurement, or NULL when the key was unsealed but not loaded. */
static int lock_after(const struct ba_args *a, const struct ba_keyfile *kf, const uint8_t *m) {
        unsigned pcr = kf->lock_pcr >= 0 ? (unsigned) kf->lock_pcr : BA_LOCK_PCR_DEFAULT;
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        struct ba_tpm t;
        int r;

        r = ba_tpm_open(&t, &tpm);
        if (r == 0) {
                r = ba_lock(&t, UINT32_C(1) << pcr, (const uint8_t (*)[BA_DIGEST_SIZE]) m, m ? 1 : 0);
                ba_tpm_close(&t);
        }
        if (r != 0)
                return log_fail(r, "The key was unsealed, but PCR %u could not be extended: the sealed key stays "
                                "unsealable until reboot.", pcr);
        log_info("Extended PCR %u: %s cannot be unsealed again until the next boot.", pcr, kf->description);
        return 0;
}

/* Checks that need no key come first, so a wrong device is named before the TPM is touched. */
static int check_device_early(const struct ba_args *a, const struct ba_keyfile *kf, struct device_state *d) {
        int r;

        if (!a->check_device)
                return 0;
        r = ba_device_read(a->check_device, d->sb, &d->info);
        if (r != 0)
                return r;
        return ba_device_check_uuid(a->check_device, &d->info, kf);
}

/* <state-dir>/NAME.source says how this boot got the key; "btrfs-auth confirm" reads it. */
static void record_source(const struct ba_args *a, enum ba_key_source source) {
        char *path = NULL;
        const char *what = ba_key_source_name(source);
        int r;

        if (!a->state_dir || !a->target_is_name)
                return;
        if (mkdir(a->state_dir, 0700) < 0 && errno != EEXIST) {
                log_warning("Cannot create %s (%s): btrfs-auth confirm will not know how %s was loaded.",
                            a->state_dir, strerror(errno), a->description);
                return;
        }
        if (asprintf(&path, "%s/%s.source", a->state_dir, a->target) < 0)
                return;
        r = ba_write_file_atomic(path, what, strlen(what), true);
        if (r < 0)
                log_warning("Cannot write %s (%s): btrfs-auth confirm will not know how %s was loaded.", path,
                            strerror(-r), a->description);
        free(path);
}

/* For the lock (measure.h): which key this boot loaded, for which filesystem. */
static int measure(const struct ba_args *a, const struct ba_keyfile *kf, const struct device_state *dev,
                   const struct ba_secret *key, uint8_t m[BA_DIGEST_SIZE]) {
        const uint8_t *fsid = kf->has_fs_uuid ? kf->fs_uuid : dev && a->check_device ? dev->info.fsid : NULL;
        int r;

        if (ba_key_measurement(key, kf->description, fsid, m) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the measurement of %s (libcrypto failure).",
                                kf->description);
        if (!a->state_dir)
                return 0;
        r = ba_measurement_record(a->state_dir, kf->description + strlen(BA_DESCRIPTION_PREFIX), m);
        if (r < 0) {
                log_error_errno(r, "Cannot record the measurement of %s in %s for the lock", kf->description,
                                a->state_dir);
                return BA_EXIT_FAILURE;
        }
        return 0;
}

/* An appliance's store key file must hold the key the TPM recorded at the first boot. */
static int check_recorded(const struct ba_secret *key, const uint8_t *expected_id, const char *path) {
        uint8_t id[BA_DIGEST_SIZE];

        if (!expected_id)
                return 0;
        if (ba_key_id_digest(key, id) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the key id (libcrypto failure).");
        if (ba_digest_equal(id, expected_id, BA_DIGEST_SIZE))
                return 0;
        return log_fail(BA_EXIT_PROVISIONED, "%s unseals, but not to the key this machine's first boot recorded in "
                        "the TPM: someone sealed their own key to this TPM and put the file there. The key is not "
                        "loaded.", path);
}

/* expected_id: the key id the TPM's provisioning record names, or NULL. */
static int load_plain(const struct ba_args *a, const uint8_t *expected_id) {
        const struct ba_unseal_opts o = ba_args_unseal(a);
        struct ba_secret key = { 0 };
        struct device_state dev = { 0 };
        enum ba_key_source source = BA_SOURCE_NONE;
        uint8_t m[BA_DIGEST_SIZE];
        struct ba_keyfile kf;
        int r;

        r = ba_keyfile_load(a->key_path, a->description, &kf);
        if (r == 0)
                r = check_device_early(a, &kf, &dev);
        if (r != 0)
                return r;
        r = ba_key_obtain(&o, &kf, ba_args_previous_of(a), &key, &source, NULL);
        if (r != 0)
                return r;
        r = check_recorded(&key, expected_id, a->key_path);
        if (r == 0 && a->check_device)
                r = ba_device_verify_key(a->check_device, dev.sb, &dev.info, key.data, key.len, kf.description);
        /* With NAME.rollback beside the key file: no older disk than the last boot's. */
        if (r == 0 && a->rollback_path)
                r = ba_rollback_guard(&o, &kf, &key, a->rollback_path, a->check_device);
        if (r == 0)
                r = measure(a, &kf, &dev, &key, m);
        if (r == 0)
                r = add_to_keyring(a, &kf, &key);
        ba_secret_free(&key);
        if (r == 0)
                record_source(a, source);
        /* Unsealed is enough: the TPM must not give the key again this boot, loaded or not. */
        if (a->lock_after) {
                int l = lock_after(a, &kf, r == 0 ? m : NULL);

                if (r == 0)
                        r = l;
        }
        return r;
}

/* First boot of an image: no NAME.sealed in the store yet.  a names the image's files, b the store's. */
static int load_provisioned(const struct ba_args *a, const struct ba_args *b, struct ba_prov_index *idx) {
        const struct ba_provision_opts o = {
                .config_dir = a->config_dir,
                .name = a->target,
                .description = a->description,
                .key_path = b->key_path,
                .btrfstune = a->btrfstune,
                .unseal = ba_args_unseal(a),
        };
        struct ba_secret key = { 0 };
        uint8_t m[BA_DIGEST_SIZE];
        struct ba_keyfile kf;
        int r;

        r = ba_provision(&o, idx, &key);
        if (r == 0)
                r = ba_keyfile_load(b->key_path, b->description, &kf);
        if (r == 0)
                r = measure(a, &kf, NULL, &key, m);
        if (r == 0)
                r = add_to_keyring(a, &kf, &key);
        ba_secret_free(&key);
        if (r == 0)
                record_source(a, BA_SOURCE_PROVISIONED);
        return r;
}

/*
 * With the store open: when the image records its first boot in the TPM
 * (BTRFS_AUTH_PROVISION_NV), the store's files must agree with the record
 * before anything is unsealed or provisioned.
 */
static int load_from_store(const struct ba_args *a, const struct ba_args *b) {
        char *nv = ba_conf_get(a->config_dir, BA_CONF_PROVISION_NV);
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        struct ba_prov_index idx = { 0 };
        int r = 0;

        if (nv)
                r = ba_prov_index_read(&tpm, a->pcr_public_key, nv, &idx);
        if (r == 0 && nv)
                r = ba_provision_reconcile(b->key_path, &idx);
        if (r == 0)
                r = access(b->key_path, F_OK) == 0 ?
                            load_plain(b, idx.state == BA_PROV_RECORDED ? idx.rec.key_id : NULL) :
                            load_provisioned(a, b, nv ? &idx : NULL);
        ba_prov_index_free(&idx);
        free(nv);
        return r;
}

/* An appliance image: NAME.sealed lives in the key store partition (BTRFS_AUTH_STORE). */
static int load_with_store(const struct ba_args *a, const char *store) {
        char *fstype = ba_conf_get(a->config_dir, BA_CONF_STORE_FSTYPE), *path;
        struct ba_store st;
        struct ba_args b = *a;
        int r;

        r = ba_store_open(store, fstype, BA_DEVICE_WAIT, &st);
        free(fstype);
        if (r != 0)
                return r;
        b.config_dir = st.keydir;
        if (asprintf(&path, "%s/%s%s", st.keydir, a->target, BA_KEYFILE_SUFFIX) < 0) {
                path = NULL;
                r = log_fail(BA_EXIT_FAILURE, "Out of memory.");
        } else {
                b.key_path = path;
                r = load_from_store(a, &b);
        }
        free(path);
        ba_store_close(&st);
        return r;
}

/* A key this boot already loaded stays as it is: the TPM may be locked by now, and it is the same key. */
static bool already_loaded(const struct ba_args *a, const char *description) {
        key_serial_t id;
        char buf[32];

        if (ba_keyring_find_logon(description, a->keyring, &id) < 0)
                return false;
        log_info("%s is already in the %s (key %d): nothing to unseal.", description,
                 ba_keyring_name(a->keyring, buf, sizeof(buf)), (int) id);
        return true;
}

int ba_cmd_load(const struct ba_args *a) {
        char *store = a->target_is_name ? ba_conf_get(a->config_dir, BA_CONF_STORE) : NULL;
        struct ba_keyfile kf = { .lock_pcr = -1 };
        int r = 0;

        /* A key file path names its key inside; an appliance's key file is in the store, not opened yet. */
        if (store)
                snprintf(kf.description, sizeof(kf.description), "%s", a->description);
        else
                r = ba_keyfile_load(a->key_path, a->description, &kf);
        /* --check asks for the unsealed key to be verified, which a loaded logon key cannot be. */
        if (r == 0 && !a->check_device && already_loaded(a, kf.description))
                /* --lock still locks: the key may come from a load that did not. */
                r = a->lock_after ? lock_after(a, &kf, NULL) : 0;
        else if (r == 0)
                r = store ? load_with_store(a, store) : load_plain(a, NULL);
        free(store);
        return r;
}
