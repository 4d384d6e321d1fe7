/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "key-source.h"
#include "keyfile.h"
#include "secure.h"
#include "superblock.h"

/*
 * One key change of the filesystem on device, resumable (see
 * cmd-rekey.c): the current key from key_file, else the TPM or the
 * recovery copy of key_path; the new one sealed into key_path +
 * ".new" first; btrfstune; then the new file replaces key_path.
 *
 * provisioning: there is no current key file (first boot of an image):
 * the current key is the provisioning key key_file, the new one is
 * sealed to this boot's values of provision_pcrs plus provision_lock_pcr
 * (at zero), with no recovery copy.
 */
struct ba_rekey {
        const char *key_path;      /* NAME.sealed */
        const char *description;   /* btrfs:NAME, the key key_path must hold */
        const char *device;        /* the filesystem */
        const char *btrfstune;     /* the program that changes its key */
        const char *key_file;      /* the current key from this file, not from key_path; or NULL */
        const char *new_key_file;  /* the new key from this file; NULL: a generated one */
        const char *recovery_file; /* where a copy of the new key goes (must not exist); or NULL */
        struct ba_unseal_opts unseal; /* the TPM and the prompts, for the current key and a resumed new one */
        const char *signed_policy_key; /* the new seal's PCR signer; NULL: the current file's */
        uint32_t signed_mask;
        bool provisioning;
        uint32_t provision_pcrs;
        int provision_lock_pcr; /* -1: none */
        /*
         * Called once the new key is at hand (sealed into NAME.sealed.new, or
         * unsealed from it when resuming), before the filesystem changes.
         */
        int (*pending_ready)(struct ba_rekey *k, void *data);
        void *pending_data;

        /* state */
        char *pending_path;
        struct ba_keyfile old, pending;
        bool have_pending;
        struct ba_secret old_key, new_key, pass; /* new_key holds the new key after success */
        uint8_t sb[BA_SB_SIZE];
        struct ba_sb_info info;
};

/* Returns an exit code after logging. */
int ba_rekey_run(struct ba_rekey *k);
void ba_rekey_free(struct ba_rekey *k);
