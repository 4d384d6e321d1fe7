/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "crypto.h"
#include "exit-codes.h"
#include "image-digest.h"
#include "log.h"
#include "util.h"

#define CHUNK (1024 * 1024)

/* SHA-256 of fd's first size bytes; -EIO when the file is shorter or libcrypto fails, -errno on read errors. */
static int hash_prefix(int fd, unsigned long long size, uint8_t *buf, uint8_t out[BA_DIGEST_SIZE]) {
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int r = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? 0 : -EIO;

        while (r == 0 && size > 0) {
                size_t want = size < CHUNK ? (size_t) size : CHUNK;
                ssize_t n = read(fd, buf, want);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        r = n < 0 ? -errno : -EIO;
                else if (EVP_DigestUpdate(ctx, buf, (size_t) n) != 1)
                        r = -EIO;
                else
                        size -= (unsigned long long) n;
        }
        if (r == 0 && EVP_DigestFinal_ex(ctx, out, NULL) != 1)
                r = -EIO;
        EVP_MD_CTX_free(ctx);
        return r;
}

static int parse_pin(const char *digest_hex, const char *size_text, uint8_t want[BA_DIGEST_SIZE],
                     unsigned long long *size) {
        char *end;

        errno = 0;
        *size = size_text ? strtoull(size_text, &end, 10) : 0;
        if (!digest_hex || ba_hex_decode(digest_hex, want, BA_DIGEST_SIZE) < 0 || !size_text || errno != 0 ||
            *end != '\0' || *size == 0)
                return log_fail(BA_EXIT_FAILURE, "btrfs-auth.conf: " BA_CONF_PROVISION_DIGEST " (64 hex digits) and "
                                BA_CONF_PROVISION_SIZE " (bytes) must both be set to check the root against the "
                                "image: the boot image is damaged. Nothing was changed.");
        return 0;
}

int ba_image_digest_check(const char *device, const char *digest_hex, const char *size_text) {
        uint8_t want[BA_DIGEST_SIZE], got[BA_DIGEST_SIZE], *buf;
        char got_hex[2 * BA_DIGEST_SIZE + 1];
        unsigned long long size;
        time_t start = time(NULL);
        int fd, r;

        r = parse_pin(digest_hex, size_text, want, &size);
        if (r != 0)
                return r;
        fd = open(device, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                log_error_errno(errno, "Cannot open %s to check it against the image", device);
                return BA_EXIT_DEVICE;
        }
        buf = malloc(CHUNK);
        r = buf ? hash_prefix(fd, size, buf, got) : -ENOMEM;
        free(buf);
        close(fd);
        if (r == -EIO)
                return log_fail(BA_EXIT_IMAGE_DIGEST, "%s is shorter than the image's %llu bytes (or libcrypto "
                                "failed): it is not the image this boot image was built for. Nothing was changed.",
                                device, size);
        if (r < 0) {
                log_error_errno(r, "Cannot read %s to check it against the image", device);
                return BA_EXIT_DEVICE;
        }
        if (!ba_digest_equal(got, want, BA_DIGEST_SIZE)) {
                ba_hex_encode(got, BA_DIGEST_SIZE, got_hex);
                return log_fail(BA_EXIT_IMAGE_DIGEST, "%s is not the image this boot image was built for (SHA-256 of "
                                "its first %llu bytes is %s, the image's is %s): it was changed after the build. "
                                "Nothing was changed; write the image again.", device, size, got_hex, digest_hex);
        }
        log_info("%s is the image this boot image was built for (%llu MiB checked in %ld s).", device,
                 size >> 20, (long) (time(NULL) - start));
        return 0;
}
