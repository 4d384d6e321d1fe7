/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>

#include "commands.h"
#include "conf-file.h"
#include "exit-codes.h"
#include "log.h"
#include "provision-record.h"

int ba_cmd_unprovision(const struct ba_args *a) {
        char *nv = ba_conf_get(a->config_dir, BA_CONF_PROVISION_NV);
        const struct ba_tpm_target tpm = ba_args_tpm(a);
        int r;

        if (!nv)
                return log_fail(BA_EXIT_FAILURE, "%s/btrfs-auth.conf sets no " BA_CONF_PROVISION_NV ": this is not an "
                                "appliance image that records its first boot.", a->config_dir);
        r = ba_prov_index_delete(&tpm, nv);
        free(nv);
        return r;
}
