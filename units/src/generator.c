/* SPDX-License-Identifier: GPL-2.0-or-later */
/* btrfs-auth-generator: makes every mount that names auth_key=btrfs:NAME
 * require and follow btrfs-auth-load@NAME.service, and the TPM lock
 * follow every load.  See btrfs-auth-generator(8) and docs/boot.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "plan.h"
#include "sources.h"
#include "write.h"

/* Returns 1/0 for a boolean string, -1 for anything else. */
static int parse_bool(const char *s) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        }
        return -1;
}

/* As systemd's in_initrd(): $SYSTEMD_IN_INITRD (which the manager sets
 * for generators), else whether /etc/initrd-release exists. */
static bool in_initrd(void) {
        const char *e = secure_getenv("SYSTEMD_IN_INITRD");

        if (e) {
                int b = parse_bool(e);

                if (b >= 0)
                        return b;
                log_warning("Cannot parse $SYSTEMD_IN_INITRD=\"%s\", checking /etc/initrd-release instead.", e);
        }
        return access("/etc/initrd-release", F_OK) >= 0;
}

static const char *env_or(const char *name, const char *fallback) {
        const char *e = secure_getenv(name);

        return e && *e ? e : fallback;
}

static int gather(struct plan *p, const char *etcdir, const char *keydir) {
        int r;

        r = gather_fstab(p, env_or("SYSTEMD_FSTAB", "/etc/fstab"), false);
        if (r < 0 || !p->in_initrd)
                return r;

        r = gather_cmdline(p, etcdir);
        if (r >= 0)
                r = gather_fstab(p, env_or("SYSTEMD_SYSROOT_FSTAB", "/sysroot/etc/fstab"), true);
        if (r >= 0)
                r = gather_keydir(p, keydir);
        return r;
}

static int run(const char *dest) {
        struct plan p = { .in_initrd = in_initrd() };
        const char *etcdir = env_or("BTRFS_AUTH_SYSCONFDIR", "/etc");
        char *keydir = NULL;
        int r;

        if (asprintf(&keydir, "%s/btrfs-auth", etcdir) < 0)
                return log_oom();

        log_debug("Running in the %s.", p.in_initrd ? "initrd" : "main system");
        r = gather(&p, etcdir, keydir);
        if (r < 0)
                log_oom();
        else {
                conf_read(keydir, &p.conf);
                r = write_plan(&p, dest);
        }

        plan_done(&p);
        free(keydir);
        return r;
}

int main(int argc, char *argv[]) {
        log_setup_generator("btrfs-auth-generator");

        if (argc != 4) {
                log_error("Expected the three generator output directories as arguments, got %d; "
                          "this program is run by systemd, see systemd.generator(7).", argc - 1);
                return EXIT_FAILURE;
        }

        /* Failing here never fails the boot by itself: a mount that lacks
         * its drop-in still cannot mount without its key. */
        return run(argv[1]) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
