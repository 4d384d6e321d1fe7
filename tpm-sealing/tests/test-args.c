/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Command-line handling: what units and scripts type must mean exactly one thing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "exit-codes.h"
#include "log.h"

static char *log_buf;
static size_t log_len;
static FILE *log_f;

static int setup(void **state) {
        (void) state;
        log_f = open_memstream(&log_buf, &log_len);
        log_set_stream(log_f);
        return log_f ? 0 : -1;
}

static int teardown(void **state) {
        (void) state;
        log_set_stream(NULL);
        fclose(log_f);
        free(log_buf);
        return 0;
}

/* Parses a NULL-terminated list of words after "btrfs-auth"; the log holds only this call's messages. */
static int parse_words(struct ba_args *a, ...) {
        char *argv[32] = { (char *) "btrfs-auth" };
        int argc = 1, r;
        va_list ap;

        va_start(ap, a);
        for (char *w; (w = va_arg(ap, char *));)
                argv[argc++] = w;
        va_end(ap);
        fflush(log_f);
        rewind(log_f);
        memset(log_buf, 0, log_len);
        r = ba_args_parse(argc, argv, a);
        fflush(log_f);
        return r;
}

static void assert_logged(const char *needle) {
        if (!strstr(log_buf, needle))
                fail_msg("log \"%s\" does not mention \"%s\"", log_buf, needle);
}

static void test_load_by_name(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "load", "root", NULL), 0);
        assert_int_equal(a.command, BA_CMD_LOAD);
        assert_string_equal(a.key_path, "/etc/btrfs-auth/root.sealed");
        assert_string_equal(a.description, "btrfs:root");
        assert_int_equal(a.keyring, KEY_SPEC_USER_KEYRING);
        assert_int_equal(a.tpm_wait, 10);
        assert_null(a.tcti);
        assert_false(a.lock_after);
        ba_args_free(&a);
        /* What the load unit runs: options, then "--", then the instance. */
        assert_int_equal(parse_words(&a, "load", "--tpm-wait=30", "--state-dir=/run/btrfs-auth", "--", "root", NULL),
                         0);
        assert_string_equal(a.description, "btrfs:root");
        assert_int_equal(a.tpm_wait, 30);
        ba_args_free(&a);
        /* After "--" an instance that looks like an option is a name, and no valid one. */
        assert_int_equal(parse_words(&a, "load", "--", "--keyring=@s", NULL), BA_EXIT_USAGE);
        assert_logged("not a valid NAME");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "--", "-x", NULL), BA_EXIT_USAGE);
        assert_logged("not starting with . or -");
        ba_args_free(&a);
}

static void test_load_options(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "load", "--tpm-wait=3", "--keyring", "session", "--check", "/dev/vda2",
                                     "--lock", "--tcti=swtpm:port=1", "--config-dir=/run/ba", "--pin-from=stdin",
                                     "data", NULL), 0);
        assert_string_equal(a.key_path, "/run/ba/data.sealed");
        assert_int_equal(a.tpm_wait, 3);
        assert_int_equal(a.keyring, KEY_SPEC_SESSION_KEYRING);
        assert_string_equal(a.check_device, "/dev/vda2");
        assert_true(a.lock_after);
        assert_string_equal(a.tcti, "swtpm:port=1");
        assert_int_equal(a.pin_ask.from, BA_PIN_FROM_STDIN);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "--keyring=12345", "./x.sealed", NULL), 0);
        assert_int_equal(a.keyring, 12345);
        assert_string_equal(a.key_path, "./x.sealed");
        assert_null(a.description);
        ba_args_free(&a);
        /* A bare file name ending in .sealed is a path, not NAME "x.sealed". */
        assert_int_equal(parse_words(&a, "load", "x.sealed", NULL), 0);
        assert_string_equal(a.key_path, "x.sealed");
        ba_args_free(&a);
}

