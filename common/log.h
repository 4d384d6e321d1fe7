/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

/*
 * One log for btrfs-auth and its generator.  Messages go to stderr as
 * "<ident>: [warning: |debug: ]<message>"; the tool's ident is
 * "btrfs-auth".  A generator calls log_setup_generator() first, which may
 * send them to /dev/kmsg instead.  The levels are syslog's priorities.
 */
enum ba_log_level {
        BA_LOG_ERROR = 3,   /* LOG_ERR */
        BA_LOG_WARNING = 4, /* LOG_WARNING */
        BA_LOG_INFO = 6,    /* LOG_INFO */
        BA_LOG_DEBUG = 7,   /* LOG_DEBUG */
};

void log_set_max_level(enum ba_log_level level);
enum ba_log_level log_get_max_level(void);
/* Tests capture messages by pointing the log at a memory stream (NULL: stderr again). */
void log_set_stream(FILE *f);

/*
 * For a systemd generator, which runs before journald and must not talk to
 * other processes (systemd.generator(7)): messages carry ident, go to
 * /dev/kmsg, or to stderr when run by hand from a terminal, and
 * SYSTEMD_LOG_LEVEL and SYSTEMD_LOG_TARGET (console, kmsg) are honoured as
 * systemd's own generators do.
 */
void log_setup_generator(const char *ident);

/*
 * Logs "<message>" and, if err is not 0, ": <strerror(|err|)>"; returns
 * -|err|, in the style of systemd's log_error_errno(), so callers can
 * write "return log_error_errno(r, ...)".
 */
int log_full_errno(enum ba_log_level level, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define log_full(level, ...)      ((void) log_full_errno((level), 0, __VA_ARGS__))
#define log_error(...)            log_full(BA_LOG_ERROR, __VA_ARGS__)
#define log_warning(...)          log_full(BA_LOG_WARNING, __VA_ARGS__)
#define log_info(...)             log_full(BA_LOG_INFO, __VA_ARGS__)
#define log_debug(...)            log_full(BA_LOG_DEBUG, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(BA_LOG_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(BA_LOG_WARNING, (e), __VA_ARGS__)

/* Logs an error and returns the given exit code, so callers can write "return log_fail(BA_EXIT_X, ...)". */
int log_fail(int exit_code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "Out of memory." as an error; returns -ENOMEM. */
int log_oom(void);
