# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Harness self-test of the trusted boot chain's VM: OVMF with Secure Boot
# on (the snakeoil keys in PK, KEK and db), a unified kernel image signed
# with the db key, a TPM whose state and the firmware's variables survive
# to the second boot.  systemd-stub measures the UKI into PCR 11, the
# firmware the Secure Boot state into PCR 7, and the kernel locks itself
# down.
BA_BTRFS_MODULE=stock
BA_FIRMWARE=uefi
BA_TIMEOUT=180
BA_BOOTS=2

host_prepare() {
	vm_tpm
	vm_module efivarfs
}

guest_pcr_nonzero() {
	local v
	v=$(cat "/sys/class/tpm/tpm0/pcr-sha256/$1") || return 1
	echo "PCR $1 = $v"
	[ "${v#*[!0]}" != "$v" ]
}

guest_secure_boot() {
	# 4 bytes of attributes, then the value: 1 = Secure Boot enforced.
	od -An -tx1 /sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c | tee /dev/stderr |
		grep -q ' 01$'
}

guest_stub_measured() {
	[ -e /sys/firmware/efi/efivars/StubPcrKernelImage-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f ]
}

guest_lockdown() {
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
	cat /sys/kernel/security/lockdown
	grep -q '\[integrity\]\|\[confidentiality\]' /sys/kernel/security/lockdown
}

guest() {
	# shellcheck disable=SC2153 # guest-lib.sh sets BA_BOOT from ba.boot=
	echo "$BA_BOOT" >"$BA_OUT/boot.txt"
	check efivarfs mount -t efivarfs efivarfs /sys/firmware/efi/efivars
	check tpmrm0 [ -c /dev/tpmrm0 ]
	check secure-boot-on guest_secure_boot
	check kernel-locked-down guest_lockdown
	check stub-measured-the-uki guest_stub_measured
	check pcr7-measured guest_pcr_nonzero 7
	check pcr11-measured guest_pcr_nonzero 11
	cat /sys/class/tpm/tpm0/pcr-sha256/7 >"$BA_OUT/pcr7.txt" 2>/dev/null
}

host_check() {
	[ "$(cat "$BA_WORK/from-guest/1/boot.txt")" = 1 ]
	[ "$(cat "$BA_WORK/from-guest/2/boot.txt")" = 2 ]
	# Same firmware, same keys, same signer: the same Secure Boot measurement on both boots.
	cmp "$BA_WORK/from-guest/1/pcr7.txt" "$BA_WORK/from-guest/2/pcr7.txt"
	! pgrep -F "$BA_WORK/tpm/swtpm.pid" >/dev/null 2>&1
}
