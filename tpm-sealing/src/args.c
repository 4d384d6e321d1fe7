/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "conf-file.h"
#include "exit-codes.h"
#include "keyfile.h"
#include "keyring.h"
#include "recovery.h"
#include "boot-chain.h"
#include "signed-policy.h"
#include "tpm2-context.h"
#include "tpm2-pcr.h"

enum {
        C_ENROLL = 1 << 0,
        C_LOAD = 1 << 1,
        C_LOCK = 1 << 2,
        C_STATUS = 1 << 3,
        C_RESEAL = 1 << 4,
        C_CONFIRM = 1 << 5,
        C_REKEY = 1 << 6,
        C_UNPROVISION = 1 << 7,
        C_LIST = 1 << 8,
        C_WIPE = 1 << 9,
        C_ALL = C_ENROLL | C_LOAD | C_LOCK | C_STATUS | C_RESEAL | C_CONFIRM | C_REKEY | C_UNPROVISION | C_LIST |
                C_WIPE,
        C_UNLOCK = C_LOAD | C_RESEAL | C_REKEY, /* commands that may need the key */
        C_FILES = C_ENROLL | C_LOAD | C_STATUS | C_RESEAL | C_CONFIRM | C_REKEY | C_LIST | C_WIPE,
};

enum {
        OPT_TCTI = 0x100, OPT_TPM_WAIT, OPT_CONFIG_DIR, OPT_KEY_FILE, OPT_GENERATE, OPT_RECOVERY_FILE, OPT_PCRS,
        OPT_PCR_VALUE, OPT_LOCK_PCR, OPT_PIN, OPT_PIN_FROM, OPT_PIN_TRIES, OPT_DEVICE, OPT_UUID,
        OPT_DESCRIPTION, OPT_FORCE, OPT_CHECK, OPT_KEYRING, OPT_LOCK, OPT_PCR, OPT_NO_TPM,
        OPT_RECOVERY_PASSPHRASE, OPT_PASSPHRASE_FROM, OPT_RECOVERY_TRIES, OPT_STATE_DIR,
        OPT_NO_UPDATE_INITRAMFS, OPT_NEW_KEY_FILE, OPT_BTRFSTUNE, OPT_SIGNED_POLICY, OPT_SIGNED_PCRS,
        OPT_PCR_SIGNATURE, OPT_PCR_PUBLIC_KEY, OPT_ALLOW_UNMEASURED, OPT_ALLOW_UNLOCKED,
        OPT_RECOVERY_KEY, OPT_NO_RECOVERY, OPT_ARGON2_MEMORY, OPT_ARGON2_TIME, OPT_WIPE_RECOVERY, OPT_WIPE_SEAL,
        OPT_ROLLBACK_INDEX,
};

