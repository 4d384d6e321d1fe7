/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "key-source.h"
#include "provision-record.h"
#include "secure.h"

/* btrfs-auth.conf settings of an appliance image's first boot (appliance/README.md). */
#define BA_CONF_PROVISION_DEVICE "BTRFS_AUTH_PROVISION_DEVICE"
#define BA_CONF_PROVISION_PCRS "BTRFS_AUTH_PROVISION_PCRS"
#define BA_CONF_PROVISION_LOCK_PCR "BTRFS_AUTH_PROVISION_LOCK_PCR"
#define BA_PROVISIONING_SUFFIX ".provisioning"
#define BA_DEVICE_WAIT 60

/* An image's first boot: what it is given. */
struct ba_provision_opts {
        const char *config_dir;  /* the image's: btrfs-auth.conf and NAME.provisioning */
        const char *name;        /* NAME */
        const char *description; /* btrfs:NAME */
        const char *key_path;    /* NAME.sealed in the key store, missing until this succeeds */
        const char *btrfstune;
        struct ba_unseal_opts unseal; /* the TPM and this boot's PCR signature (the record, a resumed key) */
};

/*
 * First boot of an image: the key store (o->key_path) has no NAME.sealed
 * yet.  The filesystem was made with the image's provisioning key
 * (<config_dir>/NAME.provisioning, public by design); give it a key of
 * this device's own, sealed to this TPM into the store, with btrfstune,
 * resumably.  With idx (the image records its first boot in the TPM), the
 * root must first match the image's digest, the new key is recorded in
 * the TPM before the root changes, and a resumed one must be the recorded
 * one.  On success *key holds the new key.  Returns an exit code.
 */
int ba_provision(const struct ba_provision_opts *o, struct ba_prov_index *idx, struct ba_secret *key);

/*
 * The key store (key_path and its .new) against the TPM's record of the
 * first boot: a key file without a record, or a record without a key
 * file, is refused (exit 30); a .new without a record is removed (the
 * first boot starts over: nothing changed the root yet).
 */
int ba_provision_reconcile(const char *key_path, const struct ba_prov_index *idx);

/* First 8 bytes of HMAC-SHA256(key, "btrfs-auth key id v1") in hex: names a key without revealing it. */
void ba_key_id(const struct ba_secret *key, char out[17]);
