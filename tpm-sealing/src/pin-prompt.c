/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>

#include "crypto.h"
#include "exit-codes.h"
#include "log.h"
#include "pin-prompt.h"

static int pin_error(int r) {
        switch (r) {
        case -ENODATA:
                return log_fail(BA_EXIT_BAD_PIN, "No PIN was entered.");
        case -ECANCELED:
                return log_fail(BA_EXIT_BAD_PIN, "PIN entry was cancelled or timed out.");
        case -EFBIG:
                return log_fail(BA_EXIT_BAD_PIN, "The PIN is longer than %d bytes.", BA_PIN_MAX);
        case -ENOENT:
                return log_fail(BA_EXIT_FAILURE, "systemd-ask-password is not available: use --pin-from=tty.");
        case -ENXIO:
                return log_fail(BA_EXIT_FAILURE, "There is no terminal to ask for the PIN on: use "
                                "--pin-from=ask-password or stdin.");
        default:
                log_error_errno(r, "Cannot read the PIN");
                return BA_EXIT_FAILURE;
        }
}

static int read_confirmed(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                          struct ba_secret *pin) {
        struct ba_secret again = { 0 };
        char text[300];
        struct ba_prompt p = {
                .text = text,
                .id = description,
                .keyname = mode == BA_ASK_NEW ? NULL : BA_ASK_KEYNAME_PIN,
                .accept_cached = mode == BA_ASK_FIRST,
        };
        int r;

        snprintf(text, sizeof(text), "%s for %s: ", mode == BA_ASK_NEW ? "New PIN" : "PIN", description);
        r = ba_pin_read(ask, &p, pin);
        if (r < 0)
                return pin_error(r);
        if (mode != BA_ASK_NEW || !ba_pin_source_interactive(ask->from))
                return 0;
        snprintf(text, sizeof(text), "Repeat the PIN for %s: ", description);
        r = ba_pin_read(ask, &p, &again);
        if (r < 0) {
                ba_secret_free(pin);
                return pin_error(r);
        }
        r = pin->len == again.len && ba_digest_equal(pin->data, again.data, pin->len);
        ba_secret_free(&again);
        if (!r) {
                ba_secret_free(pin);
                return log_fail(BA_EXIT_BAD_PIN, "The two PINs differ.");
        }
        return 0;
}

int ba_pin_get_auth(const struct ba_ask *ask, const char *description, enum ba_ask_mode mode,
                    struct ba_secret *auth) {
        struct ba_secret pin = { 0 };
        int r;

        r = read_confirmed(ask, description, mode, &pin);
        if (r != 0)
                return r;
        r = ba_secret_new(auth, sizeof(TPM2B_AUTH));
        if (r == 0) {
                r = ba_pin_auth(&pin, (TPM2B_AUTH *) auth->data);
                if (r < 0)
                        ba_secret_free(auth);
        }
        ba_secret_free(&pin);
        if (r < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot derive the TPM authorization from the PIN.");
        return 0;
}
