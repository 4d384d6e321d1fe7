/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include <tss2/tss2_tpm2_types.h>

/*
 * Session attributes for the two commands that carry the key.  This file
 * is compiled a second time with BTRFS_AUTH_TEST_NO_PARAM_ENCRYPTION into
 * a test-only binary, so the traffic-capture test can show that without
 * encryption the key is visible, i.e. that the test can fail.
 */
TPMA_SESSION ba_session_attrs_create(void); /* Create: the key travels in the command */
TPMA_SESSION ba_session_attrs_unseal(void); /* Unseal: the key travels in the response */
bool ba_param_encryption_enabled(void);
