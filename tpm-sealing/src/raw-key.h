/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Raw HMAC keys, before sealing: read from the administrator's file, or made here. */
#pragma once

#include "keyfile.h"
#include "secure.h"

/* Reads a raw key (1..128 bytes) from path ("-": stdin).  Returns an exit code after logging. */
int ba_key_read_file(const char *path, struct ba_secret *key);

/* The size of a key btrfs-auth makes: HMAC-SHA256's block-sized keys gain nothing over its output size. */
#define BA_GENERATED_KEY_SIZE 32

/* A new random key of BA_GENERATED_KEY_SIZE bytes.  Returns an exit code after logging. */
int ba_key_generate(struct ba_secret *key);