static const struct {
        struct option opt;
        unsigned commands;
} option_table[] = {
        { { "help", no_argument, NULL, 'h' }, C_ALL },
        { { "verbose", no_argument, NULL, 'v' }, C_ALL },
        { { "quiet", no_argument, NULL, 'q' }, C_ALL },
        { { "tcti", required_argument, NULL, OPT_TCTI }, C_ALL },
        { { "tpm-wait", required_argument, NULL, OPT_TPM_WAIT }, C_ALL },
        { { "config-dir", required_argument, NULL, OPT_CONFIG_DIR }, C_FILES | C_LOCK | C_UNPROVISION },
        { { "key-file", required_argument, NULL, OPT_KEY_FILE }, C_ENROLL | C_RESEAL | C_REKEY },
        { { "generate", no_argument, NULL, OPT_GENERATE }, C_ENROLL },
        { { "recovery-file", required_argument, NULL, OPT_RECOVERY_FILE }, C_ENROLL | C_REKEY },
        { { "pcrs", required_argument, NULL, OPT_PCRS }, C_ENROLL | C_RESEAL },
        { { "pcr-value", required_argument, NULL, OPT_PCR_VALUE }, C_ENROLL | C_RESEAL },
        { { "lock-pcr", required_argument, NULL, OPT_LOCK_PCR }, C_ENROLL },
        { { "pin", no_argument, NULL, OPT_PIN }, C_ENROLL },
        { { "pin-from", required_argument, NULL, OPT_PIN_FROM }, C_ENROLL | C_UNLOCK },
        { { "pin-tries", required_argument, NULL, OPT_PIN_TRIES }, C_UNLOCK },
        { { "device", required_argument, NULL, OPT_DEVICE }, C_ENROLL | C_REKEY },
        { { "uuid", required_argument, NULL, OPT_UUID }, C_ENROLL },
        { { "description", required_argument, NULL, OPT_DESCRIPTION }, C_ENROLL },
        { { "force", no_argument, NULL, OPT_FORCE }, C_ENROLL | C_CONFIRM | C_WIPE },
        { { "recovery-key", no_argument, NULL, OPT_RECOVERY_KEY }, C_ENROLL },
        { { "recovery-passphrase", no_argument, NULL, OPT_RECOVERY_PASSPHRASE }, C_ENROLL },
        { { "no-recovery", no_argument, NULL, OPT_NO_RECOVERY }, C_ENROLL },
        { { "argon2-memory", required_argument, NULL, OPT_ARGON2_MEMORY }, C_ENROLL },
        { { "argon2-time", required_argument, NULL, OPT_ARGON2_TIME }, C_ENROLL },
        { { "recovery", no_argument, NULL, OPT_WIPE_RECOVERY }, C_WIPE },
        { { "rollback-index", required_argument, NULL, OPT_ROLLBACK_INDEX }, C_ENROLL },
        { { "seal", required_argument, NULL, OPT_WIPE_SEAL }, C_WIPE },
        { { "passphrase-from", required_argument, NULL, OPT_PASSPHRASE_FROM }, C_ENROLL | C_UNLOCK },
        { { "recovery-tries", required_argument, NULL, OPT_RECOVERY_TRIES }, C_UNLOCK },
        { { "state-dir", required_argument, NULL, OPT_STATE_DIR }, C_LOAD | C_CONFIRM | C_LOCK },
        { { "no-update-initramfs", no_argument, NULL, OPT_NO_UPDATE_INITRAMFS },
          C_RESEAL | C_CONFIRM | C_REKEY | C_WIPE },
        { { "new-key-file", required_argument, NULL, OPT_NEW_KEY_FILE }, C_REKEY },
        { { "btrfstune", required_argument, NULL, OPT_BTRFSTUNE }, C_REKEY },
        { { "check", required_argument, NULL, OPT_CHECK }, C_LOAD },
        { { "keyring", required_argument, NULL, OPT_KEYRING }, C_LOAD },
        { { "lock", no_argument, NULL, OPT_LOCK }, C_LOAD },
        { { "pcr", required_argument, NULL, OPT_PCR }, C_LOCK },
        { { "no-tpm", no_argument, NULL, OPT_NO_TPM }, C_STATUS },
        { { "signed-policy", required_argument, NULL, OPT_SIGNED_POLICY }, C_ENROLL | C_RESEAL },
        { { "signed-pcrs", required_argument, NULL, OPT_SIGNED_PCRS }, C_ENROLL | C_RESEAL },
        { { "allow-unmeasured-initramfs", no_argument, NULL, OPT_ALLOW_UNMEASURED }, C_ENROLL | C_RESEAL },
        { { "allow-unseal-after-boot", no_argument, NULL, OPT_ALLOW_UNLOCKED }, C_ENROLL },
        { { "pcr-signature", required_argument, NULL, OPT_PCR_SIGNATURE }, C_UNLOCK | C_STATUS },
        { { "pcr-public-key", required_argument, NULL, OPT_PCR_PUBLIC_KEY }, C_UNLOCK | C_STATUS },
};

static const struct {
        const char *name;
        enum ba_command command;
        unsigned bit;
} commands[] = {
        { "enroll", BA_CMD_ENROLL, C_ENROLL },
        { "load", BA_CMD_LOAD, C_LOAD },
        { "lock", BA_CMD_LOCK, C_LOCK },
        { "status", BA_CMD_STATUS, C_STATUS },
        { "reseal", BA_CMD_RESEAL, C_RESEAL },
        { "confirm", BA_CMD_CONFIRM, C_CONFIRM },
        { "rekey", BA_CMD_REKEY, C_REKEY },
        { "unprovision", BA_CMD_UNPROVISION, C_UNPROVISION },
        { "list", BA_CMD_LIST, C_LIST },
        { "wipe", BA_CMD_WIPE, C_WIPE },
};

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...) {
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_error("%s Try 'btrfs-auth --help'.", msg);
        return BA_EXIT_USAGE;
}

static void build_options(unsigned bit, struct option *out) {
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(option_table); i++)
                if (option_table[i].commands & bit)
                        out[n++] = option_table[i].opt;
        out[n] = (struct option) { 0 };
}

static int parse_pcr_value(struct ba_args *a, const char *arg) {
        char idx[4];
        const char *eq = strchr(arg, '=');
        unsigned pcr;

        if (!eq || eq == arg || (size_t) (eq - arg) >= sizeof(idx))
                return usage_error("--pcr-value needs PCR=HEX (64 hex digits), not '%s'.", arg);
        memcpy(idx, arg, (size_t) (eq - arg));
        idx[eq - arg] = '\0';
        if (ba_parse_uint(idx, BA_PCR_COUNT - 1, &pcr) < 0)
                return usage_error("--pcr-value: '%s' does not start with a PCR number 0..23.", arg);
        if (ba_hex_decode(eq + 1, a->pcr_values[pcr], BA_DIGEST_SIZE) < 0)
                return usage_error("--pcr-value: '%s' is not PCR=64 hex digits (a sha256 value).", arg);
        if (a->pcr_value_mask & (UINT32_C(1) << pcr))
                return usage_error("--pcr-value given twice for PCR %s.", idx);
        a->pcr_value_mask |= UINT32_C(1) << pcr;
        return 0;
}

