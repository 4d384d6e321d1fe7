/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "boot-chain.h"
#include "commands.h"
#include "exit-codes.h"
#include "keyfile-describe.h"
#include "log.h"
#include "signed-policy.h"
#include "tpm2-pcr.h"
#include "tpm2-unseal.h"

static void print_hex(const char *label, const uint8_t *data, size_t len) {
        char hex[2 * 64 + 1];

        ba_hex_encode(data, len < 64 ? len : 64, hex);
        printf("%-17s %s\n", label, hex);
}

static void print_binding(const struct ba_args *a, const struct ba_keyfile *kf) {
        char buf[96];

        printf("%-17s %s\n", "Key file:", a->key_path);
        printf("%-17s %u\n", "Format version:", kf->version);
        printf("%-17s %s\n", "Key description:", kf->description);
        if (kf->has_fs_uuid)
                ba_uuid_format(kf->fs_uuid, buf);
        printf("%-17s %s\n", "Filesystem UUID:", kf->has_fs_uuid ? buf : "(not recorded)");
        ba_pcr_mask_format(kf->pcr_mask, buf, sizeof(buf));
        printf("%-17s sha256\n%-17s %s\n", "PCR bank:", "PCRs:", buf);
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (kf->pcr_mask & (UINT32_C(1) << i)) {
                        snprintf(buf, sizeof(buf), "  PCR %u:", i);
                        print_hex(buf, kf->pcr_values[i], BA_DIGEST_SIZE);
                }
        if (kf->lock_pcr >= 0)
                snprintf(buf, sizeof(buf), "%d", kf->lock_pcr);
        printf("%-17s %s\n", "Lock PCR:", kf->lock_pcr >= 0 ? buf : "none");
        if (kf->signed_pcrs.pcr_mask) {
                ba_pcr_mask_format(kf->signed_pcrs.pcr_mask, buf, sizeof(buf));
                printf("%-17s %s\n", "Signed PCRs:", buf);
                print_hex("PCR signer name:", kf->signed_pcrs.key_name.name, kf->signed_pcrs.key_name.size);
        }
        printf("%-17s %s\n", "PIN:", kf->pin ? "required" : "not required");
        if (kf->has_recovery)
                ba_recovery_describe(&kf->recovery, buf, sizeof(buf));
        printf("%-17s %s\n", "Recovery copy:", kf->has_recovery ? buf : "none");
        print_hex("Policy digest:", kf->policy_digest, BA_DIGEST_SIZE);
        print_hex("Parent key name:", kf->parent_name.name, kf->parent_name.size);
        if (kf->has_created) {
                time_t t = (time_t) kf->created;
                struct tm tm;

                if (gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm) > 0)
                        printf("%-17s %s\n", "Enrolled:", buf);
        }
}

static int __attribute__((format(printf, 2, 3))) verdict(int code, const char *fmt, ...) {
        va_list ap;

        printf("%-17s ", "TPM:");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
        return code;
}

static int check_lockout(struct ba_tpm *t, const struct ba_keyfile *kf) {
        struct ba_lockout_info info;
        int r;

        if (!kf->pin)
                return verdict(BA_EXIT_OK, "would unseal now");
        r = ba_tpm_lockout_info(t, &info);
        if (r != 0)
                return verdict(r, "cannot read the lockout state");
        if (info.in_lockout)
                return verdict(BA_EXIT_LOCKOUT, "would refuse the PIN now: dictionary-attack lockout");
        return verdict(BA_EXIT_OK, "would unseal now with the right PIN");
}

/* The signature a load would use now, if the key has a signed policy. */
static int check_signature(const struct ba_args *a, struct ba_tpm *t, const struct ba_keyfile *kf) {
        struct ba_signed_input in;
        struct ba_pcr_signature sig;
        int r;

        if (!kf->signed_pcrs.pcr_mask)
                return 0;
        r = ba_signed_input_read(a->pcr_signature, a->pcr_public_key, kf, &in);
        if (r == 0)
                r = ba_signed_select(t, kf, &in, &sig);
        ba_signed_input_free(&in);
        explicit_bzero(&sig, sizeof(sig));
        return r == 0 ? 0 : verdict(r, "would not unseal now: no valid PCR signature for this boot (above)");
}

static int check_tpm(const struct ba_args *a, struct ba_tpm *t, const struct ba_keyfile *kf) {
        ba_pcr_values current;
        uint32_t mismatch = 0;
        ESYS_TR obj = ESYS_TR_NONE;
        char list[64];
        int r;

        r = ba_tpm_get_srk(t, &kf->parent_name);
        if (r != 0)
                return verdict(r, "would not unseal: this TPM lacks the storage root key it was sealed under");
        r = ba_tpm_load_sealed(t, kf, &obj);
        ba_tpm_flush(t, &obj);
        if (r != 0)
                return verdict(r, "would not unseal: the TPM refuses the sealed object");
        r = ba_tpm_pcr_mismatch(t, kf, current, &mismatch);
        if (r != 0)
                return verdict(r, "cannot read the PCRs");
        if (mismatch) {
                ba_pcr_mask_format(mismatch, list, sizeof(list));
                ba_log_pcr_mismatch(BA_LOG_WARNING, kf, current, mismatch);
                return verdict(BA_EXIT_POLICY, "would not unseal now: PCR %s changed", list);
        }
        r = check_signature(a, t, kf);
        return r != 0 ? r : check_lockout(t, kf);
}

int ba_cmd_status(const struct ba_args *a) {
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        struct ba_keyfile kf;
        struct ba_tpm t;
        int r;

        r = ba_keyfile_load(a->key_path, a->description, &kf);
        if (r != 0)
                return r;
        print_binding(a, &kf);
        ba_boot_chain_describe(stdout, &kf);
        fflush(stdout);
        if (a->no_tpm)
                return verdict(BA_EXIT_OK, "not checked (--no-tpm)");
        r = ba_tpm_open(&t, &tpm);
        if (r != 0)
                return verdict(r, "cannot check: no TPM reachable through %s", ba_tcti_resolve(a->tcti));
        r = check_tpm(a, &t, &kf);
        ba_tpm_close(&t);
        return r;
}
