/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <unistd.h>

#include "boot-chain.h"
#include "exit-codes.h"
#include "log.h"
#include "signed-policy.h"

#define PCR_BIT(n) (UINT32_C(1) << (n))

/* The PC Client and UAPI PCR registry, as Debian 12's boot chain uses it. */
static const char *const pcr_meaning[BA_PCR_COUNT] = {
        [0] = "firmware code",
        [1] = "firmware configuration",
        [2] = "option ROM code",
        [3] = "option ROM configuration",
        [4] = "boot loader and UKI images the firmware started",
        [5] = "GPT and boot manager configuration",
        [7] = "Secure Boot state and keys (PK, KEK, db, dbx, the db entry that verified the boot)",
        [8] = "GRUB commands and kernel command line",
        [9] = "GRUB: kernel and initramfs files",
        [10] = "IMA",
        [11] = "UKI sections (kernel, initramfs, command line) and boot phase, measured by systemd-stub",
        [12] = "command line and credentials from outside the UKI (systemd-stub)",
        [13] = "system extensions from outside the UKI (systemd-stub)",
        [14] = "shim: MOK lists",
        [15] = "btrfs-auth: key measurements and lock",
};

static bool zero(const uint8_t v[BA_DIGEST_SIZE]) {
        static const uint8_t z[BA_DIGEST_SIZE];

        return memcmp(v, z, BA_DIGEST_SIZE) == 0;
}

static bool sealed_measured(const struct ba_keyfile *kf, unsigned pcr) {
        return (kf->pcr_mask & PCR_BIT(pcr)) && !zero(kf->pcr_values[pcr]);
}

unsigned ba_boot_chain_coverage(const struct ba_keyfile *kf) {
        unsigned c = 0;

        if ((kf->signed_pcrs.pcr_mask & PCR_BIT(11)) || sealed_measured(kf, 11))
                return BA_COVERS_BOTH;
        if (sealed_measured(kf, 9))
                c |= BA_COVERS_INITRAMFS;
        if (sealed_measured(kf, 8) || sealed_measured(kf, 12))
                c |= BA_COVERS_CMDLINE;
        return c;
}

static const char *missing_parts(unsigned c) {
        if (!(c & BA_COVERS_INITRAMFS) && !(c & BA_COVERS_CMDLINE))
                return "the initramfs or the kernel command line";
        return c & BA_COVERS_INITRAMFS ? "the kernel command line" : "the initramfs";
}

int ba_boot_chain_require(const struct ba_keyfile *kf) {
        unsigned c = ba_boot_chain_coverage(kf);

        if (c == BA_COVERS_BOTH)
                return 0;
        log_error("Refusing to seal %s to PCRs that do not measure %s, which live on the unauthenticated boot "
                  "partition: anyone who can write the disk could change them and still unseal the key.",
                  kf->description, missing_parts(c));
        log_error("Booting a unified kernel image: seal to its signed PCR 11 with --signed-policy=PUBKEY.pem. "
                  "Booting with GRUB: include PCRs 8 and 9 (--pcrs=7,8,9), which are all zeros unless the boot "
                  "loader measures into them. Or accept the risk with --allow-unmeasured-initramfs.");
        return BA_EXIT_USAGE;
}

bool ba_booted_uki(void) {
        return access(BA_STUB_PCR_EFIVAR, F_OK) == 0;
}

static void describe_pcrs(FILE *f, uint32_t mask, const char *how) {
        for (unsigned i = 0; i < BA_PCR_COUNT; i++)
                if (mask & PCR_BIT(i))
                        fprintf(f, "  PCR %-2u %-7s %s\n", i, how, pcr_meaning[i] ? pcr_meaning[i] : "(unassigned)");
}

void ba_boot_chain_describe(FILE *f, const struct ba_keyfile *kf) {
        unsigned c = ba_boot_chain_coverage(kf);

        fprintf(f, "Trusts:\n");
        describe_pcrs(f, kf->signed_pcrs.pcr_mask, "signed");
        describe_pcrs(f, kf->pcr_mask & ~(kf->lock_pcr >= 0 ? PCR_BIT(kf->lock_pcr) : 0), "sealed");
        if (kf->lock_pcr >= 0)
                fprintf(f, "  PCR %-2d %-7s locked after the key is loaded; it unseals again only after a reboot\n",
                        kf->lock_pcr, "lock");
        else
                fprintf(f, "  no lock PCR: the key can be unsealed again after boot, by anyone with root\n");
        if (c != BA_COVERS_BOTH)
                fprintf(f, "Not bound:        %s: anyone who can write the boot partition can change %s and still "
                        "unseal this key\n", c & BA_COVERS_INITRAMFS ? "the kernel command line" :
                        c & BA_COVERS_CMDLINE ? "the initramfs" : "the initramfs and the kernel command line",
                        c ? "it" : "them");
}