static void test_usage_errors(void **state) {
        static const struct {
                const char *words[6];
                const char *needle;
        } cases[] = {
                { { NULL }, "No command" },
                { { "frobnicate", NULL }, "Unknown command" },
                { { "load", NULL }, "one NAME" },
                { { "load", "a", "b", NULL }, "one NAME" },
                { { "lock", "root", NULL }, "no NAME" },
                { { "load", "--bogus", "root", NULL }, "'--bogus' is not an option" },
                { { "load", "--pcrs=7", "root", NULL }, "not an option of 'btrfs-auth load'" },
                { { "load", "root", "--tpm-wait", NULL }, "needs a value" },
                { { "load", "--tpm-wait=-1", "root", NULL }, "--tpm-wait" },
                { { "load", "--tpm-wait=3601", "root", NULL }, "--tpm-wait" },
                { { "load", "--tpm-wait=99999999999", "root", NULL }, "--tpm-wait" },
                { { "load", "--keyring=bogus", "root", NULL }, "--keyring" },
                { { "load", "--keyring=0", "root", NULL }, "--keyring" },
                { { "load", "--pin-from=argv", "root", NULL }, "--pin-from" },
                { { "load", "--pin-tries=0", "root", NULL }, "--pin-tries" },
                { { "load", ".hidden", NULL }, "not a valid NAME" },
                { { "load", "a b", NULL }, "not a valid NAME" },
                { { "lock", "--pcr=16", NULL }, "locality 0" },
                { { "lock", "--pcr=23", NULL }, "locality 0" },
                { { "lock", "--pcr=17", NULL }, "D-RTM" },
                { { "lock", "--pcr=24", NULL }, "0..23" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *const *w = cases[i].words;
                struct ba_args a;

                assert_int_equal(parse_words(&a, w[0], w[0] ? w[1] : NULL, w[0] && w[1] ? w[2] : NULL,
                                             w[0] && w[1] && w[2] ? w[3] : NULL, NULL),
                                 BA_EXIT_USAGE);
                assert_logged(cases[i].needle);
                ba_args_free(&a);
        }
}

static void test_enroll_defaults(void **state) {
        struct ba_args a;

        (void) state;
        /* Not booted through a UKI (the test host): GRUB's PCRs 8 and 9 cover initramfs and command line. */
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "root", NULL), 0);
        assert_int_equal(a.pcr_mask, 1u << 7 | 1u << 8 | 1u << 9 | 1u << 15);
        assert_int_equal(a.lock_pcr, 15);
        assert_int_equal(a.signed_mask, 0);
        assert_false(a.pin);
        assert_false(a.allow_unmeasured);
        assert_string_equal(a.description, "btrfs:root");
        ba_args_free(&a);
        /* A signed policy: PCR 11 signed; Secure Boot and nothing from outside the UKI sealed. */
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "--signed-policy=/p.pem", "root", NULL), 0);
        assert_int_equal(a.signed_mask, 1u << 11);
        assert_string_equal(a.signed_policy_key, "/p.pem");
        assert_int_equal(a.pcr_mask, 1u << 7 | 1u << 12 | 1u << 13 | 1u << 15);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "--signed-policy=/p.pem", "--pcrs=7",
                                     "--signed-pcrs=4,11", "--allow-unseal-after-boot", "root", NULL), 0);
        assert_int_equal(a.signed_mask, 1u << 4 | 1u << 11);
        assert_int_equal(a.pcr_mask, 1u << 7);
        assert_int_equal(a.lock_pcr, -1);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "--pcrs=0,7", "--allow-unmeasured-initramfs",
                                     "root", NULL), 0);
        assert_true(a.allow_unmeasured);
        assert_int_equal(a.pcr_mask, 1u << 0 | 1u << 7 | 1u << 15);
        ba_args_free(&a);
}

static void test_enroll_pcrs(void **state) {
        static const char v8[] = "8=00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "enroll", "--generate", "--recovery-file=/r", "--pcrs=0-2,7",
                                     "--pcr-value", v8, "--lock-pcr=15", "--pin", "--uuid",
                                     "01234567-89ab-cdef-0123-456789abcdef", "./keys/home.sealed", NULL), 0);
        assert_int_equal(a.pcr_mask, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 7 | 1u << 8 | 1u << 15);
        assert_int_equal(a.pcr_value_mask, 1u << 8);
        assert_int_equal(a.pcr_values[8][0], 0x00);
        assert_int_equal(a.pcr_values[8][31], 0xff);
        assert_int_equal(a.lock_pcr, 15);
        assert_true(a.pin);
        assert_true(a.has_uuid);
        assert_int_equal(a.uuid[0], 0x01);
        assert_int_equal(a.uuid[15], 0xef);
        assert_string_equal(a.description, "btrfs:home");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=-", "--pcrs=none", "--pin", "--description=btrfs:x",
                                     "/tmp/y.bin", NULL), 0);
        assert_int_equal(a.pcr_mask, 1u << 15); /* the lock PCR stays */
        assert_string_equal(a.description, "btrfs:x");
        ba_args_free(&a);
}

