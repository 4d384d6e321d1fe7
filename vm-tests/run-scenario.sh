#!/bin/bash
# Run one VM test scenario: prepare its disk images on the host, build an
# initramfs with the btrfs.ko under test and the scenario's guest part,
# boot Debian's kernel in QEMU (TCG), collect the verdict and the files the
# guest sent back, then run the scenario's host-side checks.
#
# A scenario is one file, vm-tests/kernel/NAME.sh (or selftest/NAME.sh);
# docs/vm-tests.md describes what it defines.  Exit status 0 means it
# passed (or, with --expect-outcome, that it ended exactly as expected).
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=lib/uefi.sh
source "$(dirname "$0")/lib/uefi.sh"

usage() {
	cat <<EOF
usage: ${0##*/} [options] NAME|FILE
  NAME                   a scenario in vm-tests/kernel/ or vm-tests/selftest/
  --expect-outcome KIND[:ERE]
                         succeed only if the run ends as KIND (pass, fail,
                         timeout, panic or crash) with a reason matching ERE; for
                         the harness's own self-tests
  --timeout SECONDS      override the scenario's VM timeout
  --progs-dir DIR        mkfs.btrfs and btrfs from DIR (also BA_PROGS_DIR)
  --workdir DIR          where images, initramfs and logs go
                         (default \$BA_BUILD_ROOT/vm-tests/work/NAME)
  --keep                 keep the work directory even when the test passes
  --console              show the whole guest console, not only the checks
environment:
  BA_BTRFS_KO            the btrfs.ko to test when kernel-patch/build-module.sh
                         does not exist yet (development only)
  BA_PROGS_DIR           as --progs-dir
  BA_VM_BZIMAGE=1        boot the compressed vmlinuz instead of the PVH ELF
EOF
	exit 2
}

expect='' timeout_override='' workdir='' keep=0 console_opt=()
progs_dir=${BA_PROGS_DIR:-}
while [ $# -gt 0 ]; do
	case $1 in
	--expect-outcome) expect=${2:?}; shift 2 ;;
	--timeout) timeout_override=${2:?}; shift 2 ;;
	--progs-dir) progs_dir=${2:?}; shift 2 ;;
	--workdir) workdir=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--console) console_opt=(--console); shift ;;
	-h|--help) usage ;;
	-*) ba_log "unknown option '$1'"; usage ;;
	*) break ;;
	esac
