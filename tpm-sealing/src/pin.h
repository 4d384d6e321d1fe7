/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include <tss2/tss2_tpm2_types.h>

#include "secure.h"

#define BA_PIN_MAX 256

enum ba_pin_source {
        BA_PIN_FROM_AUTO,         /* tty when stdin is a terminal, else systemd-ask-password */
        BA_PIN_FROM_TTY,
        BA_PIN_FROM_STDIN,        /* one line; for scripts and tests */
        BA_PIN_FROM_ASK_PASSWORD, /* systemd-ask-password: plymouth, console agents in the initramfs */
};

int ba_pin_source_parse(const char *s, enum ba_pin_source *ret);
bool ba_pin_source_interactive(enum ba_pin_source src);

/* Reads one PIN into *pin (allocated here, BA_PIN_MAX bytes); -ENODATA when it is empty. */
int ba_pin_read(enum ba_pin_source src, const char *prompt, const char *id, struct ba_secret *pin);

/* authValue = SHA-256(PIN) with trailing zero bytes removed, as the TPM strips them itself. */
int ba_pin_auth(const struct ba_secret *pin, TPM2B_AUTH *auth);
