/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The parsers the generator relies on: kernel command line words, fstab
 * lines, mount options, btrfs-auth.conf. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdline.h"
#include "conf-file.h"
#include "conf.h"
#include "fstab.h"
#include "mountopts.h"
#include "strv.h"

/* Collects "key=value" (or "key" when there is no value) items. */
static int collect(const char *key, const char *value, void *userdata) {
        struct strv *s = userdata;
        char *item;
        int r;

        if (asprintf(&item, "%s%s%s", key, value ? "=" : "", value ? value : "") < 0)
                return -ENOMEM;
        r = strv_add_unique(s, item);
        free(item);
        return r < 0 ? r : 0;
}

static void expect_words(const char *line, const char *const *want) {
        struct strv got = STRV_INIT;
        size_t n = 0;

        assert_int_equal(cmdline_parse(line, collect, &got), 0);
        for (; want[n]; n++) {
                if (n >= got.n)
                        fail_msg("\"%s\": missing word \"%s\"", line, want[n]);
                assert_string_equal(got.v[n], want[n]);
        }
        assert_int_equal(got.n, n);
        strv_done(&got);
}

static void test_cmdline_words(void **state) {
        (void) state;
        expect_words("root=/dev/vda rootflags=auth_key=btrfs:root quiet\n",
                     (const char *[]) { "root=/dev/vda", "rootflags=auth_key=btrfs:root", "quiet", NULL });
        /* Quotes group and vanish wherever they are. */
        expect_words("  rootflags=\"auth_key=btrfs:a b\"  \"x=1 2\" y='3\"4' ",
                     (const char *[]) { "rootflags=auth_key=btrfs:a b", "x=1 2", "y=3\"4", NULL });
        /* An unterminated quote runs to the end; backslashes stay. */
        expect_words("a=\\x2d b=\"c d", (const char *[]) { "a=\\x2d", "b=c d", NULL });
        expect_words("\t\n ", (const char *[]) { NULL });
        expect_words("\"\" =v k=", (const char *[]) { "k=", NULL });
}

static void test_fstab_lines(void **state) {
        struct fstab_entry e;
        char l1[] = "  UUID=x\t/a\\040b  btrfs auth_key=btrfs:r,noauto 0 0\n";
        char l2[] = "# comment\n", l3[] = "   \n", l4[] = "/dev/sda1\n";
        char l5[] = "/dev/sda1 /mnt", l6[] = "/dev/x /m\\134\\07 t o extra fields";
        (void) state;

        assert_int_equal(fstab_parse_line(l1, &e), 1);
        assert_string_equal(e.what, "UUID=x");
        assert_string_equal(e.where, "/a b");
        assert_string_equal(e.type, "btrfs");
        assert_string_equal(e.options, "auth_key=btrfs:r,noauto");
        assert_int_equal(fstab_parse_line(l2, &e), 0);
        assert_int_equal(fstab_parse_line(l3, &e), 0);
        assert_int_equal(fstab_parse_line(l4, &e), -EINVAL);
        assert_int_equal(fstab_parse_line(l5, &e), 1);
        assert_string_equal(e.type, "");
        assert_string_equal(e.options, "");
        /* \134 is a backslash; a short escape stays as it is. */
        assert_int_equal(fstab_parse_line(l6, &e), 1);
        assert_string_equal(e.where, "/m\\\\07");
}

static void expect_keys(const char *opts, int found, const char *const *want) {
        struct strv got = STRV_INIT;
        size_t n = 0;

        assert_int_equal(mountopts_auth_keys(opts, "/test", &got), found);
        for (; want[n]; n++) {
                if (n >= got.n)
                        fail_msg("\"%s\": missing key \"%s\"", opts, want[n]);
                assert_string_equal(got.v[n], want[n]);
        }
        assert_int_equal(got.n, n);
        strv_done(&got);
}

static void test_mount_options(void **state) {
        (void) state;
        expect_keys("auth_key=btrfs:root", 1, (const char *[]) { "root", NULL });
        expect_keys("ro,auth_key=btrfs:a,compress=zstd,auth_key=btrfs:b,auth_key=btrfs:a", 3,
                    (const char *[]) { "a", "b", NULL });
        expect_keys("auth_key=btrfs:with-dash_and.dot@x+y", 1, (const char *[]) { "with-dash_and.dot@x+y", NULL });
        /* Names btrfs-auth refuses get no load unit: a colon, a leading dash (an option to the tool), a dot. */
        expect_keys("auth_key=btrfs:with:colon,auth_key=btrfs:-x,auth_key=btrfs:.x,auth_key=btrfs:ok", 1,
                    (const char *[]) { "ok", NULL });
        /* Malformed: none of these names a key, none crashes. */
        expect_keys("auth_key,auth_key=,auth_key=btrfs:,auth_key=user:x,auth_keyx=btrfs:y,"
                    "xauth_key=btrfs:z,,,auth_key=\"btrfs:q\"", 0, (const char *[]) { NULL });
        expect_keys("", 0, (const char *[]) { NULL });
        expect_keys(",,,", 0, (const char *[]) { NULL });

        assert_true(mountopts_has("a,x-initrd.mount,b", "x-initrd.mount"));
        assert_false(mountopts_has("a,x-initrd.mountx,b", "x-initrd.mount"));
        assert_false(mountopts_has("", "x-initrd.mount"));
}

static struct ba_conf conf_from(const char *text) {
        char dir[] = "/tmp/btrfs-auth-conf-XXXXXX", path[64];
        struct ba_conf c;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/" BA_CONF_FILE, dir);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        conf_read(dir, &c);
        unlink(path);
        rmdir(dir);
        return c;
}

static void test_conf(void **state) {
        struct ba_conf c;
        (void) state;

        c = conf_from("BTRFS_AUTH_TPM_WAIT=45\n");
        assert_true(c.set);
        assert_int_equal(c.tpm_wait, 45);
        assert_int_equal(conf_start_timeout(&c), 75);

        c = conf_from("# c\n  BTRFS_AUTH_TPM_WAIT = \"7\" \nOTHER=1\nBTRFS_AUTH_PIN_TIMEOUT='300'\n");
        assert_int_equal(c.tpm_wait, 7);
        assert_int_equal(c.pin_timeout, 300);
        assert_int_equal(conf_start_timeout(&c), 337);

        c = conf_from("BTRFS_AUTH_TPM_WAIT=1\nBTRFS_AUTH_TPM_WAIT=600");
        assert_int_equal(c.tpm_wait, 600);

        /* Invalid values leave the defaults. */
        c = conf_from("BTRFS_AUTH_TPM_WAIT=601\nBTRFS_AUTH_TPM_WAIT=-1\nBTRFS_AUTH_TPM_WAIT=3s\n"
                      "BTRFS_AUTH_TPM_WAIT=\n;BTRFS_AUTH_TPM_WAIT=5\nBTRFS_AUTH_PIN_TIMEOUT=3601\n"
                      "BTRFS_AUTH_TPM_WAIT\n");
        assert_false(c.set);
        assert_int_equal(c.tpm_wait, BA_CONF_TPM_WAIT_DEFAULT);
        assert_int_equal(c.pin_timeout, 0);
        assert_int_equal(conf_start_timeout(&c), 60);

        conf_read("/nonexistent", &c);
        assert_false(c.set);
        assert_int_equal(c.tpm_wait, BA_CONF_TPM_WAIT_DEFAULT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cmdline_words),
                cmocka_unit_test(test_fstab_lines),
                cmocka_unit_test(test_mount_options),
                cmocka_unit_test(test_conf),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
