/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "commands.h"
#include "log.h"
#include "tpm2-pcr.h"

int ba_cmd_lock(const struct ba_args *a) {
        struct ba_tpm t;
        int r;

        r = ba_tpm_open(&t, ba_tcti_resolve(a->tcti), a->tpm_wait);
        if (r != 0)
                return r;
        r = ba_tpm_pcr_lock(&t, (unsigned) a->lock_pcr);
        ba_tpm_close(&t);
        if (r == 0)
                log_info("Extended PCR %d with \"" BA_LOCK_EVENT "\": keys sealed with --lock-pcr=%d do not "
                         "unseal again until the next boot.", a->lock_pcr, a->lock_pcr);
        return r;
}
