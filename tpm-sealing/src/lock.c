/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-codes.h"
#include "keyfile-io.h"
#include "keyfile.h"
#include "lock.h"
#include "log.h"
#include "tpm2-pcr.h"

int ba_lock(struct ba_tpm *t, uint32_t pcrs, const uint8_t (*m)[BA_DIGEST_SIZE], size_t n) {
        for (unsigned pcr = 0; pcr < BA_PCR_COUNT; pcr++) {
                int r = 0;

                if (!(pcrs & (UINT32_C(1) << pcr)))
                        continue;
                for (size_t i = 0; r == 0 && i < n; i++)
                        r = ba_tpm_pcr_event(t, pcr, m[i], BA_DIGEST_SIZE);
                if (r == 0)
                        r = ba_tpm_pcr_lock(t, pcr);
                if (r != 0)
                        return r;
        }
        return 0;
}

static bool is_key_file(const struct dirent *d) {
        size_t n = strlen(d->d_name), s = strlen(BA_KEYFILE_SUFFIX);

        return d->d_name[0] != '.' && n > s && strcmp(d->d_name + n - s, BA_KEYFILE_SUFFIX) == 0;
}

uint32_t ba_lock_pcrs_of(const char *config_dir) {
        DIR *dir = opendir(config_dir);
        struct dirent *d;
        uint32_t pcrs = 0;

        while (dir && (d = readdir(dir))) {
                struct ba_keyfile kf;
                char *path = NULL;

                if (!is_key_file(d) || asprintf(&path, "%s/%s", config_dir, d->d_name) < 0)
                        continue;
                /* An unreadable file says so itself; its key cannot have been loaded either. */
                if (ba_keyfile_load(path, NULL, &kf) == 0 && kf.lock_pcr >= 0)
                        pcrs |= UINT32_C(1) << kf.lock_pcr;
                free(path);
        }
        if (dir)
                closedir(dir);
        return pcrs ? pcrs : UINT32_C(1) << BA_LOCK_PCR_DEFAULT;
}
