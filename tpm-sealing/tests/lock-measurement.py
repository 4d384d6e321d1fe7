#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What btrfs-auth's lock measures for a loaded key, computed independently
of the tool (docs/tpm-sealing.md, "The lock PCR").

usage: lock-measurement.py measurement KEYFILE DESCRIPTION [UUID]
       lock-measurement.py pcr KEYFILE DESCRIPTION [UUID]

measurement: HMAC-SHA256(key, "btrfs-auth measure v1" NUL description NUL
fsid), fsid 16 zero bytes without a UUID.  pcr: the sha256 value a lock PCR
takes from all zeros when that one key is measured and then locked.  The
key is read from KEYFILE, so it appears in no argument list.
"""
import hashlib
import hmac
import sys
import uuid

LOCK_EVENT = b"btrfs-auth-lock-v1"


def measurement(keyfile, description, fsid):
    key = open(keyfile, "rb").read()
    fsid = uuid.UUID(fsid).bytes if fsid else bytes(16)
    msg = b"btrfs-auth measure v1\0" + description.encode() + b"\0" + fsid
    return hmac.new(key, msg, hashlib.sha256).digest()


def extend(pcr, event):
    return hashlib.sha256(pcr + hashlib.sha256(event).digest()).digest()


def main(argv):
    if len(argv) not in (4, 5) or argv[1] not in ("measurement", "pcr"):
        sys.exit(__doc__)
    m = measurement(argv[2], argv[3], argv[4] if len(argv) == 5 else "")
    if argv[1] == "pcr":
        m = extend(extend(bytes(32), m), LOCK_EVENT)
    print(m.hex())


if __name__ == "__main__":
    main(sys.argv)
