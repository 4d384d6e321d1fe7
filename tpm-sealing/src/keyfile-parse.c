/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "crypto.h"
#include "keyfile.h"

struct parse_ctx {
        struct ba_keyfile *kf;
        char *err;
        size_t err_len;
        size_t offset; /* of the record being parsed, for messages */
};

static int __attribute__((format(printf, 3, 4))) pfail(struct parse_ctx *c, int code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        ba_vreason(c->err, c->err_len, code, fmt, ap);
        va_end(ap);
        return code;
}

static int rec_description(struct parse_ctx *c, const uint8_t *v, size_t len) {
        if (!ba_description_valid((const char *) v, len))
                return pfail(c, -EBADMSG, "key description at offset %zu is not btrfs:NAME", c->offset);
        memcpy(c->kf->description, v, len);
        c->kf->description[len] = '\0';
        return 0;
}

static int rec_fs_uuid(struct parse_ctx *c, const uint8_t *v, size_t len) {
        (void) len;
        memcpy(c->kf->fs_uuid, v, BA_UUID_SIZE);
        c->kf->has_fs_uuid = true;
        return 0;
}

static int rec_pcr_bank(struct parse_ctx *c, const uint8_t *v, size_t len) {
        (void) len;
        c->kf->pcr_bank = (uint16_t) ba_get_le(v, 2);
        if (c->kf->pcr_bank != TPM2_ALG_SHA256)
                return pfail(c, -EPROTONOSUPPORT, "PCR bank 0x%04x is not supported (only sha256)", c->kf->pcr_bank);
        return 0;
}

static int rec_pcr_mask(struct parse_ctx *c, const uint8_t *v, size_t len) {
        (void) len;
        c->kf->pcr_mask = (uint32_t) ba_get_le(v, 4);
        if (c->kf->pcr_mask & ~BA_PCR_ALL_MASK)
                return pfail(c, -EBADMSG, "PCR selection 0x%08x names PCRs above 23", c->kf->pcr_mask);
        return 0;
}

/* Relies on the mask record coming first: records are in ascending type order. */
static int rec_pcr_values(struct parse_ctx *c, const uint8_t *v, size_t len) {
        size_t n = 0;

        if (len != (size_t) ba_popcount(c->kf->pcr_mask) * BA_DIGEST_SIZE)
                return pfail(c, -EBADMSG, "PCR values record at offset %zu holds %zu bytes, the selection needs %u",
                             c->offset, len, ba_popcount(c->kf->pcr_mask) * BA_DIGEST_SIZE);
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (c->kf->pcr_mask & (UINT32_C(1) << i))
                        memcpy(c->kf->pcr_values[i], v + BA_DIGEST_SIZE * n++, BA_DIGEST_SIZE);
        return 0;
}

static int rec_lock_pcr(struct parse_ctx *c, const uint8_t *v, size_t len) {
        (void) len;
        if (!ba_lock_pcr_allowed(v[0]))
                return pfail(c, -EBADMSG, "lock PCR %u cannot lock anything", v[0]);
        c->kf->lock_pcr = v[0];
        return 0;
}

static int rec_pin(struct parse_ctx *c, const uint8_t *v, size_t len) {
        (void) len;
        if (v[0] > 1)
                return pfail(c, -EBADMSG, "PIN flag at offset %zu is %u, not 0 or 1", c->offset, v[0]);
        c->kf->pin = v[0];
        return 0;
}

static int rec_policy_digest(struct parse_ctx *c, const uint8_t *v, size_t len) {
        memcpy(c->kf->policy_digest, v, len);
        return 0;
}

static int rec_parent_name(struct parse_ctx *c, const uint8_t *v, size_t len) {
        c->kf->parent_name.size = (uint16_t) len;
        memcpy(c->kf->parent_name.name, v, len);
        return 0;
}

static int rec_tpm_public(struct parse_ctx *c, const uint8_t *v, size_t len) {
        size_t off = 0;

        if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(v, len, &off, &c->kf->public) != TSS2_RC_SUCCESS || off != len)
                return pfail(c, -EBADMSG, "sealed object's public part at offset %zu is malformed", c->offset);
        return 0;
}

static int rec_tpm_private(struct parse_ctx *c, const uint8_t *v, size_t len) {
        size_t off = 0;

        if (Tss2_MU_TPM2B_PRIVATE_Unmarshal(v, len, &off, &c->kf->private) != TSS2_RC_SUCCESS || off != len)
                return pfail(c, -EBADMSG, "sealed object's private part at offset %zu is malformed", c->offset);
        return 0;
}