static int parse_lockable_pcr(const char *opt, const char *arg, int *out) {
        unsigned pcr;

        if (ba_parse_uint(arg, BA_PCR_COUNT - 1, &pcr) < 0)
                return usage_error("%s is not a PCR number 0..23.", arg);
        if (!ba_lock_pcr_allowed(pcr))
                return usage_error("%s %u: PCRs 16 and 23 can be reset from locality 0 and PCRs 17-22 only "
                                   "take extends from D-RTM localities, so none of them can lock; use 0-15 "
                                   "(default 15).", opt, pcr);
        *out = (int) pcr;
        return 0;
}

static int parse_boot_chain_option(struct ba_args *a, int c, const char *arg) {
        switch (c) {
        case OPT_SIGNED_POLICY:
                a->signed_policy_key = arg;
                return 0;
        case OPT_SIGNED_PCRS:
                if (ba_parse_pcr_list(arg, &a->signed_mask) < 0 || a->signed_mask == 0)
                        return usage_error("--signed-pcrs: '%s' is not a list of PCRs 0..23 like 11.", arg);
                a->signed_mask_given = true;
                return 0;
        case OPT_PCR_SIGNATURE:
                a->pcr_signature = arg;
                return 0;
        case OPT_PCR_PUBLIC_KEY:
                a->pcr_public_key = arg;
                return 0;
        case OPT_ALLOW_UNMEASURED:
                a->allow_unmeasured = true;
                return 0;
        case OPT_ALLOW_UNLOCKED:
                a->allow_unlocked = true;
                return 0;
        default:
                return usage_error("Option 0x%x is not handled.", (unsigned) c);
        }
}

static int parse_enroll_option(struct ba_args *a, int c, const char *arg) {
        switch (c) {
        case OPT_KEY_FILE:
                a->key_file = arg;
                return 0;
        case OPT_GENERATE:
                a->generate = true;
                return 0;
        case OPT_RECOVERY_FILE:
                a->recovery_file = arg;
                return 0;
        case OPT_ROLLBACK_INDEX:
                /* The record's counter takes the next index. */
                if (ba_parse_nv_index(arg, &a->rollback_index) < 0 || a->rollback_index == UINT32_C(0x01ffffff))
                        return usage_error("--rollback-index=%s is not an owner NV index 0x01000000..0x01fffffe.",
                                           arg);
                return 0;
        case OPT_PCRS:
                if (ba_parse_pcr_list(arg, &a->pcr_mask) < 0)
                        return usage_error("--pcrs: '%s' is not a list of PCRs 0..23 like 7 or 0,2,7 or none.", arg);
                a->pcrs_given = true;
                return 0;
        case OPT_PCR_VALUE:
                return parse_pcr_value(a, arg);
        case OPT_LOCK_PCR:
                return parse_lockable_pcr("--lock-pcr", arg, &a->lock_pcr);
        case OPT_PIN:
                a->pin = true;
                return 0;
        case OPT_DEVICE:
                a->device = arg;
                return 0;
        case OPT_UUID:
                if (ba_uuid_parse(arg, a->uuid) < 0)
                        return usage_error("--uuid: '%s' is not a UUID like 01234567-89ab-cdef-0123-456789abcdef.", arg);
                a->has_uuid = true;
                return 0;
        case OPT_DESCRIPTION:
                a->description_opt = arg;
                return 0;
        case OPT_FORCE:
                a->force = true;
                return 0;
        default:
                return parse_boot_chain_option(a, c, arg);
        }
}

static int set_recovery_mode(struct ba_args *a, enum ba_recovery_mode mode) {
        if (a->recovery_mode != BA_RECOVERY_DEFAULT && a->recovery_mode != mode)
                return usage_error("%s", "--recovery-key, --recovery-passphrase and --no-recovery exclude each other.");
        a->recovery_mode = mode;
        return 0;
}

