/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "crypto.h"
#include "pcr-signature.h"

struct search {
        uint32_t mask;
        const uint8_t *pkfp, *policy;
        unsigned same_key, other_key; /* entries for mask: by the wanted key (other policies), by other keys */
        char *err;
        size_t err_len;
};

static int __attribute__((format(printf, 3, 4))) fail(struct search *s, int code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        ba_vreason(s->err, s->err_len, code, fmt, ap);
        va_end(ap);
        return code;
}

static int get_mask(struct search *s, json_object *entry, size_t i, uint32_t *mask) {
        json_object *pcrs;

        *mask = 0;
        if (!json_object_object_get_ex(entry, "pcrs", &pcrs) || !json_object_is_type(pcrs, json_type_array) ||
            json_object_array_length(pcrs) == 0)
                return fail(s, -EBADMSG, "entry %zu has no \"pcrs\" list", i);
        for (size_t k = 0; k < json_object_array_length(pcrs); k++) {
                json_object *p = json_object_array_get_idx(pcrs, k);
                int64_t v = json_object_get_int64(p);

                if (!json_object_is_type(p, json_type_int) || v < 0 || v >= BA_PCR_COUNT)
                        return fail(s, -EBADMSG, "entry %zu names a PCR that is not a number 0..23", i);
                *mask |= UINT32_C(1) << v;
        }
        return 0;
}

static int get_hex(struct search *s, json_object *entry, size_t i, const char *field, uint8_t out[BA_DIGEST_SIZE]) {
        json_object *v;

        if (!json_object_object_get_ex(entry, field, &v) || !json_object_is_type(v, json_type_string) ||
            ba_hex_decode(json_object_get_string(v), out, BA_DIGEST_SIZE) < 0)
                return fail(s, -EBADMSG, "entry %zu has no \"%s\" of 64 hex digits", i, field);
        return 0;
}

static int get_sig(struct search *s, json_object *entry, size_t i, struct ba_pcr_signature *out) {
        uint8_t buf[BA_PCR_SIGNATURE_MAX + 3];
        json_object *v;
        const char *b64;
        size_t n;
        int len;

        if (!json_object_object_get_ex(entry, "sig", &v) || !json_object_is_type(v, json_type_string))
                return fail(s, -EBADMSG, "entry %zu has no \"sig\" string", i);
        b64 = json_object_get_string(v);
        n = strlen(b64);
        if (n == 0 || n % 4 != 0 || n / 4 * 3 > sizeof(buf))
                return fail(s, -EBADMSG, "entry %zu: \"sig\" is not base64 of at most %d bytes", i,
                            BA_PCR_SIGNATURE_MAX);
        len = EVP_DecodeBlock(buf, (const unsigned char *) b64, (int) n);
        if (len < 0)
                return fail(s, -EBADMSG, "entry %zu: \"sig\" is not base64", i);
        /* EVP_DecodeBlock counts the padding as zero bytes. */
        len -= (b64[n - 1] == '=') + (n > 1 && b64[n - 2] == '=');
        if (len <= 0 || len > BA_PCR_SIGNATURE_MAX)
                return fail(s, -EBADMSG, "entry %zu: \"sig\" is empty or too long", i);
        memcpy(out->sig, buf, (size_t) len);
        out->sig_len = (size_t) len;
        return 0;
}

/* 1: the wanted signature (filled in), 0: another one, -EBADMSG: malformed. */
static int check_entry(struct search *s, json_object *entry, size_t i, struct ba_pcr_signature *out) {
        uint8_t pkfp[BA_DIGEST_SIZE], pol[BA_DIGEST_SIZE];
        uint32_t mask;
        int r;

        if (!json_object_is_type(entry, json_type_object))
                return fail(s, -EBADMSG, "entry %zu is not an object", i);
        r = get_mask(s, entry, i, &mask);
        if (r == 0)
                r = get_hex(s, entry, i, "pkfp", pkfp);
        if (r == 0)
                r = get_hex(s, entry, i, "pol", pol);
        if (r == 0)
                r = get_sig(s, entry, i, out);
        if (r < 0 || mask != s->mask)
                return r;
        if (memcmp(pkfp, s->pkfp, BA_DIGEST_SIZE) != 0) {
                s->other_key++;
                return 0;
        }
        if (memcmp(pol, s->policy, BA_DIGEST_SIZE) != 0) {
                s->same_key++;
                return 0;
        }
        memcpy(out->policy, pol, BA_DIGEST_SIZE);
        return 1;
}

static int search_bank(struct search *s, json_object *bank, struct ba_pcr_signature *out) {
        char pcrs[64];

        if (!json_object_is_type(bank, json_type_array))
                return fail(s, -EBADMSG, "\"sha256\" is not a list");
        for (size_t i = 0; i < json_object_array_length(bank); i++) {
                int r = check_entry(s, json_object_array_get_idx(bank, i), i, out);

                if (r != 0)
                        return r < 0 ? r : 0;
        }
        ba_pcr_mask_format(s->mask, pcrs, sizeof(pcrs));
        if (s->same_key > 0)
                return fail(s, -ENOENT, "%u signature%s for PCR %s by this key, none for the current value%s",
                            s->same_key, s->same_key > 1 ? "s" : "", pcrs, ba_popcount(s->mask) > 1 ? "s" : "");
        if (s->other_key > 0)
                return fail(s, -ENOENT, "signatures for PCR %s only by other keys", pcrs);
        return fail(s, -ENOENT, "no signature for PCR %s", pcrs);
}

static bool only_space(const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] != ' ' && p[i] != '\n' && p[i] != '\t' && p[i] != '\r')
                        return false;
        return true;
}

int ba_pcr_signature_find(const char *text, size_t len, uint32_t mask, const uint8_t pkfp[BA_DIGEST_SIZE],
                          const uint8_t policy[BA_DIGEST_SIZE], struct ba_pcr_signature *out, char *err,
                          size_t err_len) {
        struct search s = { .mask = mask, .pkfp = pkfp, .policy = policy, .err = err, .err_len = err_len };
        json_tokener *tok;
        json_object *root, *bank;
        int r;

        memset(out, 0, sizeof(*out));
        if (len > BA_PCR_SIGNATURE_FILE_MAX || len > INT32_MAX)
                return fail(&s, -EBADMSG, "larger than any PCR signature file");
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, text, (int) len);
        if (!root || json_tokener_get_error(tok) != json_tokener_success)
                r = fail(&s, -EBADMSG, "not JSON (%s)", json_tokener_error_desc(json_tokener_get_error(tok)));
        else if (!only_space(text + json_tokener_get_parse_end(tok), len - json_tokener_get_parse_end(tok)))
                r = fail(&s, -EBADMSG, "data after the JSON object");
        else if (!json_object_is_type(root, json_type_object))
                r = fail(&s, -EBADMSG, "not a JSON object");
        else if (!json_object_object_get_ex(root, "sha256", &bank))
                r = fail(&s, -ENOENT, "no signatures for the sha256 bank");
        else
                r = search_bank(&s, bank, out);
        json_object_put(root);
        json_tokener_free(tok);
        if (r != 0)
                explicit_bzero(out, sizeof(*out));
        return r;
}
