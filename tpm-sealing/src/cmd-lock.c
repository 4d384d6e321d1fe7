/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "keyring.h"
#include "pin.h"
#include "util.h"
#include "exit-codes.h"
#include "lock.h"
#include "log.h"
#include "measure.h"
#include "tpm2-pcr.h"

/*
 * Typed PINs and recovery passphrases that systemd-ask-password cached must
 * not outlive the initramfs: the booted system could read them for minutes.
 */
static void forget_cached_answers(void) {
        static const char *const names[] = { BA_ASK_KEYNAME_PIN, BA_ASK_KEYNAME_RECOVERY };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                int r = ba_keyring_forget_cached(names[i]);

                if (r > 0)
                        log_info("Forgot the answers cached as %s in root's user keyring.", names[i]);
                else if (r < 0)
                        log_warning("Cannot forget the answers cached as %s in root's user keyring (%s): they expire "
                                    "on their own within minutes.", names[i], strerror(-r));
        }
}

int ba_cmd_lock(const struct ba_args *a) {
        uint32_t pcrs = a->lock_pcr >= 0 ? UINT32_C(1) << a->lock_pcr : ba_lock_pcrs_of(a->config_dir);
        uint8_t (*m)[BA_DIGEST_SIZE] = NULL;
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        struct ba_tpm t;
        char list[64];
        size_t n = 0;
        int r;
        /* Unreadable measurements still lock, and then fail: this boot must not go on unnoticed. */
        int unreadable = ba_measurements_read(a->state_dir, &m, &n);

        forget_cached_answers();

        r = ba_tpm_open(&t, &tpm);
        if (r == 0) {
                r = ba_lock(&t, pcrs, (const uint8_t (*)[BA_DIGEST_SIZE]) m, n);
                ba_tpm_close(&t);
        }
        free(m);
        if (r != 0)
                return r;
        if (unreadable < 0)
                return log_fail(BA_EXIT_FAILURE, "Locked the TPM without the key measurements: cannot read them in "
                                "%s (%s), so the lock PCR does not say which keys this boot loaded.", a->state_dir,
                                strerror(-unreadable));
        ba_pcr_mask_format(pcrs, list, sizeof(list));
        log_info("Measured %zu loaded key%s into PCR %s and extended it with \"" BA_LOCK_EVENT "\": keys sealed "
                 "with that lock PCR do not unseal again until the next boot.", n, n == 1 ? "" : "s", list);
        return 0;
}
