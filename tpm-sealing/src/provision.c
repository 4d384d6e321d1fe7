/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "crypto.h"
#include "exit-codes.h"
#include "log.h"
#include "provision.h"
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
static int binding(const struct ba_args *a, struct ba_rekey *k) {
        char *pcrs = ba_conf_get(a->config_dir, BA_CONF_PROVISION_PCRS);
        char *lock = ba_conf_get(a->config_dir, BA_CONF_PROVISION_LOCK_PCR);
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

static int prepare(const struct ba_args *a, struct ba_args *c, char **device, char **prov) {
        *device = ba_conf_get(a->config_dir, BA_CONF_PROVISION_DEVICE);
        if (asprintf(prov, "%s/%s%s", a->config_dir, a->target, BA_PROVISIONING_SUFFIX) < 0) {
                *prov = NULL;
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        }
        if (access(*prov, R_OK) < 0)
                return log_fail(BA_EXIT_NO_KEYFILE, "The key store has no %s.sealed, and there is no provisioning "
                                "key %s: nothing can unlock the filesystem. If the store was wiped, restore its "
                                "btrfs-auth/%s.sealed from a backup.", a->target, *prov, a->target);
        if (!*device)
                return log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf sets no " BA_CONF_PROVISION_DEVICE ": the first "
                                "boot cannot tell which filesystem to give its own key.");
        c->key_file = *prov;
        c->device = *device;
        c->new_key_file = NULL;
        c->recovery_file = NULL;
        c->update_initramfs = false;
        return ba_wait_for_device(*device, BA_DEVICE_WAIT, "filesystem");
}

int ba_provision(const struct ba_args *a, const struct ba_args *store, struct ba_secret *key) {
        struct ba_args c = *store;
        struct ba_rekey k = { .a = &c, .provisioning = true };
        char *device = NULL, *prov = NULL, id[17];
        int r;

        log_info("First boot: the key store has no %s.sealed; giving the filesystem a key of this device's own.",
                 a->target);
        r = binding(a, &k);
        if (r == 0)
                r = prepare(a, &c, &device, &prov);
        if (r == 0)
                r = ba_rekey_run(&k);
        if (r == 0) {
                *key = k.new_key;
                memset(&k.new_key, 0, sizeof(k.new_key));
                ba_key_id(key, id);
                log_info("Provisioned %s (key id %s): sealed to this TPM in %s; the image's provisioning key no "
                         "longer opens the filesystem and is not used again.", a->description, id, store->key_path);
        }
        ba_rekey_free(&k);
        free(device);
        free(prov);
        return r;
}
