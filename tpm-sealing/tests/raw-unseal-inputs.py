#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What tpm2-tools need to try a signed-policy unseal by hand (raw-unseal.sh).

usage: raw-unseal-inputs.py KEYFILE SIGNATURE.json OUTDIR

Writes OUTDIR/sealed.pub and sealed.priv (the key file's TPM2B_PUBLIC and
TPM2B_PRIVATE records, in the marshalled form tpm2_load reads), pol.bin
and sig.bin (the first sha256 entry of the signature file), pcrs (the
sealed PCR list) and signed (the signed PCR list), from the documented
formats (docs/key-file-format.md, systemd's tpm2-pcr-signature.json).
No secret is involved: the key inside sealed.priv only the TPM can open.
"""
import base64
import json
import os
import struct
import sys


def records(data):
    n = struct.unpack_from("<I", data, 12)[0]
    off, end = 16, 16 + n
    while off < end:
        t, ln = struct.unpack_from("<HI", data, off)
        yield t, data[off + 6:off + 6 + ln]
        off += 6 + ln


def pcr_list(mask):
    return ",".join(str(i) for i in range(24) if mask >> i & 1)


def main(keyfile, sigfile, out):
    rec = dict(records(open(keyfile, "rb").read()))
    entry = json.load(open(sigfile))["sha256"][0]
    os.makedirs(out, exist_ok=True)
    files = {
        "sealed.pub": rec[0x000a],
        "sealed.priv": rec[0x000b],
        "pol.bin": bytes.fromhex(entry["pol"]),
        "sig.bin": base64.b64decode(entry["sig"]),
        "pcrs": pcr_list(struct.unpack("<I", rec[0x0004])[0]).encode(),
        "signed": pcr_list(struct.unpack_from("<I", rec[0x000c])[0]).encode(),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
