/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit-name escaping against fixed vectors and, when $SYSTEMD_ESCAPE names
 * systemd-escape(1), against what systemd itself prints for the same
 * inputs, fixed and random. */
#include <errno.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "escape.h"

extern char **environ;

struct vec {
        const char *in;
        const char *out;        /* NULL: must fail with err */
        int err;
};

static const struct vec string_vecs[] = {
        { "root", "root", 0 },
        { "a-b", "a\\x2db", 0 },
        { "a/b", "a-b", 0 },
        { "a b", "a\\x20b", 0 },
        { ".hidden", "\\x2ehidden", 0 },
        { "a.b..c", "a.b..c", 0 },
        { "\xc3\xbc", "\\xc3\\xbc", 0 },
        { "a\\b", "a\\x5cb", 0 },
        { "-lead", "\\x2dlead", 0 },
        { "x:y_z.w", "x:y_z.w", 0 },
        { "tab\tx", "tab\\x09x", 0 },
        { "~@%i", "\\x7e\\x40\\x25i", 0 },
        { "", "", 0 },
};

static const struct vec path_vecs[] = {
        { "/", "-", 0 },
        { "/sysroot", "sysroot", 0 },
        { "/sysroot/usr", "sysroot-usr", 0 },
        { "/sysusr/usr", "sysusr-usr", 0 },
        { "/a-b/c", "a\\x2db-c", 0 },
        { "/foo//bar/", "foo-bar", 0 },
        { "/a b", "a\\x20b", 0 },
        { "/.dot", "\\x2edot", 0 },
        { "/sysroot/.snap", "sysroot-.snap", 0 },
        { "/\xc3\xbc/x", "\\xc3\\xbc-x", 0 },
        { "/a/./b", "a-b", 0 },
        { "//", "-", 0 },
        { "/a/.", "a", 0 },
        { "/.", "-", 0 },
        { "/-", "\\x2d", 0 },
        { "/a/../b", NULL, EINVAL },
        { "/..", NULL, EINVAL },
        { "rel/x", NULL, EINVAL },
        { "", NULL, EINVAL },
};

static void check_vecs(const struct vec *v, size_t n, int (*fn)(const char *, char **)) {
        for (size_t i = 0; i < n; i++) {
                char *out = NULL;
                int r = fn(v[i].in, &out);

                if (v[i].out) {
                        if (r != 0)
                                fail_msg("escaping \"%s\" failed: %d", v[i].in, r);
                        assert_string_equal(out, v[i].out);
                } else {
                        if (r != -v[i].err)
                                fail_msg("escaping \"%s\" gave %d, expected %d", v[i].in, r, -v[i].err);
                }
                free(out);
        }
}

static void test_string_vectors(void **state) {
        (void) state;
        check_vecs(string_vecs, sizeof(string_vecs) / sizeof(*string_vecs), escape_unit_string);
}

static void test_path_vectors(void **state) {
        (void) state;
        check_vecs(path_vecs, sizeof(path_vecs) / sizeof(*path_vecs), escape_unit_path);
}

static char *repeat(char c, size_t n) {
        char *s = malloc(n + 1);

        assert_non_null(s);
        memset(s, c, n);
        s[n] = '\0';
        return s;
}

static void test_unit_name_limits(void **state) {
        char *name = NULL, *a = repeat('a', 231), *path;
        (void) state;

        /* systemd refuses unit names of 256 characters or more. */
        assert_int_equal(unit_name_instance("btrfs-auth-load@", a, ".service", &name), 0);
        assert_int_equal(strlen(name), 255);
        free(name);
        free(a);
        a = repeat('a', 232);
        assert_int_equal(unit_name_instance("btrfs-auth-load@", a, ".service", &name), -ENAMETOOLONG);
        assert_int_equal(unit_name_instance("btrfs-auth-load@", "", ".service", &name), -EINVAL);
        free(a);

        a = repeat('a', 249);
        assert_int_not_equal(asprintf(&path, "/%s", a), -1);
        assert_int_equal(unit_name_from_path(path, ".mount", &name), 0);
        assert_int_equal(strlen(name), 255);
        free(name);
        free(path);
        assert_int_not_equal(asprintf(&path, "/%sa", a), -1);
        assert_int_equal(unit_name_from_path(path, ".mount", &name), -ENAMETOOLONG);
        free(path);
        free(a);

        assert_int_equal(unit_name_instance("btrfs-auth-load@", "a/b c-d", ".service", &name), 0);
        assert_string_equal(name, "btrfs-auth-load@a-b\\x20c\\x2dd.service");
        free(name);
        assert_int_equal(unit_name_from_path("/", ".mount", &name), 0);
        assert_string_equal(name, "-.mount");
        free(name);
}

