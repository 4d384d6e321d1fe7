/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "disk-generation.h"
#include "exit-codes.h"
#include "fileio.h"
#include "log.h"
#include "passphrase.h"
#include "provision.h"
#include "rollback-anchor.h"
#include "rollback-record.h"
#include "rollback.h"
#include "signed-policy.h"

#define SIGNED_PCR_MASK (UINT32_C(1) << 11)

struct verdict {
        uint64_t floor;       /* the generation the last boot recorded; 0: none yet */
        uint64_t new_counter; /* what the record written by this boot carries */
};

/* expected_fsid: the filesystem the key file names, or NULL. */
static int read_anchor(const char *path, const struct ba_secret *key, const char *description,
                       const uint8_t *expected_fsid, struct ba_rollback_anchor *a) {
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        r = ba_read_file(path, 4096, &buf, &len);
        if (r == -ENOENT)
                return -ENOENT;
        if (r < 0) {
                log_error_errno(r, "Cannot read the rollback anchor %s", path);
                return BA_EXIT_ROLLBACK_ANCHOR;
        }
        r = len == BA_ROLLBACK_ANCHOR_BYTES ? ba_rollback_anchor_decode(buf, key, a) : -EBADMSG;
        free(buf);
        if (r == -EBADMSG)
                return log_fail(BA_EXIT_ROLLBACK_ANCHOR, "%s is not a rollback anchor (wrong size or magic): the "
                                "root is not mounted. Re-enroll with --rollback-index.", path);
        if (r == -EPERM)
                return log_fail(BA_EXIT_ROLLBACK_ANCHOR, "%s was not made with the key of %s (its HMAC does not "
                                "verify): forged, or left from before a rekey. The root is not mounted. Re-enroll "
                                "with --rollback-index.", path, description);
        if (r < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute HMAC-SHA256 (libcrypto failure).");
        if (expected_fsid && memcmp(expected_fsid, a->fsid, BA_UUID_SIZE) != 0)
                return log_fail(BA_EXIT_ROLLBACK_ANCHOR, "%s names another filesystem than %s was enrolled for: "
                                "re-enroll with --rollback-index.", path, description);
        return 0;
}

/*
 * What the TPM says of the last boot, checked against the anchor.  Every
 * refusal here is one the recovery key may repair (repair()); it logs
 * why, and the caller says whether the root is mounted.
 */
static int judge_record(const struct ba_rollback_nv *nv, const struct ba_rollback_anchor *a, struct verdict *v) {
        char have[BA_UUID_STRING_MAX], want[BA_UUID_STRING_MAX];

        if (!nv->counter_started || (!nv->record_written && nv->counter != a->counter_at_enroll)) {
                log_error("The rollback record (TPM NV index 0x%08x) is empty and its counter (0x%08x) is not where "
                          "enrollment left it: someone deleted and defined them again, which empties the record.",
                          (unsigned) a->record_handle, (unsigned) a->counter_handle);
                return BA_EXIT_ROLLBACK_INDEX;
        }
        if (!nv->record_written) {
                v->floor = 0;
                v->new_counter = nv->counter + 1;
                return 0;
        }
        if (memcmp(nv->rec.fsid, a->fsid, BA_UUID_SIZE) != 0) {
                ba_uuid_format(nv->rec.fsid, have);
                ba_uuid_format(a->fsid, want);
                return log_fail(BA_EXIT_ROLLBACK_OTHER_FS, "The rollback record (TPM NV index 0x%08x) holds the "
                                "generation of btrfs %s, not of %s: the root is not mounted. Enroll each "
                                "filesystem with its own --rollback-index; see btrfs-auth(8), ROLLBACK.",
                                (unsigned) a->record_handle, have, want);
        }
        /* The writer increments after writing: a power cut between the two leaves the record one ahead. */
        if (nv->rec.counter != nv->counter && nv->rec.counter != nv->counter + 1) {
                log_error("The rollback counter (TPM NV index 0x%08x, %llu) does not match the record's (%llu): "
                          "someone incremented it, or replaced the record.", (unsigned) a->counter_handle,
                          (unsigned long long) nv->counter, (unsigned long long) nv->rec.counter);
                return BA_EXIT_ROLLBACK_INDEX;
        }
        v->floor = nv->rec.generation;
        v->new_counter = nv->rec.counter;
        return 0;
}

/*
 * What the TPM cannot vouch for stays refused unless the person at the
 * console proves to be the key's owner: the recovery key (or passphrase)
 * must open the key this boot unsealed.
 */
static int ask_owner(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const struct ba_secret *key,
                     int refusal, const char *if_you) {
        struct ba_secret other = { 0 };
        int r, same;

        if (!kf->has_recovery || o->recovery_tries == 0)
                return log_fail(refusal, "%s has no recovery copy to accept this disk with: the root is not "
                                "mounted. See btrfs-auth(8), ROLLBACK.", kf->description);
        log_info("If you %s yourself, type the %s of %s to record this disk as the current one.", if_you,
                 ba_recovery_noun(&kf->recovery), kf->description);
        r = ba_passphrase_unlock(kf, &o->pass_ask, o->recovery_tries, &other, NULL);
        same = r == 0 && other.len == key->len && ba_digest_equal(other.data, key->data, key->len);
        ba_secret_free(&other);
        if (!same)
                return log_fail(refusal, "The disk was not accepted: the root is not mounted. See btrfs-auth(8), "
                                "ROLLBACK.");
        log_warning("%s: accepted with the %s; this disk's generation is recorded as the current one.",
                    kf->description, ba_recovery_noun(&kf->recovery));
        return 0;
}

static int judge_disk(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const struct ba_secret *key,
                      const struct ba_disk_generation *g, const struct verdict *v) {
        if (g->newest >= v->floor && g->oldest_primary >= v->floor)
                return 0;
        log_error("%s: the disk is older than this machine's last boot: its superblocks have generation %llu "
                  "(primary %llu), and the TPM recorded %llu at the last boot. Someone put back an older copy of "
                  "the disk or of its primary superblock.", kf->description, (unsigned long long) g->newest,
                  (unsigned long long) g->oldest_primary, (unsigned long long) v->floor);
        return ask_owner(o, kf, key, BA_EXIT_ROLLBACK, "restored this disk from an older copy");
}

/*
 * The record or counter deleted (TPM cleared, owner's tpm2_nvundefine) or
 * reset: with the recovery key, defined again where missing and started
 * afresh from this disk.  A foreign index or another filesystem's record
 * is never overwritten.
 */
static int repair(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const struct ba_secret *key,
                  struct ba_tpm *t, const struct ba_signed_input *in, bool can_write, int refusal,
                  struct ba_rollback_nv *nv, struct verdict *v) {
        int r = ask_owner(o, kf, key, refusal, "cleared the TPM or deleted its rollback record");

        if (r == 0 && !can_write)
                return log_fail(refusal, "%s: this boot image cannot sign for PCR 11, so it cannot record the disk "
                                "again: boot a signed image. The root is not mounted.", kf->description);
        if (r == 0)
                r = ba_rollback_nv_define(t, &in->key, nv);
        if (r != 0)
                return r;
        v->floor = 0;
        v->new_counter = nv->counter + 1;
        return 0;
}

/* Failures that leave the boot without a signature to write with; the record can still be read and judged. */
static bool cannot_sign(int r) {
        return r >= BA_EXIT_NOT_UKI_BOOT && r <= BA_EXIT_PCR_SIGNATURE_REJECTED;
}

/*
 * The key file as the record's write policy sees it: PCR 11 signed by the
 * key file's PCR key (the key file may sign more PCRs; the record asks for 11).
 */
static void signed_pcr11_view(const struct ba_keyfile *kf, struct ba_keyfile *view) {
        ba_keyfile_init(view);
        snprintf(view->description, sizeof(view->description), "%s", kf->description);
        view->signed_pcrs.pcr_mask = SIGNED_PCR_MASK;
        view->signed_pcrs.key_name = kf->signed_pcrs.key_name;
}

/*
 * The UKI's PCR key and signature for this boot: the record's write
 * policy asks for them.  A boot that came this far without them (the
 * recovery key opened the key) still checks the disk against the record,
 * whose policy names the key file's PCR key, but cannot write.
 */
static int read_signer(const struct ba_unseal_opts *o, const struct ba_keyfile *view, struct ba_signed_input *in,
                       bool *can_write) {
        int r = ba_signed_input_read(o->pcr_signature, o->pcr_public_key, view, in);

        *can_write = r == 0;
        if (!cannot_sign(r))
                return r;
        ba_signed_input_free(in);
        in->key.name = view->signed_pcrs.key_name;
        log_warning("%s: this boot image cannot sign for PCR 11, so it checks the disk against the rollback record "
                    "but does not update it.", view->description);
        return 0;
}

static int record(struct ba_tpm *t, const struct ba_keyfile *view, const struct ba_signed_input *in,
                  struct ba_rollback_nv *nv, const struct ba_rollback_anchor *a, uint64_t generation,
                  uint64_t counter) {
        struct ba_rollback_record rec = { .generation = generation, .counter = counter };
        struct ba_pcr_signature sig;
        int r;

        if (nv->record_written && nv->rec.generation == generation && nv->rec.counter == counter &&
            nv->counter == counter)
                return 0; /* nothing changed since the last boot: spare the NV write */
        memcpy(rec.fsid, a->fsid, BA_UUID_SIZE);
        r = ba_signed_select(t, view, in, &sig);
        if (cannot_sign(r)) {
                log_warning("%s: generation %llu not recorded: no PCR signature for this boot.", view->description,
                            (unsigned long long) generation);
                return 0;
        }
        if (r == 0)
                r = ba_rollback_nv_write(t, &in->key, &sig, nv, &rec);
        if (r == 0)
                log_info("Recorded generation %llu of %s in TPM NV index 0x%08x: an older disk is refused from now "
                         "on.", (unsigned long long) generation, view->description, (unsigned) a->record_handle);
        return r;
}

static int guard_tpm(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const struct ba_secret *key,
                     const struct ba_rollback_anchor *a, const struct ba_disk_generation *g) {
        struct ba_rollback_nv nv = { .record_handle = a->record_handle, .counter_handle = a->counter_handle };
        struct ba_signed_input in = { 0 };
        struct verdict v = { 0 };
        bool repairable, can_write = false;
        struct ba_keyfile view;
        struct ba_tpm t;
        int r;

        if (!kf->signed_pcrs.pcr_mask)
                return log_fail(BA_EXIT_ROLLBACK_ANCHOR, "%s has a rollback anchor but no signed PCR policy: only a "
                                "signed boot image can write the rollback record. Re-enroll with --signed-policy.",
                                kf->description);
        signed_pcr11_view(kf, &view);
        r = read_signer(o, &view, &in, &can_write);
        if (r == 0)
                r = ba_tpm_open(&t, &o->tpm);
        if (r != 0) {
                ba_signed_input_free(&in);
                return r;
        }
        r = ba_rollback_nv_read(&t, &in.key, &nv);
        repairable = r == BA_EXIT_ROLLBACK_MISSING;
        if (r == 0) {
                r = judge_record(&nv, a, &v);
                repairable = r == BA_EXIT_ROLLBACK_INDEX;
        }
        if (repairable)
                r = repair(o, kf, key, &t, &in, can_write, r, &nv, &v);
        if (r == 0)
                r = judge_disk(o, kf, key, g, &v);
        /* The write's session is salted to the SRK the key was sealed under, not to whatever sits at its handle. */
        if (r == 0 && can_write)
                r = ba_tpm_get_srk(&t, kf->parent_name.size ? &kf->parent_name : NULL);
        if (r == 0 && can_write)
                r = record(&t, &view, &in, &nv, a, g->newest, v.new_counter);
        ba_tpm_close(&t);
        ba_signed_input_free(&in);
        return r;
}

int ba_rollback_guard(const struct ba_unseal_opts *o, const struct ba_keyfile *kf, const struct ba_secret *key,
                      const char *anchor_path, const char *device) {
        const char *devices[] = { device, NULL };
        struct ba_rollback_anchor a;
        struct ba_disk_generation g;
        int r;

        r = read_anchor(anchor_path, key, kf->description, kf->has_fs_uuid ? kf->fs_uuid : NULL, &a);
        if (r == -ENOENT)
                return 0;
        if (r == 0)
                r = ba_disk_generation_read(devices, a.fsid, key, BA_DEVICE_WAIT, &g);
        if (r == 0)
                log_info("%s: %u device(s), %u authentic superblock copies, newest generation %llu.",
                         kf->description, g.devices, g.copies, (unsigned long long) g.newest);
        return r == 0 ? guard_tpm(o, kf, key, &a, &g) : r;
}

static int write_anchor(const char *path, const struct ba_rollback_anchor *a, const struct ba_secret *key) {
        uint8_t buf[BA_ROLLBACK_ANCHOR_BYTES];
        int r;

        if (ba_rollback_anchor_encode(a, key, buf) < 0)
                return log_fail(BA_EXIT_FAILURE, "Cannot compute HMAC-SHA256 (libcrypto failure).");
        r = ba_write_file_atomic_mode(path, buf, sizeof(buf), true, 0644);
        if (r < 0) {
                log_error_errno(r, "Cannot write the rollback anchor %s", path);
                return BA_EXIT_FAILURE;
        }
        return 0;
}

int ba_rollback_enroll(const struct ba_tpm_target *tpm, uint32_t handle, const char *signer_pem,
                       const uint8_t fsid[BA_UUID_SIZE], const struct ba_secret *key, const char *anchor_path) {
        struct ba_rollback_nv nv = { .record_handle = handle, .counter_handle = handle + 1 };
        struct ba_rollback_anchor a = { 0 };
        struct ba_pcr_pubkey signer;
        struct ba_tpm t;
        int r;

        r = ba_pcr_pubkey_load(signer_pem, &signer);
        if (r == 0)
                r = ba_tpm_open(&t, tpm);
        if (r != 0)
                return r;
        r = ba_rollback_nv_define(&t, &signer, &nv);
        ba_tpm_close(&t);
        if (r != 0)
                return r;
        if (nv.record_written && memcmp(nv.rec.fsid, fsid, BA_UUID_SIZE) != 0)
                return log_fail(BA_EXIT_ROLLBACK_OTHER_FS, "TPM NV index 0x%08x holds another filesystem's rollback "
                                "record: choose another --rollback-index, or delete that one (tpm2_nvundefine) if "
                                "its filesystem is gone.", (unsigned) nv.record_handle);
        a.record_handle = nv.record_handle;
        a.counter_handle = nv.counter_handle;
        a.counter_at_enroll = nv.counter;
        memcpy(a.fsid, fsid, BA_UUID_SIZE);
        r = write_anchor(anchor_path, &a, key);
        if (r != 0)
                return r;
        log_info("Anti-rollback: TPM NV index 0x%08x records the generation of each boot (counter 0x%08x at %llu); "
                 "wrote %s. Rebuild the initramfs so that it carries it.", (unsigned) nv.record_handle,
                 (unsigned) nv.counter_handle, (unsigned long long) nv.counter, anchor_path);
        return 0;
}

int ba_rollback_anchor_rekey(const char *anchor_path, const struct ba_secret *old_key,
                             const struct ba_secret *new_key) {
        struct ba_rollback_anchor a;
        int r;

        r = read_anchor(anchor_path, old_key, "the old key", NULL, &a);
        if (r == -ENOENT)
                return 0;
        if (r == 0)
                r = write_anchor(anchor_path, &a, new_key);
        if (r == 0)
                log_info("%s: MACed with the new key.", anchor_path);
        return r;
}

