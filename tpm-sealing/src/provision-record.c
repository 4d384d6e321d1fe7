/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "exit-codes.h"
#include "fileio.h"
#include "keyfile.h"
#include "log.h"
#include "provision-record.h"
#include "tpm2-nv.h"

#define RECORD_MAGIC "BAPROV01"
#define KEY_ID_TEXT "btrfs-auth key id v1"

int ba_key_id_digest(const struct ba_secret *key, uint8_t out[BA_DIGEST_SIZE]) {
        return ba_hmac_sha256(key->data, key->len, (const uint8_t *) KEY_ID_TEXT, strlen(KEY_ID_TEXT), out);
}

/* Magic, UUID, key id, zeros: 8 + 16 + 32 + 8 bytes. */
void ba_prov_record_encode(const struct ba_prov_record *rec, uint8_t out[BA_PROV_RECORD_SIZE]) {
        memset(out, 0, BA_PROV_RECORD_SIZE);
        memcpy(out, RECORD_MAGIC, 8);
        memcpy(out + 8, rec->fsid, BA_UUID_SIZE);
        memcpy(out + 8 + BA_UUID_SIZE, rec->key_id, BA_DIGEST_SIZE);
}

int ba_prov_record_decode(const uint8_t in[BA_PROV_RECORD_SIZE], struct ba_prov_record *rec) {
        static const uint8_t zeros[8];

        if (memcmp(in, RECORD_MAGIC, 8) != 0 || memcmp(in + 56, zeros, sizeof(zeros)) != 0)
                return -EBADMSG;
        memcpy(rec->fsid, in + 8, BA_UUID_SIZE);
        memcpy(rec->key_id, in + 8 + BA_UUID_SIZE, BA_DIGEST_SIZE);
        return 0;
}

static int parse_handle(const char *text, uint32_t *ret) {
        if (ba_parse_nv_index(text, ret) < 0)
                return log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf: " BA_CONF_PROVISION_NV "='%s' is not a TPM NV "
                                "index (0x01000000..0x01ffffff).", text ? text : "");
        return 0;
}

/* The PCR key of this boot image (systemd-stub's copy of .pcrpkey), which alone may write the record. */
static int read_signer(const char *pcr_public_key, struct ba_pcr_pubkey *key) {
        const char *path = pcr_public_key ? pcr_public_key : ba_pcr_public_key_find();

        if (!path)
                return log_fail(BA_EXIT_PCR_PUBLIC_KEY, "This image records its first boot in the TPM, which needs "
                                "the PCR public key of a signed unified kernel image (%s), and there is none: "
                                "boot the image's UKI.", BA_PCR_PUBLIC_KEY_DEFAULT);
        return ba_pcr_pubkey_load(path, key);
}

static int foreign(uint32_t handle, const char *what) {
        return log_fail(BA_EXIT_PROVISION_INDEX, "TPM NV index 0x%08x is not btrfs-auth's provisioning record (%s): "
                        "someone with the TPM owner's authorization replaced it. Nothing is unsealed or "
                        "provisioned; see docs/admin-guide.md, \"Appliance images\", to provision again.",
                        (unsigned) handle, what);
}

