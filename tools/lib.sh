# shellcheck shell=bash
# Shared helpers for the host-side build and test scripts.  Sourced, not run.

BA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Expensive builds live outside the repository, keyed by their inputs.
BA_CACHE=${BTRFS_AUTH_CACHE:-/var/cache/btrfs-auth}

ba_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
ba_die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# Run "$@" holding an exclusive lock, so parallel tests that need the same
# cached artefact build it once and the others wait for it.
ba_locked() {
	local name=$1; shift
	mkdir -p "$BA_CACHE/locks"
	(
		flock 9 || exit 1
		"$@"
	) 9>"$BA_CACHE/locks/$name.lock"
}

# A port P on 127.0.0.1 such that P and P+1 have no listener, for an
# swtpm (server on P, control on P+1).  Taken below the kernel's ephemeral
# range, where the tests' own client connections never sit, so only
# another listener can take it; callers still retry if swtpm cannot bind.
ba_free_port_pair() {
	local low=32768 p _
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	[ "$low" -gt 12002 ] || low=61000
	for _ in $(seq 100); do
		p=$(shuf -i 10000-$((low - 2)) -n 1)
		if ! (: </dev/tcp/127.0.0.1/"$p") 2>/dev/null &&
			! (: </dev/tcp/127.0.0.1/"$((p + 1))") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	ba_die "no free pair of loopback ports below $low"
}

# Starts swtpm on a free pair of loopback ports, state in DIR, log in LOG,
# and waits until it answers.  Sets BA_SWTPM_PID and BA_SWTPM_TCTI (for
# tpm2-tools and btrfs-auth --tcti); returns 1 when it never came up.  A
# port taken between the check and swtpm's bind costs one more try.
ba_swtpm_tcp_start() {
	local dir=$1 log=$2 port try
	mkdir -p "$dir"
	for try in $(seq 20); do
		port=$(ba_free_port_pair)
		swtpm socket --tpm2 --server "type=tcp,port=$port,bindaddr=127.0.0.1" \
			--ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" \
			--tpmstate "dir=$dir" --flags not-need-init,startup-clear --log "file=$log" \
			</dev/null >/dev/null 2>&1 & # never the caller's stdout: meson waits for it to close
		BA_SWTPM_PID=$!
		for _ in $(seq 50); do
			kill -0 "$BA_SWTPM_PID" 2>/dev/null || break # port taken: try another
			if tpm2_getcap -T "swtpm:host=127.0.0.1,port=$port" properties-fixed >/dev/null 2>&1; then
				# shellcheck disable=SC2034 # for the caller
				BA_SWTPM_TCTI="swtpm:host=127.0.0.1,port=$port"
				return 0
			fi
			sleep 0.1
		done
		ba_swtpm_tcp_stop
		ba_log "swtpm on port $port did not come up (try $try)"
	done
	return 1
}

ba_swtpm_tcp_stop() {
	[ -n "${BA_SWTPM_PID:-}" ] || return 0
	kill "$BA_SWTPM_PID" 2>/dev/null || true
	wait "$BA_SWTPM_PID" 2>/dev/null || true
	BA_SWTPM_PID=
}

# Hash of the named files' contents (and names), for cache keys.
ba_hash_files() {
	local f
	for f in "$@"; do
		printf '%s\0' "${f##*/}"
		cat "$f"
	done | sha256sum | cut -c1-16
}

