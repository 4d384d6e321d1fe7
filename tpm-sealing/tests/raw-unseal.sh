#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Tries to unseal a btrfs-auth key sealed to a signed PCR policy with
# tpm2-tools alone, the way root on a compromised system would: the same
# SRK, the same PolicyPCR / PolicyAuthorize / PolicyPCR sequence, the
# published signature.  Only the TPM stands in the way, so this succeeds
# exactly when the TPM's PCRs still satisfy the policy.
#
# usage: raw-unseal.sh INPUTS PCR-PUBLIC-KEY.pem OUT
#   INPUTS  the directory raw-unseal-inputs.py wrote
#   OUT     where the unsealed key goes (mode 0600) if the TPM gives it
# The TPM comes from $TPM2TOOLS_TCTI (default: the tools' own).
set -eu
in=$(cd "$1" && pwd) pem=$(readlink -f "$2") out=$(readlink -f "$3")
work=$(mktemp -d)
# Without a resource manager (swtpm straight), what the tools load stays in the TPM: flush it all.
cleanup() {
	tpm2_flushcontext -t >/dev/null 2>&1 || true
	tpm2_flushcontext -s >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
# btrfs-auth's transient SRK: the TCG template, ECC P-256, AES-128-CFB, noDA.
tpm2_createprimary -Q -C o -g sha256 -G ecc256:aes128cfb \
	-a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt' -c primary.ctx
tpm2_load -Q -C primary.ctx -u "$in/sealed.pub" -r "$in/sealed.priv" -c sealed.ctx
tpm2_flushcontext -t
# The signer as btrfs-auth loads it, in the owner hierarchy so its ticket counts.
tpm2_loadexternal -Q -C o -G rsa -a 'decrypt|sign|userwithauth' -u "$pem" -c signer.ctx -n signer.name
tpm2_verifysignature -Q -c signer.ctx -g sha256 -m "$in/pol.bin" -s "$in/sig.bin" -f rsassa -t ticket.bin
tpm2_flushcontext -t
tpm2_startauthsession -Q --policy-session -S session.ctx
tpm2_policypcr -Q -S session.ctx -l "sha256:$(cat "$in/signed")"
tpm2_policyauthorize -Q -S session.ctx -i "$in/pol.bin" -n signer.name -t ticket.bin
tpm2_policypcr -Q -S session.ctx -l "sha256:$(cat "$in/pcrs")"
umask 077
tpm2_unseal -Q -c sealed.ctx -p session:session.ctx -o "$out"
