/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tpm2-session.h"

#ifdef BTRFS_AUTH_TEST_NO_PARAM_ENCRYPTION
#define CREATE_CRYPT 0
#define UNSEAL_CRYPT 0
#else
#define CREATE_CRYPT (TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT)
/* Unseal has no command parameter to protect; ESAPI drops decrypt for such commands before sending. */
#define UNSEAL_CRYPT (TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT)
#endif

TPMA_SESSION ba_session_attrs_create(void) {
        return TPMA_SESSION_CONTINUESESSION | CREATE_CRYPT;
}

/* No continueSession: the TPM ends the session with the Unseal, which saves a FlushContext at boot. */
TPMA_SESSION ba_session_attrs_unseal(void) {
        return UNSEAL_CRYPT;
}

bool ba_param_encryption_enabled(void) {
        return CREATE_CRYPT != 0 && UNSEAL_CRYPT != 0;
}
