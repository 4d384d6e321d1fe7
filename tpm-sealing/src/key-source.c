/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "fileio.h"
#include "key-source.h"
#include "keyfile-io.h"
#include "log.h"
#include "passphrase.h"
#include "pin-prompt.h"
#include "signed-policy.h"
#include "tpm2-unseal.h"

const char *ba_key_source_name(enum ba_key_source s) {
        switch (s) {
        case BA_SOURCE_SEALED:
                return "sealed";
        case BA_SOURCE_PREVIOUS:
                return "previous";
        case BA_SOURCE_RECOVERY:
                return "recovery";
        case BA_SOURCE_KEY_FILE:
                return "key-file";
        case BA_SOURCE_PROVISIONED:
                return "provisioned";
        default:
                return "none";
        }
}

static int unseal_with_pin(const struct ba_unseal_opts *o, struct ba_tpm *t, const struct ba_keyfile *kf, ESYS_TR obj,
                           const struct ba_signed_proof *proof, struct ba_secret *key) {
        int r;

        if (!kf->pin)
                return ba_tpm_unseal(t, kf, obj, NULL, proof, key);
        for (unsigned i = 1;; i++) {
                struct ba_secret auth = { 0 };

                r = ba_pin_get_auth(&o->pin_ask, kf->description, i == 1 ? BA_ASK_FIRST : BA_ASK_RETRY, &auth);
                if (r != 0)
                        return r;
                r = ba_tpm_unseal(t, kf, obj, (const TPM2B_AUTH *) auth.data, proof, key);
                ba_secret_free(&auth);
                if (r != BA_EXIT_BAD_PIN || !ba_pin_source_interactive(o->pin_ask.from) || i >= o->pin_tries)
                        return r;
                log_info("%u more PIN attempt%s.", o->pin_tries - i, o->pin_tries - i > 1 ? "s" : "");
        }
}

/* With the TPM open: the sealed object, the signature for this boot's PCR values if signed, the unseal. */
static int unseal_open(const struct ba_unseal_opts *o, struct ba_tpm *t, const struct ba_keyfile *kf,
                       const struct ba_signed_input *in, struct ba_secret *key) {
        struct ba_pcr_signature sig;
        struct ba_signed_proof proof = { .key = &in->key, .sig = &sig };
        ESYS_TR obj = ESYS_TR_NONE;
        int r;

        r = ba_tpm_get_srk(t, &kf->parent_name);
        if (r == 0)
                r = ba_tpm_load_sealed(t, kf, &obj);
        if (r == 0 && kf->signed_pcrs.pcr_mask)
                r = ba_signed_select(t, kf, in, &sig);
        if (r == 0)
                r = unseal_with_pin(o, t, kf, obj, kf->signed_pcrs.pcr_mask ? &proof : NULL, key);
        ba_tpm_flush(t, &obj);
        explicit_bzero(&sig, sizeof(sig));
        return r;
}

int ba_key_unseal(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, struct ba_secret *key) {
        struct ba_signed_input in = { 0 };
        struct ba_tpm t;
        int r = 0;

        /* A missing or foreign signature or public key is named before the TPM is waited for. */
        if (kf->signed_pcrs.pcr_mask)
                r = ba_signed_input_read(o->pcr_signature, o->pcr_public_key, kf, &in);
        if (r == 0)
                r = ba_tpm_open(&t, &o->tpm);
        if (r == 0) {
                r = unseal_open(o, &t, kf, &in, key);
                ba_tpm_close(&t);
        }
        ba_signed_input_free(&in);
        return r;
}

char *ba_key_path_with(const char *key_path, const char *suffix) {
        char *p = NULL;

        if (asprintf(&p, "%s%s", key_path, suffix) < 0)
                return NULL;
        return p;
}

/* NAME.sealed.previous, kept by "btrfs-auth reseal" until "btrfs-auth confirm". */
static int try_previous(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const char *key_path,
                        struct ba_secret *key) {
        struct ba_keyfile prev;
        char *path = ba_key_path_with(key_path, BA_PREVIOUS_SUFFIX);
        int r;

        if (!path)
                return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        if (access(path, F_OK) < 0) {
                free(path);
                return BA_EXIT_NO_KEYFILE;
        }
        log_info("Trying the previous sealed copy %s, kept until the new one is confirmed.", path);
        r = ba_keyfile_load(path, kf->description, &prev);
        free(path);
        if (r == 0)
                r = ba_key_unseal(o, &prev, key);
        return r;
}

int ba_key_obtain(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const char *previous_of,
                  struct ba_secret *key, enum ba_key_source *source, struct ba_secret *pass) {
        int r;

        *source = BA_SOURCE_NONE;
        r = ba_key_unseal(o, kf, key);
        if (r == 0) {
                *source = BA_SOURCE_SEALED;
                return 0;
        }
        if (previous_of && r != BA_EXIT_NO_TPM && try_previous(o, kf, previous_of, key) == 0) {
                *source = BA_SOURCE_PREVIOUS;
                log_info("Unsealed %s with its previous sealed copy: the new one does not match this boot.",
                         kf->description);
                return 0;
        }
        if (!kf->has_recovery || o->recovery_tries == 0)
                return r;
        log_info("The TPM did not give %s; asking for its %s (%u tr%s).", kf->description,
                 ba_recovery_noun(&kf->recovery), o->recovery_tries, o->recovery_tries > 1 ? "ies" : "y");
        r = ba_passphrase_unlock(kf, &o->pass_ask, o->recovery_tries, key, pass);
        if (r == 0) {
                *source = BA_SOURCE_RECOVERY;
                log_info("Unlocked %s with the %s. If the boot change was planned, bind the key to it: "
                         "btrfs-auth reseal %s", kf->description, ba_recovery_noun(&kf->recovery),
                         kf->description + strlen(BA_DESCRIPTION_PREFIX));
        }
        return r;
}