/* enroll's recovery copy, and what wipe removes. */
static int parse_recovery_copy_option(struct ba_args *a, int c, const char *arg) {
        switch (c) {
        case OPT_RECOVERY_KEY:
                return set_recovery_mode(a, BA_RECOVERY_KEY);
        case OPT_RECOVERY_PASSPHRASE:
                return set_recovery_mode(a, BA_RECOVERY_PASSPHRASE);
        case OPT_NO_RECOVERY:
                return set_recovery_mode(a, BA_RECOVERY_NONE);
        case OPT_ARGON2_MEMORY:
                if (ba_parse_uint(arg, BA_ARGON2_MEMORY_MAX_KIB / 1024, &a->argon2_memory_mib) < 0 ||
                    a->argon2_memory_mib < BA_ARGON2_MEMORY_MIN_KIB / 1024)
                        return usage_error("--argon2-memory: '%s' is not a number of MiB %u..%u.", arg,
                                           BA_ARGON2_MEMORY_MIN_KIB / 1024, BA_ARGON2_MEMORY_MAX_KIB / 1024);
                return 0;
        case OPT_ARGON2_TIME:
                if (ba_parse_uint(arg, BA_ARGON2_TIME_MAX, &a->argon2_time) < 0 || a->argon2_time < 1)
                        return usage_error("--argon2-time: '%s' is not a number of passes 1..%d.", arg,
                                           BA_ARGON2_TIME_MAX);
                return 0;
        case OPT_WIPE_RECOVERY:
                a->wipe_recovery = true;
                return 0;
        case OPT_WIPE_SEAL:
                if (strcmp(arg, "current") != 0 && strcmp(arg, "previous") != 0 && strcmp(arg, "new") != 0)
                        return usage_error("--seal: '%s' is not one of current, previous, new.", arg);
                a->wipe_seal = arg;
                return 0;
        default:
                return parse_enroll_option(a, c, arg);
        }
}

static int parse_recovery_option(struct ba_args *a, int c, const char *arg) {
        switch (c) {
        case OPT_PASSPHRASE_FROM:
                if (ba_pin_source_parse(arg, &a->pass_ask.from) < 0)
                        return usage_error("--passphrase-from: '%s' is not one of auto, tty, stdin, ask-password.",
                                           arg);
                return 0;
        case OPT_RECOVERY_TRIES:
                if (ba_parse_uint(arg, 10, &a->recovery_tries) < 0)
                        return usage_error("--recovery-tries: '%s' is not a number 0..10.", arg);
                return 0;
        case OPT_STATE_DIR:
                a->state_dir = arg;
                return 0;
        case OPT_NO_UPDATE_INITRAMFS:
                a->update_initramfs = false;
                return 0;
        case OPT_NEW_KEY_FILE:
                a->new_key_file = arg;
                return 0;
        case OPT_BTRFSTUNE:
                a->btrfstune = arg;
                return 0;
        default:
                return parse_recovery_copy_option(a, c, arg);
        }
}

static int parse_other_option(struct ba_args *a, int c, const char *arg) {
        switch (c) {
        case OPT_PIN_FROM:
                if (ba_pin_source_parse(arg, &a->pin_ask.from) < 0)
                        return usage_error("--pin-from: '%s' is not one of auto, tty, stdin, ask-password.", arg);
                return 0;
        case OPT_PIN_TRIES:
                if (ba_parse_uint(arg, 10, &a->pin_tries) < 0 || a->pin_tries == 0)
                        return usage_error("--pin-tries: '%s' is not a number 1..10.", arg);
                return 0;
        case OPT_CHECK:
                a->check_device = arg;
                return 0;
        case OPT_KEYRING:
                if (ba_keyring_parse(arg, &a->keyring) < 0)
                        return usage_error("--keyring: '%s' is not user, session, process, thread, "
                                           "user-session or a keyring id.", arg);
                return 0;
        case OPT_LOCK:
                a->lock_after = true;
                return 0;
        case OPT_PCR:
                return parse_lockable_pcr("--pcr", arg, &a->lock_pcr);
        case OPT_NO_TPM:
                a->no_tpm = true;
                return 0;
        default:
                return parse_recovery_option(a, c, arg);
        }
}

static int parse_option(struct ba_args *a, int c, const char *arg) {
        switch (c) {
        case 'h':
                a->command = BA_CMD_HELP;
                return 0;
        case 'v':
                a->log_level = BA_LOG_DEBUG;
                return 0;
        case 'q':
                a->log_level = BA_LOG_WARNING;
                return 0;
        case OPT_TCTI:
                a->tcti = arg;
                return 0;
        case OPT_TPM_WAIT:
                if (ba_parse_uint(arg, BA_TPM_WAIT_MAX, &a->tpm_wait) < 0)
                        return usage_error("--tpm-wait: '%s' is not a number of seconds 0..%d.", arg, BA_TPM_WAIT_MAX);
                a->tpm_wait_set = true;
                return 0;
        case OPT_CONFIG_DIR:
                a->config_dir = arg;
                return 0;
        default:
                return parse_other_option(a, c, arg);
        }
}

static int getopt_error(int c, char **argv, const char *cmd) {
        const char *arg = argv[optind - 1];

        if (c == ':')
                return usage_error("Option '%s' of '%s' needs a value.", arg, cmd);
        return usage_error("'%s' is not an option of 'btrfs-auth %s'.", arg, cmd);
}