# Write deb822 deb-src stanzas derived from the machine's own Debian
# sources into directory $1.  Only stanzas for this release's suites are
# taken, so third-party repositories never become source entries.
ba_derive_debsrc() {
	local out=$1 codename f
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	[ -n "$codename" ] || ba_die "cannot read VERSION_CODENAME from /etc/os-release"
	mkdir -p "$out"
	: >"$out/derived.sources"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v rel="$codename" '
			function flush() {
				if (st != "" && st ~ /(^|\n)Types:[^\n]*deb( |\n|$)/ &&
				    st ~ ("(^|\n)Suites:[^\n]*" rel) &&
				    st !~ /(^|\n)Enabled: *no/) {
					sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src", st)
					sub(/^\n/, "", st)
					print st "\n"
				}
				st = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ st = (st == "" ? $0 : st "\n" $0) }
			END { flush() }' "$f" >>"$out/derived.sources"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		awk -v rel="$codename" '$1 == "deb" && $0 ~ (" " rel) { $1 = "deb-src"; print }' \
			"$f" >"$out/derived.list.tmp"
		[ -s "$out/derived.list.tmp" ] && cat "$out/derived.list.tmp" >>"$out/derived.list"
		rm -f "$out/derived.list.tmp"
	done
	[ -s "$out/derived.sources" ] || [ -s "$out/derived.list" ] ||
		ba_die "no Debian '$codename' entry in /etc/apt/sources*; cannot derive a deb-src entry"
}

# Download and unpack Debian source package $1 into directory $2 using a
# private apt state, so the machine's own apt configuration is untouched.
# Prints the unpacked source directory.
ba_apt_source() {
	local pkg=$1 dest=$2 aptdir
	aptdir="$BA_CACHE/apt-src"
	rm -rf "${aptdir:?}/etc"
	mkdir -p "$aptdir/etc" "$aptdir/lists/partial" "$dest"
	ba_derive_debsrc "$aptdir/etc"
	local -a opts=(-o "Dir::Etc::SourceParts=$aptdir/etc"
		-o "Dir::Etc::SourceList=/dev/null"
		-o "Dir::State::Lists=$aptdir/lists")
	[ -s "$aptdir/etc/derived.list" ] &&
		opts[1]="Dir::Etc::SourceList=$aptdir/etc/derived.list"
	apt-get "${opts[@]}" -q update >&2 || ba_die "apt-get update of the derived deb-src entries failed"
	(cd "$dest" && apt-get "${opts[@]}" -q source "$pkg") >&2 ||
		ba_die "apt-get source $pkg failed"
	find "$dest" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -n1
}

# The Debian archive this machine installs from, for debootstrap: the URI of
# the first enabled entry for this release's main suite, read from the
# machine's own apt sources at run time.
ba_debian_mirror() {
	local codename f uri=''
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		uri=$(awk -v rel="$codename" '
			function flush() {
				if (!done && st ~ ("(^|\n)Suites:[^\n]*[ \t]" rel "([ \t]|\n|$)") &&
				    st ~ /(^|\n)Types:[^\n]*deb([ \t]|\n|$)/ && st !~ /Enabled: *no/ &&
				    match(st, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) {
					u = substr(st, RSTART, RLENGTH)
					sub(/.*URIs:[ \t]*/, "", u)
					print u
					done = 1
				}
				st = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ st = st "\n" $0 }
			END { flush() }' "$f")
		[ -n "$uri" ] && break
	done
	if [ -z "$uri" ]; then
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -e "$f" ] || continue
			uri=$(awk -v rel="$codename" '$1 == "deb" && $3 == rel { print $2; exit }' "$f")
			[ -n "$uri" ] && break
		done
	fi
	[ -n "$uri" ] || ba_die "no Debian '$codename' entry in /etc/apt/sources*; cannot tell debootstrap where to download from"
	echo "$uri"
}

# Configure (or reconfigure) the meson build directory $1 of the project.
ba_meson_setup() {
	local builddir=$1
	if [ -e "$builddir/build.ninja" ]; then
		meson setup --reconfigure "$builddir" "$BA_TOP" -Dcache_dir="$BA_CACHE" >/dev/null
	else
		meson setup "$builddir" "$BA_TOP" -Dcache_dir="$BA_CACHE" >/dev/null
	fi || ba_die "meson setup of $builddir failed"
	meson compile -C "$builddir" >&2 || ba_die "the build failed"
}