/* Size, attributes and write policy as ba_prov_index_write makes them; WRITTEN/WRITELOCKED tell the state. */
static int check_public(const struct ba_prov_index *idx, const TPM2B_NV_PUBLIC *pub, bool *written) {
        const TPMS_NV_PUBLIC *p = &pub->nvPublic;
        TPMA_NV state_bits = TPMA_NV_WRITTEN | TPMA_NV_WRITELOCKED;
        TPM2B_DIGEST want;

        if (p->nvIndex != idx->handle || p->nameAlg != TPM2_ALG_SHA256 || p->dataSize != BA_PROV_RECORD_SIZE)
                return foreign(idx->handle, "name algorithm or size");
        if ((p->attributes & ~state_bits) != BA_NV_ATTRS_BASE)
                return foreign(idx->handle, "attributes");
        if (ba_nv_signed_write_policy(&idx->signer.key.name, &want) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the provisioning record's policy (libcrypto).");
        if (p->authPolicy.size != want.size || memcmp(p->authPolicy.buffer, want.buffer, want.size) != 0)
                return foreign(idx->handle, "its writes are not authorized by this boot image's PCR key");
        *written = p->attributes & TPMA_NV_WRITTEN;
        return 0;
}

static int read_in(struct ba_tpm *t, struct ba_prov_index *idx) {
        uint8_t buf[BA_PROV_RECORD_SIZE];
        TPM2B_NV_PUBLIC pub;
        ESYS_TR obj;
        bool written = false;
        int r;

        r = ba_tpm_nv_read_public(t, idx->handle, &pub, &obj);
        if (r == -ENOENT) {
                idx->state = BA_PROV_NONE;
                return 0;
        }
        if (r != 0)
                return r;
        r = check_public(idx, &pub, &written);
        if (r == 0 && written)
                r = ba_tpm_nv_read(t, obj, BA_PROV_RECORD_SIZE, buf);
        if (r == 0 && written && ba_prov_record_decode(buf, &idx->rec) < 0)
                r = foreign(idx->handle, "its content is not a provisioning record");
        (void) Esys_TR_Close(t->esys, &obj);
        if (r == 0)
                idx->state = written ? BA_PROV_RECORDED : BA_PROV_EMPTY;
        return r;
}

int ba_prov_index_read(const struct ba_tpm_target *tpm, const char *pcr_public_key, const char *handle_text,
                       struct ba_prov_index *idx) {
        struct ba_tpm t;
        int r;

        memset(idx, 0, sizeof(*idx));
        r = parse_handle(handle_text, &idx->handle);
        if (r == 0)
                r = read_signer(pcr_public_key, &idx->signer.key);
        if (r == 0)
                r = ba_tpm_open(&t, tpm);
        if (r != 0)
                return r;
        r = read_in(&t, idx);
        ba_tpm_close(&t);
        return r;
}

/* With the TPM open and its SRK loaded: the signature for this boot, the index, the write. */
static int write_in(const char *pcr_signature, const char *pcr_public_key, struct ba_tpm *t,
                    struct ba_prov_index *idx, const uint8_t data[BA_PROV_RECORD_SIZE]) {
        struct ba_keyfile kf;
        struct ba_pcr_signature sig;
        TPM2B_NV_PUBLIC pub;
        TPM2B_DIGEST policy;
        ESYS_TR obj = ESYS_TR_NONE;
        int r;

        ba_keyfile_init(&kf);
        snprintf(kf.description, sizeof(kf.description), "the provisioning record");
        kf.signed_pcrs.pcr_mask = BA_PROV_SIGNED_PCRS;
        kf.signed_pcrs.key_name = idx->signer.key.name;
        r = ba_signed_input_read(pcr_signature, pcr_public_key, &kf, &idx->signer);
        if (r == 0)
                r = ba_signed_select(t, &kf, &idx->signer, &sig);
        if (r != 0)
                return r;
        if (ba_nv_signed_write_policy(&idx->signer.key.name, &policy) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute the provisioning record's policy (libcrypto).");
        r = ba_tpm_nv_read_public(t, idx->handle, &pub, &obj);
        if (r == -ENOENT)
                r = ba_tpm_nv_define(t, idx->handle, BA_PROV_RECORD_SIZE, BA_NV_ATTRS_BASE, &policy, &obj);
        if (r == 0)
                r = ba_tpm_nv_write_signed(t, obj, data, BA_PROV_RECORD_SIZE, true, BA_PROV_SIGNED_PCRS,
                                           &idx->signer.key, &sig);
        if (obj != ESYS_TR_NONE)
                (void) Esys_TR_Close(t->esys, &obj);
        return r;
}

int ba_prov_index_write(const struct ba_tpm_target *tpm, const char *pcr_signature, const char *pcr_public_key,
                        struct ba_prov_index *idx, const struct ba_prov_record *rec) {
        uint8_t data[BA_PROV_RECORD_SIZE];
        struct ba_tpm t;
        int r;

        ba_prov_record_encode(rec, data);
        r = ba_tpm_open(&t, tpm);
        if (r != 0)
                return r;
        r = ba_tpm_get_srk(&t, NULL);
        if (r == 0)
                r = write_in(pcr_signature, pcr_public_key, &t, idx, data);
        ba_tpm_close(&t);
        if (r != 0)
                return r;
        idx->state = BA_PROV_RECORDED;
        idx->rec = *rec;
        log_info("Recorded the first boot in TPM NV index 0x%08x (write-locked): a missing or replaced key file "
                 "is refused from now on.", (unsigned) idx->handle);
        return 0;
}

static int delete_in(struct ba_tpm *t, uint32_t handle) {
        TPM2B_NV_PUBLIC pub;
        ESYS_TR obj;
        int r;

        r = ba_tpm_nv_read_public(t, handle, &pub, &obj);
        if (r != 0)
                return r;
        if (pub.nvPublic.dataSize != BA_PROV_RECORD_SIZE ||
            (pub.nvPublic.attributes & ~(TPMA_NV_WRITTEN | TPMA_NV_WRITELOCKED)) != BA_NV_ATTRS_BASE) {
                (void) Esys_TR_Close(t->esys, &obj);
                return foreign(handle, "size or attributes; not deleting it");
        }
        return ba_tpm_nv_undefine(t, obj);
}

int ba_prov_index_delete(const struct ba_tpm_target *tpm, const char *handle_text) {
        struct ba_tpm t;
        uint32_t handle;
        int r;

        r = parse_handle(handle_text, &handle);
        if (r == 0)
                r = ba_tpm_open(&t, tpm);
        if (r != 0)
                return r;
        r = delete_in(&t, handle);
        ba_tpm_close(&t);
        if (r == -ENOENT) {
                log_info("TPM NV index 0x%08x does not exist: there is no record of a first boot to delete.",
                         (unsigned) handle);
                return 0;
        }
        if (r == 0)
                log_info("Deleted the record of this machine's first boot (TPM NV index 0x%08x). The next boot of an "
                         "image with an empty key store provisions again; until then, a boot with this key store "
                         "is refused.", (unsigned) handle);
        return r;
}

void ba_prov_index_free(struct ba_prov_index *idx) {
        ba_signed_input_free(&idx->signer);
}
