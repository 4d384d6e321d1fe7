/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

bool strv_contains(const struct strv *s, const char *str) {
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i], str) == 0)
                        return true;
        return false;
}

int strv_add_unique(struct strv *s, const char *str) {
        char *copy;

        if (strv_contains(s, str))
                return 0;

        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 4;
                char **v = reallocarray(s->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                s->v = v;
                s->cap = cap;
        }

        copy = strdup(str);
        if (!copy)
                return -ENOMEM;
        s->v[s->n++] = copy;
        return 1;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(struct strv *s) {
        if (s->n > 1)
                qsort(s->v, s->n, sizeof(*s->v), cmp_str);
}

void strv_done(struct strv *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        s->v = NULL;
        s->n = s->cap = 0;
}
