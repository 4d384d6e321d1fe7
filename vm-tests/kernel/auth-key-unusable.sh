# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# A key that cannot be used is refused, with one btrfs error naming the
# key and a specific error, and nothing mounted:
#   not in the keyring, expired (keyring searches skip expired keys), or
#   negative (its construction was rejected, with EKEYREJECTED or with
#   EKEYEXPIRED): ENOKEY, never the EKEYREJECTED of a superblock MAC
#   mismatch (auth-wrong-key);
#   revoked: EKEYREVOKED;
#   shorter than 32 bytes: EINVAL, the message gives its length.
# A negative key comes from a request (keyctl request2) that the kernel's
# upcall to /sbin/request-key could not satisfy: keyutils' request-key, with
# a request-key.conf that rejects btrfs:neg-* keys with the error their
# name gives, leaves one in the requester's keyring for 60 s.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	auth_mkfs disk.img 128M key
	sha256sum disk.img >disk.sha256
	vm_disk disk.img
	auth_key_to_guest KEY key
	local keyctl request_key
	keyctl=$(command -v keyctl) || ba_die "keyctl not found"
	request_key=$(command -v request-key || echo /sbin/request-key)
	[ -x "$request_key" ] || ba_die "request-key not found: apt-get install keyutils"
	printf 'create logon btrfs:neg-%s * %s reject %%k 60 %s 0\n' \
		rejected "$keyctl" rejected expired "$keyctl" expired >request-key.conf
	vm_guest_binary "$request_key:/sbin/request-key"
	vm_guest_file "$BA_WORK/request-key.conf:/etc/request-key.conf"
}

# guest_refused NAME DESC TEXT ERE: mounting with auth_key=DESC fails with
# strerror TEXT and exactly one btrfs error matching ERE.
guest_refused() {
	dmesg_mark
	check "$1-refused" guest_refused_with "auth_key=$2" "$(ba_disk 0)" "$3"
	check "$1-one-btrfs-line" guest_one_btrfs_error "$4"
	check "$1-nothing-mounted" guest_nothing_mounted
}

guest_revoke() {
	local id
	id=$(add_logon_key btrfs:revoked "$KEY") && keyctl revoke "$id"
}

guest_expire() {
	local id
	id=$(add_logon_key btrfs:expiring "$KEY") && keyctl timeout "$id" 1 && sleep 2
}

# guest_negative DESC: a negative key DESC in @u (see request-key.conf).
guest_negative() {
	! keyctl request2 logon "$1" callout-info @u &&
		awk -v d="$1" '$8 == "logon" && $9 == d && $2 ~ /N/ { f = 1 } END { exit !f }' /proc/keys
}

# guest_short_key DESC BYTES: a logon key DESC of BYTES bytes of the key.
guest_short_key() {
	printf '%s' "$KEY" | cut -c "1-$(($2 * 2))" | xxd -r -p | keyctl padd logon "$1" @u
}

guest() {
	guest_refused absent btrfs:absent 'Required key not available' \
		'authentication key btrfs:absent not found or expired: add it as a logon key'

	check add-then-revoke guest_revoke
	guest_refused revoked btrfs:revoked 'Key has been revoked' \
		'authentication key btrfs:revoked has been revoked'

	check add-then-expire guest_expire
	guest_refused expired btrfs:expiring 'Required key not available' \
		'authentication key btrfs:expiring not found or expired'

	check negative-rejected guest_negative btrfs:neg-rejected
	guest_refused negative-rejected btrfs:neg-rejected 'Required key not available' \
		'authentication key btrfs:neg-rejected is negative \(rejected when requested, error -129\)'
	check negative-expired guest_negative btrfs:neg-expired
	guest_refused negative-expired btrfs:neg-expired 'Required key not available' \
		'authentication key btrfs:neg-expired is negative \(rejected when requested, error -127\)'

	check add-16-byte-key guest_short_key btrfs:short16 16
	guest_refused short-16 btrfs:short16 'Invalid argument' \
		'authentication key btrfs:short16 has 16 bytes, at least 32 are needed'
	check add-31-byte-key guest_short_key btrfs:short31 31
	guest_refused short-31 btrfs:short31 'Invalid argument' \
		'authentication key btrfs:short31 has 31 bytes, at least 32 are needed'

	check add-good-key add_logon_key btrfs:good "$KEY"
	check good-key-still-mounts mount -t btrfs -o ro,auth_key=btrfs:good "$(ba_disk 0)" /mnt
	check umount umount /mnt
}

# Every refusal came before anything was written, and the one mount was
# read-only.
host_check() {
	sha256sum -c --quiet disk.sha256 || ba_die "disk.img changed although the only mount was read-only"
}
