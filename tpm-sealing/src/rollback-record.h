/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "pcr-pubkey.h"
#include "pcr-signature.h"
#include "tpm2-context.h"
#include "util.h"

/*
 * What the TPM remembers of the last boot of an authenticated root
 * (docs/key-file-format.md, "Rollback record"): two NV indexes.
 *
 *  - The record (HANDLE): the filesystem's UUID, the generation its disk
 *    had when it last booted, and the counter value of its writer.  Only
 *    a boot image signed for PCR 11 by the UKI's PCR key can write it
 *    (TPMA_NV_POLICYWRITE, PolicyAuthorize), so neither the booted system
 *    nor another operating system can lower it.
 *  - The counter (HANDLE + 1): a TPM NV counter, which no one can set
 *    back: deleted and defined again, a counter starts above every value
 *    any counter of this TPM ever had.  enroll records its value in the
 *    anchor file; the first boot increments it.  A record emptied by
 *    deleting and redefining it is thus told apart from a fresh
 *    enrollment.
 */
#define BA_ROLLBACK_RECORD_SIZE 48

struct ba_rollback_record {
        uint8_t fsid[BA_UUID_SIZE];
        uint64_t generation;
        uint64_t counter; /* the counter value the writer saw after its increment */
};

struct ba_rollback_nv {
        uint32_t record_handle;
        uint32_t counter_handle;
        bool record_written;
        struct ba_rollback_record rec; /* when record_written */
        bool counter_started;          /* false: defined but never incremented (enroll increments it) */
        uint64_t counter;              /* the counter's value; 0 when not started */
};

void ba_rollback_record_encode(const struct ba_rollback_record *rec, uint8_t out[BA_ROLLBACK_RECORD_SIZE]);
/* -EBADMSG when it is not a record of this format. */
int ba_rollback_record_decode(const uint8_t in[BA_ROLLBACK_RECORD_SIZE], struct ba_rollback_record *rec);

/*
 * Reads both indexes and checks that they are btrfs-auth's: sizes,
 * attributes, the record's write policy for signer.  Whether their
 * values agree is the caller's to judge.  Returns 0 or an exit code
 * after logging (54 missing, 51 not btrfs-auth's).
 */
int ba_rollback_nv_read(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, struct ba_rollback_nv *nv);

/*
 * enroll, and a repair the recovery key authorized: defines what is
 * missing (owner authorization), starts the counter, and reads both.
 */
int ba_rollback_nv_define(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, struct ba_rollback_nv *nv);

/*
 * A boot: writes rec with this boot's PCR signature (needs t->srk), then
 * brings the counter up to rec->counter.  Returns an exit code after logging.
 */
int ba_rollback_nv_write(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, const struct ba_pcr_signature *sig,
                         struct ba_rollback_nv *nv, const struct ba_rollback_record *rec);
