/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "exit-codes.h"
#include "log.h"
#include "secure.h"
#include "tpm2-session.h"

#ifndef BA_VERSION
#define BA_VERSION "unknown"
#endif

/* Our messages say what failed and what to do; tpm2-tss's own log lines would only repeat them
 * with less context.  An explicit TSS2_LOG from the user still wins. */
static void quiet_tss_log(enum ba_log_level level) {
        (void) setenv("TSS2_LOG", level >= BA_LOG_DEBUG ? "all+warning" : "all+none", 0);
}

static int run(const struct ba_args *a) {
        switch (a->command) {
        case BA_CMD_HELP:
                ba_usage(stdout);
                return BA_EXIT_OK;
        case BA_CMD_VERSION:
                printf("btrfs-auth %s%s\n", BA_VERSION,
                       ba_param_encryption_enabled() ? "" : " (TEST BUILD: parameter encryption off)");
                return BA_EXIT_OK;
        case BA_CMD_ENROLL:
                return ba_cmd_enroll(a);
        case BA_CMD_LOAD:
                return ba_cmd_load(a);
        case BA_CMD_LOCK:
                return ba_cmd_lock(a);
        case BA_CMD_STATUS:
                return ba_cmd_status(a);
        case BA_CMD_RESEAL:
                return ba_cmd_reseal(a);
        case BA_CMD_CONFIRM:
                return ba_cmd_confirm(a);
        case BA_CMD_REKEY:
                return ba_cmd_rekey(a);
        case BA_CMD_UNPROVISION:
                return ba_cmd_unprovision(a);
        case BA_CMD_LIST:
                return ba_cmd_list(a);
        case BA_CMD_WIPE:
                return ba_cmd_wipe(a);
        }
        return BA_EXIT_FAILURE;
}

int main(int argc, char **argv) {
        struct ba_args a;
        int r;

        if (ba_harden_process() < 0)
                return BA_EXIT_FAILURE;
        r = ba_args_parse(argc, argv, &a);
        if (r == 0) {
                log_set_max_level(a.log_level);
                quiet_tss_log(a.log_level);
                if (!ba_param_encryption_enabled())
                        log_warning("TEST BUILD: TPM parameter encryption is off; never install this binary.");
                r = run(&a);
        }
        ba_args_free(&a);
        return r;
}
