/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrfstune.h"
#include "exit-codes.h"
#include "log.h"

/* A pipe already holding the key (at most 128 bytes: far below the pipe's capacity), write end closed. */
static int key_pipe(const struct ba_secret *key, int *read_end) {
        int p[2];
        ssize_t n;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        do
                n = write(p[1], key->data, key->len);
        while (n < 0 && errno == EINTR);
        close(p[1]);
        if (n != (ssize_t) key->len) {
                close(p[0]);
                return n < 0 ? -errno : -EIO;
        }
        *read_end = p[0];
        return 0;
}

static void exec_btrfstune(const char *btrfstune, const char *dev, int old_fd, int new_fd) {
        int a = fcntl(old_fd, F_DUPFD_CLOEXEC, 10), b = fcntl(new_fd, F_DUPFD_CLOEXEC, 10);

        /* dup2 clears close-on-exec on 3 and 4 only. */
        if (a < 0 || b < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0)
                _exit(126);
        execlp(btrfstune, btrfstune, "--auth-key-file", "/proc/self/fd/3", "--new-auth-key-file", "/proc/self/fd/4",
               dev, (char *) NULL);
        _exit(127);
}

static int wait_child(pid_t pid, int *status) {
        while (waitpid(pid, status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

int ba_btrfstune_rekey(const char *btrfstune, const char *dev, const struct ba_secret *old_key,
                       const struct ba_secret *new_key) {
        int old_fd = -1, new_fd = -1, status = 0, r;
        pid_t pid = -1;

        r = key_pipe(old_key, &old_fd);
        if (r == 0)
                r = key_pipe(new_key, &new_fd);
        if (r == 0 && (pid = fork()) < 0)
                r = -errno;
        if (r == 0 && pid == 0)
                exec_btrfstune(btrfstune, dev, old_fd, new_fd);
        if (old_fd >= 0)
                close(old_fd);
        if (new_fd >= 0)
                close(new_fd);
        if (r == 0) {
                log_info("Running %s to change the key of %s: it verifies every block with the current key first; "
                         "if it is interrupted, run the same btrfs-auth rekey again to resume.", btrfstune, dev);
                fflush(stdout);
                fflush(stderr);
                r = wait_child(pid, &status);
        }
        if (r < 0) {
                log_error_errno(r, "Cannot run %s", btrfstune);
                return BA_EXIT_FAILURE;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
                return log_fail(BA_EXIT_REKEY, "%s was not found: install the patched btrfs-progs or give its path "
                                "with --btrfstune=PATH.", btrfstune);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return log_fail(BA_EXIT_REKEY, "%s failed (%s %d) on %s: the filesystem still opens with the current "
                                "key, and both keys are kept; fix what it reported and run btrfs-auth rekey again "
                                "to resume.", btrfstune, WIFEXITED(status) ? "status" : "signal",
                                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), dev);
        return 0;
}
