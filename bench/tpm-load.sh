# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# The key step measured inside the VM, a vm-tests scenario run by
# bench/run-bench.sh: a TPM (swtpm) as at boot, a throwaway key enrolled
# with the boot test's options, then "btrfs-auth load" timed again and
# again, through the kernel's resource manager (/dev/tpmrm0, what the boot
# uses) and straight to /dev/tpm0, and once through tpm2-tss's pcap TCTI,
# whose capture the host reads to count and time the TPM commands.
#
# Inputs (environment, set by run-bench.sh): BA_BENCH_TOOL (btrfs-auth),
# BA_BENCH_IOTOOL (ba-iobench, for its timer), BA_BENCH_RESULTS,
# BA_BENCH_LOADS, BA_BENCH_ENROLL_ARGS.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=${BA_BENCH_TIMEOUT:-600}

host_prepare() {
	local lib
	: "${BA_BENCH_TOOL:?}" "${BA_BENCH_IOTOOL:?}" "${BA_BENCH_RESULTS:?}"
	vm_tpm
	vm_guest_binary "$BA_BENCH_TOOL:/usr/sbin/btrfs-auth"
	vm_guest_binary "$BA_BENCH_IOTOOL:/usr/bin/ba-iobench"
	# tctildr dlopen()s these, so ldd does not list them.
	for lib in libtss2-tcti-device.so.0 libtss2-tcti-pcap.so.0; do
		vm_guest_binary "$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')"
	done
	vm_guest_env LOADS "${BA_BENCH_LOADS:-5}"
	vm_guest_env ENROLL_ARGS "${BA_BENCH_ENROLL_ARGS:---pcrs=0,2,4,7 --lock-pcr=15 --allow-unmeasured-initramfs}"
}

guest_enroll() {
	mkdir -p /tmp/ba
	# shellcheck disable=SC2086 # ENROLL_ARGS is a word list
	btrfs-auth enroll bench --generate --recovery-file=/tmp/recovery.key --no-recovery \
		--config-dir=/tmp/ba --tpm-wait=30 $ENROLL_ARGS
	rm -f /tmp/recovery.key
}

# guest_load KIND N TCTI: one timed load, "load KIND N seconds=...".
guest_load() {
	local line
	keyctl purge logon btrfs:bench >/dev/null 2>&1
	line=$(ba-iobench run btrfs-auth load bench --config-dir=/tmp/ba --tcti="$3" --tpm-wait=10 -q) || return 1
	keyctl search @u logon btrfs:bench >/dev/null || { echo "no key after the load"; return 1; }
	echo "load $1 $2 $line" | tee -a "$BA_OUT/results.txt"
}

guest_version() {
	local line
	line=$(ba-iobench run btrfs-auth --version) || return 1
	echo "startup process $1 $line" | tee -a "$BA_OUT/results.txt"
}

guest_capture() {
	keyctl purge logon btrfs:bench >/dev/null 2>&1
	TCTI_PCAP_FILE=$BA_OUT/load.pcap btrfs-auth load bench --config-dir=/tmp/ba \
		--tcti=pcap:device:/dev/tpmrm0 --tpm-wait=10 -q &&
		keyctl search @u logon btrfs:bench >/dev/null
}

guest() {
	local i=0
	: >"$BA_OUT/results.txt"
	check tpm-present [ -c /dev/tpmrm0 ]
	check enroll guest_enroll || return 1
	check capture guest_capture
	while [ "$i" -lt "$LOADS" ]; do
		# Alternate which path goes first.
		if [ $((i % 2)) = 0 ]; then
			check "load-rm-$i" guest_load rm "$i" device:/dev/tpmrm0
			check "load-direct-$i" guest_load direct "$i" device:/dev/tpm0
		else
			check "load-direct-$i" guest_load direct "$i" device:/dev/tpm0
			check "load-rm-$i" guest_load rm "$i" device:/dev/tpmrm0
		fi
		check "startup-$i" guest_version "$i"
		i=$((i + 1))
	done
	keyctl purge logon btrfs:bench >/dev/null 2>&1
	rm -rf /tmp/ba
}

host_check() {
	mkdir -p "$BA_BENCH_RESULTS"
	cp "$BA_FROM_GUEST/results.txt" "$BA_FROM_GUEST/load.pcap" "$BA_BENCH_RESULTS/"
}
