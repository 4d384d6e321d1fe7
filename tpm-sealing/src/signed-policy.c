/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "fileio.h"
#include "log.h"
#include "signed-policy.h"
#include "tpm2-pcr.h"

#define PUBLIC_KEY_FILE_MAX 16384

/* systemd ≥ 254 copies the stub's files to /run/systemd; 252 leaves them in /.extra. */
static const char *const signature_paths[] = { BA_PCR_SIGNATURE_DEFAULT, "/run/systemd/tpm2-pcr-signature.json" };
static const char *const public_key_paths[] = { BA_PCR_PUBLIC_KEY_DEFAULT, "/run/systemd/tpm2-pcr-public-key.pem",
                                                "/etc/systemd/tpm2-pcr-public-key.pem" };

static const char *first_existing(const char *const *paths, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (access(paths[i], F_OK) == 0)
                        return paths[i];
        return NULL;
}

const char *ba_pcr_public_key_find(void) {
        return first_existing(public_key_paths, ELEMENTSOF(public_key_paths));
}

static int no_signature(const struct ba_keyfile *kf, const char *given) {
        if (given)
                return log_fail(BA_EXIT_NO_PCR_SIGNATURE, "%s is sealed to signed PCR values, but the PCR signature "
                                "file %s does not exist.", kf->description, given);
        if (access(BA_STUB_PCR_EFIVAR, F_OK) < 0)
                return log_fail(BA_EXIT_NOT_UKI_BOOT, "%s is sealed to signed PCR values, but this boot did not go "
                                "through a unified kernel image's systemd-stub (no StubPcrKernelImage EFI "
                                "variable): nothing measured a boot image into PCR 11. Boot the signed UKI, or "
                                "unlock with the recovery key.", kf->description);
        if (access("/etc/initrd-release", F_OK) < 0)
                return log_fail(BA_EXIT_NO_PCR_SIGNATURE, "%s is sealed to signed PCR values, whose signature "
                                "systemd-stub hands to the initramfs only (%s): after switch-root the key does not "
                                "unseal (PCR 11 moved on). Give --pcr-signature=FILE to try one.", kf->description,
                                BA_PCR_SIGNATURE_DEFAULT);
        return log_fail(BA_EXIT_NO_PCR_SIGNATURE, "%s is sealed to signed PCR values, but the unified kernel image "
                        "booted has no PCR signature (no .pcrsig section, so no %s). Sign it with "
                        "'systemd-measure sign --phase=enter-initrd' (btrfs-auth-uki does), or unlock with the "
                        "recovery key.", kf->description, BA_PCR_SIGNATURE_DEFAULT);
}

int ba_pcr_pubkey_load(const char *path, struct ba_pcr_pubkey *key) {
        uint8_t *pem = NULL;
        size_t len = 0;
        char err[160];
        int r;

        r = ba_read_file(path, PUBLIC_KEY_FILE_MAX, &pem, &len);
        if (r < 0) {
                log_error_errno(r, "Cannot read the PCR public key %s", path);
                return BA_EXIT_PCR_PUBLIC_KEY;
        }
        r = ba_pcr_pubkey_from_pem(pem, len, key, err, sizeof(err));
        free(pem);
        return r < 0 ? log_fail(BA_EXIT_PCR_PUBLIC_KEY, "The PCR public key %s is unusable: %s.", path, err) : 0;
}

static int read_public_key(const char *given, const struct ba_keyfile *kf, struct ba_pcr_pubkey *key) {
        const char *path = given ? given : first_existing(public_key_paths, ELEMENTSOF(public_key_paths));
        char want[2 * BA_SIGNER_NAME_SIZE + 1];
        int r;

        if (!path)
                return log_fail(BA_EXIT_PCR_PUBLIC_KEY, "%s is sealed to PCR values signed by a key, but no PCR "
                                "public key was found (%s: the unified kernel image has no .pcrpkey section).",
                                kf->description, BA_PCR_PUBLIC_KEY_DEFAULT);
        r = ba_pcr_pubkey_load(path, key);
        if (r != 0)
                return r;
        if (key->name.size == kf->signed_pcrs.key_name.size &&
            memcmp(key->name.name, kf->signed_pcrs.key_name.name, key->name.size) == 0)
                return 0;
        ba_hex_encode(kf->signed_pcrs.key_name.name, kf->signed_pcrs.key_name.size, want);
        return log_fail(BA_EXIT_PCR_PUBLIC_KEY, "The PCR public key %s is not the one %s was sealed to (TPM name %s): "
                        "the boot image was signed by someone else.", path, kf->description, want);
}

