/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-file.h"
#include "conf.h"
#include "log.h"

/* Seconds for unsealing itself once the TPM is there; generous even for a
 * software TPM behind an emulated machine. */
#define TPM_WORK_SECONDS 30

void conf_read(const char *path, struct ba_conf *conf) {
        const struct {
                const char *key;
                unsigned max;
                unsigned *value;
        } settings[] = {
                { BA_CONF_TPM_WAIT, BA_CONF_TPM_WAIT_MAX, &conf->tpm_wait },
                { BA_CONF_PIN_TIMEOUT, BA_CONF_PIN_TIMEOUT_MAX, &conf->pin_timeout },
        };

        *conf = (struct ba_conf) { .tpm_wait = BA_CONF_TPM_WAIT_DEFAULT };
        for (size_t i = 0; i < sizeof(settings) / sizeof(*settings); i++) {
                char *v;
                int r = ba_conf_value(path, settings[i].key, &v);

                if (r < 0) {
                        log_warning_errno(r, "Failed to read %s, using the defaults: %m", path);
                        *conf = (struct ba_conf) { .tpm_wait = BA_CONF_TPM_WAIT_DEFAULT };
                        return;
                }
                if (!v)
                        continue;
                if (ba_conf_seconds(v, settings[i].max, settings[i].value) == 0)
                        conf->set = true;
                else
                        log_warning("%s: %s must be a number of seconds from 0 to %u, not '%s'; ignoring it.",
                                    path, settings[i].key, settings[i].max, v);
                free(v);
        }
}

unsigned conf_start_timeout(const struct ba_conf *conf) {
        return conf->tpm_wait + TPM_WORK_SECONDS + conf->pin_timeout;
}
