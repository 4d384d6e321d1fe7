/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Configure-time probe: can this clang link a libFuzzer target (needs libclang-rt-*-dev)? */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        (void) data;
        (void) size;
        return 0;
}
