/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int unhex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int ba_hex_decode(const char *s, uint8_t *out, size_t out_len) {
        if (!s || strlen(s) != out_len * 2)
                return -EINVAL;
        for (size_t i = 0; i < out_len; i++) {
                int hi = unhex_digit(s[2 * i]), lo = unhex_digit(s[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return -EINVAL;
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        return 0;
}

void ba_hex_encode(const uint8_t *in, size_t len, char *out) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < len; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 15];
        }
        out[2 * len] = '\0';
}

int ba_uuid_parse(const char *s, uint8_t out[BA_UUID_SIZE]) {
        char compact[2 * BA_UUID_SIZE + 1];
        size_t n = 0;

        if (!s || strlen(s) != 36)
                return -EINVAL;
        for (size_t i = 0; i < 36; i++) {
                bool dash_pos = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash_pos != (s[i] == '-'))
                        return -EINVAL;
                if (!dash_pos)
                        compact[n++] = s[i];
        }
        compact[n] = '\0';
        return ba_hex_decode(compact, out, BA_UUID_SIZE);
}

void ba_uuid_format(const uint8_t u[BA_UUID_SIZE], char out[BA_UUID_STRING_MAX]) {
        snprintf(out, BA_UUID_STRING_MAX,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
                 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int ba_parse_uint(const char *s, unsigned max, unsigned *out) {
        unsigned long v = 0;

        if (!s || !*s || strlen(s) > 10)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (*p - '0');
        }
        if (v > max)
                return -ERANGE;
        *out = (unsigned) v;
        return 0;
}

static int parse_pcr_item(const char *item, uint32_t *mask) {
        char buf[16];
        const char *dash = strchr(item, '-');
        unsigned lo, hi;

        if (strlen(item) >= sizeof(buf))
                return -EINVAL;
        if (!dash) {
                if (ba_parse_uint(item, BA_PCR_COUNT - 1, &lo) < 0)
                        return -EINVAL;
                *mask |= UINT32_C(1) << lo;
                return 0;
        }
        memcpy(buf, item, (size_t) (dash - item));
        buf[dash - item] = '\0';
        if (ba_parse_uint(buf, BA_PCR_COUNT - 1, &lo) < 0 ||
            ba_parse_uint(dash + 1, BA_PCR_COUNT - 1, &hi) < 0 || lo > hi)
                return -EINVAL;
        for (unsigned i = lo; i <= hi; i++)
                *mask |= UINT32_C(1) << i;
        return 0;
}

uint64_t ba_get_le(const uint8_t *p, unsigned n) {
        uint64_t v = 0;

        while (n--)
                v = v << 8 | p[n];
        return v;
}

void ba_put_le(uint8_t *p, uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; i++, v >>= 8)
                p[i] = (uint8_t) v;
}

uint64_t ba_get_be(const uint8_t *p, unsigned n) {
        uint64_t v = 0;

        for (unsigned i = 0; i < n; i++)
                v = v << 8 | p[i];
        return v;
}

void ba_put_be(uint8_t *p, uint64_t v, unsigned n) {
        while (n--) {
                p[n] = (uint8_t) v;
                v >>= 8;
        }
}

int ba_parse_nv_index(const char *s, uint32_t *index) {
        unsigned long v;
        char *end;

        errno = 0;
        v = s ? strtoul(s, &end, 0) : 0;
        if (!s || errno != 0 || end == s || *end != '\0' || v < UINT32_C(0x01000000) || v > UINT32_C(0x01ffffff))
                return -EINVAL;
        *index = (uint32_t) v;
        return 0;
}

int ba_parse_pcr_list(const char *s, uint32_t *mask) {
        char buf[256];
        uint32_t m = 0;
        char *save = NULL;

        if (!s || strlen(s) >= sizeof(buf))
                return -EINVAL;
        if (strcmp(s, "none") == 0 || *s == '\0') {
                *mask = 0;
                return 0;
        }
        if (s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,"))
                return -EINVAL;
        strcpy(buf, s);
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (parse_pcr_item(t, &m) < 0)
                        return -EINVAL;
        *mask = m;
        return 0;
}

void ba_pcr_mask_format(uint32_t mask, char *buf, size_t len) {
        size_t used = 0;

        if (len == 0)
                return;
        buf[0] = '\0';
        if ((mask & BA_PCR_ALL_MASK) == 0) {
                snprintf(buf, len, "none");
                return;
        }
        for (unsigned i = 0; i < BA_PCR_COUNT && used < len; i++)
                if (mask & (UINT32_C(1) << i)) {
                        int n = snprintf(buf + used, len - used, "%s%u", used ? "," : "", i);

                        if (n < 0)
                                return;
                        used += (size_t) n;
                }
}

unsigned ba_popcount(uint32_t v) {
        return (unsigned) __builtin_popcount(v);
}

bool ba_description_valid(const char *desc, size_t len) {
        const size_t plen = strlen(BA_DESCRIPTION_PREFIX);
        char name[BA_NAME_MAX + 1];

        if (!desc || len <= plen || len - plen > BA_NAME_MAX)
                return false;
        if (memcmp(desc, BA_DESCRIPTION_PREFIX, plen) != 0)
                return false;
        memcpy(name, desc + plen, len - plen);
        name[len - plen] = '\0';
        /* memchr catches embedded NULs that strlen() inside ba_name_valid would hide. */
        return !memchr(desc, '\0', len) && ba_name_valid(name);
}

int ba_vreason(char *err, size_t err_len, int code, const char *fmt, va_list ap) {
        vsnprintf(err, err_len, fmt, ap);
        return code;
}

int ba_reason(char *err, size_t err_len, int code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        ba_vreason(err, err_len, code, fmt, ap);
        va_end(ap);
        return code;
}
