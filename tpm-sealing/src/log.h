/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

enum ba_log_level {
        BA_LOG_ERROR = 0,
        BA_LOG_WARNING = 1,
        BA_LOG_INFO = 2,
        BA_LOG_DEBUG = 3,
};

void log_set_max_level(enum ba_log_level level);
enum ba_log_level log_get_max_level(void);
/* Tests capture messages by pointing the log at a memory stream. */
void log_set_stream(FILE *f);

void log_full(enum ba_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...)   log_full(BA_LOG_ERROR, __VA_ARGS__)
#define log_warning(...) log_full(BA_LOG_WARNING, __VA_ARGS__)
#define log_info(...)    log_full(BA_LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_full(BA_LOG_DEBUG, __VA_ARGS__)

/* Logs "<message>: <strerror(err)>" and returns -|err|, in the style of systemd's log_error_errno(). */
int log_error_errno(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs an error and returns the given exit code, so callers can write "return log_fail(BA_EXIT_X, ...)". */
int log_fail(int exit_code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
