/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The commands: the only layer, with main.c and args.c, that knows struct
 * ba_args; it hands the layers below what each needs.  The headers below
 * are the toolbox every command uses.
 */
#include "args.h"
#include "device-check.h"
#include "keyfile-io.h"

/* Each returns an exit code (exit-codes.h), having logged what went wrong. */
int ba_cmd_enroll(const struct ba_args *a);
int ba_cmd_load(const struct ba_args *a);
int ba_cmd_lock(const struct ba_args *a);
int ba_cmd_status(const struct ba_args *a);
int ba_cmd_reseal(const struct ba_args *a);
int ba_cmd_confirm(const struct ba_args *a);
int ba_cmd_rekey(const struct ba_args *a);
int ba_cmd_unprovision(const struct ba_args *a);
int ba_cmd_list(const struct ba_args *a);
int ba_cmd_wipe(const struct ba_args *a);
