#!/bin/bash
# Every patch of the series is at most 40 KB and builds on its own: apply
# them one by one to a fresh copy of the Debian source and build after each
# (configure once, then incremental builds: patch(1) gives touched files a new
# mtime and the Makefile tracks header dependencies).  A build must not print
# a single compiler warning; the pristine source builds without any.
#
# The result is cached under the series hash: unchanged series cost nothing.
source "$(dirname "$0")/lib.sh"

PRISTINE=$("$PP_DIR/build-progs.sh" --pristine-dir) || ba_die "cannot get the Debian source"
mapfile -t PATCHES < <(sed -e '/^#/d' -e '/^$/d' "$PP_DIR/series")
KEY=$(cd "$PP_DIR" && ba_hash_files series "${PATCHES[@]}" tests/per-patch-build.sh)
MARK=$BA_CACHE/progs/per-patch-build-$KEY.ok

build_step() {
	local src=$1 what=$2 log=$3
	if ! (cd "$src" && make -j2 all hash-vectest hash-speedtest btrfs-corrupt-block fssum) >"$log" 2>&1; then
		tail -n 30 "$log" >&2
		t_fail "$what: the build fails"
		return 1
	fi
	if grep -q 'warning:' "$log"; then
		grep 'warning:' "$log" | head -n 10 >&2
		t_fail "$what: the build prints warnings"
		return 1
	fi
	t_ok "$what builds without warnings"
}

check_series() {
	local src=$T/src n=0 p
	[ -e "$MARK" ] && return 0
	cp -a "$PRISTINE" "$src"
	(cd "$src" && ./autogen.sh && ./configure --disable-documentation --disable-python) \
		>"$T/configure.log" 2>&1 || { tail -n 20 "$T/configure.log" >&2; ba_die "configure failed"; }
	build_step "$src" "the pristine source" "$T/build-0.log" || return 1
	for p in "${PATCHES[@]}"; do
		n=$((n + 1))
		if ! patch -d "$src" -p1 --forward --batch --quiet <"$PP_DIR/$p" >"$T/patch.log" 2>&1; then
			cat "$T/patch.log" >&2
			t_fail "$p does not apply"
			return 1
		fi
		build_step "$src" "patch $n ($p)" "$T/build-$n.log" || return 1
	done
	touch "$MARK"
}

T=$(mktemp -d "${TMPDIR:-/tmp}/progs-test.XXXXXX")
trap t_cleanup EXIT
# Reviewable steps: no patch over 40 KB (commit message included).
for p in "${PATCHES[@]}"; do
	size=$(stat -c %s "$PP_DIR/$p")
	if [ "$size" -gt 40000 ]; then
		t_fail "$p is $size bytes, over 40000: split it into reviewable steps"
	fi
done
[ "$T_FAILS" -gt 0 ] || t_ok "every patch of the series is at most 40000 bytes"
if [ -e "$MARK" ]; then
	t_ok "series $KEY already built patch by patch (cached)"
else
	ba_locked "progs-per-patch-$KEY" check_series || true
	[ -e "$MARK" ] || [ "$T_FAILS" -gt 0 ] || t_fail "no result for series $KEY"
fi
t_done
