/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Unit names built exactly like systemd 252 builds them, so the drop-ins
 * the generator writes attach to the units systemd itself creates.  All
 * functions return 0 or a negative errno and allocate *ret. */

/* As "systemd-escape STRING": '/' becomes '-', a leading '.' and every
 * byte outside [A-Za-z0-9:_.] becomes \xNN. */
int escape_unit_string(const char *s, char **ret);

/* As "systemd-escape --path PATH" for an absolute path: duplicate slashes
 * and "." components are dropped, ".." is refused (-EINVAL), "/" is "-". */
int escape_unit_path(const char *path, char **ret);

/* "/sysroot" + ".mount" -> "sysroot.mount"; -ENAMETOOLONG past systemd's
 * 255-character limit on unit names. */
int unit_name_from_path(const char *path, const char *suffix, char **ret);

/* "btrfs-auth-load@" + escaped instance + ".service"; an empty instance
 * is -EINVAL. */
int unit_name_instance(const char *prefix, const char *instance, const char *suffix, char **ret);
