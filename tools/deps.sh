#!/bin/bash
# Install the Debian packages every part of the project needs.  Each
# component lists its own in an "apt-packages" file beside its sources.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || ba_die "run as root: apt-get needs it, and so do the VM tests"
. /etc/os-release
if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
	ba_log "warning: written for Debian 12, this is ${PRETTY_NAME:-unknown}"
fi

mapfile -t pkgs < <(cat "$BA_TOP"/tools/apt-packages "$BA_TOP"/*/apt-packages 2>/dev/null |
	sed 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$' | sort -u)

export DEBIAN_FRONTEND=noninteractive
apt-get -q update >&2 || ba_die "apt-get update failed; check the network and /etc/apt/sources.list*"
apt-get -q -y --no-install-recommends install "${pkgs[@]}" >&2 ||
	ba_die "apt-get install failed for: ${pkgs[*]}"
