/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-context.h"
#include "tpm2-rc.h"
#include "util.h"

/* TCG "Provisioning Guidance" SRK: EK Credential Profile template L-2 with userWithAuth|noDA, no unique. */
static const TPM2B_PUBLIC srk_template = {
        .publicArea = {
                .type = TPM2_ALG_ECC,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                                    TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
                .parameters.eccDetail = {
                        .symmetric = {
                                .algorithm = TPM2_ALG_AES,
                                .keyBits.aes = 128,
                                .mode.aes = TPM2_ALG_CFB,
                        },
                        .scheme.scheme = TPM2_ALG_NULL,
                        .curveID = TPM2_ECC_NIST_P256,
                        .kdf.scheme = TPM2_ALG_NULL,
                },
        },
};

int ba_tpm_srk_name(struct ba_tpm *t, TPM2B_NAME *name) {
        TPM2B_NAME *n = NULL;
        TSS2_RC rc;

        rc = Esys_TR_GetName(t->esys, t->srk, &n);
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Reading the storage root key's name");
        *name = *n;
        Esys_Free(n);
        return 0;
}

/* Returns an exit code; *found says whether *ret now refers to the persistent SRK. */
static int srk_persistent(struct ba_tpm *t, ESYS_TR *ret, bool *found) {
        TPMS_CAPABILITY_DATA *cap = NULL;
        TPMI_YES_NO more;
        TSS2_RC rc;

        rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
                                BA_SRK_HANDLE, 1, &more, &cap);
        if (rc != TSS2_RC_SUCCESS)
                return log_tpm2_rc(rc, "Listing persistent TPM handles");
        *found = cap->data.handles.count > 0 && cap->data.handles.handle[0] == BA_SRK_HANDLE;
        Esys_Free(cap);
        if (!*found)
                return 0;
        rc = Esys_TR_FromTPMPublic(t->esys, BA_SRK_HANDLE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret);
        if (rc != TSS2_RC_SUCCESS) {
                *found = false;
                return log_tpm2_rc(rc, "Reading the persistent storage root key 0x81000001");
        }
        return 0;
}

static int srk_create(struct ba_tpm *t, ESYS_TR *ret) {
        const TPM2B_SENSITIVE_CREATE sensitive = { 0 };
        const TPM2B_DATA outside = { 0 };
        const TPML_PCR_SELECTION creation_pcrs = { 0 };
        TSS2_RC rc;

        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                &sensitive, &srk_template, &outside, &creation_pcrs, ret, NULL, NULL, NULL, NULL);
        if (rc == TSS2_RC_SUCCESS)
                return 0;
        *ret = ESYS_TR_NONE;
        if (ba_tpm2_rc_classify(rc) == BA_TPM_ERR_BAD_AUTH)
                /* Not the user's PIN: the owner hierarchy has a password we do not know. */
                return log_fail(BA_EXIT_TPM,
                                "Creating the storage root key failed: the TPM's owner hierarchy has a password. "
                                "Create the SRK once as a persistent key at 0x81000001 (tpm2_createprimary "
                                "-C o -G ecc256:aes128cfb ... && tpm2_evictcontrol -c ... 0x81000001).");
        if (ba_tpm2_rc_base(rc) == TPM2_RC_HIERARCHY)
                /* SeaBIOS, for one, turns the owner hierarchy off when a TPM command fails during boot. */
                return log_fail(BA_EXIT_TPM,
                                "Creating the storage root key failed: the TPM's owner hierarchy is disabled. "
                                "Firmware disables it after a TPM error during boot: power the machine off and "
                                "on again; if it stays disabled, check the TPM settings in the firmware.");
        return log_tpm2_rc(rc, "Creating the storage root key (ECC P-256, CreatePrimary)");
}

static bool name_equal(const TPM2B_NAME *a, const TPM2B_NAME *b) {
        return a->size == b->size && memcmp(a->name, b->name, a->size) == 0;
}

static int check_expected(struct ba_tpm *t, const TPM2B_NAME *expected, bool *match) {
        TPM2B_NAME name;
        int r;

        r = ba_tpm_srk_name(t, &name);
        if (r != 0)
                return r;
        *match = !expected || name_equal(&name, expected);
        return 0;
}

static int wrong_parent(const TPM2B_NAME *expected) {
        char hex[2 * sizeof(expected->name) + 1];

        ba_hex_encode(expected->name, expected->size, hex);
        return log_fail(BA_EXIT_TPM,
                        "This TPM has no storage root key named %s, the one the key was sealed under: the key "
                        "file was made on another machine, or this TPM was cleared since. Unlock with the "
                        "recovery key and re-enroll.", hex);
}

int ba_tpm_get_srk(struct ba_tpm *t, const TPM2B_NAME *expected) {
        bool match = false, found = false;
        int r;

        r = srk_persistent(t, &t->srk, &found);
        if (r != 0)
                return r;
        if (found) {
                r = check_expected(t, expected, &match);
                if (r != 0 || match)
                        return r;
                log_debug("The persistent SRK 0x81000001 is not the key file's parent; trying the ECC template.");
                (void) Esys_TR_Close(t->esys, &t->srk);
                t->srk = ESYS_TR_NONE;
        }
        r = srk_create(t, &t->srk);
        if (r != 0)
                return r;
        t->srk_transient = true;
        r = check_expected(t, expected, &match);
        if (r != 0)
                return r;
        return match ? 0 : wrong_parent(expected);
}