static void test_enroll_errors(void **state) {
        static const struct {
                const char *words[6];
                const char *needle;
        } cases[] = {
                { { "enroll", "root", NULL }, "exactly one of --key-file" },
                { { "enroll", "--key-file=/k", "--generate", "root" }, "exactly one of --key-file" },
                { { "enroll", "--generate", "root", NULL }, "--recovery-file" },
                { { "enroll", "--key-file=/k", "--recovery-file=/r", "root" }, "--recovery-file" },
                { { "enroll", "--key-file=/k", "--pcrs=none", "--allow-unseal-after-boot", "root" },
                  "Nothing to seal to" },
                { { "enroll", "--key-file=/k", "--lock-pcr=15", "--allow-unseal-after-boot", "root" }, "contradict" },
                { { "enroll", "--key-file=/k", "--signed-pcrs=11", "root" }, "goes with --signed-policy" },
                { { "enroll", "--key-file=/k", "--signed-pcrs=none", "--signed-policy=/p", "root" }, "--signed-pcrs" },
                { { "enroll", "--key-file=/k", "--signed-policy=/p", "--pcrs=7,11", "root" }, "both signed" },
                { { "enroll", "--key-file=/k", "--signed-policy=/p", "--lock-pcr=11", "root" }, "both signed" },
                { { "load", "--signed-policy=/p", "root" }, "not an option" },
                { { "enroll", "--key-file=/k", "--pcrs=7,24", "root" }, "--pcrs" },
                { { "enroll", "--key-file=/k", "--pcrs=7,,8", "root" }, "--pcrs" },
                { { "enroll", "--key-file=/k", "--pcrs=9-3", "root" }, "--pcrs" },
                { { "enroll", "--key-file=/k", "--pcr-value=7=zz", "root" }, "--pcr-value" },
                { { "enroll", "--key-file=/k", "--pcr-value=24=00", "root" }, "--pcr-value" },
                { { "enroll", "--key-file=/k", "--pcr-value=7", "root" }, "--pcr-value" },
                { { "enroll", "--key-file=/k", "--lock-pcr=16", "root" }, "locality 0" },
                { { "enroll", "--key-file=/k", "--uuid=nope", "root" }, "--uuid" },
                { { "enroll", "--key-file=/k", "--description=btrfs:x", "root" }, "--description only" },
                { { "enroll", "--key-file=/k", "--description=luks:x", "/a/b" }, "--description" },
                { { "enroll", "--key-file=/k", "/tmp/noname.bin", NULL }, "Cannot tell NAME" },
                { { "enroll", "--key-file=/k", "--check=/dev/x", "root" }, "not an option" },
                { { "enroll", "--key-file=/k", "--rollback-index=0x81000000", "root" }, "not an owner NV index" },
                { { "enroll", "--key-file=/k", "--rollback-index=0x01ffffff", "root" }, "not an owner NV index" },
                { { "enroll", "--key-file=/k", "--uuid=01234567-89ab-cdef-0123-456789abcdef",
                    "--rollback-index=0x01b7a000", "root" }, "--rollback-index needs --signed-policy" },
                { { "enroll", "--key-file=/k", "--signed-policy=/p", "--rollback-index=0x01b7a000", "root" },
                  "and the filesystem (--device or --uuid)" },
                { { "load", "--rollback-index=0x01b7a000", "root" }, "not an option" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *const *w = cases[i].words;
                struct ba_args a;

                assert_int_equal(parse_words(&a, w[0], w[1], w[2], w[3], w[4], NULL), BA_EXIT_USAGE);
                assert_logged(cases[i].needle);
                ba_args_free(&a);
        }
}

static void test_enroll_device_and_uuid(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "--device=/dev/x", "--uuid",
                                     "01234567-89ab-cdef-0123-456789abcdef", "root", NULL), BA_EXIT_USAGE);
        assert_logged("--device and --uuid");
        ba_args_free(&a);
        /* The anchor goes beside NAME.sealed: a key file path has no NAME. */
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "--device=/dev/x", "--signed-policy=/p",
                                     "--rollback-index=0x01b7a000", "/a/b.sealed", NULL), BA_EXIT_USAGE);
        assert_logged("'btrfs-auth enroll' takes a NAME");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=/k", "--device=/dev/x", "--signed-policy=/p",
                                     "--rollback-index=0x01b7a000", "root", NULL), 0);
        assert_int_equal(a.rollback_index, 0x01b7a000);
        ba_args_free(&a);
}

