#!/bin/bash
# Boot a kernel and initramfs in QEMU (TCG only: KVM hangs on this kind of
# machine), bounded in time, and give the guest's verdict.
#
# The guest (lib/guest-init.sh) prints "BA-CHECK: ..." lines and one last
# "BA-VERDICT: PASS|FAIL <reason>" line on a second serial port that
# carries nothing else; the first serial port is the kernel console, kept
# in the log.  Exit status:
#   0 PASS   1 verdict FAIL   2 usage or host-side error
#   3 timeout (guest hung)    4 guest kernel panic, or QEMU or the guest
#                               stopped without a verdict
#   5 stopped: the console matched --stop-on (for boots expected to fail)
#
# --console-input FILE types on the console (ttyS0): FILE holds lines
# "ERE<TAB>TEXT"; in order, each waits until the console shows a match of
# ERE after the previous one, then types TEXT and Enter.  Without it the
# console is a plain file as before.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
# shellcheck source=uefi.sh
source "$(dirname "$0")/uefi.sh"

usage() {
	cat <<EOF
usage: ${0##*/} --kernel PATH --initrd PATH [options]
       ${0##*/} --firmware uefi --uefi-vars FILE --esp IMG [options]
  --firmware seabios|uefi     seabios (default) starts --kernel with --initrd
                              directly; uefi boots OVMF with Secure Boot
                              support and SMM (q35), which starts
                              EFI/BOOT/BOOTX64.EFI from --esp
  --uefi-vars FILE            OVMF's variable store, written in place (its
                              keys decide whether Secure Boot is on)
  --esp IMG                   the EFI system partition, on a SATA disk so
                              that the virtio disks keep their names
  --disk IMG[,format=F][,serial=S][,write-bps=N]  attach a virtio disk
                              (vda, vdb, ... in order); serial defaults to
                              ba-diskN, N from 0; write-bps throttles its
                              writes (bytes per second)
  --append ARGS               more kernel command-line arguments (seabios;
                              a UKI carries its own: ba_vm_cmdline)
  --timeout SECONDS           kill the guest after this long (default 300)
  --log FILE                  console log (default: ./console.log)
  --markers FILE              marker channel (default: LOG with .markers)
  --outcome FILE              write "OUTCOME<TAB>SECONDS<TAB>REASON" there;
                              OUTCOME is pass, fail, timeout, panic or crash
  --tpm-state DIR             attach a TPM 2.0 (swtpm) keeping its state in
                              DIR; an empty DIR is initialised first
  --mem MB                    guest memory (default 768)
  --cpu MODEL                 QEMU CPU model (default max)
  --console                   copy the whole console to stdout, not only
                              the marker lines
  --quiet                     print nothing but the final outcome line
  --poweroff-grace SECONDS    after the verdict, wait this long for the
                              guest to power off (default 20; a full
                              systemd shutdown under TCG needs more)
  --stop-on ERE               end the guest as soon as a console line matches
                              ERE (outcome "stopped"): a boot that must fail
                              closed halts without powering off
  --console-input FILE        type on the console: lines "ERE<TAB>TEXT", each
                              typed (with Enter) once the console shows ERE
                              after the previous match; the text is never
                              logged (FILE may hold test passphrases)
  --qemu-arg ARG              one more QEMU argument (repeatable), e.g.
                              --qemu-arg -smbios --qemu-arg type=1,serial=X
EOF
	exit 2
}

kernel='' initrd='' append='' timeout=300 log=./console.log markers='' outcome_file=''
tpm_state='' mem=768 cpu=max show=markers stop_on='' console_input='' poweroff_grace=20
firmware=seabios uefi_vars='' esp=
disks=() extra_qemu_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:?}; shift 2 ;;
	--initrd) initrd=${2:?}; shift 2 ;;
	--firmware) firmware=${2:?}; shift 2 ;;
	--uefi-vars) uefi_vars=${2:?}; shift 2 ;;
	--esp) esp=${2:?}; shift 2 ;;
	--disk) disks+=("${2:?}"); shift 2 ;;
	--append) append="$append ${2:?}"; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--log) log=${2:?}; shift 2 ;;
	--markers) markers=${2:?}; shift 2 ;;
	--outcome) outcome_file=${2:?}; shift 2 ;;
	--tpm-state) tpm_state=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--cpu) cpu=${2:?}; shift 2 ;;
	--console) show=console; shift ;;
	--quiet) show=none; shift ;;
	--stop-on) stop_on=${2:?}; shift 2 ;;
	--poweroff-grace) poweroff_grace=${2:?}; shift 2 ;;
	--console-input) console_input=${2:?}; shift 2 ;;
	--qemu-arg) extra_qemu_args+=("${2:?}"); shift 2 ;;
	-h|--help) usage ;;
	*) ba_log "unknown argument '$1'"; usage ;;
	esac
