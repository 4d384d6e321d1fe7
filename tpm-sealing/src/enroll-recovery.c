/* SPDX-License-Identifier: GPL-2.0-or-later */
/* enroll's recovery copy: a generated recovery key (the default) or a passphrase. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "enroll-recovery.h"
#include "exit-codes.h"
#include "log.h"
#include "passphrase.h"
#include "recovery-key.h"

int ba_enroll_recovery_mode(enum ba_recovery_mode *mode) {
        if (*mode != BA_RECOVERY_DEFAULT)
                return 0;
        if (isatty(STDOUT_FILENO)) {
                *mode = BA_RECOVERY_KEY;
                return 0;
        }
        return log_fail(BA_EXIT_USAGE, "enroll makes a recovery key by default and shows it once on standard output, "
                        "which is not a terminal here: pass --recovery-key to print it there all the same, "
                        "--recovery-passphrase to choose a passphrase, or --no-recovery. Nothing was done.");
}

static void describe_cost(const struct ba_recovery_record *rec, char *buf, size_t len) {
        snprintf(buf, len, "Argon2id m=%u MiB t=%u p=%u, AES-256-GCM", rec->m_cost / 1024, rec->t_cost, rec->lanes);
}

static int seal(uint8_t kind, const struct ba_recovery_cost *cost, const struct ba_secret *secret,
                const struct ba_secret *key, struct ba_keyfile *kf) {
        struct ba_recovery_cost def;
        char how[96];
        int r;

        if (!cost) {
                ba_recovery_default_cost(kind, &def);
                cost = &def;
        }
        r = ba_recovery_seal(key, secret, kind, cost, kf->description, &kf->recovery);
        if (r == -ENOMEM)
                return log_fail(BA_EXIT_FAILURE, "Not enough memory for Argon2id with %u MiB: choose less with "
                                "--argon2-memory=MIB.", cost->m_cost / 1024);
        if (r < 0) {
                log_error_errno(r, "Cannot encrypt the recovery copy of %s (Argon2id, AES-256-GCM)", kf->description);
                return BA_EXIT_FAILURE;
        }
        kf->has_recovery = true;
        describe_cost(&kf->recovery, how, sizeof(how));
        log_info("Added a recovery copy of %s, opened by the %s (%s).", kf->description,
                 ba_recovery_noun(&kf->recovery), how);
        return 0;
}

static int add_key(const struct ba_recovery_cost *cost, const struct ba_secret *key, struct ba_keyfile *kf,
                   struct ba_secret *shown) {
        int r;

        r = ba_secret_new(shown, BA_RECOVERY_KEY_SIZE);
        if (r == 0)
                r = ba_random_bytes(shown->data, BA_RECOVERY_KEY_SIZE);
        if (r < 0) {
                ba_secret_free(shown);
                log_error_errno(r, "Cannot generate a recovery key");
                return BA_EXIT_FAILURE;
        }
        shown->len = BA_RECOVERY_KEY_SIZE;
        r = seal(BA_RECOVERY_KIND_KEY, cost, shown, key, kf);
        if (r != 0)
                ba_secret_free(shown);
        return r;
}

static int add_passphrase(const struct ba_recovery_cost *cost, const struct ba_ask *ask, const struct ba_secret *key,
                          struct ba_keyfile *kf) {
        struct ba_secret pass = { 0 };
        int r;

        log_warning("A recovery passphrase is weaker against offline guessing than a recovery key: anyone who "
                    "copies %s's key file can try passphrases on other computers, slowed only by Argon2id. "
                    "Prefer --recovery-key unless a person must be able to remember it.", kf->description);
        r = ba_passphrase_get(ask, kf->description, BA_ASK_NEW, &pass);
        if (r == 0)
                r = seal(BA_RECOVERY_KIND_PASSPHRASE, cost, &pass, key, kf);
        ba_secret_free(&pass);
        return r;
}

int ba_enroll_recovery_add(enum ba_recovery_mode mode, const struct ba_recovery_cost *cost, const struct ba_ask *ask,
                           const struct ba_secret *key, struct ba_keyfile *kf, struct ba_secret *shown) {
        switch (mode) {
        case BA_RECOVERY_KEY:
                return add_key(cost, key, kf, shown);
        case BA_RECOVERY_PASSPHRASE:
                return add_passphrase(cost, ask, key, kf);
        case BA_RECOVERY_NONE:
                log_warning("%s gets no recovery copy (--no-recovery): if the TPM refuses it, only a copy of the raw "
                            "key opens the filesystem.", kf->description);
                return 0;
        default:
                return log_fail(BA_EXIT_FAILURE, "Internal error: the recovery mode was not settled.");
        }
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t w = write(fd, p, n);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                p += w;
                n -= (size_t) w;
        }
        return 0;
}

int ba_recovery_key_show(const struct ba_secret *raw, const char *description) {
        struct ba_secret text = { 0 };
        int r;

        r = ba_secret_new(&text, BA_RECOVERY_KEY_TEXT_SIZE + 1);
        if (r < 0) {
                log_error_errno(r, "Cannot allocate memory for the recovery key");
                return BA_EXIT_FAILURE;
        }
        ba_recovery_key_format(raw->data, (char *) text.data);
        text.len = strlen((const char *) text.data);
        text.data[text.len++] = '\n';
        log_info("The recovery key of %s follows, on standard output, this once: write it down or store it offline. "
                 "Where btrfs-auth asks for the recovery key, type it (dashes, spaces and case do not matter).",
                 description);
        fflush(stdout);
        /* Straight from locked memory to the file descriptor: no stdio buffer keeps a copy. */
        r = write_all(STDOUT_FILENO, (const char *) text.data, text.len);
        ba_secret_free(&text);
        if (r < 0) {
                log_error_errno(r, "Cannot print the recovery key of %s; nothing was written", description);
                return BA_EXIT_FAILURE;
        }
        return 0;
}