static void test_help_version_lock_status(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "--help", NULL), 0);
        assert_int_equal(a.command, BA_CMD_HELP);
        assert_int_equal(parse_words(&a, "load", "-h", NULL), 0);
        assert_int_equal(a.command, BA_CMD_HELP);
        assert_int_equal(parse_words(&a, "--version", NULL), 0);
        assert_int_equal(a.command, BA_CMD_VERSION);
        /* Without --pcr the lock takes every key file's lock PCR (lock.c); it reads /run/btrfs-auth. */
        assert_int_equal(parse_words(&a, "lock", NULL), 0);
        assert_int_equal(a.command, BA_CMD_LOCK);
        assert_int_equal(a.lock_pcr, -1);
        assert_string_equal(a.state_dir, "/run/btrfs-auth");
        assert_int_equal(parse_words(&a, "lock", "--pcr", "14", "-q", NULL), 0);
        assert_int_equal(a.lock_pcr, 14);
        assert_int_equal(a.log_level, BA_LOG_WARNING);
        assert_int_equal(parse_words(&a, "status", "-v", "root", NULL), 0);
        assert_int_equal(a.tpm_wait, 0);
        assert_int_equal(a.log_level, BA_LOG_DEBUG);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "status", "--no-tpm", "--tpm-wait=5", "root", NULL), 0);
        assert_true(a.no_tpm);
        assert_int_equal(a.tpm_wait, 5);
        ba_args_free(&a);
}

static void test_recovery_options(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--recovery-passphrase", "--passphrase-from=stdin",
                                     "--argon2-memory=64", "--argon2-time=2", "root", NULL), 0);
        assert_int_equal(a.recovery_mode, BA_RECOVERY_PASSPHRASE);
        assert_int_equal(a.pass_ask.from, BA_PIN_FROM_STDIN);
        assert_int_equal(a.argon2_memory_mib, 64);
        assert_int_equal(a.argon2_time, 2);
        ba_args_free(&a);
        /* No option: settled by enroll itself (a recovery key when stdout is a terminal). */
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "root", NULL), 0);
        assert_int_equal(a.recovery_mode, BA_RECOVERY_DEFAULT);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--recovery-key", "root", NULL), 0);
        assert_int_equal(a.recovery_mode, BA_RECOVERY_KEY);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--no-recovery", "root", NULL), 0);
        assert_int_equal(a.recovery_mode, BA_RECOVERY_NONE);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--recovery-key", "--recovery-passphrase", "root",
                                     NULL), BA_EXIT_USAGE);
        assert_logged("exclude each other");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--no-recovery", "--argon2-time=2", "root", NULL),
                         BA_EXIT_USAGE);
        assert_logged("--no-recovery makes none");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--argon2-memory=7", "root", NULL), BA_EXIT_USAGE);
        assert_logged("--argon2-memory");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--argon2-memory=1025", "root", NULL),
                         BA_EXIT_USAGE);
        assert_logged("--argon2-memory");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--argon2-time=17", "root", NULL), BA_EXIT_USAGE);
        assert_logged("--argon2-time");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "root", NULL), 0);
        assert_int_equal(a.recovery_tries, 3);
        assert_null(a.state_dir);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "--recovery-tries=0", "--state-dir=/run/x", "root", NULL), 0);
        assert_int_equal(a.recovery_tries, 0);
        assert_string_equal(a.state_dir, "/run/x");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "--recovery-tries=11", "root", NULL), BA_EXIT_USAGE);
        assert_logged("--recovery-tries");
        ba_args_free(&a);
        /* scrypt is only read now: new copies use Argon2id. */
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--scrypt-log-n=12", "root", NULL), BA_EXIT_USAGE);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=-", "--pin", "--pin-from=stdin", "--recovery-passphrase",
                                     "--passphrase-from=stdin", "root", NULL), BA_EXIT_USAGE);
        assert_logged("cannot both come from stdin");
        ba_args_free(&a);
        /* Options of other commands stay refused. */
        assert_int_equal(parse_words(&a, "status", "--recovery-tries=1", "root", NULL), BA_EXIT_USAGE);
        ba_args_free(&a);
}

static void test_list_wipe(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "list", "--config-dir=/c", NULL), 0);
        assert_int_equal(a.command, BA_CMD_LIST);
        assert_null(a.target);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "list", "--config-dir=/c", "root", NULL), 0);
        assert_string_equal(a.key_path, "/c/root.sealed");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "list", "/x/root.sealed", NULL), BA_EXIT_USAGE);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "wipe", "--recovery", "root", NULL), 0);
        assert_true(a.wipe_recovery);
        assert_false(a.force);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "wipe", "--seal=previous", "--force", "--no-update-initramfs", "root", NULL),
                         0);
        assert_string_equal(a.wipe_seal, "previous");
        assert_true(a.force);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "wipe", "--seal=older", "root", NULL), BA_EXIT_USAGE);
        assert_logged("--seal");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "wipe", "root", NULL), BA_EXIT_USAGE);
        assert_logged("exactly one of --recovery and --seal");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "wipe", "--recovery", "--seal=new", "root", NULL), BA_EXIT_USAGE);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "wipe", "--recovery", NULL), BA_EXIT_USAGE);
        ba_args_free(&a);
}

