# lib.sh - what the packaging scripts share (sourced, not run): where the cache is, which Debian
# mirror this machine's apt uses, and a download that is checked or refused.

# The cache that outlives `make clean`: fio's source and build, the bare Debian root.
gv_cache_dir() {
	printf '%s\n' "${GPUVET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuvet}"
}

# The Debian archive this machine's apt is configured with: $GPUVET_DEBIAN_MIRROR, else the first
# URI of a deb822 .sources file or a one-line "deb" entry whose path ends in /debian (not the
# security archive), else http://deb.debian.org/debian.
gv_debian_mirror() {
	if [ -n "${GPUVET_DEBIAN_MIRROR:-}" ]; then
		printf '%s\n' "${GPUVET_DEBIAN_MIRROR%/}"
		return
	fi
	m=$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
	      sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\).*/\2/p' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null; } |
	    grep -E '^https?://[^[:space:]]*/debian/?$' | head -n 1)
	m=${m:-http://deb.debian.org/debian}
	printf '%s\n' "${m%/}"
}

# gv_fetch URL OUT: downloads URL to OUT (through OUT.part, so a cut transfer never looks whole);
# on failure says what could not be fetched and how to go on offline, and returns 1.
gv_fetch() {
	mkdir -p "$(dirname "$2")"
	if ! curl -fsSL --retry 2 --connect-timeout 15 --max-time 600 -o "$2.part" "$1" 2>"$2.err"; then
		echo "$GV_ME: cannot fetch $1: $(tail -n 1 "$2.err") (offline? set GPUVET_DEBIAN_MIRROR to a reachable Debian mirror, or put the file at $2)" >&2
		rm -f "$2.part" "$2.err"
		return 1
	fi
	rm -f "$2.err"
	mv "$2.part" "$2"
}

# gv_sha256_ok FILE SUM: 0 when FILE's SHA-256 is SUM; else says both and returns 1.
gv_sha256_ok() {
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] && return 0
	echo "$GV_ME: $1: SHA-256 $got, expected $2: refused (removed; fetched again next time)" >&2
	rm -f "$1"
	return 1
}
