/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "recovery-key.h"

#define MODHEX "cbdefghijklnrtuv"
#define DATA_GROUPS (BA_RECOVERY_KEY_GROUPS - 1)
#define TOTAL_CHARS (BA_RECOVERY_KEY_GROUPS * BA_RECOVERY_KEY_GROUP_LEN)

/* Multiplication in GF(16) = GF(2)[x] / (x^4 + x + 1). */
static uint8_t gf16_mul(uint8_t a, uint8_t b) {
        uint8_t p = 0;

        for (int i = 0; i < 4; i++) {
                if (b & 1)
                        p ^= a;
                b >>= 1;
                a <<= 1;
                if (a & 0x10)
                        a ^= 0x13;
        }
        return p & 0xf;
}

/* The check character of one group: sum of w_j * n_j, with the weights x^0..x^7 (all distinct, nonzero). */
static uint8_t group_check(const uint8_t nibbles[BA_RECOVERY_KEY_GROUP_LEN]) {
        uint8_t sum = 0, w = 1;

        for (unsigned j = 0; j < BA_RECOVERY_KEY_GROUP_LEN; j++) {
                sum ^= gf16_mul(w, nibbles[j]);
                w = gf16_mul(w, 2);
        }
        return sum;
}

static void to_nibbles(const uint8_t raw[BA_RECOVERY_KEY_SIZE], uint8_t n[TOTAL_CHARS]) {
        for (unsigned i = 0; i < BA_RECOVERY_KEY_SIZE; i++) {
                n[2 * i] = raw[i] >> 4;
                n[2 * i + 1] = raw[i] & 0xf;
        }
        for (unsigned g = 0; g < DATA_GROUPS; g++)
                n[DATA_GROUPS * BA_RECOVERY_KEY_GROUP_LEN + g] = group_check(n + g * BA_RECOVERY_KEY_GROUP_LEN);
}

void ba_recovery_key_format(const uint8_t raw[BA_RECOVERY_KEY_SIZE], char text[BA_RECOVERY_KEY_TEXT_SIZE]) {
        uint8_t n[TOTAL_CHARS];
        char *q = text;

        to_nibbles(raw, n);
        for (unsigned i = 0; i < TOTAL_CHARS; i++) {
                if (i > 0 && i % BA_RECOVERY_KEY_GROUP_LEN == 0)
                        *q++ = '-';
                *q++ = MODHEX[n[i]];
        }
        *q = '\0';
        explicit_bzero(n, sizeof(n));
}

static bool is_separator(char c) {
        return c == '-' || isspace((unsigned char) c);
}

static int modhex_value(char c) {
        const char *p = c ? strchr(MODHEX, tolower((unsigned char) c)) : NULL;

        return p ? (int) (p - MODHEX) : -1;
}

static int fail(struct ba_recovery_key_typo *typo, enum ba_recovery_key_problem problem, unsigned group,
                unsigned count) {
        *typo = (struct ba_recovery_key_typo) { .problem = problem, .group = group, .count = count };
        return -EINVAL;
}

/*
 * Collects the characters into n[] and notes where the typed groups end.
 * Returns 0 or -EINVAL (a character outside the alphabet).
 */
static int collect(const char *text, size_t len, uint8_t n[TOTAL_CHARS], unsigned *count, unsigned group_len[],
                   unsigned *groups, struct ba_recovery_key_typo *typo) {
        bool in_group = false;

        *count = *groups = 0;
        for (size_t i = 0; i < len; i++) {
                int v;

                if (is_separator(text[i])) {
                        in_group = false;
                        continue;
                }
                if (!in_group && *groups < BA_RECOVERY_KEY_GROUPS + 1)
                        group_len[(*groups)++] = 0;
                in_group = true;
                v = modhex_value(text[i]);
                if (v < 0)
                        return fail(typo, BA_RK_CHARACTER, *groups > BA_RECOVERY_KEY_GROUPS ? 0 : *groups, 0);
                if (*count < TOTAL_CHARS)
                        n[*count] = (uint8_t) v;
                (*count)++;
                group_len[*groups - 1]++;
        }
        return 0;
}

/* The right number of characters in all is enough (spaces inside a group do no harm); else name a group. */
static int check_shape(unsigned count, const unsigned group_len[], unsigned groups,
                       struct ba_recovery_key_typo *typo) {
        if (count == TOTAL_CHARS)
                return 0;
        if (count == DATA_GROUPS * BA_RECOVERY_KEY_GROUP_LEN)
                return fail(typo, BA_RK_NO_CHECK, BA_RECOVERY_KEY_GROUPS, count);
        if (groups == BA_RECOVERY_KEY_GROUPS)
                for (unsigned g = 0; g < groups; g++)
                        if (group_len[g] != BA_RECOVERY_KEY_GROUP_LEN)
                                return fail(typo, BA_RK_GROUP_LEN, g + 1, group_len[g]);
        return fail(typo, BA_RK_LENGTH, 0, count);
}

static int check_groups(const uint8_t n[TOTAL_CHARS], struct ba_recovery_key_typo *typo) {
        for (unsigned g = 0; g < DATA_GROUPS; g++)
                if (group_check(n + g * BA_RECOVERY_KEY_GROUP_LEN) != n[DATA_GROUPS * BA_RECOVERY_KEY_GROUP_LEN + g])
                        return fail(typo, BA_RK_CHECK, g + 1, 0);
        return 0;
}

int ba_recovery_key_parse(const char *text, size_t len, uint8_t raw[BA_RECOVERY_KEY_SIZE],
                          struct ba_recovery_key_typo *typo) {
        uint8_t n[TOTAL_CHARS];
        unsigned count, groups, group_len[BA_RECOVERY_KEY_GROUPS + 1];
        int r;

        memset(raw, 0, BA_RECOVERY_KEY_SIZE);
        *typo = (struct ba_recovery_key_typo) { .problem = BA_RK_OK };
        r = collect(text, len, n, &count, group_len, &groups, typo);
        if (r == 0)
                r = check_shape(count, group_len, groups, typo);
        if (r == 0)
                r = check_groups(n, typo);
        if (r == 0)
                for (unsigned i = 0; i < BA_RECOVERY_KEY_SIZE; i++)
                        raw[i] = (uint8_t) (n[2 * i] << 4 | n[2 * i + 1]);
        explicit_bzero(n, sizeof(n));
        return r;
}

void ba_recovery_key_typo_text(const struct ba_recovery_key_typo *typo, char *buf, size_t len) {
        switch (typo->problem) {
        case BA_RK_CHARACTER:
                if (typo->group > 0)
                        snprintf(buf, len, "the recovery key has a typo in group %u: a character that is not one of "
                                 MODHEX, typo->group);
                else
                        snprintf(buf, len, "the recovery key has a character that is not one of " MODHEX);
                return;
        case BA_RK_GROUP_LEN:
                snprintf(buf, len, "the recovery key has a typo in group %u: %u characters, not %d", typo->group,
                         typo->count, BA_RECOVERY_KEY_GROUP_LEN);
                return;
        case BA_RK_NO_CHECK:
                snprintf(buf, len, "the recovery key lacks its last group (the ninth, which checks the others)");
                return;
        case BA_RK_CHECK:
                snprintf(buf, len, "the recovery key has a typo in group %u (or in character %u of the ninth group, "
                         "which checks it)", typo->group, typo->group);
                return;
        case BA_RK_LENGTH:
                snprintf(buf, len, "the recovery key has %u characters, not %d (9 groups of 8)", typo->count,
                         TOTAL_CHARS);
                return;
        default:
                snprintf(buf, len, "the recovery key is fine");
                return;
        }
}
