/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static enum ba_log_level max_level = BA_LOG_INFO;
static FILE *log_stream;

void log_set_max_level(enum ba_log_level level) {
        max_level = level;
}

enum ba_log_level log_get_max_level(void) {
        return max_level;
}

void log_set_stream(FILE *f) {
        log_stream = f;
}

static void log_va(enum ba_log_level level, int err, const char *fmt, va_list ap) {
        static const char *const prefix[] = {
                [BA_LOG_ERROR] = "",
                [BA_LOG_WARNING] = "warning: ",
                [BA_LOG_INFO] = "",
                [BA_LOG_DEBUG] = "debug: ",
        };
        FILE *f = log_stream ?: stderr;
        int saved_errno = errno;

        if (level > max_level)
                return;
        fprintf(f, "btrfs-auth: %s", prefix[level]);
        vfprintf(f, fmt, ap);
        if (err != 0)
                fprintf(f, ": %s", strerror(abs(err)));
        fputc('\n', f);
        fflush(f);
        errno = saved_errno;
}

void log_full(enum ba_log_level level, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        log_va(level, 0, fmt, ap);
        va_end(ap);
}

int log_error_errno(int err, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        log_va(BA_LOG_ERROR, err, fmt, ap);
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
