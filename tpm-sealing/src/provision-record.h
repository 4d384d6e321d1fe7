/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "secure.h"
#include "signed-policy.h"
#include "tpm2-context.h"
#include "util.h"

/*
 * What the TPM remembers of an appliance's first boot: an NV index
 * (BTRFS_AUTH_PROVISION_NV in btrfs-auth.conf) that only a boot image
 * signed for PCR 11 by the image's PCR key can write, written once and
 * write-locked, holding the filesystem's UUID and the id of the key the
 * first boot gave it.  docs/key-file-format.md describes the layout.
 */
#define BA_CONF_PROVISION_NV "BTRFS_AUTH_PROVISION_NV"
#define BA_PROV_RECORD_SIZE 64
#define BA_PROV_SIGNED_PCRS (UINT32_C(1) << 11)

struct ba_prov_record {
        uint8_t fsid[BA_UUID_SIZE];
        uint8_t key_id[BA_DIGEST_SIZE]; /* HMAC-SHA256(key, "btrfs-auth key id v1") */
};

enum ba_prov_state {
        BA_PROV_NONE,     /* no index: this TPM never saw a first boot (or someone deleted it) */
        BA_PROV_EMPTY,    /* defined, never written: a first boot stopped before writing it */
        BA_PROV_RECORDED, /* written and locked */
};

/* The index and who may write it, as one boot sees them. */
struct ba_prov_index {
        uint32_t handle;
        struct ba_signed_input signer; /* the UKI's PCR public key and signature file */
        enum ba_prov_state state;
        struct ba_prov_record rec;      /* when BA_PROV_RECORDED */
};

void ba_prov_record_encode(const struct ba_prov_record *rec, uint8_t out[BA_PROV_RECORD_SIZE]);
/* -EBADMSG when it is not a record of this format. */
int ba_prov_record_decode(const uint8_t in[BA_PROV_RECORD_SIZE], struct ba_prov_record *rec);

/*
 * Reads the index named by handle_text (hex or decimal) and checks that
 * it is btrfs-auth's: size, attributes, and a write policy for the PCR key
 * this boot image carries (pcr_public_key, NULL: systemd-stub's).  Returns
 * an exit code after logging.
 */
int ba_prov_index_read(const struct ba_tpm_target *tpm, const char *pcr_public_key, const char *handle_text,
                       struct ba_prov_index *idx);

/*
 * Defines the index when missing, writes rec and write-locks it, with this
 * boot's PCR signature (pcr_signature and pcr_public_key, NULL:
 * systemd-stub's).  Returns an exit code after logging.
 */
int ba_prov_index_write(const struct ba_tpm_target *tpm, const char *pcr_signature, const char *pcr_public_key,
                        struct ba_prov_index *idx, const struct ba_prov_record *rec);

/*
 * Deletes the index (owner authorization) after checking its size and
 * attributes are a record's.  Returns an exit code after logging.
 */
int ba_prov_index_delete(const struct ba_tpm_target *tpm, const char *handle_text);

void ba_prov_index_free(struct ba_prov_index *idx);

/* The full key id of ba_key_id(). */
int ba_key_id_digest(const struct ba_secret *key, uint8_t out[BA_DIGEST_SIZE]);
