#!/usr/bin/python3
"""Make a btrfs-image dump look like one of a two-device filesystem.

  image-2dev.py DUMP KEYFILE CHUNK_ROOT intact|changed

Sets num_devices to 2 in the dump's superblock and signs it again with
HMAC-SHA256 under KEYFILE (the dump's throwaway key), so that a restore
rewrites the chunk tree leaves and signs them again.  With "changed", one
byte inside the chunk tree leaf at CHUNK_ROOT is flipped: the restore must
refuse to sign it.  The dump must be uncompressed (btrfs-image -c 0).
"""
import struct
import sys

from oracle import SUPER_SIZE, mac

MAGIC_OFFSET = 64
FSID_OFFSET = 32
NUM_DEVICES_OFFSET = 136


def main():
    path, keyfile, chunk_root, mode = sys.argv[1:5]
    with open(keyfile, 'rb') as f:
        key = f.read()
    with open(path, 'rb') as f:
        dump = bytearray(f.read())
    magic = dump.find(b'_BHRfS_M')
    if magic < MAGIC_OFFSET:
        sys.exit('no superblock in the dump')
    sb = magic - MAGIC_OFFSET
    fsid = bytes(dump[sb + FSID_OFFSET:sb + FSID_OFFSET + 16])
    dump[sb + NUM_DEVICES_OFFSET:sb + NUM_DEVICES_OFFSET + 8] = struct.pack('<Q', 2)
    dump[sb:sb + 32] = mac(key, bytes(dump[sb + 32:sb + SUPER_SIZE]))
    if mode == 'changed':
        header = dump.find(fsid + struct.pack('<Q', int(chunk_root)), sb + SUPER_SIZE)
        if header < 32:
            sys.exit('chunk tree leaf %s not found in the dump' % chunk_root)
        dump[header - 32 + 3000] ^= 1
    with open(path, 'wb') as f:
        f.write(dump)


if __name__ == '__main__':
    main()
