/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <tss2/tss2_common.h>

/* The one place that turns tpm2-tss return codes into what the user is told and the exit code. */
enum ba_tpm_error {
        BA_TPM_ERR_NONE,
        BA_TPM_ERR_UNAVAILABLE, /* no TPM, TCTI/transport failure, TPM not started or in failure mode */
        BA_TPM_ERR_POLICY,      /* PCR policy not satisfied */
        BA_TPM_ERR_BAD_AUTH,    /* wrong PIN */
        BA_TPM_ERR_LOCKOUT,     /* dictionary-attack lockout */
        BA_TPM_ERR_INTEGRITY,   /* sealed blob damaged or not from this TPM's storage key */
        BA_TPM_ERR_OTHER,
};

/* TPM-layer code without the handle/session/parameter number, e.g. 0x98e -> TPM2_RC_AUTH_FAIL. */
TSS2_RC ba_tpm2_rc_base(TSS2_RC rc);

/*
 * A policy session fails with PCR_CHANGED when any PCR is extended between
 * its PolicyPCR and its use (under Secure Boot IMA measures each module
 * udev loads into PCR 10).  Nothing is wrong then: a new session starts
 * over, this many times at most; a boot's module loads end long before.
 */
#define BA_PCR_CHANGED_ATTEMPTS 10
enum ba_tpm_error ba_tpm2_rc_classify(TSS2_RC rc);
int ba_tpm_error_exit_code(enum ba_tpm_error e);
const char *ba_tpm_error_hint(enum ba_tpm_error e);

/* Logs "<what> failed: <decoded rc> (0x...). <hint>" and returns the exit code. */
int log_tpm2_rc(TSS2_RC rc, const char *what);
