/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "btrfs-auth-generator";
static int log_max_level = LOG_INFO;
static int kmsg_fd = -1;

static int parse_level(const char *s) {
        static const char *const names[] = {
                "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
        };

        for (int i = 0; i < 8; i++)
                if (strcasecmp(s, names[i]) == 0)
                        return i;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -1;
}

static bool want_kmsg(void) {
        const char *t = secure_getenv("SYSTEMD_LOG_TARGET");

        if (t && strcmp(t, "console") == 0)
                return false;
        if (t && strcmp(t, "kmsg") == 0)
                return true;
        /* "auto": someone debugging by hand wants to see the messages. */
        return !isatty(STDERR_FILENO);
}

void log_setup(const char *ident) {
        const char *lvl = secure_getenv("SYSTEMD_LOG_LEVEL");

        log_ident = ident;
        if (lvl) {
                int l = parse_level(lvl);

                if (l >= 0)
                        log_max_level = l;
        }
        if (want_kmsg())
                kmsg_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

static void emit(int level, const char *msg) {
        char buf[2048];
        int n;

        if (kmsg_fd >= 0) {
                n = snprintf(buf, sizeof(buf), "<%d>%s[%d]: %s\n",
                             LOG_DAEMON | level, log_ident, (int) getpid(), msg);
                if (n > 0 && write(kmsg_fd, buf, (size_t) n < sizeof(buf) ? (size_t) n : sizeof(buf) - 1) >= 0)
                        return;
                /* Fall through: a message lost in the kernel buffer is worse
                 * than one on stderr. */
        }
        fprintf(stderr, "%s: %s\n", log_ident, msg);
}

int log_full_errno(int level, int error, const char *format, ...) {
        int saved = errno;
        char msg[1024];
        va_list ap;

        if (error < 0)
                error = -error;

        if (level <= log_max_level) {
                errno = error;
                va_start(ap, format);
                vsnprintf(msg, sizeof(msg), format, ap);
                va_end(ap);
                emit(level, msg);
        }

        errno = saved;
        return -error;
}

int log_oom(void) {
        return log_error_errno(ENOMEM, "Out of memory.");
}
