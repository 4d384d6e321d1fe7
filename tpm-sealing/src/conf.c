/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "conf-file.h"
#include "conf.h"
#include "log.h"

char *ba_conf_get(const char *config_dir, const char *key) {
        char path[4096], *value;
        int r;

        snprintf(path, sizeof(path), "%s/" BA_CONF_FILE, config_dir);
        r = ba_conf_value(path, key, &value);
        if (r < 0)
                log_warning("Cannot read %s (%s): %s is taken as unset.", path, strerror(-r), key);
        return r < 0 ? NULL : value;
}
