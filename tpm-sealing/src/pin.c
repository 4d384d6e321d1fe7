/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "crypto.h"
#include "pin.h"

int ba_pin_source_parse(const char *s, enum ba_pin_source *ret) {
        static const char *const names[] = {
                [BA_PIN_FROM_AUTO] = "auto",
                [BA_PIN_FROM_TTY] = "tty",
                [BA_PIN_FROM_STDIN] = "stdin",
                [BA_PIN_FROM_ASK_PASSWORD] = "ask-password",
        };

        for (size_t i = 0; s && i < ELEMENTSOF(names); i++)
                if (strcmp(s, names[i]) == 0) {
                        *ret = (enum ba_pin_source) i;
                        return 0;
                }
        return -EINVAL;
}

bool ba_pin_source_interactive(enum ba_pin_source src) {
        return src != BA_PIN_FROM_STDIN;
}

/* Byte by byte, straight into secret memory, so nothing after the newline is consumed from a shared stdin. */
static int read_line(int fd, struct ba_secret *pin) {
        pin->len = 0;
        for (;;) {
                ssize_t n;

                if (pin->len >= pin->size)
                        return -EFBIG;
                n = read(fd, pin->data + pin->len, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0 || pin->data[pin->len] == '\n')
                        break;
                pin->len++;
        }
        pin->data[pin->len] = 0;
        return pin->len > 0 ? 0 : -ENODATA;
}

/* The controlling terminal, else standard input when it is a terminal (a console without a session,
 * as in an initramfs shell); echo off while reading. */
static int open_terminal(bool *owned) {
        int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);

        *owned = fd >= 0;
        if (fd < 0 && isatty(STDIN_FILENO))
                return STDIN_FILENO;
        return fd < 0 ? -errno : fd;
}

static int read_tty(const char *prompt, struct ba_secret *pin) {
        struct termios old, quiet;
        bool owned;
        int fd, r;

        fd = open_terminal(&owned);
        if (fd < 0)
                return fd;
        if (tcgetattr(fd, &old) < 0) {
                r = -errno;
                goto out;
        }
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t) ECHO;
        quiet.c_lflag |= ECHONL;
        if (tcsetattr(fd, TCSAFLUSH, &quiet) < 0) {
                r = -errno;
                goto out;
        }
        (void) !write(fd == STDIN_FILENO ? STDERR_FILENO : fd, prompt, strlen(prompt));
        r = read_line(fd, pin);
        (void) tcsetattr(fd, TCSAFLUSH, &old);
out:
        if (owned)
                close(fd);
        return r;
}

static void exec_ask_password(int out_fd, unsigned timeout, const struct ba_prompt *p) {
        char id_arg[256], keyname_arg[64], timeout_arg[32];
        const char *argv[8];
        size_t n = 0;

        argv[n++] = "systemd-ask-password";
        argv[n++] = "--icon=drive-harddisk";
        snprintf(id_arg, sizeof(id_arg), "--id=btrfs-auth:%s", p->id);
        argv[n++] = id_arg;
        if (timeout > 0) {
                snprintf(timeout_arg, sizeof(timeout_arg), "--timeout=%u", timeout);
                argv[n++] = timeout_arg;
        }
        if (p->keyname) {
                snprintf(keyname_arg, sizeof(keyname_arg), "--keyname=%s", p->keyname);
                argv[n++] = keyname_arg;
                if (p->accept_cached)
                        argv[n++] = "--accept-cached";
        }
        argv[n++] = p->text;
        argv[n] = NULL;
        if (dup2(out_fd, STDOUT_FILENO) < 0)
                _exit(127);
        execvp(argv[0], (char *const *) argv);
        _exit(127);
}

static int read_ask_password(unsigned timeout, const struct ba_prompt *p, struct ba_secret *pin) {
        int fd[2], status, r;
        pid_t pid;

        if (pipe2(fd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                close(fd[0]);
                close(fd[1]);
                return r;
        }
        if (pid == 0)
                exec_ask_password(fd[1], timeout, p);
        close(fd[1]);
        r = read_line(fd[0], pin);
        close(fd[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -ECANCELED;
        return r;
}

int ba_pin_read(const struct ba_ask *ask, const struct ba_prompt *p, struct ba_secret *pin) {
        enum ba_pin_source src = ask->from;
        int r;

        r = ba_secret_new(pin, BA_PIN_MAX);
        if (r < 0)
                return r;
        if (src == BA_PIN_FROM_AUTO)
                src = isatty(STDIN_FILENO) ? BA_PIN_FROM_TTY : BA_PIN_FROM_ASK_PASSWORD;
        switch (src) {
        case BA_PIN_FROM_TTY:
                r = read_tty(p->text, pin);
                break;
        case BA_PIN_FROM_STDIN:
                r = read_line(STDIN_FILENO, pin);
                break;
        default:
                r = read_ask_password(ask->timeout, p, pin);
                break;
        }
        if (r < 0)
                ba_secret_free(pin);
        return r;
}

int ba_pin_auth(const struct ba_secret *pin, TPM2B_AUTH *auth) {
        int r;

        memset(auth, 0, sizeof(*auth));
        r = ba_sha256((const struct ba_iovec[]) { { pin->data, pin->len } }, 1, auth->buffer);
        if (r < 0)
                return r;
        auth->size = BA_DIGEST_SIZE;
        while (auth->size > 0 && auth->buffer[auth->size - 1] == 0)
                auth->size--;
        return 0;
}
