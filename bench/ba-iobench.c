/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ba-iobench: the timed part of the kernel I/O benchmark, run in the VM.
 *
 * Each command takes one to eight targets (files, directories or
 * algorithms, one per file system) and interleaves them: the work is cut
 * into small steps, and every step is done for each target in turn, the
 * first target rotating from step to step.  Each target's time is the sum
 * of its own steps (CLOCK_MONOTONIC around exactly that work).  A busy
 * host slows the guest in bursts of tens of milliseconds; interleaving at
 * a finer grain spreads those bursts evenly over the targets, so their
 * ratios stay meaningful when the absolute times do not.  Prints one line
 * per target: "TARGET seconds=S bytes=B ops=N".  Linked against libc only.
 *
 *   ba-iobench write MIB FILE...     per step 4 MiB of 1 MiB writes, then
 *                                    fdatasync (the checksums are computed
 *                                    at writeback, inside the step)
 *   ba-iobench read FILE...          per step 4 MiB of 1 MiB reads, from
 *                                    cold caches, readahead off so that each
 *                                    step reads (and verifies) its own bytes
 *   ba-iobench randread COUNT FILE...
 *                                    per step one 4 KiB pread at a random
 *                                    aligned offset, readahead off
 *   ba-iobench meta COUNT DIR...     create COUNT empty files per directory
 *                                    (steps of 100 files, each ended by
 *                                    syncfs); drop caches (not timed); stat
 *                                    them; unlink them (syncfs per step)
 *   ba-iobench hash COUNT ALG...     the kernel's ALG (crc32c, sha256,
 *                                    hmac(sha256), ...) over COUNT 4 KiB
 *                                    blocks through AF_ALG, one digest per
 *                                    block as btrfs computes them, 16 blocks
 *                                    a step; an hmac gets a fixed 32-byte key
 *                                    (its cost does not depend on the value)
 *   ba-iobench run CMD [ARG...]      run CMD once, timed (its output goes to
 *                                    stderr; fails if CMD fails)
 *
 * The caller drops the caches before read and randread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syncfs */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_alg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024 * 1024)
#define STEP_MIB 4
#define BLOCK 4096
#define MAX_TARGETS 8
#define META_STEP 100
#define HASH_STEP 16

struct target {
        const char *name;
        int fd, op;
        double seconds;
        uint64_t bytes, ops, blocks;
};

static struct target targets[MAX_TARGETS];
static int ntargets;

static void die(const char *fmt, ...) {
        va_list ap;

        fputs("ba-iobench: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        if (errno)
                fprintf(stderr, ": %s", strerror(errno));
        fputc('\n', stderr);
        exit(1);
}

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void) { /* xorshift64: the same sequence on every run */
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static long parse_count(const char *s, const char *what) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v <= 0 || v > 100000000)
                die("%s must be a positive number, not '%s'", what, s);
        return v;
}

static void set_targets(int argc, char **argv) {
        if (argc < 1 || argc > MAX_TARGETS)
                die("between 1 and %d targets, not %d", MAX_TARGETS, argc);
        ntargets = argc;
        for (int i = 0; i < argc; i++)
                targets[i] = (struct target) { .name = argv[i], .fd = -1, .op = -1 };
}

/* The target that goes j-th in step i. */
static struct target *nth(long i, int j) {
        return &targets[(i + j) % ntargets];
}

static void report(void) {
        for (int i = 0; i < ntargets; i++)
                printf("%s seconds=%.6f bytes=%" PRIu64 " ops=%" PRIu64 "\n", targets[i].name,
                       targets[i].seconds, targets[i].bytes, targets[i].ops);
}

static void *random_buffer(size_t size) {
        uint64_t *buf = malloc(size);

        if (!buf)
                die("out of memory");
        for (size_t i = 0; i < size / sizeof(*buf); i++)
                buf[i] = rng(); /* incompressible, no two 4 KiB blocks alike */
        return buf;
}

static void open_all(int flags, int advice) {
        struct stat st;

        for (int i = 0; i < ntargets; i++) {
                struct target *t = &targets[i];

                t->fd = open(t->name, flags, 0644);
                if (t->fd < 0 || fstat(t->fd, &st) < 0)
                        die("open %s", t->name);
                t->blocks = (uint64_t) st.st_size / BLOCK;
                errno = advice ? posix_fadvise(t->fd, 0, 0, advice) : 0;
                if (errno)
                        die("posix_fadvise %s", t->name);
        }
}

