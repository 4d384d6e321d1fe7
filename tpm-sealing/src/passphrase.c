/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "exit-codes.h"
#include "log.h"
#include "passphrase.h"
#include "recovery-key.h"
#include "recovery.h"

const char *ba_recovery_noun(const struct ba_recovery_record *rec) {
        return rec->kind == BA_RECOVERY_KIND_KEY ? "recovery key" : "recovery passphrase";
}

static int read_error(int r, const char *noun, const char *description) {
        switch (r) {
        case -ENODATA:
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "No %s was entered for %s.", noun, description);
        case -ECANCELED:
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "Entering the %s for %s was cancelled or timed out.", noun,
                                description);
        case -EFBIG:
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "The %s is longer than %d bytes.", noun, BA_PIN_MAX);
        case -ENOENT:
                return log_fail(BA_EXIT_FAILURE, "systemd-ask-password is not available: use --passphrase-from=tty.");
        case -ENXIO:
                return log_fail(BA_EXIT_FAILURE, "There is no terminal to ask for the %s on: use "
                                "--passphrase-from=ask-password or stdin.", noun);
        default:
                log_error_errno(r, "Cannot read the %s for %s", noun, description);
                return BA_EXIT_FAILURE;
        }
}

/* what: "Recovery key", "New recovery passphrase", ...; noun for messages. */
static int read_one(const struct ba_ask *ask, const char *what, const char *noun, const char *description,
                    enum ba_ask_mode mode, struct ba_secret *pass) {
        char text[300], id[300];
        struct ba_prompt p = {
                .text = text,
                .id = id,
                .keyname = mode == BA_ASK_NEW ? NULL : BA_ASK_KEYNAME_RECOVERY,
                .accept_cached = mode == BA_ASK_FIRST,
        };
        int r;

        snprintf(text, sizeof(text), "%s for %s: ", what, description);
        snprintf(id, sizeof(id), "recovery:%s", description);
        r = ba_pin_read(ask, &p, pass);
        return r < 0 ? read_error(r, noun, description) : 0;
}

int ba_passphrase_get(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                      struct ba_secret *pass) {
        const char *noun = "recovery passphrase";
        struct ba_secret again = { 0 };
        bool same;
        int r;

        r = read_one(ask, mode == BA_ASK_NEW ? "New recovery passphrase" : "Recovery passphrase", noun, description,
                     mode, pass);
        if (r != 0 || mode != BA_ASK_NEW || !ba_pin_source_interactive(ask->from))
                return r;
        r = read_one(ask, "Repeat the recovery passphrase", noun, description, mode, &again);
        if (r != 0) {
                ba_secret_free(pass);
                return r;
        }
        same = pass->len == again.len && ba_digest_equal(pass->data, again.data, pass->len);
        ba_secret_free(&again);
        if (!same) {
                ba_secret_free(pass);
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "The two recovery passphrases differ; nothing was changed.");
        }
        return 0;
}

int ba_recovery_input(const struct ba_recovery_record *rec, const struct ba_secret *typed, const char *description,
                      struct ba_secret *input) {
        struct ba_recovery_key_typo typo;
        char why[200];
        int r;

        r = ba_secret_new(input, rec->kind == BA_RECOVERY_KIND_KEY ? BA_RECOVERY_KEY_SIZE : typed->len + 1);
        if (r < 0) {
                log_error_errno(r, "Cannot allocate memory for the %s", ba_recovery_noun(rec));
                return BA_EXIT_FAILURE;
        }
        if (rec->kind != BA_RECOVERY_KIND_KEY) {
                memcpy(input->data, typed->data, typed->len);
                input->len = typed->len;
                return 0;
        }
        if (ba_recovery_key_parse((const char *) typed->data, typed->len, input->data, &typo) < 0) {
                ba_secret_free(input);
                ba_recovery_key_typo_text(&typo, why, sizeof(why));
                return log_fail(BA_EXIT_RECOVERY_KEY_TYPO, "For %s, %s; nothing was tried with it.", description,
                                why);
        }
        input->len = BA_RECOVERY_KEY_SIZE;
        return 0;
}

/* One attempt: 0, -EACCES (wrong), or an exit code (> 0) after logging. */
static int try_once(const struct ba_keyfile *kf, const struct ba_ask *ask, enum ba_ask_mode mode,
                    struct ba_secret *key, struct ba_secret *keep) {
        const struct ba_recovery_record *rec = &kf->recovery;
        bool is_key = rec->kind == BA_RECOVERY_KIND_KEY;
        struct ba_secret typed = { 0 }, input = { 0 };
        int r;

        r = read_one(ask, is_key ? "Recovery key" : "Recovery passphrase", ba_recovery_noun(rec), kf->description,
                     mode, &typed);
        if (r != 0)
                return r;
        r = ba_recovery_input(rec, &typed, kf->description, &input);
        ba_secret_free(&typed);
        if (r != 0)
                return r;
        r = ba_recovery_open(rec, &input, kf->description, key);
        if (r == 0 && keep)
                *keep = input;
        else
                ba_secret_free(&input);
        if (r == -EACCES || r == 0)
                return r;
        log_error_errno(r, "Cannot decrypt the recovery copy of %s (%s or AES-GCM failed)", kf->description,
                        rec->kdf == BA_RECOVERY_KDF_SCRYPT ? "scrypt" : "Argon2id");
        return BA_EXIT_FAILURE;
}

int ba_passphrase_unlock(const struct ba_keyfile *kf, const struct ba_ask *ask, unsigned tries,
                         struct ba_secret *key, struct ba_secret *keep) {
        const char *noun = ba_recovery_noun(&kf->recovery);

        if (!kf->has_recovery)
                return log_fail(BA_EXIT_FAILURE, "%s has no recovery copy: it was enrolled with --no-recovery or "
                                "its recovery copy was wiped.", kf->description);
        if (!ba_pin_source_interactive(ask->from) || tries == 0)
                tries = 1;
        for (unsigned i = 1;; i++) {
                int r = try_once(kf, ask, i == 1 ? BA_ASK_FIRST : BA_ASK_RETRY, key, keep);

                if (r != -EACCES && r != BA_EXIT_RECOVERY_KEY_TYPO)
                        return r;
                if (i >= tries) {
                        if (r == BA_EXIT_RECOVERY_KEY_TYPO)
                                return log_fail(r, "No tries left for the recovery key of %s: the key is not "
                                                "loaded.", kf->description);
                        return log_fail(BA_EXIT_BAD_PASSPHRASE, "Wrong %s for %s, no tries left: the key is not "
                                        "loaded.", noun, kf->description);
                }
                if (r == -EACCES)
                        log_error("Wrong %s for %s; %u more tr%s.", noun, kf->description, tries - i,
                                  tries - i > 1 ? "ies" : "y");
                else
                        log_error("%u more tr%s.", tries - i, tries - i > 1 ? "ies" : "y");
        }
}
