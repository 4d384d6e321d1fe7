/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf-file.h"
#include "exit-codes.h"
#include "initramfs.h"
#include "log.h"

static bool in_path(const char *prog) {
        char buf[4096];
        const char *path = getenv("PATH");

        for (const char *p = path ? path : "/usr/sbin:/usr/bin:/sbin:/bin"; *p;) {
                size_t n = strcspn(p, ":");

                snprintf(buf, sizeof(buf), "%.*s/%s", (int) n, p, prog);
                if (access(buf, X_OK) == 0)
                        return true;
                p += n + (p[n] == ':');
        }
        return false;
}

static int run_shell(const char *cmd) {
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int ba_update_initramfs(const char *config_dir, bool skip) {
        char *cmd;
        int r;

        if (skip) {
                log_info("Not updating the initramfs (--no-update-initramfs): rebuild it before the next boot, "
                         "it carries copies of the key files.");
                return 0;
        }
        cmd = ba_conf_get(config_dir, BA_CONF_UPDATE_INITRAMFS);
        if (!cmd && in_path("update-initramfs"))
                cmd = strdup("update-initramfs -u -k all");
        else if (!cmd && in_path("dracut"))
                cmd = strdup("dracut --force --regenerate-all");
        if (!cmd) {
                log_warning("Found neither update-initramfs nor dracut, and %s/btrfs-auth.conf sets no "
                            BA_CONF_UPDATE_INITRAMFS ": rebuild the initramfs yourself before the next boot.",
                            config_dir);
                return 0;
        }
        log_info("Updating the initramfs so that it carries the new key files: %s", cmd);
        fflush(stdout);
        r = run_shell(cmd);
        if (r != 0) {
                if (r < 0)
                        log_error_errno(r, "Cannot run '%s'", cmd);
                else
                        log_error("'%s' failed (status %d): the key files are written, but the initramfs still has "
                                  "the old ones. Fix it and run it again before rebooting.", cmd, r);
                free(cmd);
                return BA_EXIT_FAILURE;
        }
        free(cmd);
        return 0;
}
