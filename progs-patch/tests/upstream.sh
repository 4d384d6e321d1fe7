#!/bin/bash
# Run btrfs-progs' own test suites against the patched build: every test of
# fsck-tests, mkfs-tests, cli-tests and misc-tests except those in
# upstream-excluded.txt (they need to mount, which this host must never do).
# The series adds its own tests to these suites (patch "tests: authenticated
# filesystems in the progs test suites").  Each test runs on its own so a
# failure names it.  The suites run from a private copy of tests/,
# with mount, losetup & co. replaced by commands that fail, so nothing can
# reach the host kernel's btrfs even if a test was missed in the list.
#
#   upstream.sh [--unpatched] [--suites "fsck mkfs cli misc fuzz"]
#
# --unpatched runs the same tests against Debian's unpatched build, to compare.
source "$(dirname "$0")/lib.sh"

build_args=()
suites="fsck mkfs cli misc"
while [ $# -gt 0 ]; do
	case $1 in
	--unpatched) build_args+=(--unpatched) ;;
	--suites) suites=$2; shift ;;
	*) ba_die "unknown option $1" ;;
	esac
	shift
done
t_init "${build_args[@]}"

excluded=$PP_DIR/tests/upstream-excluded.txt
src=$(readlink -f "$BIN/btrfs")
src=${src%/btrfs}
[ -d "$src/tests" ] || ba_die "no tests/ in the source tree $src"

W=$T/upstream
cp -a "$src/tests" "$W"
# Tests use $TOP for the tools and the tests directory for internal ones.
for b in "$BIN"/*; do
	ln -s "$(readlink -f "$b")" "$W/${b##*/}"
done
ln -s "$src/Documentation" "$W/Documentation"
mkdir "$T/shim" "$T/tmp"
for c in mount umount losetup dmsetup modprobe insmod rmmod swapon mkswap partprobe udevadm; do
	printf '#!/bin/sh\necho "upstream tests: %s is disabled on this host" >&2\nexit 1\n' "$c" >"$T/shim/$c"
	chmod +x "$T/shim/$c"
done

is_excluded() { grep -q "^$1 " "$excluded"; }

declare -A passed failed notrun skipped
total_failed=0
for suite in $suites; do
	passed[$suite]=0 failed[$suite]=0 notrun[$suite]=0 skipped[$suite]=0
	for dir in "$W/$suite-tests"/*/; do
		name=$(basename "$dir")
		if is_excluded "$suite/$name"; then
			skipped[$suite]=$((skipped[$suite] + 1))
			continue
		fi
		start=$SECONDS
		set +e
		# TMPDIR: some tests leave their mktemp directories behind; keep them in $T.
		(cd "$W" && PATH=$T/shim:$PATH TMPDIR=$T/tmp TOP=$W TEST=$name timeout 600 "./$suite-tests.sh") >"$T/log" 2>&1
		rc=$?
		set -e
		secs=$((SECONDS - start))
		if [ "$rc" -ne 0 ]; then
			failed[$suite]=$((failed[$suite] + 1))
			total_failed=$((total_failed + 1))
			t_fail "$suite/$name (status $rc, ${secs}s): $(grep -iE 'fail|error' "$T/log" | head -n 3)"
		elif grep -q NOTRUN "$T/log"; then
			notrun[$suite]=$((notrun[$suite] + 1))
			t_log "not run: $suite/$name: $(grep NOTRUN "$T/log" | head -n 1)"
		else
			passed[$suite]=$((passed[$suite] + 1))
			t_ok "$suite/$name (${secs}s)"
		fi
	done
	t_log "$suite-tests: ${passed[$suite]} passed, ${failed[$suite]} failed, ${notrun[$suite]} not run, ${skipped[$suite]} excluded"
done
[ "$total_failed" -eq 0 ] || t_log "$total_failed upstream test(s) failed"
t_done