done
case $firmware in
seabios)
	if [ -z "$kernel" ] || [ -z "$initrd" ]; then usage; fi
	[ -r "$kernel" ] || ba_die "--kernel $kernel: not readable"
	[ -r "$initrd" ] || ba_die "--initrd $initrd: not readable"
	;;
uefi)
	[ -z "$kernel$initrd$append" ] || ba_die "--firmware uefi boots the ESP's UKI, which has its own kernel, initrd and command line"
	[ -w "$uefi_vars" ] || ba_die "--uefi-vars $uefi_vars: not a writable file"
	[ -r "$esp" ] || ba_die "--esp $esp: not readable"
	[ "${esp//,/}${uefi_vars//,/}" = "$esp$uefi_vars" ] || ba_die "a comma in --esp or --uefi-vars is not supported"
	;;
*) ba_die "--firmware: '$firmware' is not seabios or uefi" ;;
esac
[[ $timeout =~ ^[1-9][0-9]*$ ]] || ba_die "--timeout wants whole seconds, got '$timeout'"
[[ $poweroff_grace =~ ^[1-9][0-9]*$ ]] || ba_die "--poweroff-grace wants whole seconds, got '$poweroff_grace'"
[[ $mem =~ ^[0-9]+$ ]] || ba_die "--mem wants megabytes, got '$mem'"
[ -z "$console_input" ] || [ -r "$console_input" ] || ba_die "--console-input $console_input: not readable"
: "${markers:=${log%.log}.markers}"
[ "$markers" != "$log" ] || markers=$log.markers
qemu=$(command -v qemu-system-x86_64) || ba_die "qemu-system-x86_64 not found; apt-get install qemu-system-x86"

qemu_pid='' swtpm_pidfile='' t0='' typist_pid='' drain_pid='' console_fifo=''
cleanup() {
	if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
		kill -KILL "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	stop_console_input
	stop_swtpm
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop_swtpm() {
	local pid
	[ -n "$swtpm_pidfile" ] && [ -s "$swtpm_pidfile" ] || return 0
	pid=$(cat "$swtpm_pidfile")
	# Only the swtpm we started: its pid file is in our state directory,
	# and the pid must still be an swtpm (it exits by itself when QEMU
	# disconnects, and removes the file then, but a pid can be reused).
	if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = swtpm ]; then
		kill "$pid" 2>/dev/null || true
	fi
	rm -f "$swtpm_pidfile"
}

# Start swtpm for DIR (absolute), manufacturing the TPM first when DIR
# holds no state.  Only a TPM 2.0 with the sha256 PCR bank is set up: no
# EK certificates, which nothing in this project checks.
start_swtpm() {
	local dir sock
	command -v swtpm >/dev/null || ba_die "swtpm not found; apt-get install swtpm swtpm-tools"
	mkdir -p "$tpm_state"
	dir=$(cd "$tpm_state" && pwd)
	if [ ! -e "$dir/tpm2-00.permall" ]; then
		swtpm_setup --tpm2 --tpmstate "$dir" --pcr-banks sha256 \
			--logfile "$dir/swtpm_setup.log" >/dev/null 2>&1 ||
			ba_die "swtpm_setup failed for $dir; see $dir/swtpm_setup.log"
	fi
	sock=$dir/swtpm.sock
	swtpm_pidfile=$dir/swtpm.pid
	rm -f "$sock" "$swtpm_pidfile"
	swtpm socket --daemon --tpm2 --tpmstate "dir=$dir" \
		--ctrl "type=unixio,path=$sock" --pid "file=$swtpm_pidfile" \
		--log "file=$dir/swtpm.log" ||
		ba_die "swtpm failed to start; see $dir/swtpm.log"
	for _ in $(seq 50); do
		[ -S "$sock" ] && [ -s "$swtpm_pidfile" ] && break
		sleep 0.1
	done
	[ -S "$sock" ] || ba_die "swtpm did not create $sock; see $dir/swtpm.log"
	# shellcheck disable=SC2054 # the commas are QEMU's
	qemu_args+=(-chardev "socket,id=chrtpm,path=$sock"
		-tpmdev emulator,id=tpm0,chardev=chrtpm
		-device tpm-tis,tpmdev=tpm0)
}