/* u32 mask of the signed PCRs, then the signing key's TPM name (sha256). */
static int rec_signed_pcrs(struct parse_ctx *c, const uint8_t *v, size_t len) {
        struct ba_signed_pcrs *sp = &c->kf->signed_pcrs;

        sp->pcr_mask = (uint32_t) ba_get_le(v, 4);
        if (sp->pcr_mask == 0 || (sp->pcr_mask & ~BA_PCR_ALL_MASK))
                return pfail(c, -EBADMSG, "signed PCR selection 0x%08x at offset %zu is empty or names PCRs above 23",
                             sp->pcr_mask, c->offset);
        sp->key_name.size = (uint16_t) (len - 4);
        memcpy(sp->key_name.name, v + 4, len - 4);
        return 0;
}

static int rec_created(struct parse_ctx *c, const uint8_t *v, size_t len) {
        (void) len;
        c->kf->created = ba_get_le(v, 8);
        c->kf->has_created = true;
        return 0;
}

/* What both versions share after their KDF parameters: salt, aead, nonce, tag, then the encrypted key. */
static int recovery_tail(struct parse_ctx *c, const uint8_t *v, size_t tail_len) {
        struct ba_recovery_record *rec = &c->kf->recovery;
        char why[128];
        int r;

        memcpy(rec->salt, v, BA_RECOVERY_SALT_SIZE);
        v += BA_RECOVERY_SALT_SIZE;
        rec->aead = v[0];
        memcpy(rec->nonce, v + 1, BA_RECOVERY_NONCE_SIZE);
        memcpy(rec->tag, v + 1 + BA_RECOVERY_NONCE_SIZE, BA_RECOVERY_TAG_SIZE);
        rec->ct_len = (uint8_t) tail_len;
        memcpy(rec->ct, v + 1 + BA_RECOVERY_NONCE_SIZE + BA_RECOVERY_TAG_SIZE, rec->ct_len);
        r = ba_recovery_record_check(rec, why, sizeof(why));
        if (r < 0)
                return pfail(c, r, "%s (record at offset %zu)", why, c->offset);
        c->kf->has_recovery = true;
        return 0;
}

/* Version 1: kdf (scrypt), log2 N, r, p, then the common tail (docs/key-file-format.md). */
static int rec_recovery(struct parse_ctx *c, const uint8_t *v, size_t len) {
        struct ba_recovery_record *rec = &c->kf->recovery;

        memset(rec, 0, sizeof(*rec));
        rec->version = 1;
        rec->kind = BA_RECOVERY_KIND_PASSPHRASE;
        rec->kdf = v[0];
        rec->log_n = v[1];
        rec->r = (uint32_t) ba_get_le(v + 2, 4);
        rec->p = (uint32_t) ba_get_le(v + 6, 4);
        return recovery_tail(c, v + 10, len - BA_RECOVERY_FIXED_SIZE);
}

/* Version 2: kind, kdf (Argon2id), passes, memory (KiB), lanes, then the common tail. */
static int rec_recovery_v2(struct parse_ctx *c, const uint8_t *v, size_t len) {
        struct ba_recovery_record *rec = &c->kf->recovery;

        if (c->kf->has_recovery)
                return pfail(c, -BA_ERECOVERY_BAD, "a second recovery copy at offset %zu (a key file holds one)",
                             c->offset);
        memset(rec, 0, sizeof(*rec));
        rec->version = 2;
        rec->kind = v[0];
        rec->kdf = v[1];
        rec->t_cost = (uint32_t) ba_get_le(v + 2, 4);
        rec->m_cost = (uint32_t) ba_get_le(v + 6, 4);
        rec->lanes = (uint32_t) ba_get_le(v + 10, 4);
        return recovery_tail(c, v + 14, len - BA_RECOVERY_V2_FIXED_SIZE);
}

