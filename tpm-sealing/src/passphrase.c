/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>

#include "crypto.h"
#include "exit-codes.h"
#include "log.h"
#include "passphrase.h"
#include "recovery.h"

static int read_error(int r, const char *description) {
        switch (r) {
        case -ENODATA:
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "No recovery passphrase was entered for %s.", description);
        case -ECANCELED:
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "Entering the recovery passphrase for %s was cancelled or "
                                "timed out.", description);
        case -EFBIG:
                return log_fail(BA_EXIT_BAD_PASSPHRASE, "The recovery passphrase is longer than %d bytes.", BA_PIN_MAX);
        case -ENOENT:
                return log_fail(BA_EXIT_FAILURE, "systemd-ask-password is not available: use --passphrase-from=tty.");
        case -ENXIO:
                return log_fail(BA_EXIT_FAILURE, "There is no terminal to ask for the recovery passphrase on: use "
                                "--passphrase-from=ask-password or stdin.");
        default:
                log_error_errno(r, "Cannot read the recovery passphrase for %s", description);
                return BA_EXIT_FAILURE;
        }
}

static int read_one(const struct ba_ask *ask, const char *what, const char *description, enum ba_ask_mode mode,
                    struct ba_secret *pass) {
        char text[300], id[300];
        struct ba_prompt p = {
                .text = text,
                .id = id,
                .keyname = mode == BA_ASK_NEW ? NULL : BA_ASK_KEYNAME_RECOVERY,
                .accept_cached = mode == BA_ASK_FIRST,
        };
        int r;

        snprintf(text, sizeof(text), "%s passphrase for %s: ", what, description);
        snprintf(id, sizeof(id), "recovery:%s", description);
        r = ba_pin_read(ask, &p, pass);
        return r < 0 ? read_error(r, description) : 0;
}

int ba_passphrase_get(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                      struct ba_secret *pass) {
        struct ba_secret again = { 0 };
        bool same;
        int r;

        r = read_one(ask, mode == BA_ASK_NEW ? "New recovery" : "Recovery", description, mode, pass);
        if (r != 0 || mode != BA_ASK_NEW || !ba_pin_source_interactive(ask->from))
                return r;
        r = read_one(ask, "Repeat the recovery", description, mode, &again);
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

/* One attempt: 0, -EACCES (wrong), or an exit code (> 0) after logging. */
static int try_once(const struct ba_keyfile *kf, const struct ba_ask *ask, enum ba_ask_mode mode,
                    struct ba_secret *key, struct ba_secret *keep_pass) {
        struct ba_secret pass = { 0 };
        int r;

        r = ba_passphrase_get(ask, kf->description, mode, &pass);
        if (r != 0)
                return r;
        r = ba_recovery_open(&kf->recovery, &pass, kf->description, key);
        if (r == 0 && keep_pass)
                *keep_pass = pass;
        else
                ba_secret_free(&pass);
        if (r == -EACCES || r == 0)
                return r;
        log_error_errno(r, "Cannot decrypt the recovery copy of %s (scrypt or AES-GCM failed)", kf->description);
        return BA_EXIT_FAILURE;
}

int ba_passphrase_unlock(const struct ba_keyfile *kf, const struct ba_ask *ask, unsigned tries,
                         struct ba_secret *key, struct ba_secret *keep_pass) {
        if (!kf->has_recovery)
                return log_fail(BA_EXIT_FAILURE, "%s has no recovery copy: it was enrolled without "
                                "--recovery-passphrase.", kf->description);
        if (!ba_pin_source_interactive(ask->from) || tries == 0)
                tries = 1;
        for (unsigned i = 1;; i++) {
                int r = try_once(kf, ask, i == 1 ? BA_ASK_FIRST : BA_ASK_RETRY, key, keep_pass);

                if (r != -EACCES)
                        return r;
                if (i >= tries)
                        return log_fail(BA_EXIT_BAD_PASSPHRASE, "Wrong recovery passphrase for %s, no tries left: "
                                        "the key is not loaded.", kf->description);
                log_error("Wrong recovery passphrase for %s; %u more tr%s.", kf->description, tries - i,
                          tries - i > 1 ? "ies" : "y");
        }
}
