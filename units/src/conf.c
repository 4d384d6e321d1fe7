/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "log.h"

/* Seconds for unsealing itself once the TPM is there; generous even for a
 * software TPM behind an emulated machine. */
#define TPM_WORK_SECONDS 30

static char *strip(char *s) {
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                *--e = '\0';
        return s;
}

/* Removes one pair of matching surrounding quotes, as EnvironmentFile= does. */
static char *unquote(char *s) {
        size_t len = strlen(s);

        if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
                s[len - 1] = '\0';
                return s + 1;
        }
        return s;
}

static bool parse_seconds(const char *s, unsigned max, unsigned *ret) {
        unsigned long v;
        char *end;

        if (*s < '0' || *s > '9')
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                return false;
        *ret = (unsigned) v;
        return true;
}

static void one_line(char *line, const char *path, unsigned n, struct ba_conf *conf) {
        const struct {
                const char *key;
                unsigned max;
                unsigned *value;
        } settings[] = {
                { "BTRFS_AUTH_TPM_WAIT", TPM_WAIT_MAX, &conf->tpm_wait },
                { "BTRFS_AUTH_PIN_TIMEOUT", PIN_TIMEOUT_MAX, &conf->pin_timeout },
        };
        char *s = strip(line), *eq, *key;

        if (*s == '\0' || *s == '#' || *s == ';' || !(eq = strchr(s, '=')))
                return;
        *eq = '\0';
        key = strip(s);

        for (size_t i = 0; i < sizeof(settings) / sizeof(*settings); i++) {
                if (strcmp(key, settings[i].key) != 0)
                        continue;
                if (parse_seconds(unquote(strip(eq + 1)), settings[i].max, settings[i].value))
                        conf->set = true;
                else
                        log_warning("%s:%u: %s must be a number of seconds from 0 to %u; ignoring it.",
                                    path, n, key, settings[i].max);
        }
}

void conf_read(const char *path, struct ba_conf *conf) {
        size_t cap = 0;
        char *line = NULL;
        unsigned n = 0;
        FILE *f;

        *conf = (struct ba_conf) { .tpm_wait = TPM_WAIT_DEFAULT };

        f = fopen(path, "re");
        if (!f) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "Failed to open %s, using the defaults: %m", path);
                return;
        }

        /* Later lines win, as in an EnvironmentFile. */
        while (getline(&line, &cap, f) >= 0)
                one_line(line, path, ++n, conf);

        free(line);
        fclose(f);
}

unsigned conf_start_timeout(const struct ba_conf *conf) {
        return conf->tpm_wait + TPM_WORK_SECONDS + conf->pin_timeout;
}
