/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf-file.h"
#include "crypto.h"
#include "key-source.h"
#include "keyfile.h"
#include "image-digest.h"
#include "exit-codes.h"
#include "log.h"
#include "provision.h"
#include "provision-record.h"
#include "rekey.h"
#include "store.h"
#include "tpm2-pcr.h"

#define KEY_ID_TEXT "btrfs-auth key id v1"

void ba_key_id(const struct ba_secret *key, char out[17]) {
        uint8_t mac[BA_DIGEST_SIZE];

        if (ba_hmac_sha256(key->data, key->len, (const uint8_t *) KEY_ID_TEXT, strlen(KEY_ID_TEXT), mac) < 0)
                memset(mac, 0, sizeof(mac));
        ba_hex_encode(mac, 8, out);
        explicit_bzero(mac, sizeof(mac));
}

/* The PCR binding of the new key: BTRFS_AUTH_PROVISION_PCRS (default 7), lock PCR (default 15, or "none"). */
static int binding(const char *config_dir, struct ba_rekey *k) {
        char *pcrs = ba_conf_get(config_dir, BA_CONF_PROVISION_PCRS);
        char *lock = ba_conf_get(config_dir, BA_CONF_PROVISION_LOCK_PCR);
        unsigned l = BA_LOCK_PCR_DEFAULT;
        int r = 0;

        if (ba_parse_pcr_list(pcrs ? pcrs : "7", &k->provision_pcrs) < 0)
                r = log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf: " BA_CONF_PROVISION_PCRS "='%s' is not a PCR list.",
                             pcrs);
        if (r == 0 && lock && strcmp(lock, "none") == 0)
                l = (unsigned) -1;
        else if (r == 0 && lock && (ba_parse_uint(lock, 15, &l) < 0))
                r = log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf: " BA_CONF_PROVISION_LOCK_PCR "='%s' is not 0..15 or "
                             "none.", lock);
        k->provision_lock_pcr = l == (unsigned) -1 ? -1 : (int) l;
        if (r == 0 && k->provision_pcrs == 0 && k->provision_lock_pcr < 0)
                r = log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf binds the first-boot key to no PCR at all.");
        free(pcrs);
        free(lock);
        return r;
}

/* The provisioning key and the device it opens, both named by the image. */
static int prepare(const struct ba_provision_opts *o, struct ba_rekey *k, char **device, char **prov) {
        *device = ba_conf_get(o->config_dir, BA_CONF_PROVISION_DEVICE);
        if (asprintf(prov, "%s/%s%s", o->config_dir, o->name, BA_PROVISIONING_SUFFIX) < 0) {
                *prov = NULL;
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        }
        if (access(*prov, R_OK) < 0)
                return log_fail(BA_EXIT_NO_KEYFILE, "The key store has no %s.sealed, and there is no provisioning "
                                "key %s: nothing can unlock the filesystem. If the store was wiped, restore its "
                                "btrfs-auth/%s.sealed from a backup.", o->name, *prov, o->name);
        if (!*device)
                return log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf sets no " BA_CONF_PROVISION_DEVICE ": the first "
                                "boot cannot tell which filesystem to give its own key.");
        k->key_file = *prov;
        k->device = *device;
        return ba_wait_for_device(*device, BA_DEVICE_WAIT, "filesystem");
}

static bool pending_exists(const char *key_path) {
        char *path = ba_key_path_with(key_path, BA_PENDING_SUFFIX);
        bool exists = path && access(path, F_OK) == 0;

        free(path);
        return exists;
}