static int parse_options(int argc, char **argv, unsigned bit, struct ba_args *a) {
        struct option opts[ELEMENTSOF(option_table) + 1];
        int c, r;

        build_options(bit, opts);
        optind = 0; /* glibc: full reinitialization, so tests can parse repeatedly */
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hvq", opts, NULL)) != -1) {
                if (c == '?' || c == ':')
                        return getopt_error(c, argv, argv[0]);
                r = parse_option(a, c, optarg);
                if (r != 0)
                        return r;
        }
        return 0;
}

static int derive_description(const char *path, char **ret) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        size_t n = strlen(base), slen = strlen(BA_KEYFILE_SUFFIX);
        char name[BA_NAME_MAX + 1];

        if (n <= slen || strcmp(base + n - slen, BA_KEYFILE_SUFFIX) != 0 || n - slen > BA_NAME_MAX)
                return usage_error("Cannot tell NAME from '%s' (not NAME.sealed): give --description=btrfs:NAME.",
                                   path);
        memcpy(name, base, n - slen);
        name[n - slen] = '\0';
        if (!ba_name_valid(name))
                return usage_error("'%s' is not a valid NAME (letters, digits, _ - . @ +; not starting with . "
                                   "or -).", name);
        return asprintf(ret, BA_DESCRIPTION_PREFIX "%s", name) < 0 ? -ENOMEM : 0;
}

static bool target_is_path(const char *t) {
        size_t n = strlen(t), slen = strlen(BA_KEYFILE_SUFFIX);

        return strchr(t, '/') || (n >= slen && strcmp(t + n - slen, BA_KEYFILE_SUFFIX) == 0);
}

/* NAME means <config-dir>/NAME.sealed and btrfs:NAME; anything with a slash or ending in .sealed is a path. */
static int resolve_target(struct ba_args *a) {
        if (target_is_path(a->target)) {
                a->key_path = strdup(a->target);
                if (!a->key_path)
                        return -ENOMEM;
                if (a->command != BA_CMD_ENROLL)
                        return 0;
                if (a->description_opt) {
                        if (!ba_description_valid(a->description_opt, strlen(a->description_opt)))
                                return usage_error("--description: '%s' is not btrfs:NAME.", a->description_opt);
                        a->description = strdup(a->description_opt);
                        return a->description ? 0 : -ENOMEM;
                }
                return derive_description(a->target, &a->description);
        }
        if (!ba_name_valid(a->target))
                return usage_error("'%s' is not a valid NAME (letters, digits, _ - . @ +; not starting with . or -) "
                                   "nor a path.", a->target);
        if (a->description_opt)
                return usage_error("--description only goes with a key file path; NAME '%s' already names the key.",
                                   a->target);
        a->target_is_name = true;
        if (asprintf(&a->key_path, "%s/%s" BA_KEYFILE_SUFFIX, a->config_dir, a->target) < 0 ||
            asprintf(&a->rollback_path, "%s/%s" BA_ROLLBACK_SUFFIX, a->config_dir, a->target) < 0 ||
            asprintf(&a->description, BA_DESCRIPTION_PREFIX "%s", a->target) < 0)
                return -ENOMEM;
        return 0;
}

#define PCR_BIT(n) (UINT32_C(1) << (n))
#define DEFAULT_SIGNED_PCRS PCR_BIT(11)
/* With a UKI: Secure Boot, and nothing measured from outside the signed image (command line, credentials,
 * system extensions from the ESP). */
#define DEFAULT_UKI_PCRS (PCR_BIT(7) | PCR_BIT(12) | PCR_BIT(13))
/* With GRUB: Secure Boot, GRUB's commands and command line, the kernel and initramfs it read. */
#define DEFAULT_GRUB_PCRS (PCR_BIT(7) | PCR_BIT(8) | PCR_BIT(9))

/* Without --pcrs: bind what the boot loader of this machine measures the initramfs and command line into. */
static int default_binding(struct ba_args *a) {
        if (!a->signed_policy_key && !a->pcrs_given && ba_booted_uki()) {
                a->signed_policy_key = ba_pcr_public_key_find();
                if (!a->signed_policy_key)
                        return usage_error("%s", "This machine booted a unified kernel image: seal to its signed "
                                           "PCR 11 with --signed-policy=PUBKEY.pem, the public key its PCR "
                                           "signatures are made with (systemd-measure sign --public-key).");
        }
        if (!a->pcrs_given)
                a->pcr_mask = a->signed_policy_key ? DEFAULT_UKI_PCRS : DEFAULT_GRUB_PCRS;
        if (a->signed_mask_given && !a->signed_policy_key)
                return usage_error("%s", "--signed-pcrs goes with --signed-policy=PUBKEY.pem.");
        if (a->signed_policy_key && !a->signed_mask_given)
                a->signed_mask = DEFAULT_SIGNED_PCRS;
        return 0;
}

