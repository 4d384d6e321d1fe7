/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "commands.h"
#include "exit-codes.h"
#include "keyring.h"
#include "log.h"
#include "pin-prompt.h"
#include "tpm2-pcr.h"
#include "tpm2-unseal.h"

struct device_state {
        uint8_t sb[BA_SB_SIZE];
        struct ba_sb_info info;
};

static int unseal_with_pin(const struct ba_args *a, struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR obj,
                           struct ba_secret *key) {
        int r;

        if (!kf->pin)
                return ba_tpm_unseal(t, kf, obj, NULL, key);
        for (unsigned i = 1;; i++) {
                struct ba_secret auth = { 0 };

                r = ba_pin_get_auth(a->pin_from, kf->description, false, &auth);
                if (r != 0)
                        return r;
                r = ba_tpm_unseal(t, kf, obj, (const TPM2B_AUTH *) auth.data, key);
                ba_secret_free(&auth);
                if (r != BA_EXIT_BAD_PIN || !ba_pin_source_interactive(a->pin_from) || i >= a->pin_tries)
                        return r;
                log_info("%u more PIN attempt%s.", a->pin_tries - i, a->pin_tries - i > 1 ? "s" : "");
        }
}

static int unseal(const struct ba_args *a, struct ba_tpm *t, const struct ba_keyfile *kf, struct ba_secret *key) {
        ESYS_TR obj = ESYS_TR_NONE;
        int r;

        r = ba_tpm_get_srk(t, &kf->parent_name);
        if (r == 0)
                r = ba_tpm_load_sealed(t, kf, &obj);
        if (r == 0)
                r = unseal_with_pin(a, t, kf, obj, key);
        ba_tpm_flush(t, &obj);
        return r;
}

static int add_to_keyring(const struct ba_args *a, const struct ba_keyfile *kf, const struct ba_secret *key) {
        char buf[32];
        key_serial_t id;
        int r;

        r = ba_keyring_add_logon(kf->description, key->data, key->len, a->keyring, &id);
        if (r == -EINVAL)
                return log_fail(BA_EXIT_KEYRING, "Refusing to add %s: logon key descriptions must start with "
                                BA_DESCRIPTION_PREFIX ".", kf->description);
        if (r < 0) {
                log_error_errno(r, "Cannot add the logon key %s to the %s (add_key)", kf->description,
                                ba_keyring_name(a->keyring, buf, sizeof(buf)));
                return BA_EXIT_KEYRING;
        }
        log_info("Loaded %s into the %s (key %d).", kf->description, ba_keyring_name(a->keyring, buf, sizeof(buf)),
                 (int) id);
        return 0;
}

static int lock_after(struct ba_tpm *t, const struct ba_keyfile *kf) {
        unsigned pcr = kf->lock_pcr >= 0 ? (unsigned) kf->lock_pcr : BA_LOCK_PCR_DEFAULT;
        int r;

        r = ba_tpm_pcr_lock(t, pcr);
        if (r != 0)
                return log_fail(r, "The key is loaded, but PCR %u could not be extended: the sealed key stays "
                                "unsealable until reboot.", pcr);
        log_info("Extended PCR %u: %s cannot be unsealed again until the next boot.", pcr, kf->description);
        return 0;
}

/* Checks that need no key come first, so a wrong device is named before the TPM is touched. */
static int check_device_early(const struct ba_args *a, const struct ba_keyfile *kf, struct device_state *d) {
        int r;

        if (!a->check_device)
                return 0;
        r = ba_device_read(a->check_device, d->sb, &d->info);
        if (r != 0)
                return r;
        return ba_device_check_uuid(a->check_device, &d->info, kf);
}

int ba_cmd_load(const struct ba_args *a) {
        struct ba_secret key = { 0 };
        struct device_state dev = { 0 };
        struct ba_keyfile kf;
        struct ba_tpm t;
        int r;

        r = ba_keyfile_load(a->key_path, a->description, &kf);
        if (r == 0)
                r = check_device_early(a, &kf, &dev);
        if (r != 0)
                return r;
        r = ba_tpm_open(&t, ba_tcti_resolve(a->tcti), a->tpm_wait);
        if (r != 0)
                return r;
        r = unseal(a, &t, &kf, &key);
        if (r == 0 && a->check_device)
                r = ba_device_verify_key(a->check_device, dev.sb, &dev.info, key.data, key.len, kf.description);
        if (r == 0)
                r = add_to_keyring(a, &kf, &key);
        ba_secret_free(&key);
        if (r == 0 && a->lock_after)
                r = lock_after(&t, &kf);
        ba_tpm_close(&t);
        return r;
}