int ba_provision_reconcile(const char *key_path, const struct ba_prov_index *idx) {
        bool sealed = access(key_path, F_OK) == 0, pending = pending_exists(key_path);
        char uuid[BA_UUID_STRING_MAX], *path;

        if (idx->state == BA_PROV_RECORDED) {
                if (sealed || pending)
                        return 0;
                ba_uuid_format(idx->rec.fsid, uuid);
                return log_fail(BA_EXIT_PROVISIONED, "This machine's first boot is recorded in TPM NV index 0x%08x "
                                "(filesystem %s), but the key store has no %s: it was emptied. Nothing is "
                                "provisioned again: restore it from a backup, or provision again on purpose "
                                "(docs/admin-guide.md, \"Appliance images\").", (unsigned) idx->handle, uuid,
                                key_path);
        }
        if (sealed)
                return log_fail(BA_EXIT_PROVISIONED, "The key store holds %s, but the TPM has no record of this "
                                "machine's first boot (NV index 0x%08x %s): the record was deleted, the TPM cleared, "
                                "or someone put the key file there. Refusing it.", key_path,
                                (unsigned) idx->handle, idx->state == BA_PROV_NONE ? "missing" : "never written");
        if (!pending)
                return 0;
        /* The first boot writes the record before it changes the root: without one, the root is as built. */
        path = ba_key_path_with(key_path, BA_PENDING_SUFFIX);
        if (!path || unlink(path) < 0) {
                log_error_errno(path ? errno : ENOMEM, "Cannot remove %s, which no first boot recorded",
                                path ? path : "NAME.sealed.new");
                free(path);
                return BA_EXIT_FAILURE;
        }
        log_warning("Removed %s: no first boot recorded it in the TPM, so it is not this machine's; starting the "
                    "first boot over.", path);
        free(path);
        return 0;
}

/* The resumed or new key against the TPM's record: the record is the authority on which key the root gets. */
static int pending_ready(struct ba_rekey *k, void *data) {
        struct ba_prov_index *idx = data;
        struct ba_prov_record rec;

        if (ba_key_id_digest(&k->new_key, rec.key_id) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the key id (libcrypto failure).");
        if (!k->have_pending) {
                memcpy(rec.fsid, k->info.fsid, BA_UUID_SIZE);
                return ba_prov_index_write(&k->unseal.tpm, k->unseal.pcr_signature, k->unseal.pcr_public_key, idx,
                                           &rec);
        }
        if (idx->state == BA_PROV_RECORDED && ba_digest_equal(rec.key_id, idx->rec.key_id, BA_DIGEST_SIZE))
                return 0;
        return log_fail(BA_EXIT_PROVISIONED, "%s in the key store is not the key this machine's first boot "
                        "recorded in the TPM: someone put it there. Nothing was changed.", k->pending_path);
}

/* Only the root the builder made gets a key of this machine's own. */
static int check_image(const char *config_dir, const struct ba_rekey *k, const char *device) {
        char *digest = ba_conf_get(config_dir, BA_CONF_PROVISION_DIGEST);
        char *size = ba_conf_get(config_dir, BA_CONF_PROVISION_SIZE);
        int r = 0;

        if (digest || size || k->pending_ready)
                r = ba_image_digest_check(device, digest, size);
        free(digest);
        free(size);
        return r;
}

int ba_provision(const struct ba_provision_opts *o, struct ba_prov_index *idx, struct ba_secret *key) {
        struct ba_rekey k = {
                .key_path = o->key_path,
                .description = o->description,
                .btrfstune = o->btrfstune,
                .unseal = o->unseal,
                .provisioning = true,
        };
        char *device = NULL, *prov = NULL, id[17];
        int r;

        log_info("First boot: the key store has no %s.sealed; giving the filesystem a key of this device's own.",
                 o->name);
        if (idx) {
                k.pending_ready = pending_ready;
                k.pending_data = idx;
                /* Sealed like the record: to what the image's PCR key signs, besides the literal PCRs. */
                k.signed_policy_key = o->unseal.pcr_public_key ? o->unseal.pcr_public_key : ba_pcr_public_key_find();
                k.signed_mask = BA_PROV_SIGNED_PCRS;
        } else {
                log_warning("This image does not record its first boot in the TPM (no " BA_CONF_PROVISION_NV "): "
                            "whoever empties the key store gets a first boot again.");
        }
        r = binding(o->config_dir, &k);
        if (r == 0)
                r = prepare(o, &k, &device, &prov);
        if (r == 0 && !pending_exists(o->key_path))
                r = check_image(o->config_dir, &k, device);
        if (r == 0)
                r = ba_rekey_run(&k);
        if (r == 0) {
                *key = k.new_key;
                memset(&k.new_key, 0, sizeof(k.new_key));
                ba_key_id(key, id);
                log_info("Provisioned %s (key id %s): sealed to this TPM in %s; the image's provisioning key no "
                         "longer opens the filesystem and is not used again.", o->description, id, o->key_path);
        }
        ba_rekey_free(&k);
        free(device);
        free(prov);
        return r;
}
