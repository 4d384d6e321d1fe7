/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "key-name.h"

#define BA_PCR_COUNT 24
#define BA_PCR_ALL_MASK ((UINT32_C(1) << BA_PCR_COUNT) - 1)
#define BA_DIGEST_SIZE 32
#define BA_UUID_SIZE 16
#define BA_UUID_STRING_MAX 37
#define BA_DESCRIPTION_PREFIX "btrfs:"

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Decodes exactly out_len bytes of hex (either case); -EINVAL on any other input. */
int ba_hex_decode(const char *s, uint8_t *out, size_t out_len);
/* out must hold 2 * len + 1 bytes. */
void ba_hex_encode(const uint8_t *in, size_t len, char *out);

/* Accepts the canonical 8-4-4-4-12 form. */
int ba_uuid_parse(const char *s, uint8_t out[BA_UUID_SIZE]);
void ba_uuid_format(const uint8_t in[BA_UUID_SIZE], char out[BA_UUID_STRING_MAX]);

/* Plain decimal, no sign, no spaces, value <= max. */
int ba_parse_uint(const char *s, unsigned max, unsigned *out);

/* "7", "0,2,7", "0-7,14", "" or "none" (empty set). */
int ba_parse_pcr_list(const char *s, uint32_t *mask);
/* Unsigned integers of n bytes (1..8) as on-disk formats store them: little-endian (btrfs, key files), big-endian (TPM). */
uint64_t ba_get_le(const uint8_t *p, unsigned n);
void ba_put_le(uint8_t *p, uint64_t v, unsigned n);
uint64_t ba_get_be(const uint8_t *p, unsigned n);
void ba_put_be(uint8_t *p, uint64_t v, unsigned n);
/* "0x01b7a000": a TPM NV index in the owner's range 0x01000000..0x01ffffff; -EINVAL otherwise. */
int ba_parse_nv_index(const char *s, uint32_t *index);
/* "0,2,7" or "none"; buf must hold at least 64 bytes. */
void ba_pcr_mask_format(uint32_t mask, char *buf, size_t len);
unsigned ba_popcount(uint32_t v);

/* "btrfs:" followed by a valid NAME. */
bool ba_description_valid(const char *desc, size_t len);

/* For parsers that say why they refuse: the reason into err (err_len bytes), then code back. */
int ba_reason(char *err, size_t err_len, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ba_vreason(char *err, size_t err_len, int code, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
