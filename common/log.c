/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "btrfs-auth";
static enum ba_log_level max_level = BA_LOG_INFO;
static FILE *log_stream;
static int kmsg_fd = -1;

void log_set_max_level(enum ba_log_level level) {
        max_level = level;
}

enum ba_log_level log_get_max_level(void) {
        return max_level;
}

void log_set_stream(FILE *f) {
        log_stream = f;
}

/* A syslog level name or digit, as SYSTEMD_LOG_LEVEL has it; -1 otherwise. */
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

void log_setup_generator(const char *ident) {
        const char *lvl = secure_getenv("SYSTEMD_LOG_LEVEL");
        int l = lvl ? parse_level(lvl) : -1;

        log_ident = ident;
        if (l >= 0)
                max_level = (enum ba_log_level) l;
        if (want_kmsg() && kmsg_fd < 0)
                kmsg_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

/* One kernel log record "<prio>ident[pid]: message"; false if it could not be written. */
static bool to_kmsg(enum ba_log_level level, int err, const char *fmt, va_list ap) {
        char buf[2048];
        int n, m;

        n = snprintf(buf, sizeof(buf), "<%d>%s[%d]: ", LOG_DAEMON | (int) level, log_ident, (int) getpid());
        if (n < 0 || (size_t) n >= sizeof(buf))
                return false;
        m = vsnprintf(buf + n, sizeof(buf) - (size_t) n, fmt, ap);
        if (m < 0)
                return false;
        n = (size_t) (n + m) < sizeof(buf) ? n + m : (int) sizeof(buf) - 1;
        if (err != 0) {
                m = snprintf(buf + n, sizeof(buf) - (size_t) n, ": %s", strerror(abs(err)));
                n = m >= 0 && (size_t) (n + m) < sizeof(buf) ? n + m : (int) sizeof(buf) - 1;
        }
        return write(kmsg_fd, buf, (size_t) n) >= 0;
}

static void to_stream(enum ba_log_level level, int err, const char *fmt, va_list ap) {
        FILE *f = log_stream ?: stderr;
        const char *prefix = level == BA_LOG_WARNING ? "warning: " : level == BA_LOG_DEBUG ? "debug: " : "";

        fprintf(f, "%s: %s", log_ident, prefix);
        vfprintf(f, fmt, ap);
        if (err != 0)
                fprintf(f, ": %s", strerror(abs(err)));
        fputc('\n', f);
        fflush(f);
}

static void log_va(enum ba_log_level level, int err, const char *fmt, va_list ap) {
        int saved_errno = errno;
        bool done = false;

        if (level > max_level)
                return;
        if (kmsg_fd >= 0) {
                va_list aq;

                va_copy(aq, ap);
                done = to_kmsg(level, err, fmt, aq);
                va_end(aq);
        }
        /* A message lost in the kernel buffer is worse than one on stderr. */
        if (!done)
                to_stream(level, err, fmt, ap);
        errno = saved_errno;
}

int log_full_errno(enum ba_log_level level, int err, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        log_va(level, err, fmt, ap);
        va_end(ap);
        return -abs(err);
}

int log_fail(int exit_code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        log_va(BA_LOG_ERROR, 0, fmt, ap);
        va_end(ap);
        return exit_code;
}

int log_oom(void) {
        log_error("Out of memory.");
        return -ENOMEM;
}