static const struct record_rule {
        uint16_t type;
        bool required;
        uint32_t min_len, max_len;
        int (*parse)(struct parse_ctx *c, const uint8_t *v, size_t len);
        const char *name;
} rules[] = {
        { BA_REC_DESCRIPTION, true, 7, BA_NAME_MAX + 6, rec_description, "description" },
        { BA_REC_FS_UUID, false, BA_UUID_SIZE, BA_UUID_SIZE, rec_fs_uuid, "filesystem UUID" },
        { BA_REC_PCR_BANK, true, 2, 2, rec_pcr_bank, "PCR bank" },
        { BA_REC_PCR_MASK, true, 4, 4, rec_pcr_mask, "PCR selection" },
        { BA_REC_PCR_VALUES, true, 0, BA_PCR_COUNT * BA_DIGEST_SIZE, rec_pcr_values, "PCR values" },
        { BA_REC_LOCK_PCR, false, 1, 1, rec_lock_pcr, "lock PCR" },
        { BA_REC_PIN, true, 1, 1, rec_pin, "PIN flag" },
        { BA_REC_POLICY_DIGEST, true, BA_DIGEST_SIZE, BA_DIGEST_SIZE, rec_policy_digest, "policy digest" },
        { BA_REC_PARENT_NAME, true, 2, sizeof(TPMU_NAME), rec_parent_name, "parent name" },
        { BA_REC_TPM_PUBLIC, true, 2, sizeof(TPM2B_PUBLIC), rec_tpm_public, "sealed object public part" },
        { BA_REC_TPM_PRIVATE, true, 2, sizeof(TPM2B_PRIVATE), rec_tpm_private, "sealed object private part" },
        { BA_REC_SIGNED_PCRS, false, 4 + BA_SIGNER_NAME_SIZE, 4 + BA_SIGNER_NAME_SIZE, rec_signed_pcrs,
          "signed PCR policy" },
        { BA_REC_CREATED, false, 8, 8, rec_created, "creation time" },
        { BA_REC_RECOVERY, false, BA_RECOVERY_FIXED_SIZE + 1, BA_RECOVERY_FIXED_SIZE + BA_KEY_MAX_SIZE, rec_recovery,
          "recovery copy" },
        { BA_REC_RECOVERY_V2, false, BA_RECOVERY_V2_FIXED_SIZE + 1, BA_RECOVERY_V2_FIXED_SIZE + BA_KEY_MAX_SIZE,
          rec_recovery_v2, "recovery copy" },
};

static const struct record_rule *find_rule(uint16_t type) {
        for (size_t i = 0; i < ELEMENTSOF(rules); i++)
                if (rules[i].type == type)
                        return &rules[i];
        return NULL;
}

static int parse_record(struct parse_ctx *c, uint16_t type, const uint8_t *v, uint32_t len, uint32_t *seen) {
        const struct record_rule *rule = find_rule(type);

        if (!rule) {
                if (type & BA_REC_IGNORABLE)
                        return 0;
                return pfail(c, -EPROTONOSUPPORT,
                             "unknown critical record type 0x%04x at offset %zu (written by a newer btrfs-auth?)",
                             type, c->offset);
        }
        /* A recovery copy cut short is told apart from the rest of the file (exit-codes.h). */
        if (len < rule->min_len || len > rule->max_len)
                return pfail(c, type == BA_REC_RECOVERY || type == BA_REC_RECOVERY_V2 ? -BA_ERECOVERY_BAD : -EBADMSG,
                             "%s record at offset %zu has length %u, expected %u..%u",
                             rule->name, c->offset, len, rule->min_len, rule->max_len);
        *seen |= UINT32_C(1) << (rule - rules);
        return rule->parse(c, v, len);
}

static int check_required(struct parse_ctx *c, uint32_t seen) {
        for (size_t i = 0; i < ELEMENTSOF(rules); i++)
                if (rules[i].required && !(seen & (UINT32_C(1) << i)))
                        return pfail(c, -EBADMSG, "required %s record is missing", rules[i].name);
        return 0;
}

