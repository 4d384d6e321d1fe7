/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tpm2_types.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-rc.h"

TSS2_RC ba_tpm2_rc_base(TSS2_RC rc) {
        TSS2_RC layer = rc & TSS2_RC_LAYER_MASK;
        TSS2_RC code = rc & ~TSS2_RC_LAYER_MASK;

        if (layer != TSS2_TPM_RC_LAYER && layer != TSS2_RESMGR_TPM_RC_LAYER)
                return rc;
        /* Format one: error number in bits 0-5, bits 6-11 say which handle/session/parameter. */
        if (code & TPM2_RC_FMT1)
                return TPM2_RC_FMT1 | (code & 0x3f);
        /* Format zero: keep the error and the warning/version bits, drop vendor/TCG-defined bit 10. */
        return code & 0xbff;
}

static enum ba_tpm_error classify_tpm(TSS2_RC base) {
        switch (base) {
        case TPM2_RC_AUTH_FAIL:
        case TPM2_RC_BAD_AUTH:
                return BA_TPM_ERR_BAD_AUTH;
        case TPM2_RC_LOCKOUT:
                return BA_TPM_ERR_LOCKOUT;
        case TPM2_RC_POLICY_FAIL:
        case TPM2_RC_PCR_CHANGED:
                return BA_TPM_ERR_POLICY;
        case TPM2_RC_INTEGRITY:
                return BA_TPM_ERR_INTEGRITY;
        case TPM2_RC_INITIALIZE:
        case TPM2_RC_FAILURE:
                return BA_TPM_ERR_UNAVAILABLE;
        default:
                return BA_TPM_ERR_OTHER;
        }
}

static enum ba_tpm_error classify_tss(TSS2_RC rc) {
        switch (rc & ~TSS2_RC_LAYER_MASK) {
        case TSS2_BASE_RC_IO_ERROR:
        case TSS2_BASE_RC_NO_CONNECTION:
        case TSS2_BASE_RC_TRY_AGAIN:
        case TSS2_BASE_RC_INCOMPATIBLE_TCTI:
        case TSS2_BASE_RC_BAD_TCTI_STRUCTURE:
        case TSS2_BASE_RC_NOT_SUPPORTED:
        case TSS2_BASE_RC_NO_TPM:
                return BA_TPM_ERR_UNAVAILABLE;
        default:
                return BA_TPM_ERR_OTHER;
        }
}

enum ba_tpm_error ba_tpm2_rc_classify(TSS2_RC rc) {
        TSS2_RC layer = rc & TSS2_RC_LAYER_MASK;

        if (rc == TSS2_RC_SUCCESS)
                return BA_TPM_ERR_NONE;
        if (layer == TSS2_TPM_RC_LAYER || layer == TSS2_RESMGR_TPM_RC_LAYER)
                return classify_tpm(ba_tpm2_rc_base(rc));
        if (layer == TSS2_TCTI_RC_LAYER)
                return BA_TPM_ERR_UNAVAILABLE;
        if (layer == TSS2_ESAPI_RC_LAYER || layer == TSS2_SYS_RC_LAYER || layer == TSS2_RESMGR_RC_LAYER)
                return classify_tss(rc);
        return BA_TPM_ERR_OTHER;
}

int ba_tpm_error_exit_code(enum ba_tpm_error e) {
        switch (e) {
        case BA_TPM_ERR_NONE:
                return BA_EXIT_OK;
        case BA_TPM_ERR_UNAVAILABLE:
                return BA_EXIT_NO_TPM;
        case BA_TPM_ERR_POLICY:
                return BA_EXIT_POLICY;
        case BA_TPM_ERR_BAD_AUTH:
                return BA_EXIT_BAD_PIN;
        case BA_TPM_ERR_LOCKOUT:
                return BA_EXIT_LOCKOUT;
        case BA_TPM_ERR_INTEGRITY:
                return BA_EXIT_BAD_KEYFILE;
        default:
                return BA_EXIT_TPM;
        }
}

const char *ba_tpm_error_hint(enum ba_tpm_error e) {
        switch (e) {
        case BA_TPM_ERR_NONE:
                return "";
        case BA_TPM_ERR_UNAVAILABLE:
                return "The TPM cannot be reached or is not usable: check that it is enabled in the firmware, "
                       "that its driver (tpm_tis/tpm_crb) is loaded, and the --tcti setting.";
        case BA_TPM_ERR_POLICY:
                return "The boot state (PCR values) differs from the one the key was sealed to. If the change "
                       "was planned (firmware, boot loader), unlock with the recovery passphrase or key and bind "
                       "the key to the new state with 'btrfs-auth reseal NAME' (see docs/admin-guide.md).";
        case BA_TPM_ERR_BAD_AUTH:
                return "Wrong PIN. Each wrong PIN counts towards the TPM's dictionary-attack lockout.";
        case BA_TPM_ERR_LOCKOUT:
                return "The TPM is in dictionary-attack lockout after too many wrong PINs and refuses every "
                       "PIN until the lockout expires (or the owner runs 'tpm2_dictionarylockout --clear-lockout' "
                       "with the lockout authorization); use the recovery key meanwhile.";
        case BA_TPM_ERR_INTEGRITY:
                return "The sealed key was made by another TPM, this TPM was cleared since, or the key file "
                       "is damaged: re-enroll from the recovery key.";
        default:
                return "See the TPM error above.";
        }
}

int log_tpm2_rc(TSS2_RC rc, const char *what) {
        enum ba_tpm_error e = ba_tpm2_rc_classify(rc);

        log_error("%s failed: %s (0x%x). %s", what, Tss2_RC_Decode(rc), (unsigned) rc, ba_tpm_error_hint(e));
        return ba_tpm_error_exit_code(e);
}