static void test_reseal_confirm_rekey(void **state) {
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "reseal", "--pcr-value=4=" "0000000000000000000000000000000000000000000000000000000000000004",
                                     "--no-update-initramfs", "root", NULL), 0);
        assert_int_equal(a.command, BA_CMD_RESEAL);
        assert_false(a.pcrs_given);
        assert_int_equal(a.pcr_value_mask, 1u << 4);
        assert_false(a.update_initramfs);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "reseal", "--pcrs=0,7", "root", NULL), 0);
        assert_true(a.pcrs_given);
        assert_true(a.update_initramfs);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "reseal", "/etc/btrfs-auth/root.sealed", NULL), BA_EXIT_USAGE);
        assert_logged("takes a NAME");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "confirm", "root", NULL), 0);
        assert_string_equal(a.state_dir, "/run/btrfs-auth");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "rekey", "root", NULL), BA_EXIT_USAGE);
        assert_logged("--device");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "rekey", "--device=/dev/vda2", "--btrfstune=/opt/btrfstune", "root", NULL), 0);
        assert_string_equal(a.device, "/dev/vda2");
        assert_string_equal(a.btrfstune, "/opt/btrfstune");
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "rekey", "--device=d", "--new-key-file=n", "--recovery-file=r", "root", NULL),
                         BA_EXIT_USAGE);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "confirm", "--pcrs=7", "root", NULL), BA_EXIT_USAGE);
        ba_args_free(&a);
}

/* What the commands hand down (args.h): the binding a seal must check for boot-chain coverage, the unseal options. */
static void test_handed_down(void **state) {
        struct ba_seal_binding b;
        struct ba_unseal_opts o;
        struct ba_args a;

        (void) state;
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--pcrs=7", "--lock-pcr=14", "--tcti=swtpm:port=1",
                                     "--tpm-wait=4", "root", NULL), 0);
        ba_args_seal_binding(&a, &b);
        assert_true(b.require_coverage);
        assert_int_equal(b.pcr_mask, (1u << 7) | (1u << 14));
        assert_int_equal(b.lock_pcr, 14);
        assert_string_equal(ba_args_tpm(&a).tcti, "swtpm:port=1");
        assert_int_equal(ba_args_tpm(&a).wait, 4);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "enroll", "--key-file=k", "--pcrs=7", "--allow-unmeasured-initramfs", "root",
                                     NULL), 0);
        ba_args_seal_binding(&a, &b);
        assert_false(b.require_coverage);
        ba_args_free(&a);
        /* A reseal keeping its old selection was checked when it was made. */
        assert_int_equal(parse_words(&a, "reseal", "root", NULL), 0);
        ba_args_seal_binding(&a, &b);
        assert_false(b.require_coverage);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "reseal", "--pcrs=7", "root", NULL), 0);
        ba_args_seal_binding(&a, &b);
        assert_true(b.require_coverage);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "--pin-tries=2", "--recovery-tries=0", "--pcr-signature=/s.json",
                                     "root", NULL), 0);
        o = ba_args_unseal(&a);
        assert_int_equal(o.pin_tries, 2);
        assert_int_equal(o.recovery_tries, 0);
        assert_string_equal(o.pcr_signature, "/s.json");
        assert_null(o.pcr_public_key);
        assert_string_equal(ba_args_previous_of(&a), a.key_path);
        ba_args_free(&a);
        assert_int_equal(parse_words(&a, "load", "/tmp/x.sealed", NULL), 0);
        assert_null(ba_args_previous_of(&a));
        ba_args_free(&a);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_load_by_name),
                cmocka_unit_test(test_load_options),
                cmocka_unit_test(test_usage_errors),
                cmocka_unit_test(test_enroll_defaults),
                cmocka_unit_test(test_enroll_pcrs),
                cmocka_unit_test(test_enroll_errors),
                cmocka_unit_test(test_enroll_device_and_uuid),
                cmocka_unit_test(test_help_version_lock_status),
                cmocka_unit_test(test_recovery_options),
                cmocka_unit_test(test_list_wipe),
                cmocka_unit_test(test_reseal_confirm_rekey),
                cmocka_unit_test(test_handed_down),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
