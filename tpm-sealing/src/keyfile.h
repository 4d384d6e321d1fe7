/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tss2/tss2_tpm2_types.h>

#include "policy.h"
#include "util.h"

/* docs/key-file-format.md specifies all of this byte by byte. */
#define BA_KEYFILE_MAGIC "\x89" "BAK\r\n\x1a\n"
#define BA_KEYFILE_MAGIC_SIZE 8
#define BA_KEYFILE_VERSION 1
#define BA_KEYFILE_HEADER_SIZE 16
#define BA_KEYFILE_TRAILER_SIZE 32
#define BA_KEYFILE_RECORD_HEADER_SIZE 6
#define BA_KEYFILE_MAX_SIZE 65536
#define BA_KEYFILE_SUFFIX ".sealed"
#define BA_PREVIOUS_SUFFIX ".previous" /* NAME.sealed.previous: kept by reseal until confirm */
#define BA_PENDING_SUFFIX ".new"       /* NAME.sealed.new: the new key of an unfinished rekey */
#define BA_ROLLBACK_SUFFIX ".rollback" /* NAME.rollback: the anti-rollback anchor (rollback.h) */
#define BA_KEY_MAX_SIZE 128 /* MAX_SYM_DATA of the TPM 2.0 library spec */
#define BA_SIGNER_NAME_SIZE (2 + BA_DIGEST_SIZE) /* a sha256 TPM name */

/* Bit 15 set: a reader that does not know the record may skip it. */
#define BA_REC_IGNORABLE 0x8000u

enum ba_record_type {
        BA_REC_DESCRIPTION = 0x0001,
        BA_REC_FS_UUID = 0x0002,
        BA_REC_PCR_BANK = 0x0003,
        BA_REC_PCR_MASK = 0x0004,
        BA_REC_PCR_VALUES = 0x0005,
        BA_REC_LOCK_PCR = 0x0006,
        BA_REC_PIN = 0x0007,
        BA_REC_POLICY_DIGEST = 0x0008,
        BA_REC_PARENT_NAME = 0x0009,
        BA_REC_TPM_PUBLIC = 0x000a,
        BA_REC_TPM_PRIVATE = 0x000b,
        BA_REC_SIGNED_PCRS = 0x000c,
        BA_REC_CREATED = 0x8001,
        BA_REC_RECOVERY = 0x8002,    /* version 1: scrypt, a passphrase (read, never written anew) */
        BA_REC_RECOVERY_V2 = 0x8003, /* version 2: Argon2id, a recovery key or a passphrase */
};

/*
 * The recovery copy (record 0x8002 or 0x8003, at most one of them): the key
 * encrypted with AES-256-GCM under a key derived from a recovery key or a
 * passphrase.  Only the parameters' ranges are checked here; src/recovery.c
 * does the cryptography.  docs/key-file-format.md has the layouts.
 */
#define BA_RECOVERY_KIND_KEY 1        /* 32 random bytes, typed in modhex (recovery-key.h) */
#define BA_RECOVERY_KIND_PASSPHRASE 2 /* chosen by a person */
#define BA_RECOVERY_KDF_SCRYPT 1
#define BA_RECOVERY_KDF_ARGON2ID 2    /* version 0x13 */
#define BA_RECOVERY_AEAD_AES256GCM 1
#define BA_RECOVERY_SALT_SIZE 32
#define BA_RECOVERY_NONCE_SIZE 12
#define BA_RECOVERY_TAG_SIZE 16
/* scrypt (version 1 records) */
#define BA_RECOVERY_LOG_N_MIN 10
#define BA_RECOVERY_LOG_N_MAX 22
#define BA_RECOVERY_R_MAX 32
#define BA_RECOVERY_P_MAX 16
#define BA_RECOVERY_MEMORY_MAX (UINT64_C(1) << 30) /* 128 * r * N bytes of scrypt memory at most */
#define BA_RECOVERY_FIXED_SIZE (1 + 1 + 4 + 4 + BA_RECOVERY_SALT_SIZE + 1 + BA_RECOVERY_NONCE_SIZE + \
                                BA_RECOVERY_TAG_SIZE)
/* Argon2id (version 2 records): memory in KiB, as libargon2 counts it; the same 1 GiB bound as scrypt's. */
#define BA_ARGON2_MEMORY_MIN_KIB (8u * 1024)
#define BA_ARGON2_MEMORY_MAX_KIB (1024u * 1024)
#define BA_ARGON2_TIME_MAX 16
#define BA_ARGON2_LANES_MAX 16
#define BA_RECOVERY_V2_FIXED_SIZE (1 + 1 + 4 + 4 + 4 + BA_RECOVERY_SALT_SIZE + 1 + BA_RECOVERY_NONCE_SIZE + \
                                   BA_RECOVERY_TAG_SIZE)