/* The lock is on unless the administrator gives it up by name. */
static int default_lock(struct ba_args *a) {
        if (a->allow_unlocked && a->lock_pcr >= 0)
                return usage_error("%s", "--lock-pcr and --allow-unseal-after-boot contradict each other.");
        if (!a->allow_unlocked && a->lock_pcr < 0)
                a->lock_pcr = BA_LOCK_PCR_DEFAULT;
        return 0;
}

static int check_binding(struct ba_args *a) {
        int r = default_binding(a);

        if (r == 0 && a->command == BA_CMD_ENROLL)
                r = default_lock(a);
        if (r != 0)
                return r;
        /* Explicit values and the lock PCR are part of the selection. */
        a->pcr_mask |= a->pcr_value_mask;
        if (a->lock_pcr >= 0)
                a->pcr_mask |= PCR_BIT(a->lock_pcr);
        if (a->signed_mask & a->pcr_mask)
                return usage_error("%s", "A PCR cannot be both signed (--signed-pcrs) and sealed to a value "
                                   "(--pcrs, --pcr-value, --lock-pcr).");
        return 0;
}

static int check_enroll(struct ba_args *a) {
        int r;

        if (!!a->key_file == a->generate)
                return usage_error("%s", "enroll needs exactly one of --key-file=FILE and --generate.");
        if (a->generate != !!a->recovery_file)
                return usage_error("%s", "--generate and --recovery-file=FILE go together: the generated key must "
                                   "be kept as recovery material.");
        if (a->device && a->has_uuid)
                return usage_error("%s", "--device and --uuid both set the filesystem UUID; give one.");
        r = check_binding(a);
        if (r != 0)
                return r;
        if (a->pcr_mask == 0 && a->signed_mask == 0 && !a->pin)
                return usage_error("%s", "Nothing to seal to: choose PCRs (--pcrs) and/or --pin.");
        if (a->rollback_index && (!a->signed_policy_key || !(a->device || a->has_uuid)))
                return usage_error("%s", "--rollback-index needs --signed-policy (only a signed boot image may "
                                   "write the record) and the filesystem (--device or --uuid).");
        if ((a->argon2_memory_mib || a->argon2_time) && a->recovery_mode == BA_RECOVERY_NONE)
                return usage_error("%s", "--argon2-memory and --argon2-time set the recovery copy's cost; "
                                   "--no-recovery makes none.");
        if (a->recovery_mode == BA_RECOVERY_PASSPHRASE && a->pass_ask.from == BA_PIN_FROM_STDIN && a->pin && a->pin_ask.from == BA_PIN_FROM_STDIN)
                return usage_error("%s", "The PIN and the recovery passphrase cannot both come from stdin.");
        return 0;
}

static int check_rekey(const struct ba_args *a) {
        if (!a->device)
                return usage_error("%s", "rekey needs --device=DEV, the filesystem whose key changes (not mounted).");
        if (a->key_file && a->new_key_file && strcmp(a->key_file, "-") == 0 && strcmp(a->new_key_file, "-") == 0)
                return usage_error("%s", "--key-file and --new-key-file cannot both be stdin.");
        if (a->new_key_file && a->recovery_file)
                return usage_error("%s", "--recovery-file writes a generated key; with --new-key-file you have it "
                                   "already.");
        return 0;
}

/* Commands that work on a key file by NAME only (they manage NAME.sealed.previous/.new next to it). */
static int check_name_target(const struct ba_args *a, const char *cmd) {
        if (!a->target_is_name)
                return usage_error("'btrfs-auth %s' takes a NAME (it keeps NAME.sealed.* next to "
                                   "<config-dir>/NAME.sealed), not a path; use --config-dir for another directory.",
                                   cmd);
        return 0;
}

static int check_wipe(const struct ba_args *a) {
        if (a->wipe_recovery == !!a->wipe_seal)
                return usage_error("%s", "wipe needs exactly one of --recovery and --seal=current|previous|new.");
        return 0;
}

static int check_command(struct ba_args *a, int npos) {
        int want = a->command == BA_CMD_LOCK || a->command == BA_CMD_UNPROVISION ? 0 : 1;
        static const char *const names[] = { [BA_CMD_ENROLL] = "enroll", [BA_CMD_LOAD] = "load",
                                             [BA_CMD_LOCK] = "lock", [BA_CMD_STATUS] = "status",
                                             [BA_CMD_RESEAL] = "reseal", [BA_CMD_CONFIRM] = "confirm",
                                             [BA_CMD_REKEY] = "rekey", [BA_CMD_UNPROVISION] = "unprovision",
                                             [BA_CMD_LIST] = "list", [BA_CMD_WIPE] = "wipe" };

        if (a->command == BA_CMD_LIST && npos <= 1)
                want = npos; /* every key of the config dir, or one */
        if (npos != want)
                return usage_error("'btrfs-auth %s' takes %s.", names[a->command],
                                   want ? "one NAME or key file path" : "no NAME");
        if (!a->tpm_wait_set)
                a->tpm_wait = a->command == BA_CMD_STATUS ? 0 : BA_TPM_WAIT_DEFAULT;
        if (a->command == BA_CMD_ENROLL)
                return check_enroll(a);
        if (a->command == BA_CMD_REKEY)
                return check_rekey(a);
        if (a->command == BA_CMD_WIPE)
                return check_wipe(a);
        return 0;
}

