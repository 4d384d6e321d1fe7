/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <syslog.h>

/* Generators run before journald and must not talk to other processes
 * (systemd.generator(7)), so messages go to /dev/kmsg, or to stderr when
 * run by hand from a terminal.  SYSTEMD_LOG_LEVEL and SYSTEMD_LOG_TARGET
 * (console, kmsg) are honoured like systemd's own generators do. */
void log_setup(const char *ident);

/* Logs and returns -|error| (or 0 if error is 0), so callers can write
 * "return log_error_errno(r, ...)".  %m prints strerror(|error|). */
int log_full_errno(int level, int error, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

#define log_error(...)              log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning(...)            log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_info(...)               log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_debug(...)              log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_error_errno(e, ...)     log_full_errno(LOG_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...)   log_full_errno(LOG_WARNING, (e), __VA_ARGS__)

int log_oom(void);
