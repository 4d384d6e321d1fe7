#!/bin/bash
# Patch-level checks of the kernel series against the pristine Debian tree.
#
# usage: check-series.sh applies|checkpatch|build-each|docs
#   applies     every patch applies in order, without fuzz or offset
#   checkpatch  scripts/checkpatch.pl --strict of the same tree reports no
#               error and no warning for any patch
#   build-each  fs/btrfs builds without warnings after every patch, not
#               only after the last one
#               (cached by series hash: it takes minutes)
#   docs        the documentation the series adds builds with docutils
#               without a warning or error, and is in its toctree
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/lib.sh"
source "$here/versions.sh"

patches() { grep -v '^\s*\(#\|$\)' "$here/series"; }

# Sets $scratch to a fresh copy of the pristine tree, removed on exit.
scratch_tree() {
	scratch_dir=$(mktemp -d "${TMPDIR:-/tmp}/ba-kseries.XXXXXX")
	trap 'rm -rf "$scratch_dir"' EXIT
	ba_kernel_tree_copy "$(ba_kernel_pristine)" "$scratch_dir/tree"
	scratch=$scratch_dir/tree
}

check_applies() {
	local tree=$1 p out bad=0
	while read -r p; do
		if ! out=$(patch -d "$tree" -p1 -f --fuzz=0 --no-backup-if-mismatch <"$here/$p" 2>&1); then
			printf 'FAIL %s does not apply:\n%s\n' "$p" "$out"
			return 1
		fi
		if grep -q -E 'offset|fuzz' <<<"$out"; then
			printf 'FAIL %s applies only with offset or fuzz:\n%s\n' "$p" "$out"
			bad=1
		else
			echo "ok   $p"
		fi
	done < <(patches)
	return "$bad"
}

# checkpatch of patch $2 from tree $1; its exit status only says "found something".
checkpatch() { (cd "$1" && perl scripts/checkpatch.pl --strict --color=never "$here/$2"); }

check_checkpatch() {
	local tree p summary errors warnings verdict bad=0
	tree=$(ba_kernel_pristine)
	while read -r p; do
		summary=$( (checkpatch "$tree" "$p" || true) | tail -n 40)
		if ! grep -q 'total:' <<<"$summary"; then
			printf 'FAIL %s: checkpatch did not run:\n%s\n' "$p" "$summary"
			bad=1
			continue
		fi
		errors=$(sed -n 's/.*total: \([0-9]*\) errors.*/\1/p' <<<"$summary")
		warnings=$(sed -n 's/.*total: [0-9]* errors, \([0-9]*\) warnings.*/\1/p' <<<"$summary")
		verdict='ok  '
		if [ "$errors" != 0 ] || [ "$warnings" != 0 ]; then
			checkpatch "$tree" "$p" || true
			verdict=FAIL bad=1
		fi
		printf '%s %s: %s\n' "$verdict" "$p" "$(grep -o 'total:.*' <<<"$summary")"
	done < <(patches)
	return "$bad"
}

build_each() {
	local tree=$1 p n=0
	while read -r p; do
		n=$((n + 1))
		ba_kernel_apply "$tree" "$here/$p"
		if ! ba_kernel_build_btrfs "$tree" >"$tree/../build-$n.log" 2>&1; then
			echo "FAIL fs/btrfs does not build after $p:"
			tail -n 30 "$tree/../build-$n.log"
			return 1
		fi
		if grep -q 'warning:' "$tree/../build-$n.log"; then
			echo "FAIL compiler warnings after $p:"
			grep -A3 'warning:' "$tree/../build-$n.log"
			return 1
		fi
		echo "ok   builds without warnings after $p"
	done < <(patches)
}

check_build_each() {
	local stamp files
	mapfile -t files < <(patches | sed "s|^|$here/|")
	stamp="$BA_CACHE/kernel/$KDEBVER/build-each-$(ba_hash_files "$here/series" "$here/versions.sh" "${files[@]}").ok"
	if [ -e "$stamp" ]; then
		cat "$stamp"
		echo "(cached result for this series)"
		return 0
	fi
	local out
	scratch_tree
	out=$(build_each "$scratch") || { echo "$out"; return 1; }
	echo "$out" | tee "$stamp.tmp"
	mv "$stamp.tmp" "$stamp"
}

# The reStructuredText files the series adds, relative to the tree.
DOCS=(Documentation/filesystems/btrfs-authentication.rst)

check_docs() {
	local tree=$1 doc out bad=0
	out=$(check_applies "$tree") || { echo "$out"; return 1; }
	for doc in "${DOCS[@]}"; do
		if [ ! -f "$tree/$doc" ]; then
			echo "FAIL the series does not add $doc"
			bad=1
			continue
		fi
		(cd "$tree" && python3 "$here/check-rst.py" "$doc") || bad=1
		if ! grep -qx "   $(basename "$doc" .rst)" "$tree/$(dirname "$doc")/index.rst"; then
			echo "FAIL $doc is not in the toctree of $(dirname "$doc")/index.rst"
			bad=1
		fi
	done
	return "$bad"
}

main() {
	ba_kernel_resolve
	case "${1:-}" in
	applies) scratch_tree && check_applies "$scratch" ;;
	checkpatch) check_checkpatch ;;
	build-each) check_build_each ;;
	docs) scratch_tree && check_docs "$scratch" ;;
	*) ba_die "usage: check-series.sh applies|checkpatch|build-each|docs" ;;
	esac
}

main "$@"
