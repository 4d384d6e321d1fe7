#!/usr/bin/python3
"""Independent check of hmac-sha256 on disk, with Python's hmac module.

The patched btrfs-progs must compute exactly what the kernel computes:
HMAC-SHA256(key, bytes) over the bytes every other checksum type covers.
This computes it without any btrfs-progs code and compares with what is
stored:

  oracle.py super KEYFILE IMAGE
      superblock at 64 KiB: MAC of bytes 32..4096 is in bytes 0..32
  oracle.py block KEYFILE IMAGE PHYSICAL NODESIZE
      tree block at PHYSICAL: MAC of bytes 32..NODESIZE is in bytes 0..32
  oracle.py data KEYFILE IMAGE PHYSICAL HEXMAC
      data sector (4 KiB) at PHYSICAL has MAC HEXMAC (from a csum item)

Exit status 0 if the stored MAC matches, 1 if not.
"""
import hashlib
import hmac
import sys

SUPER_OFFSET = 65536
SUPER_SIZE = 4096
SECTOR = 4096


def read(path, offset, size):
    with open(path, 'rb') as f:
        f.seek(offset)
        data = f.read(size)
    if len(data) != size:
        sys.exit(f'short read of {size} bytes at {offset} in {path}')
    return data


def mac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def main(argv):
    what, keyfile, image = argv[1:4]
    with open(keyfile, 'rb') as f:
        key = f.read()
    if what == 'super':
        blk = read(image, SUPER_OFFSET, SUPER_SIZE)
        want, got = blk[:32], mac(key, blk[32:])
    elif what == 'block':
        blk = read(image, int(argv[4]), int(argv[5]))
        want, got = blk[:32], mac(key, blk[32:])
    elif what == 'data':
        want = bytes.fromhex(argv[5].removeprefix('0x'))
        got = mac(key, read(image, int(argv[4]), SECTOR))
    else:
        sys.exit(f'unknown check {what}')
    if hmac.compare_digest(want, got):
        print(f'{what}: stored MAC matches HMAC-SHA256 computed by Python')
        return 0
    print(f'{what}: MISMATCH stored {want.hex()} computed {got.hex()}')
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
