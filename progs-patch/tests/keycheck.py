#!/usr/bin/python3
"""The key check value of an interrupted btrfstune checksum change.

btrfstune records a change in the item (-13, TEMPORARY_ITEM, 0) of the root
tree: old and new type, phase, new_key_check (32 bytes) and flags.  With
flag 1, new_key_check is HMAC-SHA256(new key, TEXT + fsid); items written
before the flag existed have HMAC-SHA256(new key, TEXT) and flags 0.  This
reads it with Python's hmac, without btrfs-progs code:

  keycheck.py show KEYFILE IMAGE
      prints "salted", "unsalted" or "other", the flags and the value, for
      the first leaf holding the item whose MAC verifies with the key
  keycheck.py unsalt KEYFILE IMAGE
      rewrites the item of every such leaf as an older btrfstune wrote it
      (the value without the fsid, flags 0) and gives the leaf a new MAC

Exit status 0 on success, 1 if no such item was found.
"""
import hashlib
import hmac
import struct
import sys

SUPER = 65536
TEXT = b'btrfs-progs checksum change key check'
KEY = struct.pack('<QBQ', 2**64 - 13, 248, 0)
HEADER = 101       # struct btrfs_header
ITEM = 25          # struct btrfs_item: key, offset, size
ITEM_SIZE = 72     # struct csum_change_item


def mac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def items(img, key, nodesize):
    """(leaf offset, item data offset) of every live leaf with the item."""
    i = img.find(KEY)
    while i >= 0:
        leaf = i - i % nodesize
        off, size = struct.unpack_from('<II', img, i + 17)
        if (size == ITEM_SIZE and (i - leaf - HEADER) % ITEM == 0 and
                mac(key, bytes(img[leaf + 32:leaf + nodesize])) == img[leaf:leaf + 32]):
            yield leaf, leaf + HEADER + off
        i = img.find(KEY, i + 1)


def main(argv):
    if len(argv) != 4 or argv[1] not in ('show', 'unsalt'):
        sys.exit(__doc__)
    with open(argv[2], 'rb') as f:
        key = f.read()
    with open(argv[3], 'rb') as f:
        img = bytearray(f.read())
    fsid = bytes(img[SUPER + 32:SUPER + 48])
    nodesize = struct.unpack_from('<I', img, SUPER + 148)[0]
    found = list(items(img, key, nodesize))
    if not found:
        print('no checksum change item in a leaf that verifies with the key')
        return 1
    if argv[1] == 'show':
        data = found[0][1]
        value = bytes(img[data + 8:data + 40])
        flags = struct.unpack_from('<Q', img, data + 40)[0]
        kind = ('salted' if value == mac(key, TEXT + fsid) else
                'unsalted' if value == mac(key, TEXT) else 'other')
        print(kind, flags, value.hex())
        return 0
    for leaf, data in found:
        img[data + 8:data + 40] = mac(key, TEXT)
        struct.pack_into('<Q', img, data + 40, 0)
        img[leaf:leaf + 32] = mac(key, bytes(img[leaf + 32:leaf + nodesize]))
    with open(argv[3], 'r+b') as f:
        for leaf, _ in found:
            f.seek(leaf)
            f.write(img[leaf:leaf + nodesize])
    print(f'{len(found)} leaves rewritten')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
