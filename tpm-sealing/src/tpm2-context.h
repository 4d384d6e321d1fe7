/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include <tss2/tss2_esys.h>

#define BA_TCTI_DEFAULT "device:/dev/tpmrm0"
#define BA_SRK_HANDLE UINT32_C(0x81000001)
#define BA_TPM_WAIT_DEFAULT 10

struct ba_tpm {
        TSS2_TCTI_CONTEXT *tcti;
        ESYS_CONTEXT *esys;
        ESYS_TR srk;
        bool srk_transient;
        const char *conf;
};

/* Which TPM to talk to, and how long to wait for it to appear. */
struct ba_tpm_target {
        const char *tcti; /* NULL: the environment's, else the default (ba_tcti_resolve) */
        unsigned wait;    /* seconds */
};

/* --tcti, else $TPM2TOOLS_TCTI, else $TCTI, else device:/dev/tpmrm0. */
const char *ba_tcti_resolve(const char *option);

/* Waits up to where->wait seconds for the TPM to appear; returns an exit code after logging. */
int ba_tpm_open(struct ba_tpm *t, const struct ba_tpm_target *where);
void ba_tpm_close(struct ba_tpm *t);

/*
 * Makes t->srk the storage root key: the persistent one at 0x81000001 if
 * present, else the TCG ECC P-256 SRK created transiently.  With
 * expected_name, the key must have that name (the one the file was sealed
 * under).  Returns an exit code after logging.
 */
int ba_tpm_get_srk(struct ba_tpm *t, const TPM2B_NAME *expected_name);
int ba_tpm_srk_name(struct ba_tpm *t, TPM2B_NAME *name);

/* A session salted with the SRK, AES-128-CFB parameter encryption per attrs. */
int ba_tpm_start_session(struct ba_tpm *t, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *ret);
void ba_tpm_flush(struct ba_tpm *t, ESYS_TR *handle);
