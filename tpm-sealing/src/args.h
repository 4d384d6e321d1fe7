/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <keyutils.h>

#include "enroll-recovery.h"
#include "key-source.h"
#include "log.h"
#include "pin.h"
#include "policy.h"
#include "seal.h"
#include "tpm2-context.h"
#include "util.h"

#define BA_CONFIG_DIR_DEFAULT "/etc/btrfs-auth"
#define BA_TPM_WAIT_MAX 3600
#define BA_PIN_TRIES_DEFAULT 3

enum ba_command {
        BA_CMD_HELP,
        BA_CMD_VERSION,
        BA_CMD_ENROLL,
        BA_CMD_LOAD,
        BA_CMD_LOCK,
        BA_CMD_STATUS,
        BA_CMD_RESEAL,
        BA_CMD_CONFIRM,
        BA_CMD_REKEY,
        BA_CMD_UNPROVISION,
        BA_CMD_LIST,
        BA_CMD_WIPE,
};

#define BA_STATE_DIR_DEFAULT "/run/btrfs-auth"
#define BA_RECOVERY_TRIES_DEFAULT 3

struct ba_args {
        enum ba_command command;
        const char *target;     /* NAME or path as given */
        bool target_is_name;
        char *key_path;         /* the key file */
        char *rollback_path;    /* NAME: <config-dir>/NAME.rollback, the anti-rollback anchor; NULL for a path */
        char *description;      /* btrfs:NAME: for enroll what to record, for load/status by NAME what to expect */
        const char *config_dir;
        const char *tcti;       /* NULL: environment or default */
        unsigned tpm_wait;
        bool tpm_wait_set;
        enum ba_log_level log_level;

        /* enroll */
        const char *key_file;   /* "-" is stdin */
        bool generate;
        const char *recovery_file;
        uint32_t pcr_mask;
        uint32_t pcr_value_mask; /* PCRs given explicitly with --pcr-value */
        ba_pcr_values pcr_values;
        int lock_pcr;           /* enroll: -1 none; lock: the PCR to extend */
        bool pin;
        const char *device;
        bool has_uuid;
        uint8_t uuid[BA_UUID_SIZE];
        const char *description_opt;
        bool force;

        /* load */
        const char *check_device;
        key_serial_t keyring;
        bool lock_after;
        struct ba_ask pin_ask;
        unsigned pin_tries;

        /* status */
        bool no_tpm;

        /* recovery copy: enroll makes it; load, reseal, rekey fall back to it; wipe removes it */
        enum ba_recovery_mode recovery_mode; /* enroll */
        unsigned argon2_memory_mib;          /* enroll: 0 = the default of the kind */
        unsigned argon2_time;                /* enroll: 0 = the default of the kind */
        struct ba_ask pass_ask;
        unsigned recovery_tries;
        bool wipe_recovery;                  /* wipe --recovery */
        const char *wipe_seal;               /* wipe --seal=current|previous|new */
        bool pcrs_given;          /* reseal: --pcrs replaces the old selection */
        const char *state_dir;    /* load: record how the key was obtained; confirm: read it */
        bool update_initramfs;    /* reseal, confirm, rekey */
        const char *new_key_file; /* rekey */
        const char *btrfstune;    /* rekey */

        /* signed PCR policies (enroll --signed-policy; unsealing reads the UKI's signature) */
        const char *signed_policy_key; /* enroll, reseal: PEM public key that signs PCR values */
        uint32_t signed_mask;          /* the PCRs it signs (default 11) */
        bool signed_mask_given;
        const char *pcr_signature;     /* load: tpm2-pcr-signature.json (default: systemd-stub's) */
        const char *pcr_public_key;    /* load: the signer's PEM public key (default: systemd-stub's) */
        bool allow_unmeasured;         /* enroll: accept a binding that misses the initramfs or command line */
        bool allow_unlocked;           /* enroll: no lock PCR, the key unseals again after boot */
        uint32_t rollback_index;       /* enroll: NV index of the rollback record (rollback.h); 0: none */
};

/* What the layers below take of the options, each only what it needs. */
static inline struct ba_tpm_target ba_args_tpm(const struct ba_args *a) {
        return (struct ba_tpm_target) { .tcti = a->tcti, .wait = a->tpm_wait };
}

/* load, reseal, rekey: how to unseal (key-source.h). */
struct ba_unseal_opts ba_args_unseal(const struct ba_args *a);
/* load, reseal: the key file whose .previous copy may stand in when the TPM refuses; NULL for a path target. */
static inline const char *ba_args_previous_of(const struct ba_args *a) {
        return a->target_is_name ? a->key_path : NULL;
}

/* enroll, reseal: the binding the options ask for (seal.h); reseal then merges in the old file's. */
void ba_args_seal_binding(const struct ba_args *a, struct ba_seal_binding *b);

/* Returns 0, or BA_EXIT_USAGE after logging what is wrong. */
int ba_args_parse(int argc, char **argv, struct ba_args *a);
void ba_args_free(struct ba_args *a);
void ba_usage(FILE *f);
