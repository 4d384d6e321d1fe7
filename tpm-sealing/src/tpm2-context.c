/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "exit-codes.h"
#include "log.h"
#include "tpm2-context.h"
#include "tpm2-rc.h"
#include "util.h"

#define POLL_MS 100

const char *ba_tcti_resolve(const char *option) {
        const char *e;

        if (option && *option)
                return option;
        e = getenv("TPM2TOOLS_TCTI");
        if (e && *e)
                return e;
        e = getenv("TCTI");
        if (e && *e)
                return e;
        return BA_TCTI_DEFAULT;
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* The device TCTI's node, which we can wait for without asking the TSS (and its logging) every 100 ms. */
static const char *device_path(const char *conf, char *buf, size_t len) {
        if (strcmp(conf, "device") == 0 || strcmp(conf, "device:") == 0)
                return "/dev/tpm0";
        if (strncmp(conf, "device:", 7) != 0 || (size_t) snprintf(buf, len, "%s", conf + 7) >= len)
                return NULL;
        return buf;
}

static int wait_for_device(const char *path, uint64_t deadline, unsigned wait_seconds) {
        bool said = false;

        while (access(path, F_OK) < 0) {
                if (now_ms() >= deadline)
                        return log_fail(BA_EXIT_NO_TPM,
                                        "No TPM: %s did not appear within %u s. Check that the TPM is enabled in "
                                        "the firmware and its driver (tpm_tis, tpm_crb) is available, or choose "
                                        "another TPM with --tcti.", path, wait_seconds);
                if (!said)
                        log_debug("Waiting up to %u s for %s to appear.", wait_seconds, path);
                said = true;
                sleep_ms(POLL_MS);
        }
        return 0;
}

static const char *tcti_name(const char *conf, char *buf, size_t len) {
        size_t n = strcspn(conf, ":");

        snprintf(buf, len, "%.*s", (int) (n < len ? n : len - 1), conf);
        return buf;
}

static int tcti_error(const char *conf, TSS2_RC rc) {
        char name[64];

        switch (rc & ~TSS2_RC_LAYER_MASK) {
        case TSS2_BASE_RC_NOT_SUPPORTED:
                return log_fail(BA_EXIT_NO_TPM, "TCTI \"%s\" is not available: libtss2-tcti-%s.so.0 is not "
                                "installed (in the initramfs, the dracut module must add it).",
                                conf, tcti_name(conf, name, sizeof(name)));
        case TSS2_BASE_RC_BAD_VALUE:
        case TSS2_BASE_RC_BAD_REFERENCE:
                return log_fail(BA_EXIT_NO_TPM, "TCTI configuration \"%s\" is invalid: %s (0x%x). Fix --tcti or "
                                "$TPM2TOOLS_TCTI.", conf, Tss2_RC_Decode(rc), (unsigned) rc);
        default:
                return log_fail(BA_EXIT_NO_TPM, "Cannot open the TPM through TCTI \"%s\": %s (0x%x). Check that "
                                "the TPM (or simulator) is running and reachable.", conf, Tss2_RC_Decode(rc),
                                (unsigned) rc);
        }
}

/* A missing library or a malformed configuration will not get better by waiting. */
static bool tcti_error_is_permanent(TSS2_RC rc) {
        TSS2_RC base = rc & ~TSS2_RC_LAYER_MASK;

        return base == TSS2_BASE_RC_NOT_SUPPORTED || base == TSS2_BASE_RC_BAD_VALUE ||
               base == TSS2_BASE_RC_BAD_REFERENCE;
}

static int init_tcti(struct ba_tpm *t, uint64_t deadline) {
        TSS2_RC rc;

        for (;;) {
                rc = Tss2_TctiLdr_Initialize(t->conf, &t->tcti);
                if (rc == TSS2_RC_SUCCESS)
                        return 0;
                t->tcti = NULL;
                if (tcti_error_is_permanent(rc) || now_ms() >= deadline)
                        return tcti_error(t->conf, rc);
                sleep_ms(POLL_MS * 2);
        }
}

int ba_tpm_open(struct ba_tpm *t, const struct ba_tpm_target *where) {
        const char *conf = ba_tcti_resolve(where->tcti);
        unsigned wait_seconds = where->wait;
        uint64_t deadline = now_ms() + (uint64_t) wait_seconds * 1000;
        char buf[256];
        const char *path;
        TSS2_RC rc;
        int r;

        memset(t, 0, sizeof(*t));
        t->srk = ESYS_TR_NONE;
        t->conf = conf;
        path = device_path(conf, buf, sizeof(buf));
        if (path) {
                r = wait_for_device(path, deadline, wait_seconds);
                if (r != 0)
                        return r;
        }
        r = init_tcti(t, deadline);
        if (r != 0)
                return r;
        rc = Esys_Initialize(&t->esys, t->tcti, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                t->esys = NULL;
                r = log_tpm2_rc(rc, "Initializing the TPM connection (Esys_Initialize)");
                ba_tpm_close(t);
                return r;
        }
        return 0;
}

void ba_tpm_flush(struct ba_tpm *t, ESYS_TR *handle) {
        if (*handle == ESYS_TR_NONE)
                return;
        if (Esys_FlushContext(t->esys, *handle) != TSS2_RC_SUCCESS)
                log_debug("Flushing a TPM handle failed; the resource manager reclaims it at exit.");
        *handle = ESYS_TR_NONE;
}

void ba_tpm_close(struct ba_tpm *t) {
        if (t->esys) {
                if (t->srk != ESYS_TR_NONE) {
                        if (t->srk_transient)
                                ba_tpm_flush(t, &t->srk);
                        else
                                (void) Esys_TR_Close(t->esys, &t->srk);
                }
                Esys_Finalize(&t->esys);
        }
        if (t->tcti)
                Tss2_TctiLdr_Finalize(&t->tcti);
        t->esys = NULL;
        t->tcti = NULL;
        t->srk = ESYS_TR_NONE;
}

int ba_tpm_start_session(struct ba_tpm *t, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *ret) {
        const TPMT_SYM_DEF sym = {
                .algorithm = TPM2_ALG_AES,
                .keyBits.aes = 128,
                .mode.aes = TPM2_ALG_CFB,
        };
        TSS2_RC rc;

        *ret = ESYS_TR_NONE;
        rc = Esys_StartAuthSession(t->esys, t->srk, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   NULL, type, &sym, TPM2_ALG_SHA256, ret);
        if (rc != TSS2_RC_SUCCESS) {
                *ret = ESYS_TR_NONE;
                return log_tpm2_rc(rc, "Starting a salted TPM session");
        }
        rc = Esys_TRSess_SetAttributes(t->esys, *ret, attrs, 0xff);
        if (rc != TSS2_RC_SUCCESS) {
                ba_tpm_flush(t, ret);
                return log_tpm2_rc(rc, "Setting TPM session attributes");
        }
        return 0;
}
