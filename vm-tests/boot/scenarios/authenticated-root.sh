# shellcheck shell=bash disable=SC2034 # read by run-boot.sh
# The main job: the root is authenticated btrfs, its key sealed to the TPM
# under the PCRs the firmware measures (0, 2, 4, 7) and the lock PCR 15.
# Boot 1 reports the checks and writes a file; the host's btrfs check with
# the key finds the image clean; one byte of that file is flipped on the
# host; boot 2 reads EIO for the file and boots otherwise normally.
BOOT_PLAN=first,tampered
