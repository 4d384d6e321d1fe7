#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dracut module btrfs-auth-convert (package btrfs-auth): while
# /etc/btrfs-auth/convert.conf exists (btrfs-auth-convert wrote it), the
# initramfs converts the root to hmac-sha256 before mounting it:
# btrfstune with the throwaway conversion key, then btrfs-auth rekey to the
# sealed key NAME.sealed.new.  btrfs-auth-convert(8).

# shellcheck disable=SC2154 # dracut provides initdir, moddir, systemdsystemunitdir.

_btrfs_auth_convert_conf() {
    printf '%s\n' "${btrfs_auth_confdir:-$dracutsysrootdir/etc/btrfs-auth}"
}

# called by dracut
check() {
    require_binaries btrfstune btrfs-auth-convert od || return 1
    [[ -f "$(_btrfs_auth_convert_conf)/convert.conf" ]] && return 0
    return 255
}

# called by dracut
depends() {
    echo btrfs-auth bash
    return 0
}

# called by dracut
install() {
    local keys name instance
    keys=$(_btrfs_auth_convert_conf)
    [[ -f $keys/convert.conf ]] || return 0
    name=$(sed -n 's/^NAME=//p' "$keys/convert.conf")
    inst_script "$(command -v btrfs-auth-convert)" /usr/sbin/btrfs-auth-convert || return 1
    inst_binary "$(command -v btrfstune)" /usr/sbin/btrfstune || return 1
    inst_multiple od seq sed sleep head tr
    # The conversion key (throwaway: only for the step from crc32c) and the
    # pending sealed key of the rekey; 91btrfs-auth brings NAME.sealed.
    inst_simple "$keys/convert.conf" /etc/btrfs-auth/convert.conf
    inst_simple "$keys/$name.convert-key" "/etc/btrfs-auth/$name.convert-key"
    inst_simple "$keys/$name.sealed.new" "/etc/btrfs-auth/$name.sealed.new"
    chmod 0600 "$initdir/etc/btrfs-auth/$name.convert-key" "$initdir/etc/btrfs-auth/$name.sealed.new"
    inst_simple "$moddir/btrfs-auth-convert.service" "$systemdsystemunitdir/btrfs-auth-convert.service"
    # The key's load waits for the conversion and fails with it: no mount
    # with a half-done conversion, no mount with the throwaway key.
    instance=$(systemd-escape "$name")
    mkdir -p "$initdir$systemdsystemunitdir/btrfs-auth-load@$instance.service.d"
    printf '[Unit]\nRequires=btrfs-auth-convert.service\nAfter=btrfs-auth-convert.service\n' \
        > "$initdir$systemdsystemunitdir/btrfs-auth-load@$instance.service.d/50-convert.conf"
    $SYSTEMCTL -q --root "$initdir" add-wants initrd.target btrfs-auth-convert.service
}
