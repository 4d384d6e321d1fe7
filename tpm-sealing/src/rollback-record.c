/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "rollback-record.h"
#include "tpm2-nv.h"
#include "tpm2-rc.h"

#define RECORD_MAGIC "BAGENR01"
#define COUNTER_SIZE 8
#define COUNTER_ATTRS                                                                                          \
        ((TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD | TPMA_NV_NO_DA)

/* Magic, UUID, generation, counter, zeros: 8 + 16 + 8 + 8 + 8 bytes. */
void ba_rollback_record_encode(const struct ba_rollback_record *rec, uint8_t out[BA_ROLLBACK_RECORD_SIZE]) {
        memset(out, 0, BA_ROLLBACK_RECORD_SIZE);
        memcpy(out, RECORD_MAGIC, 8);
        memcpy(out + 8, rec->fsid, BA_UUID_SIZE);
        ba_put_be(out + 24, rec->generation, 8);
        ba_put_be(out + 32, rec->counter, 8);
}

int ba_rollback_record_decode(const uint8_t in[BA_ROLLBACK_RECORD_SIZE], struct ba_rollback_record *rec) {
        static const uint8_t zeros[8];

        if (memcmp(in, RECORD_MAGIC, 8) != 0 || memcmp(in + 40, zeros, sizeof(zeros)) != 0)
                return -EBADMSG;
        memcpy(rec->fsid, in + 8, BA_UUID_SIZE);
        rec->generation = ba_get_be(in + 24, 8);
        rec->counter = ba_get_be(in + 32, 8);
        return 0;
}

static int foreign(uint32_t handle, const char *what) {
        return log_fail(BA_EXIT_ROLLBACK_INDEX, "TPM NV index 0x%08x is not btrfs-auth's rollback record (%s): "
                        "someone with the TPM owner's authorization replaced it. The root is not mounted; see "
                        "btrfs-auth(8), ROLLBACK, to record the disk again.", (unsigned) handle, what);
}

static int missing(uint32_t handle, const char *what) {
        return log_fail(BA_EXIT_ROLLBACK_MISSING, "The rollback %s (TPM NV index 0x%08x) is missing, though "
                        "this key was enrolled with it: someone with the TPM owner's authorization deleted it, or the "
                        "TPM was cleared.", what,
                        (unsigned) handle);
}

static int check_record_public(const TPM2B_NV_PUBLIC *pub, uint32_t handle, const struct ba_pcr_pubkey *signer,
                               bool *written) {
        const TPMS_NV_PUBLIC *p = &pub->nvPublic;
        TPMA_NV state_bits = TPMA_NV_WRITTEN | TPMA_NV_WRITELOCKED;
        TPM2B_DIGEST want;

        if (p->nvIndex != handle || p->nameAlg != TPM2_ALG_SHA256 || p->dataSize != BA_ROLLBACK_RECORD_SIZE)
                return foreign(handle, "name algorithm or size");
        if ((p->attributes & ~state_bits) != BA_NV_ATTRS_BASE || (p->attributes & TPMA_NV_WRITELOCKED))
                return foreign(handle, "attributes");
        if (ba_nv_signed_write_policy(&signer->name, &want) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the rollback record's policy (libcrypto).");
        if (p->authPolicy.size != want.size || memcmp(p->authPolicy.buffer, want.buffer, want.size) != 0)
                return foreign(handle, "its writes are not authorized by this boot image's PCR key");
        *written = p->attributes & TPMA_NV_WRITTEN;
        return 0;
}

static int check_counter_public(const TPM2B_NV_PUBLIC *pub, uint32_t handle, bool *written) {
        const TPMS_NV_PUBLIC *p = &pub->nvPublic;

        if (p->nvIndex != handle || p->nameAlg != TPM2_ALG_SHA256 || p->dataSize != COUNTER_SIZE ||
            (p->attributes & ~TPMA_NV_WRITTEN) != COUNTER_ATTRS || p->authPolicy.size != 0)
                return log_fail(BA_EXIT_ROLLBACK_INDEX, "TPM NV index 0x%08x is not btrfs-auth's rollback counter "
                                "(type, size, attributes or policy): someone with the TPM owner's authorization "
                                "replaced it. The root is not mounted; see btrfs-auth(8), ROLLBACK.",
                                (unsigned) handle);
        *written = p->attributes & TPMA_NV_WRITTEN;
        return 0;
}

static int read_record(struct ba_tpm *t, ESYS_TR obj, struct ba_rollback_nv *nv) {
        uint8_t buf[BA_ROLLBACK_RECORD_SIZE];
        int r = ba_tpm_nv_read(t, obj, sizeof(buf), buf);

        if (r == 0 && ba_rollback_record_decode(buf, &nv->rec) < 0)
                r = foreign(nv->record_handle, "its content is not a rollback record");
        return r;
}

static int read_counter(struct ba_tpm *t, ESYS_TR obj, uint64_t *value) {
        uint8_t buf[COUNTER_SIZE];
        int r = ba_tpm_nv_read(t, obj, sizeof(buf), buf);

        if (r == 0)
                *value = ba_get_be(buf, 8);
        return r;
}

static void close_obj(struct ba_tpm *t, ESYS_TR *obj) {
        if (*obj != ESYS_TR_NONE)
                (void) Esys_TR_Close(t->esys, obj);
        *obj = ESYS_TR_NONE;
}

/* The index's public area; a missing one is defined (with want_define) or refused. */
static int open_index(struct ba_tpm *t, uint32_t handle, uint16_t size, TPMA_NV attrs, const TPM2B_DIGEST *policy,
                      bool want_define, const char *what, TPM2B_NV_PUBLIC *pub, ESYS_TR *obj) {
        int r = ba_tpm_nv_read_public(t, handle, pub, obj);

        if (r != -ENOENT)
                return r;
        if (!want_define)
                return missing(handle, what);
        r = ba_tpm_nv_define(t, handle, size, attrs, policy, obj);
        if (r != 0)
                return r;
        close_obj(t, obj);
        r = ba_tpm_nv_read_public(t, handle, pub, obj);
        return r == -ENOENT ? missing(handle, what) : r;
}

/* Both indexes, checked; with want_define, missing ones are defined.  *counting: the counter was incremented. */
static int open_both(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, struct ba_rollback_nv *nv,
                     bool want_define, ESYS_TR *rec, ESYS_TR *ctr, bool *counting) {
        static const TPM2B_DIGEST no_policy;
        TPM2B_NV_PUBLIC pub;
        TPM2B_DIGEST policy;
        int r;

        if (ba_nv_signed_write_policy(&signer->name, &policy) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the rollback record's policy (libcrypto).");
        r = open_index(t, nv->record_handle, BA_ROLLBACK_RECORD_SIZE, BA_NV_ATTRS_BASE, &policy, want_define,
                       "record", &pub, rec);
        if (r == 0)
                r = check_record_public(&pub, nv->record_handle, signer, &nv->record_written);
        if (r == 0)
                r = open_index(t, nv->counter_handle, COUNTER_SIZE, COUNTER_ATTRS, &no_policy, want_define,
                               "counter", &pub, ctr);
        if (r == 0)
                r = check_counter_public(&pub, nv->counter_handle, counting);
        return r;
}

static int increment(struct ba_tpm *t, ESYS_TR ctr) {
        TSS2_RC rc = Esys_NV_Increment(t->esys, ctr, ctr, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);

        return rc == TSS2_RC_SUCCESS ? 0 : log_tpm2_rc(rc, "Incrementing the rollback counter (TPM2_NV_Increment)");
}

static int read_or_define(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, struct ba_rollback_nv *nv,
                          bool want_define) {
        ESYS_TR rec = ESYS_TR_NONE, ctr = ESYS_TR_NONE;
        bool counting = false;
        int r;

        r = open_both(t, signer, nv, want_define, &rec, &ctr, &counting);
        if (r == 0 && !counting && want_define)
                r = increment(t, ctr);
        nv->counter_started = counting || want_define;
        nv->counter = 0;
        if (r == 0 && nv->counter_started)
                r = read_counter(t, ctr, &nv->counter);
        if (r == 0 && nv->record_written)
                r = read_record(t, rec, nv);
        close_obj(t, &rec);
        close_obj(t, &ctr);
        return r;
}

int ba_rollback_nv_read(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, struct ba_rollback_nv *nv) {
        return read_or_define(t, signer, nv, false);
}

int ba_rollback_nv_define(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, struct ba_rollback_nv *nv) {
        return read_or_define(t, signer, nv, true);
}

int ba_rollback_nv_write(struct ba_tpm *t, const struct ba_pcr_pubkey *signer, const struct ba_pcr_signature *sig,
                         struct ba_rollback_nv *nv, const struct ba_rollback_record *rec) {
        uint8_t data[BA_ROLLBACK_RECORD_SIZE];
        TPM2B_NV_PUBLIC pub;
        ESYS_TR obj = ESYS_TR_NONE;
        int r;

        ba_rollback_record_encode(rec, data);
        r = ba_tpm_nv_read_public(t, nv->record_handle, &pub, &obj);
        if (r == -ENOENT)
                r = missing(nv->record_handle, "record");
        if (r == 0)
                r = ba_tpm_nv_write_signed(t, obj, data, sizeof(data), false, UINT32_C(1) << 11, signer, sig);
        close_obj(t, &obj);
        if (r != 0)
                return r;
        nv->record_written = true;
        nv->rec = *rec;
        r = ba_tpm_nv_read_public(t, nv->counter_handle, &pub, &obj);
        if (r == -ENOENT)
                return missing(nv->counter_handle, "counter");
        while (r == 0 && nv->counter < rec->counter) {
                r = increment(t, obj);
                if (r == 0)
                        r = read_counter(t, obj, &nv->counter);
        }
        close_obj(t, &obj);
        return r;
}
