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

/* How PINs or passphrases are asked for. */
struct ba_ask {
        enum ba_pin_source from;
        unsigned timeout; /* systemd-ask-password --timeout= (BTRFS_AUTH_PIN_TIMEOUT); 0: its own default */
};

/*
 * systemd-ask-password caches answers in root's user keyring under these
 * names for a few minutes, as systemd-cryptsetup does, so one typed
 * passphrase can open several keys; "btrfs-auth lock" forgets them before
 * the initramfs ends.
 */
#define BA_ASK_KEYNAME_PIN "btrfs-auth-pin"
#define BA_ASK_KEYNAME_RECOVERY "btrfs-auth-recovery"

enum ba_ask_mode {
        BA_ASK_NEW,   /* a new secret: asked twice when interactive, never cached */
        BA_ASK_FIRST, /* the first try: a cached answer may do */
        BA_ASK_RETRY, /* after a wrong one: ask the person */
};

/* One question: its text, its systemd-ask-password --id, and the cache it uses (NULL: none). */
struct ba_prompt {
        const char *text;
        const char *id;
        const char *keyname;
        bool accept_cached;
};

/* Reads one PIN into *pin (allocated here, BA_PIN_MAX bytes); -ENODATA when it is empty. */
int ba_pin_read(const struct ba_ask *ask, const struct ba_prompt *p, struct ba_secret *pin);

/* authValue = SHA-256(PIN) with trailing zero bytes removed, as the TPM strips them itself. */
int ba_pin_auth(const struct ba_secret *pin, TPM2B_AUTH *auth);