/* Runs argv, returns its exit status and its stdout (trailing newline cut). */
static int run_capture(char *const argv[], char **out) {
        size_t len = 0, cap = 1 << 16;
        int fds[2], status;
        posix_spawn_file_actions_t fa;
        pid_t pid;
        ssize_t k;
        char *buf = malloc(cap);

        assert_non_null(buf);
        assert_int_equal(pipe(fds), 0);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        close(fds[1]);

        while ((k = read(fds[0], buf + len, cap - len - 1)) > 0) {
                len += (size_t) k;
                if (len + 1 == cap) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        assert_non_null(buf);
                }
        }
        close(fds[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        while (len > 0 && buf[len - 1] == '\n')
                len--;
        buf[len] = '\0';
        *out = buf;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Escapes inputs[0..n) with ours and with systemd-escape (extra options
 * first) in one run, and compares them one by one. */
static void compare_batch(const char *tool, const char *opt, const char *const *inputs, size_t n,
                          int (*fn)(const char *, char **)) {
        char **argv = calloc(n + 4, sizeof(char *)), *out, *save = NULL, *tok;
        size_t a = 0;

        assert_non_null(argv);
        argv[a++] = (char *) tool;
        if (opt)
                argv[a++] = (char *) opt;
        argv[a++] = (char *) "--";
        for (size_t i = 0; i < n; i++)
                argv[a++] = (char *) inputs[i];
        assert_int_equal(run_capture(argv, &out), 0);

        tok = strtok_r(out, " ", &save);
        for (size_t i = 0; i < n; i++) {
                char *ours = NULL;

                assert_int_equal(fn(inputs[i], &ours), 0);
                if (!tok)
                        fail_msg("systemd-escape printed fewer words than inputs");
                if (strcmp(ours, tok) != 0)
                        fail_msg("\"%s\": ours \"%s\", systemd-escape \"%s\"", inputs[i], ours, tok);
                free(ours);
                tok = strtok_r(NULL, " ", &save);
        }
        free(out);
        free(argv);
}

static const char *systemd_escape(void) {
        const char *t = getenv("SYSTEMD_ESCAPE");

        if (!t || !*t)
                fail_msg("$SYSTEMD_ESCAPE does not name systemd-escape; install systemd");
        return t;
}

static void test_fixed_against_systemd(void **state) {
        const char *tool = systemd_escape(), *in[64];
        size_t n = 0;
        (void) state;

        /* systemd-escape prints nothing at all for "", so leave it out. */
        for (size_t i = 0; i < sizeof(string_vecs) / sizeof(*string_vecs); i++)
                if (string_vecs[i].in[0])
                        in[n++] = string_vecs[i].in;
        compare_batch(tool, NULL, in, n, escape_unit_string);

        n = 0;
        for (size_t i = 0; i < sizeof(path_vecs) / sizeof(*path_vecs); i++)
                if (path_vecs[i].out)
                        in[n++] = path_vecs[i].in;
        compare_batch(tool, "--path", in, n, escape_unit_path);
}

/* A deterministic byte soup weighted towards the characters that matter. */
static char *random_string(unsigned *seed, bool path) {
        static const char special[] = "/-._:\\ .@%~\t\n'\"";
        size_t len = 1 + (size_t) (rand_r(seed) % 24);
        char *s = malloc(len + 2), *t = s;

        assert_non_null(s);
        if (path)
                *t++ = '/';
        for (size_t i = 0; i < len; i++) {
                int k = rand_r(seed) % 4;

                if (k == 0)
                        *t++ = special[rand_r(seed) % (sizeof(special) - 1)];
                else if (k == 1)
                        *t++ = (char) (0x80 + rand_r(seed) % 0x80);
                else
                        *t++ = (char) ('0' + rand_r(seed) % 75);
        }
        *t = '\0';
        /* ".." is refused on purpose; keep random paths escapable. */
        if (path)
                for (char *d; (d = strstr(s, "..")); )
                        d[0] = '_';
        return s;
}

static void test_random_against_systemd(void **state) {
        const char *tool = systemd_escape();
        char *in[400];
        unsigned seed = 20240601;
        (void) state;

        for (int round = 0; round < 2; round++) {
                bool path = round == 1;

                for (size_t i = 0; i < 400; i++)
                        in[i] = random_string(&seed, path);
                compare_batch(tool, path ? "--path" : NULL, (const char *const *) in, 400,
                              path ? escape_unit_path : escape_unit_string);
                for (size_t i = 0; i < 400; i++)
                        free(in[i]);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_string_vectors),
                cmocka_unit_test(test_path_vectors),
                cmocka_unit_test(test_unit_name_limits),
                cmocka_unit_test(test_fixed_against_systemd),
                cmocka_unit_test(test_random_against_systemd),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
