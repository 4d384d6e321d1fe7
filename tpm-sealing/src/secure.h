/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* No core dumps, no ptrace by other users, so a crash never writes a key to disk. */
int ba_harden_process(void);

/*
 * Memory for key material: its own anonymous mapping, locked so it is
 * never swapped out, excluded from core dumps, wiped before it is freed.
 */
struct ba_secret {
        uint8_t *data;
        size_t len;  /* bytes in use */
        size_t size; /* bytes available */
        size_t map_size;
};

int ba_secret_new(struct ba_secret *s, size_t size);
void ba_secret_free(struct ba_secret *s);

/* Fills p with n bytes from the kernel's CSPRNG (getrandom).  Returns 0 or -errno. */
int ba_random_bytes(void *p, size_t n);
