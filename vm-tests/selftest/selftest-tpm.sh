# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Harness self-test: --tpm-state gives the guest a TPM 2.0 (swtpm) that
# survives from one boot to the next, and a scenario can boot twice.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=120
BA_BOOTS=2

host_prepare() {
	vm_tpm
}

guest_pcrs_nonzero() {
	# SeaBIOS measures itself into PCR 0: a zero PCR 0 would mean the
	# firmware never talked to the TPM.
	local v
	v=$(cat /sys/class/tpm/tpm0/pcr-sha256/0) || return 1
	echo "PCR0=$v"
	[ -n "$v" ] && [ "${v#*[!0]}" != "$v" ]
}

guest() {
	# shellcheck disable=SC2153 # guest-lib.sh sets BA_BOOT from ba.boot=
	echo "$BA_BOOT" >"$BA_OUT/boot.txt"
	check tpmrm0 [ -c /dev/tpmrm0 ]
	check tpm-is-2.0 grep -qx 2 /sys/class/tpm/tpm0/tpm_version_major
	check pcr0-measured guest_pcrs_nonzero
	# /dev/hwrng is backed by the TPM here: a real TPM2_GetRandom round trip.
	check tpm-getrandom sh -c 'head -c 32 /dev/hwrng | od -An -tx1 | grep -q .'
	cat /sys/class/tpm/tpm0/pcr-sha256/0 >"$BA_OUT/pcr0.txt" 2>/dev/null
}

host_check() {
	[ "$(cat "$BA_WORK/from-guest/1/boot.txt")" = 1 ]
	[ "$(cat "$BA_WORK/from-guest/2/boot.txt")" = 2 ]
	[ -s "$BA_WORK/tpm/tpm2-00.permall" ]
	# Same firmware, same kernel: the same PCR 0 on both boots.
	cmp "$BA_WORK/from-guest/1/pcr0.txt" "$BA_WORK/from-guest/2/pcr0.txt"
	# swtpm is gone once the VM is.
	! pgrep -F "$BA_WORK/tpm/swtpm.pid" >/dev/null 2>&1
}