static void args_init(struct ba_args *a) {
        memset(a, 0, sizeof(*a));
        a->config_dir = BA_CONFIG_DIR_DEFAULT;
        a->log_level = BA_LOG_INFO;
        a->lock_pcr = -1;
        a->keyring = KEY_SPEC_USER_KEYRING;
        a->pin_tries = BA_PIN_TRIES_DEFAULT;
        a->recovery_tries = BA_RECOVERY_TRIES_DEFAULT;
        a->update_initramfs = true;
        a->btrfstune = "btrfstune";
}

static int find_command(const char *name, struct ba_args *a, unsigned *bit) {
        if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
                a->command = BA_CMD_HELP;
                return 0;
        }
        if (strcmp(name, "--version") == 0) {
                a->command = BA_CMD_VERSION;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(name, commands[i].name) == 0) {
                        a->command = commands[i].command;
                        *bit = commands[i].bit;
                        return 0;
                }
        return usage_error("Unknown command '%s': use enroll, load, lock, status, list, reseal, confirm, rekey, "
                           "wipe or unprovision.", name);
}

/* systemd-ask-password waits as long as the load unit allows for a person (the generator reads the same setting). */
static void ask_timeout_from_conf(struct ba_args *a) {
        unsigned t;

        if (ba_conf_get_seconds(a->config_dir, BA_CONF_PIN_TIMEOUT, BA_CONF_PIN_TIMEOUT_MAX, &t))
                a->pin_ask.timeout = a->pass_ask.timeout = t;
}

int ba_args_parse(int argc, char **argv, struct ba_args *a) {
        unsigned bit = 0;
        int r;

        args_init(a);
        if (argc < 2)
                return usage_error("%s", "No command given.");
        r = find_command(argv[1], a, &bit);
        if (r != 0 || a->command == BA_CMD_HELP || a->command == BA_CMD_VERSION)
                return r;
        r = parse_options(argc - 1, argv + 1, bit, a);
        if (r != 0 || a->command == BA_CMD_HELP)
                return r;
        r = check_command(a, argc - 1 - optind);
        if (r != 0)
                return r;
        if (argc - 1 > optind) {
                a->target = argv[1 + optind];
                r = resolve_target(a);
                if (r < 0)
                        return log_fail(BA_EXIT_FAILURE, "Out of memory.");
        }
        if (r == 0 && (a->command == BA_CMD_RESEAL || a->command == BA_CMD_CONFIRM || a->command == BA_CMD_REKEY ||
                       a->command == BA_CMD_WIPE || (a->command == BA_CMD_LIST && a->target) ||
                       (a->command == BA_CMD_ENROLL && a->rollback_index)))
                r = check_name_target(a, argv[1]);
        if (r == 0 && (a->command == BA_CMD_CONFIRM || a->command == BA_CMD_LOCK) && !a->state_dir)
                a->state_dir = BA_STATE_DIR_DEFAULT;
        if (r == 0)
                ask_timeout_from_conf(a);
        return r;
}

struct ba_unseal_opts ba_args_unseal(const struct ba_args *a) {
        return (struct ba_unseal_opts) {
                .tpm = ba_args_tpm(a),
                .pcr_signature = a->pcr_signature,
                .pcr_public_key = a->pcr_public_key,
                .pin_ask = a->pin_ask,
                .pin_tries = a->pin_tries,
                .pass_ask = a->pass_ask,
                .recovery_tries = a->recovery_tries,
        };
}

void ba_args_seal_binding(const struct ba_args *a, struct ba_seal_binding *b) {
        *b = (struct ba_seal_binding) {
                .pcr_mask = a->pcr_mask,
                .pcr_value_mask = a->pcr_value_mask,
                .lock_pcr = a->lock_pcr,
                .signed_policy_key = a->signed_policy_key,
                .signed_mask = a->signed_mask,
                /* A new binding must cover the initramfs and the command line, unless the administrator gave that up. */
                .require_coverage = !a->allow_unmeasured &&
                                    (a->command == BA_CMD_ENROLL ||
                                     (a->command == BA_CMD_RESEAL && (a->pcrs_given || a->signed_policy_key))),
        };
        memcpy(b->pcr_values, a->pcr_values, sizeof(b->pcr_values));
}

void ba_args_free(struct ba_args *a) {
        free(a->key_path);
        free(a->rollback_path);
        free(a->description);
        a->key_path = a->rollback_path = a->description = NULL;
}

