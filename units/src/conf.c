/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "conf-file.h"
#include "conf.h"

/* Seconds for unsealing itself once the TPM is there; generous even for a
 * software TPM behind an emulated machine. */
#define TPM_WORK_SECONDS 30

void conf_read(const char *config_dir, struct ba_conf *conf) {
        *conf = (struct ba_conf) { .tpm_wait = BA_CONF_TPM_WAIT_DEFAULT };
        if (ba_conf_get_seconds(config_dir, BA_CONF_TPM_WAIT, BA_CONF_TPM_WAIT_MAX, &conf->tpm_wait))
                conf->set = true;
        if (ba_conf_get_seconds(config_dir, BA_CONF_PIN_TIMEOUT, BA_CONF_PIN_TIMEOUT_MAX, &conf->pin_timeout))
                conf->set = true;
}

unsigned conf_start_timeout(const struct ba_conf *conf) {
        return conf->tpm_wait + TPM_WORK_SECONDS + conf->pin_timeout;
}