# Typing on the console: ttyS0 is a QEMU "pipe" chardev on two FIFOs.
# What the guest writes is copied to the log by a drain (QEMU would stall
# the guest once a FIFO nobody reads is full); a typist waits for each
# prompt in the log and writes the answer into the input FIFO.
start_console_input() {
	local base
	base=$(dirname "$log")/.${log##*/}.serial
	console_fifo=$base
	rm -f "$base.in" "$base.out"
	mkfifo -m 0600 "$base.in" "$base.out" || ba_die "cannot create the console FIFOs $base.in/.out"
	cat "$base.out" >"$log" &
	drain_pid=$!
	typist "$base.in" <"$console_input" &
	typist_pid=$!
	qemu_args+=(-chardev "pipe,id=con0,path=$base" -serial chardev:con0)
}

# Reads "ERE<TAB>TEXT" lines on stdin; types each TEXT into FIFO once the
# log shows ERE after the previous match.  Only the prompt and the number
# of characters typed are reported, never the text.
typist() {
	local fifo=$1 ere text pos=0 hit off
	# Held open until the end, so the guest never reads end-of-file.
	exec 7<>"$fifo"
	while IFS=$'\t' read -r ere text; do
		[ -n "$ere" ] || continue
		while kill -0 "$$" 2>/dev/null; do
			hit=$(tail -c +$((pos + 1)) "$log" 2>/dev/null | LC_ALL=C grep -a -b -o -m 1 -E -e "$ere" | head -n 1 || true)
			[ -z "$hit" ] || break
			sleep 0.3
		done
		[ -n "$hit" ] || return 0
		off=${hit%%:*}
		pos=$((pos + off + ${#hit} - ${#off} - 1))
		# Give the reader time to switch echo off: systemd's agent prints
		# its prompt first, then changes the terminal mode.
		sleep "${BA_CONSOLE_TYPE_DELAY:-2}"
		printf '%s\r' "$text" >&7
		printf 'console-input: typed %d characters after /%s/\n' "${#text}" "$ere" >>"$log.typed"
	done
	while kill -0 "$$" 2>/dev/null; do sleep 1; done
}

stop_console_input() {
	local p
	for p in "$typist_pid" "$drain_pid"; do
		[ -n "$p" ] || continue
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	typist_pid='' drain_pid=''
	[ -z "$console_fifo" ] || rm -f "$console_fifo.in" "$console_fifo.out"
}

add_disks() {
	local spec img opts format serial throttle n=0 o
	for spec in "${disks[@]}"; do
		img=${spec%%,*} format=raw serial=ba-disk$n throttle=''
		opts=${spec#"$img"}
		IFS=',' read -r -a opt_list <<<"${opts#,}"
		for o in "${opt_list[@]}"; do
			case $o in
			format=*) format=${o#format=} ;;
			serial=*) serial=${o#serial=} ;;
			write-bps=*)
				[[ ${o#write-bps=} =~ ^[1-9][0-9]*$ ]] || ba_die "--disk $spec: bad write-bps"
				throttle=",throttling.bps-write=${o#write-bps=}" ;;
			'') ;;
			*) ba_die "--disk $spec: unknown option '$o'" ;;
			esac
		done
		[ -f "$img" ] || ba_die "--disk $img: no such image file"
		[ "${serial//[!A-Za-z0-9._-]/}" = "$serial" ] || ba_die "--disk $spec: bad serial"
		# A comma in the path would end QEMU's option; refuse it.
		[ "${img//,/}" = "$img" ] || ba_die "--disk $img: a comma in the path is not supported"
		qemu_args+=(-drive "file=$img,if=none,id=d$n,format=$format$throttle"
			-device "virtio-blk-pci,drive=d$n,serial=$serial")
		if [[ $serial == ba-disk* ]]; then scenario_disks=$((scenario_disks + 1)); fi
		n=$((n + 1))
	done
}

# Print the marker lines not printed yet, and the console's new lines if
# --console; cheap enough to call twice a second.
shown_markers=0 shown_console=0
show_progress() {
	local total
	if [ "$show" = console ] && [ -f "$log" ]; then
		total=$(wc -l <"$log")
		if [ "$total" -gt "$shown_console" ]; then
			sed -n "$((shown_console + 1)),${total}p" "$log" | tr -d '\r'
			shown_console=$total
		fi
	elif [ "$show" = markers ] && [ -f "$markers" ]; then
		total=$(wc -l <"$markers")
		if [ "$total" -gt "$shown_markers" ]; then
			# Long marker lines (data a test hands to the host) are shortened here only.
			sed -n "$((shown_markers + 1)),${total}p" "$markers" | tr -d '\r' | cut -c1-160 | sed 's/^/  guest: /'
			shown_markers=$total
		fi
	fi
}

# Decide the outcome from what QEMU left behind.
judge() {
	local qrc=$1 timed_out=$2 verdicts last panic stopped_by
	verdicts=$(tr -d '\r' <"$markers" | grep -c '^BA-VERDICT: ' || true)
	last=$(tr -d '\r' <"$markers" | { grep -v '^$' || true; } | tail -n 1)
	# Only the kernel prints this; oops=panic turns every oops into one.
	panic=$(tr -d '\r' <"$log" | grep -m 1 'Kernel panic - not syncing' || true)
	stopped_by=''
	[ -z "$stop_on" ] || stopped_by=$(tr -d '\r' <"$log" | grep -m 1 -E -e "$stop_on" || true)
	if [ -n "$stopped_by" ] && [ "$verdicts" = 0 ]; then
		outcome=stopped reason="the console showed: $stopped_by"
	elif [ "$timed_out" = 1 ] && [ "$verdicts" -gt 0 ]; then
		outcome=fail reason="the guest did not power off within $poweroff_grace s of its verdict ('$last', at $verdict_secs s)"
	elif [ "$timed_out" = 1 ]; then
		outcome=timeout reason="no verdict within ${timeout} s (guest hung)"
	elif [ -n "$panic" ]; then
		# Even after a PASS: a panic while syncing or powering off is a bug.
		outcome=panic reason="the guest kernel panicked: $panic${last:+ (last marker: $last)}"
	elif [ "$qrc" != 0 ]; then
		outcome=crash reason="qemu exited $qrc: $(tail -n 3 "$log.qemu-stderr" | tr '\n' ' ')"
	elif [ "$verdicts" = 1 ] && [ "$last" = "BA-VERDICT: PASS" ]; then
		outcome=pass reason=''
		# How long the shutdown took, when the loop saw the verdict before it.
		[ "$verdict_secs" = none ] || reason="verdict at $verdict_secs s"
	elif [ "$verdicts" = 1 ] && [[ $last == "BA-VERDICT: FAIL"* ]]; then
		outcome=fail reason=${last#BA-VERDICT: FAIL}
		reason=${reason# }
	elif [ "$verdicts" -gt 1 ]; then
		outcome=fail reason="the guest printed $verdicts verdicts"
	elif [ "$verdicts" = 1 ]; then
		outcome=fail reason="the verdict is not the guest's last marker line: '$last'"
	else
		outcome=crash reason="the guest powered off without a verdict"
	fi
}

# OVMF with Secure Boot needs SMM, so that only the firmware writes its
# authenticated variables; q35 has it.  The code is read-only, the
# variables are the caller's copy.
add_uefi() {
	# shellcheck disable=SC2054 # the commas are QEMU's
	qemu_args+=(-global driver=cfi.pflash01,property=secure,value=on
		-drive "if=pflash,format=raw,unit=0,file=$BA_OVMF_CODE,readonly=on"
		-drive "if=pflash,format=raw,unit=1,file=$uefi_vars"
		-drive "file=$esp,if=none,id=esp,format=raw" -device ide-hd,drive=esp,bus=ide.0,bootindex=0)
}

machine=pc
[ "$firmware" = seabios ] || machine=q35,smm=on
qemu_args=(-nodefaults -no-user-config -accel tcg -machine "$machine" -cpu "$cpu"
	-smp 1 -m "$mem" -display none -monitor none -no-reboot)
scenario_disks=0
add_disks
[ "$firmware" = seabios ] || add_uefi
if [ -n "$tpm_state" ]; then
	# Booted through QEMU's PVH entry next to SeaBIOS's TPM support, the
	# kernel reads a corrupt ACPI root table (a WARN in __early_ioremap),
	# then finds no TPM and cannot power off; the bzImage boots fine.
	[ "$firmware" = uefi ] || [ "$(head -c 4 "$kernel" | od -An -tx1 | tr -d ' ')" != 7f454c46 ] ||
		ba_die "--tpm-state needs a bzImage kernel (/boot/vmlinuz-*), not the PVH ELF $kernel"
	start_swtpm
	# A hardware RNG better than the TPM's, for the kernel's hwrng thread:
	# with the TPM as its only source it sends a GetRandom every 60 s, and
	# under TCG some of those stalled the guest 30-40 s ("tpm tpm0:
	# Operation Timed out"), long enough to time out systemd units.
	qemu_args+=(-device virtio-rng-pci)
fi
mkdir -p "$(dirname "$log")" "$(dirname "$markers")"
: >"$log"
: >"$markers"
if [ -n "$console_input" ]; then
	: >"$log.typed"
	start_console_input
else
	qemu_args+=(-serial "file:$log")
fi
qemu_args+=(-serial "file:$markers")
[ "$firmware" = uefi ] || qemu_args+=(-kernel "$kernel" -initrd "$initrd" -append "$(ba_vm_cmdline "$scenario_disks" "$append")")
qemu_args+=("${extra_qemu_args[@]}")

t0=$(ba_now)
"$qemu" "${qemu_args[@]}" </dev/null >"$log.qemu-stderr" 2>&1 &
qemu_pid=$!
timed_out=0
deadline=$(( $(date +%s) + timeout ))
verdict_secs=none
while kill -0 "$qemu_pid" 2>/dev/null; do
	show_progress
	# After the verdict the guest only syncs and powers off: give it
	# --poweroff-grace, not the whole timeout, in case power-off fails
	# (the kernel then halts and QEMU stays up).
	if [ "$verdict_secs" = none ] && tr -d '\r' <"$markers" | grep -q '^BA-VERDICT: '; then
		verdict_secs=$(ba_elapsed "$t0")
		now=$(date +%s)
		[ "$deadline" -le $((now + poweroff_grace)) ] || deadline=$((now + poweroff_grace))
	fi
	if [ -n "$stop_on" ] && grep -q -E -e "$stop_on" "$log"; then
		sleep 1
		kill -KILL "$qemu_pid" 2>/dev/null || true
		break
	fi
	if [ "$(date +%s)" -ge "$deadline" ]; then
		timed_out=1
		kill -TERM "$qemu_pid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$qemu_pid" 2>/dev/null || true
		break
	fi
	sleep 0.5
done
qrc=0
wait "$qemu_pid" || qrc=$?
qemu_pid=
secs=$(ba_elapsed "$t0")
stop_console_input
stop_swtpm
show_progress
judge "$qrc" "$timed_out"
[ -z "$outcome_file" ] || printf '%s\t%s\t%s\n' "$outcome" "$secs" "$reason" >"$outcome_file"
case $outcome in
pass) echo "VM: PASS in ${secs} s"; exit 0 ;;
fail) echo "VM: FAIL in ${secs} s: $reason (console log: $log)"; exit 1 ;;
timeout) echo "VM: TIMEOUT after ${secs} s: $reason (console log: $log)"; exit 3 ;;
stopped) echo "VM: STOPPED after ${secs} s: $reason (console log: $log)"; exit 5 ;;
*) echo "VM: DIED after ${secs} s: $reason (console log: $log)"; exit 4 ;;
esac