void ba_usage(FILE *f) {
        fputs("Usage: btrfs-auth COMMAND [OPTIONS] [NAME|FILE]\n"
              "\n"
              "Seal an authenticated-btrfs key to the TPM and load it into the kernel keyring.\n"
              "NAME stands for <config-dir>/NAME.sealed and the key btrfs:NAME.\n"
              "\n"
              "Commands:\n"
              "  enroll NAME|FILE  seal a key: --key-file=FILE|- or --generate --recovery-file=FILE\n"
              "                    [--signed-policy=PUBKEY.pem [--signed-pcrs=LIST]] [--pcrs=LIST]\n"
              "                    [--pcr-value=PCR=HEX]... [--lock-pcr=PCR] [--pin]\n"
              "                    [--device=DEV|--uuid=UUID] [--description=btrfs:NAME] [--force]\n"
              "                    [--allow-unmeasured-initramfs] [--allow-unseal-after-boot]\n"
              "                    (default: signed PCR 11 + PCRs 7,12,13 on a UKI, else PCRs 7,8,9;\n"
              "                    lock PCR 15)\n"
              "  load NAME|FILE    unseal into the keyring: [--check=DEV] [--keyring=RING] [--lock]\n"
              "                    [--pin-from=auto|tty|stdin|ask-password] [--pin-tries=N]\n"
              "                    [--pcr-signature=FILE] [--pcr-public-key=FILE] [--state-dir=DIR]\n"
              "  lock              measure the loaded keys into the lock PCRs and lock them: [--pcr=PCR]\n"
              "                    (default: every key file's lock PCR, else 15) [--state-dir=DIR]\n"
              "  status NAME|FILE  what the key is bound to, whether it unseals now: [--no-tpm]\n"
              "  list [NAME]       each key's seals (NAME.sealed, .previous, .new) and recovery copy\n"
              "  wipe NAME         remove one way to open the key: --recovery | --seal=current|previous|new\n"
              "                    [--force] (needed to remove the last way to open it)\n"
              "  reseal NAME       seal the same key to new PCR values: [--pcrs=LIST] [--pcr-value=PCR=HEX]...\n"
              "                    [--key-file=FILE]; keeps NAME.sealed.previous until confirm\n"
              "  confirm NAME      after a boot that unsealed the new NAME.sealed: drop NAME.sealed.previous\n"
              "  rekey NAME        give the filesystem a new key (offline, resumable): --device=DEV\n"
              "                    [--key-file=OLD] [--new-key-file=NEW|--recovery-file=FILE] [--btrfstune=PATH]\n"
              "  unprovision       appliance images: delete the TPM's record of this machine's first boot\n"
              "                    (BTRFS_AUTH_PROVISION_NV; owner authorization), so that a freshly written\n"
              "                    image provisions again\n"
              "Recovery: enroll makes a recovery key, printed once on stdout (default when stdout is a\n"
              "  terminal; --recovery-key), or --recovery-passphrase (weaker), or --no-recovery;\n"
              "  Argon2id cost: [--argon2-memory=MIB] [--argon2-time=N]. load, reseal, rekey fall back to it\n"
              "  (--recovery-tries=N, default 3; --passphrase-from=auto|tty|stdin|ask-password).\n"
              "  reseal, confirm and rekey update the initramfs unless --no-update-initramfs.\n"
              "\n"
              "Common options: --tcti=TCTI (default $TPM2TOOLS_TCTI, $TCTI, device:/dev/tpmrm0),\n"
              "  --tpm-wait=SECONDS (default 10, status 0), --config-dir=DIR (default /etc/btrfs-auth),\n"
              "  -v/--verbose, -q/--quiet, -h/--help, --version\n"
              "\n"
              "Exit codes: 0 ok, 1 other failure, 2 usage, 3 no TPM, 4 PCR policy not satisfied,\n"
              "  5 wrong PIN, 6 TPM lockout, 7 bad key file, 8 key not authentic for the device,\n"
              "  9 keyring failure, 10 other TPM error, 11 no key file, 12 device unreadable,\n"
              "  13 wrong recovery passphrase, 14 btrfstune failed; signed PCR policies: 15 not booted\n"
              "  through a UKI, 16 no PCR signature, 17 malformed signature file, 18 no signature for\n"
              "  this boot's PCRs, 19 wrong or missing PCR public key, 20 signature rejected by the TPM;\n"
              "  appliance images: 30 key store and the TPM's first-boot record disagree, 31 the TPM's\n"
              "  NV index is not btrfs-auth's, 32 the root is not the image the boot image was built for;\n"
              "  recovery copies: 40 the recovery key has a typo, 41 damaged recovery copy, 42 its KDF cost\n"
              "  is beyond the bounds.\n"
              "See btrfs-auth(8).\n", f);
}
