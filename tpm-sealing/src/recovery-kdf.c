/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recovery copy's key derivation: scrypt (version 1 records, read only) and Argon2id (libargon2). */
#include <errno.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <argon2.h>
#include <openssl/evp.h>

#include "recovery.h"

void ba_recovery_default_cost(uint8_t kind, struct ba_recovery_cost *cost) {
        struct sysinfo si;
        uint64_t quarter_kib;

        cost->lanes = BA_ARGON2_LANES;
        if (kind == BA_RECOVERY_KIND_KEY) {
                cost->t_cost = BA_ARGON2_KEY_TIME;
                cost->m_cost = BA_ARGON2_KEY_MEMORY_KIB;
                return;
        }
        cost->t_cost = BA_ARGON2_PASSPHRASE_TIME;
        cost->m_cost = BA_ARGON2_PASSPHRASE_MEMORY_KIB;
        if (sysinfo(&si) == 0) {
                quarter_kib = (uint64_t) si.totalram * si.mem_unit / 4 / 1024;
                if (quarter_kib < cost->m_cost)
                        cost->m_cost = quarter_kib > BA_ARGON2_PASSPHRASE_MEMORY_FLOOR_KIB ?
                                (uint32_t) quarter_kib : BA_ARGON2_PASSPHRASE_MEMORY_FLOOR_KIB;
        }
}

static int derive_scrypt(const struct ba_recovery_record *rec, const struct ba_secret *secret, uint8_t *out) {
        if (!EVP_PBE_scrypt((const char *) secret->data, secret->len, rec->salt, sizeof(rec->salt),
                            UINT64_C(1) << rec->log_n, rec->r, rec->p, BA_RECOVERY_MEMORY_MAX + (UINT64_C(1) << 24),
                            out, BA_RECOVERY_KEK_SIZE))
                return -EIO;
        return 0;
}

static uint32_t threads_for(uint32_t lanes) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);

        return cpus >= 1 && (unsigned long) cpus < lanes ? (uint32_t) cpus : lanes;
}

static int derive_argon2id(const struct ba_recovery_record *rec, const struct ba_secret *secret, uint8_t *out) {
        argon2_context ctx = {
                .out = out,
                .outlen = BA_RECOVERY_KEK_SIZE,
                .pwd = secret->data,
                .pwdlen = (uint32_t) secret->len,
                .salt = (uint8_t *) rec->salt,
                .saltlen = BA_RECOVERY_SALT_SIZE,
                .t_cost = rec->t_cost,
                .m_cost = rec->m_cost,
                .lanes = rec->lanes,
                .threads = threads_for(rec->lanes),
                .version = ARGON2_VERSION_13,
                .flags = ARGON2_DEFAULT_FLAGS,
        };
        int r = argon2_ctx(&ctx, Argon2_id);

        if (r == ARGON2_OK)
                return 0;
        return r == ARGON2_MEMORY_ALLOCATION_ERROR ? -ENOMEM : -EIO;
}

int ba_recovery_derive(const struct ba_recovery_record *rec, const struct ba_secret *secret, struct ba_secret *kek) {
        char why[128];
        int r;

        /* Never run a KDF on parameters the parser would refuse: the bounds keep a forged record from
         * asking for all the memory there is. */
        if (ba_recovery_record_check(rec, why, sizeof(why)) < 0 || secret->len > UINT32_MAX)
                return -EINVAL;
        r = ba_secret_new(kek, BA_RECOVERY_KEK_SIZE);
        if (r < 0)
                return r;
        r = rec->kdf == BA_RECOVERY_KDF_SCRYPT ? derive_scrypt(rec, secret, kek->data) :
                                                 derive_argon2id(rec, secret, kek->data);
        if (r < 0) {
                ba_secret_free(kek);
                return r;
        }
        kek->len = BA_RECOVERY_KEK_SIZE;
        return 0;
}