static void close_all(void) {
        for (int i = 0; i < ntargets; i++)
                close(targets[i].fd);
}

static int cmd_write(long mib) {
        uint64_t *buf = random_buffer(MIB);
        long steps = (mib + STEP_MIB - 1) / STEP_MIB;

        open_all(O_WRONLY | O_CREAT | O_TRUNC, 0);
        for (long i = 0; i < steps; i++) {
                for (int j = 0; j < ntargets; j++) {
                        struct target *t = nth(i, j);
                        double t0 = now();

                        for (long k = i * STEP_MIB; k < (i + 1) * STEP_MIB && k < mib; k++) {
                                buf[0] = (uint64_t) k; /* no two chunks alike either */
                                if (write(t->fd, buf, MIB) != MIB)
                                        die("write %s", t->name);
                                t->bytes += MIB;
                                t->ops++;
                        }
                        if (fdatasync(t->fd) < 0)
                                die("fdatasync %s", t->name);
                        t->seconds += now() - t0;
                }
        }
        close_all();
        free(buf);
        report();
        return 0;
}

static int cmd_read(void) {
        char *buf = random_buffer(MIB);
        int done = 0;

        /* Readahead off: each step reads, and verifies, only its own bytes. */
        open_all(O_RDONLY, POSIX_FADV_RANDOM);
        for (long i = 0; done < ntargets; i++) {
                done = 0;
                for (int j = 0; j < ntargets; j++) {
                        struct target *t = nth(i, j);
                        double t0 = now();
                        ssize_t n = 1;

                        for (int k = 0; k < STEP_MIB && n > 0; k++) {
                                n = read(t->fd, buf, MIB);
                                if (n < 0)
                                        die("read %s", t->name);
                                t->bytes += (uint64_t) n;
                                t->ops += n > 0;
                        }
                        t->seconds += now() - t0;
                        done += n == 0 || t->bytes >= t->blocks * BLOCK;
                }
        }
        close_all();
        free(buf);
        report();
        return 0;
}

static int cmd_randread(long count) {
        char buf[BLOCK];

        open_all(O_RDONLY, POSIX_FADV_RANDOM);
        for (int i = 0; i < ntargets; i++)
                if (targets[i].blocks == 0)
                        die("%s is smaller than one block", targets[i].name);
        for (long i = 0; i < count; i++) {
                uint64_t r = rng(); /* the same offsets, in blocks, on each file */

                for (int j = 0; j < ntargets; j++) {
                        struct target *t = nth(i, j);
                        off_t off = (off_t) (r % t->blocks) * BLOCK;
                        double t0 = now();

                        if (pread(t->fd, buf, BLOCK, off) != BLOCK)
                                die("pread %s at %lld", t->name, (long long) off);
                        t->seconds += now() - t0;
                        t->bytes += BLOCK;
                        t->ops++;
                }
        }
        close_all();
        report();
        return 0;
}

static void drop_caches(void) {
        int fd;

        sync();
        fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
        if (fd < 0 || write(fd, "3\n", 2) != 2)
                die("dropping caches");
        close(fd);
}

