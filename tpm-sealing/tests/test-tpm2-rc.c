/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TPM return codes -> what the user is told and the exit code, in one table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_tpm2_types.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-rc.h"

static const struct {
        TSS2_RC rc;
        enum ba_tpm_error error;
        int exit_code;
} table[] = {
        { TSS2_RC_SUCCESS, BA_TPM_ERR_NONE, BA_EXIT_OK },
        /* Wrong PIN, as returned for session 1 of Unseal and in plain form. */
        { TPM2_RC_AUTH_FAIL | TPM2_RC_S | TPM2_RC_1, BA_TPM_ERR_BAD_AUTH, BA_EXIT_BAD_PIN },
        { TPM2_RC_AUTH_FAIL, BA_TPM_ERR_BAD_AUTH, BA_EXIT_BAD_PIN },
        { TPM2_RC_BAD_AUTH | TPM2_RC_S | TPM2_RC_1, BA_TPM_ERR_BAD_AUTH, BA_EXIT_BAD_PIN },
        { TPM2_RC_LOCKOUT, BA_TPM_ERR_LOCKOUT, BA_EXIT_LOCKOUT },
        { TPM2_RC_POLICY_FAIL | TPM2_RC_S | TPM2_RC_1, BA_TPM_ERR_POLICY, BA_EXIT_POLICY },
        { TPM2_RC_PCR_CHANGED, BA_TPM_ERR_POLICY, BA_EXIT_POLICY },
        { TPM2_RC_INTEGRITY | TPM2_RC_P | TPM2_RC_1, BA_TPM_ERR_INTEGRITY, BA_EXIT_BAD_KEYFILE },
        { TPM2_RC_INITIALIZE, BA_TPM_ERR_UNAVAILABLE, BA_EXIT_NO_TPM },
        { TPM2_RC_FAILURE, BA_TPM_ERR_UNAVAILABLE, BA_EXIT_NO_TPM },
        /* The resource manager layer carries TPM codes too. */
        { TSS2_RESMGR_TPM_RC_LAYER | TPM2_RC_LOCKOUT, BA_TPM_ERR_LOCKOUT, BA_EXIT_LOCKOUT },
        /* Transport failures: the TPM went away. */
        { TSS2_TCTI_RC_IO_ERROR, BA_TPM_ERR_UNAVAILABLE, BA_EXIT_NO_TPM },
        { TSS2_TCTI_RC_NO_CONNECTION, BA_TPM_ERR_UNAVAILABLE, BA_EXIT_NO_TPM },
        { TSS2_ESYS_RC_IO_ERROR, BA_TPM_ERR_UNAVAILABLE, BA_EXIT_NO_TPM },
        { TSS2_RESMGR_RC_LAYER | TSS2_BASE_RC_NO_CONNECTION, BA_TPM_ERR_UNAVAILABLE, BA_EXIT_NO_TPM },
        /* Everything else is a TPM error of its own, never mistaken for a PIN or policy problem. */
        { TPM2_RC_HANDLE | TPM2_RC_P | TPM2_RC_1, BA_TPM_ERR_OTHER, BA_EXIT_TPM },
        { TPM2_RC_VALUE | TPM2_RC_P | TPM2_RC_2, BA_TPM_ERR_OTHER, BA_EXIT_TPM },
        { TPM2_RC_ATTRIBUTES, BA_TPM_ERR_OTHER, BA_EXIT_TPM },
        { TSS2_ESYS_RC_RSP_AUTH_FAILED, BA_TPM_ERR_OTHER, BA_EXIT_TPM },
        { TSS2_ESYS_RC_MEMORY, BA_TPM_ERR_OTHER, BA_EXIT_TPM },
        { TSS2_MU_RC_BAD_SIZE, BA_TPM_ERR_OTHER, BA_EXIT_TPM },
};

static void test_classify(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                enum ba_tpm_error e = ba_tpm2_rc_classify(table[i].rc);

                if (e != table[i].error)
                        fail_msg("rc 0x%x classified as %d, expected %d", (unsigned) table[i].rc, e, table[i].error);
                assert_int_equal(ba_tpm_error_exit_code(e), table[i].exit_code);
        }
}

static void test_base(void **state) {
        (void) state;
        /* Handle/session/parameter numbers are not part of the error. */
        assert_int_equal(ba_tpm2_rc_base(0x98e), TPM2_RC_AUTH_FAIL);
        assert_int_equal(ba_tpm2_rc_base(0x1d5), TPM2_RC_SIZE);
        assert_int_equal(ba_tpm2_rc_base(0x921), TPM2_RC_LOCKOUT);
        /* Vendor-defined format-zero codes stay distinct from the TCG ones. */
        assert_int_not_equal(ba_tpm2_rc_base(0x521), TPM2_RC_LOCKOUT);
        assert_int_equal(ba_tpm2_rc_base(TSS2_TCTI_RC_IO_ERROR), TSS2_TCTI_RC_IO_ERROR);
}

static void test_hints(void **state) {
        (void) state;
        assert_non_null(strstr(ba_tpm_error_hint(BA_TPM_ERR_BAD_AUTH), "PIN"));
        assert_non_null(strstr(ba_tpm_error_hint(BA_TPM_ERR_LOCKOUT), "lockout"));
        assert_non_null(strstr(ba_tpm_error_hint(BA_TPM_ERR_LOCKOUT), "recovery key"));
        assert_non_null(strstr(ba_tpm_error_hint(BA_TPM_ERR_POLICY), "btrfs-auth reseal"));
        assert_non_null(strstr(ba_tpm_error_hint(BA_TPM_ERR_UNAVAILABLE), "--tcti"));
        assert_non_null(strstr(ba_tpm_error_hint(BA_TPM_ERR_INTEGRITY), "another TPM"));
}

static void test_log_message(void **state) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int code;

        (void) state;
        assert_non_null(f);
        log_set_stream(f);
        code = log_tpm2_rc(TPM2_RC_LOCKOUT, "Unsealing the key");
        log_set_stream(NULL);
        fclose(f);
        assert_int_equal(code, BA_EXIT_LOCKOUT);
        /* What failed, the decoded TPM reason, the raw code and what to do, on one line. */
        assert_non_null(strstr(buf, "Unsealing the key failed"));
        assert_non_null(strstr(buf, "DA lockout mode"));
        assert_non_null(strstr(buf, "0x921"));
        assert_non_null(strstr(buf, "tpm2_dictionarylockout"));
        free(buf);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_base),
                cmocka_unit_test(test_hints),
                cmocka_unit_test(test_log_message),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
