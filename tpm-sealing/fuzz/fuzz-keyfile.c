/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the key-file parser.  Each input is tried as is and
 * once more with the header length and checksum forged to fit, so the
 * fuzzer gets past the checksum into the record walk and the consistency
 * checks.  Beyond "no crash, no sanitizer report" it checks two
 * properties: every refusal carries a reason, and every accepted file
 * writes back into a file that parses to the same bytes again.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct ba_keyfile *kf) {
        uint8_t *a = NULL, *b = NULL;
        size_t alen = 0, blen = 0;
        struct ba_keyfile again;
        char err[256];

        if (ba_keyfile_serialize(kf, &a, &alen, err, sizeof(err)) < 0)
                abort(); /* accepted but cannot be written */
        if (ba_keyfile_parse(a, alen, &again, err, sizeof(err)) < 0)
                abort(); /* written but cannot be read */
        if (ba_keyfile_serialize(&again, &b, &blen, err, sizeof(err)) < 0 || alen != blen || memcmp(a, b, alen) != 0)
                abort(); /* not stable */
        free(a);
        free(b);
}

static void try_parse(const uint8_t *data, size_t size) {
        struct ba_keyfile kf;
        char err[256] = "";

        if (ba_keyfile_parse(data, size, &kf, err, sizeof(err)) == 0)
                round_trip(&kf);
        else if (err[0] == '\0')
                abort(); /* refused without saying why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *copy;

        try_parse(data, size);
        if (size < BA_KEYFILE_HEADER_SIZE + BA_KEYFILE_TRAILER_SIZE || size > BA_KEYFILE_MAX_SIZE)
                return 0;
        copy = malloc(size);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        ba_fixture_refix(copy, size);
        try_parse(copy, size);
        free(copy);
        return 0;
}
