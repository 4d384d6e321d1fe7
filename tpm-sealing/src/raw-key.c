/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "fileio.h"
#include "log.h"
#include "raw-key.h"

int ba_key_read_file(const char *path, struct ba_secret *key) {
        bool is_stdin = strcmp(path, "-") == 0;
        const char *name = is_stdin ? "stdin" : path;
        int fd, r;

        r = ba_secret_new(key, BA_KEY_MAX_SIZE);
        if (r < 0)
                return log_fail(BA_EXIT_FAILURE, "Out of memory for the key buffer.");
        fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                log_error_errno(errno, "Cannot open key file %s", path);
                ba_secret_free(key);
                return BA_EXIT_FAILURE;
        }
        r = ba_read_fd(fd, key->data, key->size, &key->len);
        if (!is_stdin)
                close(fd);
        if (r == 0 && key->len == 0)
                r = -ENODATA;
        if (r == 0)
                return 0;
        ba_secret_free(key);
        if (r == -EFBIG)
                return log_fail(BA_EXIT_FAILURE, "The key in %s is longer than %d bytes, the most a TPM seals.",
                                name, BA_KEY_MAX_SIZE);
        if (r == -ENODATA)
                return log_fail(BA_EXIT_FAILURE, "The key in %s is empty.", name);
        log_error_errno(r, "Cannot read key file %s", name);
        return BA_EXIT_FAILURE;
}

int ba_key_generate(struct ba_secret *key) {
        int r;

        if (ba_secret_new(key, BA_GENERATED_KEY_SIZE) < 0)
                return log_fail(BA_EXIT_FAILURE, "Out of memory for the key buffer.");
        r = ba_random_bytes(key->data, BA_GENERATED_KEY_SIZE);
        if (r < 0) {
                ba_secret_free(key);
                log_error_errno(r, "Cannot get random bytes for a new key (getrandom)");
                return BA_EXIT_FAILURE;
        }
        key->len = BA_GENERATED_KEY_SIZE;
        return 0;
}
