/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "key-name.h"

static bool name_char_ok(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.' || c == '@' || c == '+';
}

bool ba_name_valid(const char *name) {
        size_t n;

        if (!name)
                return false;
        n = strlen(name);
        if (n == 0 || n > BA_NAME_MAX || name[0] == '.' || name[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!name_char_ok(name[i]))
                        return false;
        return true;
}
