/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Recovery keys in the form people type: 32 random bytes as 8 groups of 8
 * "modhex" characters (cbdefghijklnrtuv, the alphabet systemd-cryptenroll
 * uses, unambiguous across keyboard layouts), then a ninth group that
 * checks them: its character i is a checksum of group i over GF(16)
 * (docs/key-file-format.md).  Any one mistyped character, and any two
 * swapped characters, of a group change its check character, so a typo is
 * found, and named by group, before any key derivation runs.
 */
#define BA_RECOVERY_KEY_SIZE 32
#define BA_RECOVERY_KEY_GROUPS 9 /* 8 of data, 1 of checks */
#define BA_RECOVERY_KEY_GROUP_LEN 8
#define BA_RECOVERY_KEY_TEXT_SIZE (BA_RECOVERY_KEY_GROUPS * (BA_RECOVERY_KEY_GROUP_LEN + 1)) /* with NUL */

enum ba_recovery_key_problem {
        BA_RK_OK,
        BA_RK_CHARACTER, /* a character outside the alphabet, in group `group` */
        BA_RK_GROUP_LEN, /* group `group` has `count` characters */
        BA_RK_LENGTH,    /* `count` characters in all, not 72 */
        BA_RK_NO_CHECK,  /* 64 characters: the ninth (check) group is missing */
        BA_RK_CHECK,     /* group `group` does not match its check character */
};

struct ba_recovery_key_typo {
        enum ba_recovery_key_problem problem;
        unsigned group; /* 1-based */
        unsigned count;
};

/* The typed form of raw: text gets BA_RECOVERY_KEY_TEXT_SIZE bytes, 9 dash-separated groups. */
void ba_recovery_key_format(const uint8_t raw[BA_RECOVERY_KEY_SIZE], char text[BA_RECOVERY_KEY_TEXT_SIZE]);

/*
 * Reads a typed recovery key of len bytes (upper or lower case; groups
 * separated by dashes and/or white space, or not at all) into raw.
 * Returns 0, or -EINVAL with *typo saying what is wrong (raw then zero).
 */
int ba_recovery_key_parse(const char *text, size_t len, uint8_t raw[BA_RECOVERY_KEY_SIZE],
                          struct ba_recovery_key_typo *typo);

/* One sentence for the person at the keyboard: "the recovery key has a typo in group 3 ...". */
void ba_recovery_key_typo_text(const struct ba_recovery_key_typo *typo, char *buf, size_t len);