struct ba_recovery_record {
        uint8_t version; /* 1: record 0x8002, 2: record 0x8003 */
        uint8_t kind;    /* BA_RECOVERY_KIND_*; always a passphrase in version 1 */
        uint8_t kdf;     /* BA_RECOVERY_KDF_SCRYPT (version 1), BA_RECOVERY_KDF_ARGON2ID (version 2) */
        uint8_t log_n;   /* scrypt N = 2^log_n */
        uint32_t r, p;   /* scrypt */
        uint32_t t_cost, m_cost, lanes; /* Argon2id: passes, memory in KiB, lanes */
        uint8_t salt[BA_RECOVERY_SALT_SIZE];
        uint8_t aead; /* BA_RECOVERY_AEAD_AES256GCM */
        uint8_t nonce[BA_RECOVERY_NONCE_SIZE];
        uint8_t tag[BA_RECOVERY_TAG_SIZE];
        uint8_t ct_len; /* 1..BA_KEY_MAX_SIZE */
        uint8_t ct[BA_KEY_MAX_SIZE];
};

/*
 * How ba_recovery_record_check and ba_keyfile_parse refuse a recovery
 * record, told apart from the rest of the file's errors (-EBADMSG):
 * -BA_ERECOVERY_BAD when it is malformed (cut short, unknown kind, KDF or
 * cipher, fields that contradict each other), -BA_ERECOVERY_COST when it
 * asks for a KDF cost above the bounds above.
 */
#define BA_ERECOVERY_BAD EBADE
#define BA_ERECOVERY_COST E2BIG

/* Ranges the parser and writer accept; 0, -BA_ERECOVERY_BAD or -BA_ERECOVERY_COST with a reason. */
int ba_recovery_record_check(const struct ba_recovery_record *rec, char *err, size_t err_len);

struct ba_keyfile {
        uint16_t version;
        char description[BA_NAME_MAX + sizeof(BA_DESCRIPTION_PREFIX)];
        bool has_fs_uuid;
        uint8_t fs_uuid[BA_UUID_SIZE];
        uint16_t pcr_bank;
        uint32_t pcr_mask;
        ba_pcr_values pcr_values; /* indexed by PCR number; only those in pcr_mask mean anything */
        int lock_pcr;             /* -1: none */
        bool pin;
        uint8_t policy_digest[BA_DIGEST_SIZE];
        TPM2B_NAME parent_name;
        TPM2B_PUBLIC public;
        TPM2B_PRIVATE private;
        struct ba_signed_pcrs signed_pcrs; /* pcr_mask 0: no signed PCR policy */
        bool has_created;
        uint64_t created; /* seconds since the epoch */
        bool has_recovery;
        struct ba_recovery_record recovery;
};

void ba_keyfile_init(struct ba_keyfile *kf);

/*
 * A lock PCR must be one the OS (locality 0) can extend but not reset:
 * 0-15.  PCRs 16 and 23 are resettable from locality 0, so extending them
 * locks nothing; 17-22 only take extends from the D-RTM localities.
 */
bool ba_lock_pcr_allowed(unsigned pcr);

/*
 * Consistency of the decoded fields with each other and with the sealed
 * object: what the writer refuses to write and the parser refuses to
 * accept.  Returns 0 or -EINVAL with a reason in err.
 */
int ba_keyfile_check(const struct ba_keyfile *kf, char *err, size_t err_len);

/* Returns 0, -EBADMSG (corrupt/truncated), -EPROTONOSUPPORT (version or critical record unknown)
 * or -EINVAL (inconsistent); err says what and where. */
int ba_keyfile_parse(const uint8_t *buf, size_t len, struct ba_keyfile *kf, char *err, size_t err_len);

/* Returns 0 and a malloc'ed buffer, -EINVAL (inconsistent, reason in err) or -ENOMEM. */
int ba_keyfile_serialize(const struct ba_keyfile *kf, uint8_t **ret, size_t *ret_len, char *err, size_t err_len);

/* Recomputes the trailer checksum over buf[0 .. len-32); for writers and test tools. */
int ba_keyfile_seal_checksum(uint8_t *buf, size_t len);
