/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto.h"
#include "fileio.h"
#include "log.h"
#include "measure.h"

#define MEASURE_LABEL "btrfs-auth measure v1"

int ba_key_measurement(const struct ba_secret *key, const char *description, const uint8_t *fsid,
                       uint8_t out[BA_DIGEST_SIZE]) {
        static const uint8_t no_fsid[BA_UUID_SIZE];
        size_t dlen = strlen(description), len = sizeof(MEASURE_LABEL) + dlen + 1 + BA_UUID_SIZE;
        uint8_t *msg = malloc(len);
        int r;

        if (!msg)
                return -ENOMEM;
        memcpy(msg, MEASURE_LABEL, sizeof(MEASURE_LABEL)); /* with its NUL */
        memcpy(msg + sizeof(MEASURE_LABEL), description, dlen + 1);
        memcpy(msg + sizeof(MEASURE_LABEL) + dlen + 1, fsid ? fsid : no_fsid, BA_UUID_SIZE);
        r = ba_hmac_sha256(key->data, key->len, msg, len, out);
        free(msg);
        return r;
}

int ba_measurement_record(const char *state_dir, const char *name, const uint8_t m[BA_DIGEST_SIZE]) {
        char hex[2 * BA_DIGEST_SIZE + 2], *path = NULL;
        int r;

        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (asprintf(&path, "%s/%s" BA_MEASURE_SUFFIX, state_dir, name) < 0)
                return -ENOMEM;
        ba_hex_encode(m, BA_DIGEST_SIZE, hex);
        strcat(hex, "\n");
        r = ba_write_file_atomic(path, hex, strlen(hex), true);
        free(path);
        return r;
}

static int is_measure_file(const struct dirent *d) {
        size_t n = strlen(d->d_name), s = strlen(BA_MEASURE_SUFFIX);

        return d->d_name[0] != '.' && n > s && strcmp(d->d_name + n - s, BA_MEASURE_SUFFIX) == 0;
}

static int read_one(const char *state_dir, const char *file, uint8_t out[BA_DIGEST_SIZE]) {
        char *path = NULL, hex[2 * BA_DIGEST_SIZE + 1];
        uint8_t *buf = NULL;
        size_t len = 0;
        int r;

        if (asprintf(&path, "%s/%s", state_dir, file) < 0)
                return -ENOMEM;
        r = ba_read_file(path, 2 * BA_DIGEST_SIZE + 1, &buf, &len);
        free(path);
        if (r < 0)
                return r;
        if (len > 0 && buf[len - 1] == '\n')
                len--;
        r = -EBADMSG;
        if (len == 2 * BA_DIGEST_SIZE) {
                memcpy(hex, buf, len);
                hex[len] = '\0';
                r = ba_hex_decode(hex, out, BA_DIGEST_SIZE) < 0 ? -EBADMSG : 0;
        }
        free(buf);
        return r;
}

int ba_measurements_read(const char *state_dir, uint8_t (**out)[BA_DIGEST_SIZE], size_t *n) {
        struct dirent **list = NULL;
        int count = scandir(state_dir, &list, is_measure_file, alphasort), r = 0;

        *out = NULL;
        *n = 0;
        if (count < 0)
                return errno == ENOENT ? 0 : -errno;
        if (count > 0) {
                *out = calloc((size_t) count, sizeof(**out));
                if (!*out)
                        r = -ENOMEM;
        }
        for (int i = 0; i < count; i++) {
                if (r == 0) {
                        r = read_one(state_dir, list[i]->d_name, (*out)[i]);
                        if (r < 0)
                                log_error("Cannot read the measurement %s/%s: %s", state_dir, list[i]->d_name,
                                          strerror(-r));
                }
                free(list[i]);
        }
        free(list);
        if (r < 0) {
                free(*out);
                *out = NULL;
                return r;
        }
        *n = (size_t) count;
        return 0;
}
