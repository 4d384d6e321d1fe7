/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-authorize.h"
#include "tpm2-pcr.h"
#include "tpm2-rc.h"
#include "tpm2-session.h"
#include "tpm2-unseal.h"

int ba_tpm_load_sealed(struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR *ret) {
        TSS2_RC rc;

        rc = Esys_Load(t->esys, t->srk, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &kf->private, &kf->public, ret);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        *ret = ESYS_TR_NONE;
        return log_tpm2_rc(rc, "Loading the sealed key into the TPM (TPM2_Load)");
}

/* In the order policy.c computes the digest: the signed part, the sealed PCRs, the PIN. */
static int satisfy_policy(struct ba_tpm *t, ESYS_TR session, const struct ba_keyfile *kf,
                          const struct ba_signed_proof *proof) {
        const TPM2B_DIGEST current = { 0 }; /* empty: the TPM takes the PCRs' current values */
        TPML_PCR_SELECTION sel;
        TSS2_RC rc;
        int r;

        if (kf->signed_pcrs.pcr_mask) {
                if (!proof || !proof->key || !proof->sig)
                        return log_fail(BA_EXIT_FAILURE, "Internal error: %s needs a PCR signature.", kf->description);
                r = ba_tpm_policy_authorize(t, session, kf->signed_pcrs.pcr_mask, proof->key, proof->sig);
                if (r != 0)
                        return r;
        }
        if (kf->pcr_mask) {
                ba_pcr_selection(kf->pcr_mask, &sel);
                rc = Esys_PolicyPCR(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &current, &sel);
                /* A PCR extended since the signed part's PolicyPCR: start over (see BA_PCR_CHANGED_ATTEMPTS). */
                if (ba_tpm2_rc_base(rc) == TPM2_RC_PCR_CHANGED)
                        return -EAGAIN;
                if (rc != TSS2_RC_SUCCESS)
                        return log_tpm2_rc(rc, "Applying the PCR policy (TPM2_PolicyPCR)");
        }
        if (kf->pin) {
                rc = Esys_PolicyAuthValue(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
                if (rc != TSS2_RC_SUCCESS)
                        return log_tpm2_rc(rc, "Applying the PIN policy (TPM2_PolicyAuthValue)");
        }
        return 0;
}

static int report_policy_failure(struct ba_tpm *t, const struct ba_keyfile *kf) {
        ba_pcr_values current;
        uint32_t mismatch = 0;
        char list[64];
        int r;

        r = ba_tpm_pcr_mismatch(t, kf, current, &mismatch);
        if (r != 0)
                return r;
        if (mismatch == 0)
                return log_fail(BA_EXIT_POLICY, "The TPM policy of %s is not satisfied, although its PCRs now "
                                "hold the sealed values (they changed and changed back?). Reboot, or unlock with "
                                "the recovery key.", kf->description);
        ba_pcr_mask_format(mismatch, list, sizeof(list));
        log_error("The TPM policy of %s is not satisfied: PCR %s differ%s from the value%s sealed to.",
                  kf->description, list, ba_popcount(mismatch) > 1 ? "" : "s",
                  ba_popcount(mismatch) > 1 ? "s" : "");
        ba_log_pcr_mismatch(BA_LOG_ERROR, kf, current, mismatch);
        log_error("%s", ba_tpm_error_hint(BA_TPM_ERR_POLICY));
        return BA_EXIT_POLICY;
}

static int report_lockout(struct ba_tpm *t) {
        struct ba_lockout_info info;

        if (ba_tpm_lockout_info(t, &info) == 0)
                log_error("Lockout state: %u of %u failed PIN attempts counted, one is forgotten every %u s; "
                          "PINs are accepted again once the count is below %u.",
                          info.counter, info.max_tries, info.interval, info.max_tries);
        return BA_EXIT_LOCKOUT;
}

static int unseal_in_session(struct ba_tpm *t, ESYS_TR object, ESYS_TR session, struct ba_secret *out) {
        TPM2B_SENSITIVE_DATA *data = NULL;
        TSS2_RC rc;
        int r;

        rc = Esys_Unseal(t->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
        /* Some PCR was extended after the session's PolicyPCR: nothing is wrong, try again. */
        if (ba_tpm2_rc_base(rc) == TPM2_RC_PCR_CHANGED)
                return -EAGAIN;
        /* The caller names the PCRs that differ: more useful than the bare TPM code. */
        if (rc != TSS2_RC_SUCCESS && ba_tpm2_rc_classify(rc) == BA_TPM_ERR_POLICY)
                return BA_EXIT_POLICY;
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Unsealing the key (TPM2_Unseal)");
        r = ba_secret_new(out, data->size > 0 ? data->size : 1);
        if (r == 0) {
                memcpy(out->data, data->buffer, data->size);
                out->len = data->size;
        }
        /* tpm2-tss allocated this copy; it does not wipe it on free. */
        explicit_bzero(data, sizeof(*data));
        Esys_Free(data);
        return r == 0 ? 0 : log_fail(BA_EXIT_FAILURE, "Out of memory for the unsealed key.");
}

/* One policy session, satisfied and used; -EAGAIN when a PCR was extended meanwhile. */
static int unseal_once(struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR object, const TPM2B_AUTH *auth,
                       const struct ba_signed_proof *proof, struct ba_secret *out) {
        const TPM2B_AUTH empty = { 0 };
        ESYS_TR session = ESYS_TR_NONE;
        int r;

        r = ba_tpm_start_session(t, TPM2_SE_POLICY, ba_session_attrs_unseal(), &session);
        if (r == 0)
                r = satisfy_policy(t, session, kf, proof);
        if (r == 0 && auth && Esys_TR_SetAuth(t->esys, object, auth) != TSS2_RC_SUCCESS)
                r = log_fail(BA_EXIT_TPM, "Cannot pass the PIN to the TPM library.");
        if (r == 0)
                r = unseal_in_session(t, object, session, out);
        /* Overwrite the library's copy of the PIN hash. */
        (void) Esys_TR_SetAuth(t->esys, object, &empty);
        if (r == 0)
                /* The TPM ended the session with the Unseal (no continueSession); forget it here. */
                (void) Esys_TR_Close(t->esys, &session);
        else
                ba_tpm_flush(t, &session);
        return r;
}

int ba_tpm_unseal(struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR object, const TPM2B_AUTH *auth,
                  const struct ba_signed_proof *proof, struct ba_secret *out) {
        int r;

        /*
         * No PolicyGetDigest check before the Unseal: the TPM compares the
         * digests itself, and a policy failure neither counts against the
         * dictionary-attack counter nor reveals anything.  Which PCRs differ
         * is worked out only when it fails, keeping a boot's load short.
         *
         * Any PCR extended between a session's PolicyPCR and the Unseal (or
         * between its two PolicyPCRs) makes the TPM answer PCR_CHANGED: a new
         * session then starts over (BA_PCR_CHANGED_ATTEMPTS).
         */
        for (unsigned attempt = 1;; attempt++) {
                r = unseal_once(t, kf, object, auth, proof, out);
                if (r != -EAGAIN)
                        break;
                if (attempt == BA_PCR_CHANGED_ATTEMPTS) {
                        r = log_fail(BA_EXIT_TPM, "Unsealing %s failed %u times because PCRs kept changing while "
                                     "it ran (something extends PCRs in a loop?).", kf->description, attempt);
                        break;
                }
                log_debug("A PCR changed while unsealing %s; starting over.", kf->description);
        }
        if (r == BA_EXIT_LOCKOUT)
                report_lockout(t);
        if (r == BA_EXIT_POLICY)
                report_policy_failure(t, kf);
        return r;
}
