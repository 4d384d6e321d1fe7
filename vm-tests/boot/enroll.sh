# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# The enrollment boot of the end-to-end tests: the administrator's step,
# "btrfs-auth enroll" on the machine itself, so the sealed key is bound to
# the PCR values this machine's firmware really produces.  Run by
# boot/run-boot.sh through run-scenario.sh with the TPM state the real boot
# will use.  Inputs (environment): BA_ENROLL_TOOL (the btrfs-auth binary),
# BA_ENROLL_KEY (the key file), BA_ENROLL_ARGS (more enroll options),
# BA_ENROLL_OUT (where the sealed key file goes on the host), BA_ENROLL_PASS
# (optional: a file with a recovery passphrase to add, one line).  With
# --rollback-index in BA_ENROLL_ARGS enroll also writes the anchor
# root.rollback, which goes to BA_ENROLL_OUT with .rollback for .sealed.
# BA_ENROLL_FIRMWARE=uefi: the boots are UEFI, Secure Boot, UKI boots, so
# the enrollment is one too (PCR 7 takes the value of such a boot), and
# BA_ENROLL_PCR_PUB is the public key PCR 11 is signed with.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=180
BA_MEM=${BA_ENROLL_MEM:-1024}
BA_FIRMWARE=${BA_ENROLL_FIRMWARE:-seabios}

host_prepare() {
	vm_tpm
	[ -z "${BA_ENROLL_TPM_STATE:-}" ] || cp -a "$BA_ENROLL_TPM_STATE/." "$BA_WORK/tpm/"
	vm_guest_binary "$BA_ENROLL_TOOL:/usr/sbin/btrfs-auth"
	vm_guest_binary "$(ldconfig -p | awk '/libtss2-tcti-device.so.0 / { print $NF; exit }')"
	install -m 0600 "$BA_ENROLL_KEY" "$BA_TO_GUEST/key"
	[ -z "${BA_ENROLL_PCR_PUB:-}" ] || install -m 0644 "$BA_ENROLL_PCR_PUB" "$BA_TO_GUEST/pcr.pem"
	# enroll makes a recovery key unless told otherwise: the boot tests type a passphrase or none.
	vm_guest_env ENROLL_ARGS "${BA_ENROLL_ARGS:-} --no-recovery"
	if [ -n "${BA_ENROLL_PASS:-}" ]; then
		install -m 0600 "$BA_ENROLL_PASS" "$BA_TO_GUEST/pass"
		# The scenarios choose the Argon2id cost (--argon2-memory, --argon2-time) in ENROLL_ARGS.
		vm_guest_env ENROLL_ARGS "${BA_ENROLL_ARGS:-} --recovery-passphrase --passphrase-from=stdin"
	fi
}

guest_enroll() {
	local pass=/dev/null
	[ ! -f /ba/in/pass ] || pass=/ba/in/pass
	# shellcheck disable=SC2086 # ENROLL_ARGS is a word list
	btrfs-auth enroll root --key-file=/ba/in/key --config-dir=/ba/out \
		--tpm-wait=30 $ENROLL_ARGS <"$pass"
}

guest() {
	check tpm-present [ -c /dev/tpmrm0 ]
	check enroll guest_enroll
	check sealed-key-written [ -s /ba/out/root.sealed ]
	case " $ENROLL_ARGS " in
	*' --rollback-index='*) check rollback-anchor-written [ -s /ba/out/root.rollback ] ;;
	esac
	rm -f /ba/in/key /ba/in/pass
}

host_check() {
	install -m 0600 "$BA_FROM_GUEST/root.sealed" "$BA_ENROLL_OUT"
	# The anchor holds no secret (an HMAC with the key): 0644, as enroll writes it.
	[ ! -e "$BA_FROM_GUEST/root.rollback" ] ||
		install -m 0644 "$BA_FROM_GUEST/root.rollback" "${BA_ENROLL_OUT%.sealed}.rollback"
	mkdir -p "$BA_ENROLL_OUT_TPM"
	cp -a "$BA_WORK/tpm/." "$BA_ENROLL_OUT_TPM/"
}
