/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/*
 * What btrfs-auth and its generator share: the rule for a key NAME (as in
 * btrfs:NAME, NAME.sealed and btrfs-auth-load@NAME.service).
 */
#define BA_NAME_MAX 200

/*
 * 1..200 of A-Z a-z 0-9 _ - . @ +, not starting with "." (it would hide
 * the file and collide with temporary files) nor "-" (the load unit passes
 * the name as an argument: it must never read as an option).
 */
bool ba_name_valid(const char *name);