/* One step of the meta benchmark: files [first, first + META_STEP) of t. */
static void meta_step(struct target *t, long first, long count, int phase) {
        char name[32];
        struct stat st;
        double t0 = now();
        int fd;

        for (long f = first; f < first + META_STEP && f < count; f++) {
                snprintf(name, sizeof(name), "f%08ld", f);
                if (phase == 0) {
                        fd = openat(t->fd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
                        if (fd < 0)
                                die("create %s/%s", t->name, name);
                        close(fd);
                } else if (phase == 1) {
                        if (fstatat(t->fd, name, &st, 0) < 0)
                                die("stat %s/%s", t->name, name);
                } else if (unlinkat(t->fd, name, 0) < 0) {
                        die("unlink %s/%s", t->name, name);
                }
                t->ops++;
        }
        if (phase != 1 && syncfs(t->fd) < 0)
                die("syncfs %s", t->name);
        t->seconds += now() - t0;
}

static int cmd_meta(long count) {
        long steps = (count + META_STEP - 1) / META_STEP;

        for (int i = 0; i < ntargets; i++) {
                struct target *t = &targets[i];

                if (mkdir(t->name, 0755) < 0 && errno != EEXIST)
                        die("mkdir %s", t->name);
                t->fd = open(t->name, O_RDONLY | O_DIRECTORY);
                if (t->fd < 0)
                        die("open %s", t->name);
        }
        for (int phase = 0; phase < 3; phase++) {
                if (phase == 1)
                        drop_caches(); /* the stats read the tree blocks back, verifying them */
                for (long i = 0; i < steps; i++)
                        for (int j = 0; j < ntargets; j++)
                                meta_step(nth(i, j), i * META_STEP, count, phase);
        }
        close_all();
        report();
        return 0;
}

static void hash_open(struct target *t) {
        struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "hash" };
        unsigned char key[32];

        if (strlen(t->name) >= sizeof(sa.salg_name))
                die("algorithm name too long: %s", t->name);
        memcpy(sa.salg_name, t->name, strlen(t->name) + 1);
        t->fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
        if (t->fd < 0 || bind(t->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                die("AF_ALG %s (modules af_alg, algif_hash)", t->name);
        memset(key, 0x42, sizeof(key));
        if (strncmp(t->name, "hmac(", 5) == 0 && setsockopt(t->fd, SOL_ALG, ALG_SET_KEY, key, sizeof(key)) < 0)
                die("setting the key of %s", t->name);
        t->op = accept(t->fd, NULL, 0);
        if (t->op < 0)
                die("AF_ALG accept");
}

static int cmd_hash(long count) {
        uint64_t *buf = random_buffer(BLOCK);
        unsigned char digest[64];
        long steps = (count + HASH_STEP - 1) / HASH_STEP;

        for (int i = 0; i < ntargets; i++)
                hash_open(&targets[i]);
        for (long i = 0; i < steps; i++) {
                for (int j = 0; j < ntargets; j++) {
                        struct target *t = nth(i, j);
                        double t0 = now();

                        for (long b = i * HASH_STEP; b < (i + 1) * HASH_STEP && b < count; b++) {
                                buf[0] = (uint64_t) b;
                                if (write(t->op, buf, BLOCK) != BLOCK || read(t->op, digest, sizeof(digest)) <= 0)
                                        die("hashing with %s", t->name);
                                t->bytes += BLOCK;
                                t->ops++;
                        }
                        t->seconds += now() - t0;
                }
        }
        for (int i = 0; i < ntargets; i++)
                close(targets[i].op);
        close_all();
        free(buf);
        report();
        return 0;
}

static int cmd_run(char **argv) {
        double t0 = now();
        pid_t pid;
        int status;

        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                dup2(STDERR_FILENO, STDOUT_FILENO);
                execvp(argv[0], argv);
                die("exec %s", argv[0]);
        }
        if (waitpid(pid, &status, 0) < 0)
                die("waitpid");
        errno = 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("%s failed (wait status %d)", argv[0], status);
        targets[0] = (struct target) { .name = argv[0], .seconds = now() - t0, .ops = 1 };
        ntargets = 1;
        report();
        return 0;
}

static void usage(void) {
        fputs("usage: ba-iobench write MIB FILE... | read FILE... | randread COUNT FILE... |\n"
              "                  meta COUNT DIR... | hash COUNT ALG... | run CMD [ARG...]\n", stderr);
        exit(2);
}

int main(int argc, char **argv) {
        if (argc < 3)
                usage();
        if (strcmp(argv[1], "run") == 0)
                return cmd_run(argv + 2);
        if (strcmp(argv[1], "read") == 0) {
                set_targets(argc - 2, argv + 2);
                return cmd_read();
        }
        if (argc < 4)
                usage();
        set_targets(argc - 3, argv + 3);
        if (strcmp(argv[1], "write") == 0)
                return cmd_write(parse_count(argv[2], "MIB"));
        if (strcmp(argv[1], "randread") == 0)
                return cmd_randread(parse_count(argv[2], "COUNT"));
        if (strcmp(argv[1], "meta") == 0)
                return cmd_meta(parse_count(argv[2], "COUNT"));
        if (strcmp(argv[1], "hash") == 0)
                return cmd_hash(parse_count(argv[2], "COUNT"));
        usage();
        return 2;
}
