# The trust boundary of an authenticated root booted from a signed UKI
# (docs/boot-chain.md).  Regenerate with: gnuplot docs/trust-boundary.gp
set terminal pngcairo size 1400,860 font "DejaVu Sans,11"
set output "docs/trust-boundary.png"
unset border; unset tics; unset key
set xrange [0:100]; set yrange [0:62]
set lmargin 0; set rmargin 0; set tmargin 0; set bmargin 0

# Colours: authenticated (HMAC), signed, measured, neither.
green = "#cfe8c4"; blue = "#c8dcf2"; orange = "#f6d9b0"; grey = "#e3e3e3"; white = "#ffffff"

box(n, x1, y1, x2, y2, c) = sprintf("set object %d rectangle from %f,%f to %f,%f fc rgb '%s' fs solid 1.0 border rgb '#555555' lw 1", n, x1, y1, x2, y2, c)
eval box(1, 1, 1, 40, 58, white)
eval box(2, 42, 20, 62, 58, white)
eval box(3, 64, 1, 99, 58, white)
set label 1 "EFI system partition: the attacker writes it" at 2,60 font ",13:Bold"
set label 2 "TPM" at 43,60 font ",13:Bold"
set label 3 "Root partition: the attacker writes it" at 65,60 font ",13:Bold"

eval box(10, 2, 37, 39, 57, blue)
set label 10 "Unified kernel image  EFI/.../*.efi" at 3,55.5 font ",11:Bold"
set label 11 "systemd-stub + .linux .initrd .cmdline .osrel .pcrpkey" at 3,53
set label 12 "signed for Secure Boot (key in db or the MOK list):" at 3,50.5
set label 13 "the firmware starts nothing else" at 4,48.5
eval box(11, 3, 38, 38, 46.5, orange)
set label 14 "measured into PCR 11 by systemd-stub, section by section;" at 4,45
set label 15 "PCR 7: Secure Boot state and the db entry that verified it" at 4,42.7
set label 16 "under Secure Boot a boot loader's command line is ignored" at 4,40.4

eval box(12, 2, 28, 39, 35.5, blue)
set label 20 ".initrd holds what the boot trusts:" at 3,34 font ",11:Bold"
set label 21 "btrfs-auth, its units and generator, NAME.sealed," at 3,31.7
set label 22 "btrfs-auth.conf, btrfs.ko (also signed: module signature)" at 3,29.4

eval box(13, 2, 20.5, 39, 26.5, blue)
set label 30 ".pcrsig: signature of PCR 11's expected value" at 3,24.8 font ",11:Bold"
set label 31 "by the PCR key (systemd-measure); the TPM checks it" at 3,22.4

eval box(14, 2, 2, 39, 19, grey)
set label 40 "Everything else: neither signed nor read" at 3,17.2 font ",11:Bold"
set label 41 "loader entries, other boot images (refused by the firmware" at 3,14.8
set label 42 "unless signed), a NAME.sealed left there (ignored)," at 3,12.6
set label 43 "*.cred and *.raw next to the UKI (measured into PCR 12, 13:" at 3,10.4
set label 44 "sealed as \"nothing\", so they stop the unseal), the GPT" at 3,8.2
set label 45 "A changed byte: the firmware refuses the image, or PCR 11" at 3,5.5
set label 46 "has no signature, or PCR 7/12/13 differ: no key" at 3,3.3

eval box(20, 43, 40, 61, 57, orange)
set label 50 "PCRs (measured)" at 44,55.5 font ",11:Bold"
set label 51 "0-7  firmware, Secure Boot" at 44,53
set label 52 "11   the UKI, then phases:" at 44,50.7
set label 53 "     enter-initrd ... leave-initrd" at 44,48.4
set label 54 "12, 13  nothing from outside" at 44,46.1
set label 55 "15   keys loaded, then lock" at 44,43.8
set label 56 "(btrfs-auth lock)" at 44,41.5

eval box(21, 43, 21, 61, 38.5, blue)
set label 60 "The sealed key" at 44,37 font ",11:Bold"
set label 61 "released only to" at 44,34.6
set label 62 "PolicyAuthorize(PCR key)" at 44,32.3
set label 63 "   over PCR 11" at 44,30
set label 64 "+ PolicyPCR 7, 12, 13, 15" at 44,27.7
set label 65 "in the initramfs only:" at 44,25.1
set label 66 "leave-initrd and the lock end it" at 44,22.8

eval box(30, 65, 20, 98, 57, green)
set label 70 "Authenticated btrfs (csum type 32)" at 66,55.5 font ",11:Bold"
set label 71 "every tree block, data sector and the superblock carry" at 66,53
set label 72 "HMAC-SHA256 under the key; the kernel verifies each read" at 66,50.7
set label 73 "and refuses options that would skip it" at 66,48.4
set label 74 "A changed block: EIO or a refused mount" at 66,44.5
set label 75 "A filesystem made with another key: its superblock" at 66,42.2
set label 76 "does not verify, root is not mounted" at 66,39.9
set label 77 "The key: a logon key in the kernel, from the TPM," at 66,36
set label 78 "never readable by user space" at 66,33.7

eval box(31, 65, 2, 98, 18, grey)
set label 80 "Not protected here" at 66,16.2 font ",11:Bold"
set label 81 "an older authentic copy of the disk or of its" at 66,13.8
set label 82 "superblock (rollback: threat-model.md)" at 66,11.5
set label 83 "confidentiality: nothing is encrypted" at 66,8.4
set label 84 "what the running system itself writes" at 66,5.3

# Legend
eval box(40, 43, 12, 45, 14, green)
set label 90 "authenticated (HMAC)" at 46,13
eval box(41, 43, 8.5, 45, 10.5, blue)
set label 91 "signed" at 46,9.5
eval box(42, 43, 5, 45, 7, orange)
set label 92 "measured into a PCR" at 46,6
eval box(43, 43, 1.5, 45, 3.5, grey)
set label 93 "neither" at 46,2.5

plot NaN notitle