static int parse_records(struct parse_ctx *c, const uint8_t *buf, size_t start, size_t end) {
        uint32_t seen = 0;
        int prev_type = -1;
        size_t off = start;

        while (off < end) {
                uint16_t type;
                uint32_t len;
                int r;

                c->offset = off;
                if (end - off < BA_KEYFILE_RECORD_HEADER_SIZE)
                        return pfail(c, -EBADMSG, "record header at offset %zu is cut short", off);
                type = (uint16_t) ba_get_le(buf + off, 2);
                len = (uint32_t) ba_get_le(buf + off + 2, 4);
                if (len > end - off - BA_KEYFILE_RECORD_HEADER_SIZE)
                        return pfail(c, -EBADMSG, "record 0x%04x at offset %zu has length %u, only %zu bytes remain",
                                     type, off, len, end - off - BA_KEYFILE_RECORD_HEADER_SIZE);
                if ((int) type <= prev_type)
                        return pfail(c, -EBADMSG, "record 0x%04x at offset %zu is duplicated or out of order",
                                     type, off);
                r = parse_record(c, type, buf + off + BA_KEYFILE_RECORD_HEADER_SIZE, len, &seen);
                if (r < 0)
                        return r;
                prev_type = type;
                off += BA_KEYFILE_RECORD_HEADER_SIZE + (size_t) len;
        }
        return check_required(c, seen);
}

static int parse_header(struct parse_ctx *c, const uint8_t *buf, size_t len, size_t *ret_body_len) {
        uint32_t body_len;
        uint16_t flags;
        size_t have;

        if (len < BA_KEYFILE_MAGIC_SIZE || memcmp(buf, BA_KEYFILE_MAGIC, BA_KEYFILE_MAGIC_SIZE) != 0)
                return pfail(c, -EBADMSG, "not a btrfs-auth key file (bad magic)");
        if (len < BA_KEYFILE_HEADER_SIZE)
                return pfail(c, -EBADMSG, "truncated: %zu bytes, shorter than the %d-byte header",
                             len, BA_KEYFILE_HEADER_SIZE);
        c->kf->version = (uint16_t) ba_get_le(buf + 8, 2);
        if (c->kf->version != BA_KEYFILE_VERSION)
                return pfail(c, -EPROTONOSUPPORT, "format version %u is not supported (this btrfs-auth reads %d)",
                             c->kf->version, BA_KEYFILE_VERSION);
        flags = (uint16_t) ba_get_le(buf + 10, 2);
        if (flags != 0)
                return pfail(c, -EPROTONOSUPPORT, "unknown header flags 0x%04x", flags);
        body_len = (uint32_t) ba_get_le(buf + 12, 4);
        have = len - BA_KEYFILE_HEADER_SIZE >= BA_KEYFILE_TRAILER_SIZE ?
                len - BA_KEYFILE_HEADER_SIZE - BA_KEYFILE_TRAILER_SIZE : 0;
        if (body_len > BA_KEYFILE_MAX_SIZE)
                return pfail(c, -EBADMSG, "header announces %u bytes of records, more than any key file", body_len);
        if (len < BA_KEYFILE_HEADER_SIZE + BA_KEYFILE_TRAILER_SIZE || have < body_len)
                return pfail(c, -EBADMSG, "truncated: header announces %u bytes of records, the file holds %zu",
                             body_len, have);
        if (have > body_len)
                return pfail(c, -EBADMSG, "%zu bytes of trailing data after the %u bytes of records",
                             have - body_len, body_len);
        *ret_body_len = body_len;
        return 0;
}

static int check_checksum(struct parse_ctx *c, const uint8_t *buf, size_t len) {
        uint8_t digest[BA_DIGEST_SIZE];

        if (ba_sha256((const struct ba_iovec[]) { { buf, len - BA_KEYFILE_TRAILER_SIZE } }, 1, digest) < 0)
                return pfail(c, -EIO, "cannot compute SHA-256");
        if (memcmp(digest, buf + len - BA_KEYFILE_TRAILER_SIZE, BA_DIGEST_SIZE) != 0)
                return pfail(c, -EBADMSG, "checksum mismatch: the file is corrupted");
        return 0;
}

int ba_keyfile_parse(const uint8_t *buf, size_t len, struct ba_keyfile *kf, char *err, size_t err_len) {
        struct parse_ctx c = { .kf = kf, .err = err, .err_len = err_len };
        size_t body_len = 0;
        int r;

        ba_keyfile_init(kf);
        if (len > BA_KEYFILE_MAX_SIZE)
                return pfail(&c, -EBADMSG, "%zu bytes is larger than any key file", len);
        r = parse_header(&c, buf, len, &body_len);
        if (r < 0)
                return r;
        r = check_checksum(&c, buf, len);
        if (r < 0)
                return r;
        r = parse_records(&c, buf, BA_KEYFILE_HEADER_SIZE, BA_KEYFILE_HEADER_SIZE + body_len);
        if (r < 0)
                return r;
        return ba_keyfile_check(kf, err, err_len);
}
