/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "plan.h"

/* rootflags= and mount.usr*= from the kernel command line and, as dracut
 * reads them too, from etcdir/cmdline.d/ *.conf and etcdir/cmdline:
 * the mounts systemd calls sysroot.mount and sysusr-usr.mount. */
int gather_cmdline(struct plan *p, const char *etcdir);

/* Entries of an fstab.  With sysroot, the file is the real root's, read
 * in the initrd after /sysroot is mounted: as systemd-fstab-generator
 * does, only /usr and x-initrd.mount entries count, below /sysroot. */
int gather_fstab(struct plan *p, const char *path, bool sysroot);

/* Every NAME.sealed in keydir becomes a key to load in the initrd, so that
 * all keys are in the keyring before the TPM is locked. */
int gather_keydir(struct plan *p, const char *keydir);