done
[ $# = 1 ] || usage

# --- locating the pieces -------------------------------------------------

find_scenario() {
	local arg=$1 d
	if [[ $arg == */* || $arg == *.sh ]]; then
		[ -f "$arg" ] || ba_die "scenario file $arg does not exist"
		(cd "$(dirname "$arg")" && printf '%s/%s\n' "$(pwd)" "${arg##*/}")
		return
	fi
	for d in kernel selftest; do
		[ -f "$BA_VM_TOP/$d/$arg.sh" ] && { printf '%s\n' "$BA_VM_TOP/$d/$arg.sh"; return; }
	done
	ba_die "no scenario '$arg' in $BA_VM_TOP/kernel or $BA_VM_TOP/selftest"
}

# The module under test comes from the lead's build script; until that
# exists, only an explicit BA_BTRFS_KO is accepted, never a silent
# fallback to Debian's module.
resolve_btrfs_ko() {
	local build=$BA_TOP/kernel-patch/build-module.sh dir
	# The harness's self-tests test the harness, not the patch: they boot
	# Debian's own module and so never wait for a module build.
	if [ "$BA_BTRFS_MODULE" = stock ]; then
		printf '%s\n' "/lib/modules/$abi/kernel/fs/btrfs/btrfs.ko"
	elif [ "$BA_BTRFS_MODULE" != patched ]; then
		ba_die "$scenario_file: BA_BTRFS_MODULE must be 'patched' or 'stock', not '$BA_BTRFS_MODULE'"
	elif [ -f "$build" ]; then
		[ -z "${BA_BTRFS_KO:-}" ] ||
			ba_log "ignoring BA_BTRFS_KO: kernel-patch/build-module.sh exists and builds the module under test"
		dir=$(ba_locked vm-build-module bash "$build" | sed '/^$/d' | tail -n 1) ||
			ba_die "kernel-patch/build-module.sh failed; the module under test cannot be built"
		if [[ $dir != /* ]] || [ ! -f "$dir/btrfs.ko" ]; then
			ba_die "kernel-patch/build-module.sh printed '$dir', not a directory holding btrfs.ko"
		fi
		printf '%s\n' "$dir/btrfs.ko"
	elif [ -n "${BA_BTRFS_KO:-}" ]; then
		[ -f "$BA_BTRFS_KO" ] || ba_die "BA_BTRFS_KO=$BA_BTRFS_KO: no such file"
		ba_log "kernel-patch/build-module.sh does not exist; testing BA_BTRFS_KO=$BA_BTRFS_KO"
		printf '%s\n' "$BA_BTRFS_KO"
	else
		ba_die "kernel-patch/build-module.sh does not exist, so there is no patched btrfs.ko to test (for harness development set BA_BTRFS_KO=/lib/modules/ABI/kernel/fs/btrfs/btrfs.ko)"
	fi
}

# mkfs.btrfs and btrfs: BA_PROGS_DIR/--progs-dir, else the patched build
# when the scenario needs it, else Debian's.
resolve_progs() {
	local build=$BA_TOP/progs-patch/build-progs.sh m
	if [ -z "$progs_dir" ] && [ "${BA_NEEDS_PATCHED_PROGS:-0}" = 1 ]; then
		[ -f "$build" ] || ba_die "scenario $scenario_name needs the patched btrfs-progs, but progs-patch/build-progs.sh does not exist (or set BA_PROGS_DIR)"
		progs_dir=$(ba_locked vm-build-progs bash "$build" | sed '/^$/d' | tail -n 1) ||
			ba_die "progs-patch/build-progs.sh failed"
	fi
	if [ -n "$progs_dir" ]; then
		for m in mkfs.btrfs btrfs; do
			[ -x "$progs_dir/$m" ] || ba_die "progs dir $progs_dir has no executable $m"
		done
		BA_MKFS=$progs_dir/mkfs.btrfs BA_BTRFS=$progs_dir/btrfs
	else
		BA_MKFS=$(PATH=$PATH:/sbin:/usr/sbin command -v mkfs.btrfs) ||
			ba_die "mkfs.btrfs not found; apt-get install btrfs-progs"
		BA_BTRFS=$(PATH=$PATH:/sbin:/usr/sbin command -v btrfs) ||
			ba_die "btrfs not found; apt-get install btrfs-progs"
	fi
	export BA_MKFS BA_BTRFS
}

# --- the host-side API a scenario uses in host_prepare/host_check --------

# vm_mkfs IMG SIZE [mkfs.btrfs options...]: a fresh sparse image.
vm_mkfs() {
	local img=$1 size=$2
	shift 2
	rm -f "$img"
	truncate -s "$size" "$img"
	"$BA_MKFS" -q -f "$@" "$img" >"$img.mkfs.log" 2>&1 ||
		ba_die "mkfs.btrfs $* $img failed: $(tail -n 3 "$img.mkfs.log")"
}
# vm_disk IMG [OPTIONS]: OPTIONS as run-vm.sh --disk takes them after the
# image, e.g. write-bps=N.
vm_disk() {
	[ -f "$1" ] || ba_die "vm_disk $1: no such image"
	rs_disks+=("$(cd "$(dirname "$1")" && pwd)/${1##*/}${2:+,$2}")
}
vm_guest_env() {
	[[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || ba_die "vm_guest_env: bad name '$1'"
	printf '%s=%s\n' "$1" "$(sh_quote "$2")" >>"$BA_WORK/guest.env"
}
vm_guest_binary() { rs_mk_args+=(--add-binary "$1"); }
vm_guest_file() { rs_mk_args+=(--add-file "$1"); }
vm_module() { rs_mk_args+=(--module "$1"); }
vm_append() { rs_append="$rs_append $*"; }
vm_tpm() { rs_tpm=$BA_WORK/tpm; }
# More QEMU arguments for every boot (e.g. vm_qemu_arg -smbios type=1,serial=X).
vm_qemu_arg() { local a; for a in "$@"; do rs_qemu_args+=(--qemu-arg "$a"); done; }
# For host_boot N only: more run-vm.sh arguments for that boot (--stop-on
# ERE, --console-input FILE, --qemu-arg ARG).
vm_boot_arg() { rs_boot_args+=("$@"); }

sh_quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# --- running ---------------------------------------------------------------

scenario_file=$(find_scenario "$1")
scenario_name=$(basename "$scenario_file" .sh)
: "${workdir:=${BA_BUILD_ROOT:-/tmp/ba-vm-tests}/vm-tests/work/$scenario_name}"
logdir=${BA_BUILD_ROOT:+$BA_BUILD_ROOT/meson-logs/vm-tests}
: "${logdir:=${workdir%/*}}"

# Only ever delete a directory this script made (it holds the marker).
if [ -e "$workdir" ]; then
	[ -e "$workdir/.ba-vm-work" ] || [ -z "$(ls -A "$workdir")" ] ||
		ba_die "--workdir $workdir exists and is not a vm-tests work directory; remove it or choose another"
	rm -rf "$workdir"
fi
mkdir -p "$workdir/to-guest" "$workdir/from-guest" "$logdir"
: >"$workdir/.ba-vm-work"
BA_WORK=$(cd "$workdir" && pwd)
BA_TO_GUEST=$BA_WORK/to-guest
BA_FROM_GUEST=$BA_WORK/from-guest
BA_SCENARIO=$scenario_name
export BA_WORK BA_TO_GUEST BA_FROM_GUEST BA_SCENARIO
: >"$BA_WORK/guest.env"

rs_disks=() rs_mk_args=() rs_append='' rs_tpm='' rs_qemu_args=() rs_boot_args=()
BA_TIMEOUT=300 BA_BOOTS=1 BA_MEM=768 BA_NEEDS_PATCHED_PROGS=0 BA_BTRFS_MODULE=patched
# BA_FIRMWARE=uefi: OVMF with Secure Boot on (BA_UEFI_VARS_FROM: a variable
# store to start from), booting a UKI of the kernel, the initramfs and the
# command line signed with the snakeoil db key; keys in $BA_WORK/keys.
BA_FIRMWARE=seabios BA_UEFI_VARS_FROM=''
# Under Secure Boot the kernel loads only signed modules: the module under
# test is signed with the db key unless BA_UEFI_SIGN_MODULE=0.
# BA_LOAD_MODULE=0: the guest loads it itself (it is in the initramfs).
BA_UEFI_SIGN_MODULE=1 BA_LOAD_MODULE=1
# Boots (space-separated numbers) that the host ends itself (run-vm.sh
# --stop-on, set in host_boot): for them "stopped" counts as passed.
BA_STOPPED_BOOTS=''
# Files of the work directory (space-separated) holding test secrets:
# removed even when a failed run keeps the rest.
BA_SECRETS=''
# shellcheck source=/dev/null
source "$scenario_file"
declare -F guest >/dev/null || ba_die "$scenario_file defines no guest() function"
[ -z "$timeout_override" ] || BA_TIMEOUT=$timeout_override

abi=$(ba_vm_abi)
BA_KERNEL_ABI=$abi
export BA_KERNEL_ABI
btrfs_ko=$(resolve_btrfs_ko)
BA_BTRFS_KO=$btrfs_ko # the module under test, for host_prepare
export BA_BTRFS_KO
resolve_progs

failed=
finish() {
	local rc=$?
	[ -n "$failed" ] || [ "$rc" = 0 ] || failed="the harness stopped with status $rc"
	if [ -z "$failed" ] && [ "$keep" = 0 ]; then
		rm -rf "$BA_WORK"
	elif [ -n "$failed" ]; then
		for f in $BA_SECRETS; do rm -rf "${BA_WORK:?}/$f"; done
		echo "vm-$scenario_name: kept $BA_WORK (images, initramfs, console logs)"
	fi
}
trap finish EXIT
# meson's timeout sends SIGTERM to the whole process group: leave through
# finish, which keeps the work directory and says where it is.
trap 'failed="interrupted by a signal"; exit 143' TERM INT

if [ "$BA_FIRMWARE" = uefi ]; then
	ba_uefi_check
	ba_uefi_keys "$BA_WORK/keys"
	BA_SECRETS="$BA_SECRETS keys"
	if [ -n "$BA_UEFI_VARS_FROM" ]; then cp "$BA_UEFI_VARS_FROM" "$BA_WORK/uefi-vars.fd"
	else ba_uefi_vars "$BA_WORK/uefi-vars.fd" secureboot; fi
fi

t=$(ba_now)
cd "$BA_WORK"
if declare -F host_prepare >/dev/null; then host_prepare; fi
cd "$BA_WORK"
echo "vm-$scenario_name: host_prepare took $(ba_elapsed "$t") s"
# A VM with a TPM must boot the bzImage (see run-vm.sh), the others boot
# the faster PVH ELF; a UKI holds the bzImage, an EFI program.
if [ -n "$rs_tpm" ] || [ "$BA_FIRMWARE" = uefi ]; then kernel=$(ba_vm_bzimage "$abi"); else kernel=$(ba_vm_kernel "$abi"); fi
echo "vm-$scenario_name: kernel $abi ($kernel), btrfs.ko $btrfs_ko, mkfs $BA_MKFS"

# The guest part: the scenario's guest and guest_* functions as bash
# prints them, which is plain sh as long as the scenario wrote plain sh.
{
	printf '# generated by run-scenario.sh from %s\n' "$scenario_file"
	# shellcheck disable=SC2046
	declare -f $(compgen -A function | grep -E '^guest(_|$)')
} >"$BA_WORK/guest-scenario.sh"
# The guest's shell is busybox ash: catch bash-only syntax here, where the
# message is clear, rather than as a failed boot.
busybox sh -n "$BA_WORK/guest-scenario.sh" 2>"$BA_WORK/guest-syntax.log" ||
	ba_die "the guest part of $scenario_file is not valid busybox sh: $(cat "$BA_WORK/guest-syntax.log")"

keyctl=$(command -v keyctl) || ba_die "keyctl not found; apt-get install keyutils"
if [ "$BA_FIRMWARE" = uefi ] && [ "$BA_UEFI_SIGN_MODULE" = 1 ]; then
	ba_uefi_sign_module "$btrfs_ko" "$BA_WORK/btrfs-signed.ko" "$BA_WORK/keys/db.key" "$BA_WORK/keys/db.crt"
	btrfs_ko=$BA_WORK/btrfs-signed.ko
fi
[ "$BA_LOAD_MODULE" = 1 ] || rs_mk_args+=(--no-load-btrfs)
t=$(ba_now)
"$BA_VM_LIB/mkinitramfs.sh" --btrfs-ko "$btrfs_ko" --out "$BA_WORK/initrd.img" \
	--scenario "$BA_WORK/guest-scenario.sh" \
	--add-file "$BA_WORK/guest.env:/ba/env" --add-file "$BA_TO_GUEST:/ba/in" \
	--add-binary "$keyctl" \
	--add-binary "$BA_BTRFS" "${rs_mk_args[@]}" ||
	ba_die "building the initramfs failed"
echo "vm-$scenario_name: initramfs built in $(ba_elapsed "$t") s ($(stat -c %s "$BA_WORK/initrd.img") bytes)"

# Run boot N; sets outcome/reason/secs.
run_boot() {
	local n=$1 results=$BA_WORK/results-$1.img d vm_args=()
	truncate -s 64M "$results"
	for d in "${rs_disks[@]}"; do vm_args+=(--disk "$d"); done
	vm_args+=(--disk "$results,serial=ba-results")
	[ -z "$rs_tpm" ] || vm_args+=(--tpm-state "$rs_tpm")
	rs_boot_args=()
	if declare -F host_boot >/dev/null; then host_boot "$n" || ba_die "host_boot $n failed"; fi
	vm_args+=("${rs_qemu_args[@]}" "${rs_boot_args[@]}")
	if [ "$BA_FIRMWARE" = uefi ]; then
		# The command line run-vm.sh would pass, inside a UKI signed for Secure Boot.
		"$BA_UKI_TOOL" --linux "$kernel" --initrd "$BA_WORK/initrd.img" --out "$BA_WORK/boot-$n.efi" \
			--cmdline "$(ba_vm_cmdline "${#rs_disks[@]}" " ba.boot=$n$rs_append")" \
			--secureboot-private-key "$BA_WORK/keys/db.key" --secureboot-certificate "$BA_WORK/keys/db.crt" \
			2>"$BA_WORK/uki-$n.log" || ba_die "building the UKI of boot $n failed: $(cat "$BA_WORK/uki-$n.log")"
		ba_uefi_esp "$BA_WORK/esp.img" "$BA_WORK/boot-$n.efi"
		vm_args+=(--firmware uefi --uefi-vars "$BA_WORK/uefi-vars.fd" --esp "$BA_WORK/esp.img")
	else
		vm_args+=(--kernel "$kernel" --initrd "$BA_WORK/initrd.img" --append "ba.boot=$n$rs_append")
	fi
	"$BA_VM_LIB/run-vm.sh" "${vm_args[@]}" --timeout "$BA_TIMEOUT" \
		--mem "$BA_MEM" --log "$BA_WORK/console-$n.log" --outcome "$BA_WORK/outcome-$n" \
		"${console_opt[@]}" || true
	[ -s "$BA_WORK/outcome-$n" ] || ba_die "run-vm.sh gave no outcome for boot $n"
	IFS=$'\t' read -r outcome secs reason <"$BA_WORK/outcome-$n"
	cp "$BA_WORK/console-$n.log" "$logdir/$scenario_name-console-$n.log"
	mkdir -p "$BA_WORK/from-guest/$n"
	# An empty results disk (the guest died first) is no tar archive.
	if [ "$(head -c 512 "$results" | tr -d '\0' | wc -c)" -gt 0 ]; then
		tar -xf "$results" -C "$BA_WORK/from-guest/$n" ||
			ba_log "the results disk of boot $n is not a readable tar archive"
	fi
	BA_FROM_GUEST=$BA_WORK/from-guest/$n
	echo "vm-$scenario_name: boot $n: $outcome after $secs s${reason:+: $reason}"
}

outcome='' reason='' secs=''
for ((boot = 1; boot <= BA_BOOTS; boot++)); do
	run_boot "$boot"
	if [ "$outcome" = stopped ] && [[ " $BA_STOPPED_BOOTS " == *" $boot "* ]]; then
		echo "vm-$scenario_name: boot $boot was stopped by the host, as the scenario asks"
		outcome=pass reason=''
	elif [[ " $BA_STOPPED_BOOTS " == *" $boot "* ]]; then
		outcome=fail reason="boot $boot had to be stopped by the host, but ended as $outcome${reason:+: $reason}"
	fi
	[ "$outcome" = pass ] || break
	if [ "$boot" -lt "$BA_BOOTS" ] && declare -F host_between >/dev/null; then
		set +e
		(set -e; cd "$BA_WORK"; host_between "$boot")
		rc=$?
		set -e
		[ "$rc" = 0 ] || { outcome=fail reason="host_between after boot $boot failed with status $rc"; break; }
	fi
done
last_boot=$boot
[ "$last_boot" -le "$BA_BOOTS" ] || last_boot=$BA_BOOTS
# host_check runs in a subshell under set -e (which an "if" around it
# would switch off), so any failing command in it fails the test.
if [ "$outcome" = pass ] && declare -F host_check >/dev/null; then
	t=$(ba_now)
	set +e
	(set -e; cd "$BA_WORK"; host_check)
	rc=$?
	set -e
	[ "$rc" = 0 ] || outcome=fail reason="the host-side check (host_check) failed with status $rc"
	echo "vm-$scenario_name: host_check took $(ba_elapsed "$t") s"
fi

if [ -n "$expect" ]; then
	want=${expect%%:*} ere=
	[ "$want" = "$expect" ] || ere=${expect#*:}
	if [ "$outcome" = "$want" ] && { [ -z "$ere" ] || grep -qE -e "$ere" <<<"$reason"; }; then
		echo "vm-$scenario_name: ended as expected ($expect)"
		exit 0
	fi
	failed="expected '$expect', got $outcome: $reason"
	echo "vm-$scenario_name: FAIL: $failed (console: $logdir/$scenario_name-console-$last_boot.log)"
	exit 1
fi
if [ "$outcome" = pass ]; then
	echo "vm-$scenario_name: PASS"
	exit 0
fi
failed="$outcome: $reason"
echo "vm-$scenario_name: FAIL: $failed (console: $logdir/$scenario_name-console-$last_boot.log)"
exit 1
