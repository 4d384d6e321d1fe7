/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Exit codes of btrfs-auth.  They are an interface: systemd units, the
 * dracut module and the VM tests branch on them, so values never change
 * meaning; new ones are only ever appended.
 */
enum ba_exit {
        BA_EXIT_OK = 0,
        BA_EXIT_FAILURE = 1,        /* anything not listed below (I/O, memory, refusing to overwrite) */
        BA_EXIT_USAGE = 2,          /* bad command line */
        BA_EXIT_NO_TPM = 3,         /* no TPM within --tpm-wait, TCTI failure, TPM not usable */
        BA_EXIT_POLICY = 4,         /* PCR policy not satisfied (boot state changed, or locked) */
        BA_EXIT_BAD_PIN = 5,        /* wrong PIN */
        BA_EXIT_LOCKOUT = 6,        /* TPM dictionary-attack lockout */
        BA_EXIT_BAD_KEYFILE = 7,    /* key file corrupt, truncated, unsupported or inconsistent */
        BA_EXIT_NOT_AUTHENTIC = 8,  /* key does not authenticate the device's superblock / wrong filesystem */
        BA_EXIT_KEYRING = 9,        /* adding the key to the kernel keyring failed */
        BA_EXIT_TPM = 10,           /* other TPM error, or key sealed by another TPM */
        BA_EXIT_NO_KEYFILE = 11,    /* key file does not exist */
        BA_EXIT_DEVICE = 12,        /* device for --check/--device cannot be read */
        BA_EXIT_BAD_PASSPHRASE = 13, /* wrong recovery passphrase (all tries used), or none entered */
        BA_EXIT_REKEY = 14,         /* btrfstune failed to change the filesystem's key */
        /* Keys sealed to a signed PCR policy (enroll --signed-policy): */
        BA_EXIT_NOT_UKI_BOOT = 15,  /* not booted through systemd-stub: nothing measured the boot image */
        BA_EXIT_NO_PCR_SIGNATURE = 16, /* booted through systemd-stub, but no PCR signature (UKI without .pcrsig) */
        BA_EXIT_BAD_PCR_SIGNATURE = 17, /* the PCR signature file is malformed */
        BA_EXIT_PCR_NOT_SIGNED = 18, /* no signature for the current PCR values (boot image not signed for this) */
        BA_EXIT_PCR_PUBLIC_KEY = 19, /* PCR public key missing, malformed, or not the one sealed to */
        BA_EXIT_PCR_SIGNATURE_REJECTED = 20, /* the TPM rejects the signature (forged or damaged) */
        /* Appliance images (30 on, leaving room below): */
        BA_EXIT_PROVISIONED = 30,      /* the TPM's provisioning record and the key store disagree */
        BA_EXIT_PROVISION_INDEX = 31,  /* the TPM's NV index is not btrfs-auth's provisioning record */
        BA_EXIT_IMAGE_DIGEST = 32,     /* the root is not the image the boot image was built for */
        /* Recovery copies (40 on): */
        BA_EXIT_RECOVERY_KEY_TYPO = 40,   /* the recovery key typed has a typo (its check group says so) */
        BA_EXIT_BAD_RECOVERY_RECORD = 41, /* the recovery copy in the key file is truncated or malformed */
        BA_EXIT_RECOVERY_COST = 42,       /* the recovery copy asks for a KDF cost beyond the bounds */
        /* Anti-rollback (50 on): */
        BA_EXIT_ROLLBACK = 50,          /* the disk is older than the generation the TPM recorded at the last boot */
        BA_EXIT_ROLLBACK_INDEX = 51,    /* the TPM's rollback record or counter is not btrfs-auth's (size, attributes, policy, reset) */
        BA_EXIT_ROLLBACK_OTHER_FS = 52, /* the TPM's rollback record holds another filesystem's generation */
        BA_EXIT_ROLLBACK_ANCHOR = 53,   /* NAME.rollback is malformed or was not made with this key */
        BA_EXIT_ROLLBACK_MISSING = 54,  /* the rollback record or counter the anchor names does not exist */
};