int ba_signed_input_read(const char *sig_path, const char *key_path, const struct ba_keyfile *kf,
                         struct ba_signed_input *in) {
        const char *path = sig_path ? sig_path : first_existing(signature_paths, ELEMENTSOF(signature_paths));
        uint8_t *buf = NULL;
        int r;

        memset(in, 0, sizeof(*in));
        if (!path || access(path, F_OK) < 0)
                return no_signature(kf, sig_path);
        r = read_public_key(key_path, kf, &in->key);
        if (r != 0)
                return r;
        r = ba_read_file(path, BA_PCR_SIGNATURE_FILE_MAX, &buf, &in->json_len);
        if (r < 0) {
                log_error_errno(r, "Cannot read the PCR signature file %s", path);
                return r == -EFBIG ? BA_EXIT_BAD_PCR_SIGNATURE : BA_EXIT_NO_PCR_SIGNATURE;
        }
        in->json = (char *) buf;
        in->json_path = strdup(path);
        if (!in->json_path) {
                ba_signed_input_free(in);
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        }
        return 0;
}

void ba_signed_input_free(struct ba_signed_input *in) {
        free(in->json);
        free(in->json_path);
        memset(in, 0, sizeof(*in));
}

/* Alongside a missing signature, say which sealed PCRs differ too (Secure Boot off changes PCR 7). */
static void log_literal_mismatch(struct ba_tpm *t, const struct ba_keyfile *kf) {
        ba_pcr_values current;
        uint32_t mismatch = 0;

        if (kf->pcr_mask && ba_tpm_pcr_mismatch(t, kf, current, &mismatch) == 0 && mismatch)
                ba_log_pcr_mismatch(BA_LOG_ERROR, kf, current, mismatch);
}

int ba_signed_select(struct ba_tpm *t, const struct ba_keyfile *kf, const struct ba_signed_input *in,
                     struct ba_pcr_signature *sig) {
        uint32_t mask = kf->signed_pcrs.pcr_mask;
        char err[200], pcrs[64], value[2 * BA_DIGEST_SIZE + 1];
        uint8_t policy[BA_DIGEST_SIZE];
        ba_pcr_values current;
        int r;

        r = ba_tpm_pcr_read(t, mask, current);
        if (r != 0)
                return r;
        if (ba_policy_digest(mask, current, false, NULL, policy) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the PCR policy digest (libcrypto failure).");
        r = ba_pcr_signature_find(in->json, in->json_len, mask, in->key.fingerprint, policy, sig, err, sizeof(err));
        if (r == -EBADMSG)
                return log_fail(BA_EXIT_BAD_PCR_SIGNATURE, "The PCR signature file %s is malformed: %s.",
                                in->json_path, err);
        if (r < 0 && r != -ENOENT)
                return log_fail(BA_EXIT_FAILURE, "Cannot read the PCR signature file %s: %s.", in->json_path,
                                strerror(-r));
        if (r == 0)
                return 0;
        ba_pcr_mask_format(mask, pcrs, sizeof(pcrs));
        ba_hex_encode(current[__builtin_ctz(mask)], BA_DIGEST_SIZE, value);
        log_error("No signature in %s for this boot's PCR %s (PCR %d is %s): %s. This boot image was not signed for "
                  "unsealing %s, or the PCRs changed since (PCR 11 does when the boot leaves the initramfs).",
                  in->json_path, pcrs, __builtin_ctz(mask), value, err, kf->description);
        log_literal_mismatch(t, kf);
        return BA_EXIT_PCR_NOT_SIGNED;
}
