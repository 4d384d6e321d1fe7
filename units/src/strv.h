/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A growable list of owned strings, kept free of duplicates. */
struct strv {
        char **v;
        size_t n;
        size_t cap;
};

#define STRV_INIT { NULL, 0, 0 }

/* Returns 1 if added, 0 if already present, -ENOMEM. */
int strv_add_unique(struct strv *s, const char *str);
bool strv_contains(const struct strv *s, const char *str);
void strv_sort(struct strv *s);
void strv_done(struct strv *s);
