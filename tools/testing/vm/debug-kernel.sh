#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build a small debug kernel from Debian's linux-source-6.12.
#
# Usage: tools/testing/vm/debug-kernel.sh [FLAVOUR]
#
#   FLAVOUR  kasan (also "1", the default): lockdep, DEBUG_ATOMIC_SLEEP, KASAN, debug
#                  objects, kmemleak
#            kcsan: the same with KCSAN instead of KASAN (the two exclude each other)
#
# Downloads linux-source-6.12 with apt-get download (the build tools it needs are
# installed when missing), unpacks it into .cache/debug-kernel/src-<version>/, and
# configures a build directory .cache/debug-kernel/build-<flavour>-<version>/ with
# "make allnoconfig" over tools/testing/vm/debug-kernel.config (plus
# debug-kernel-kcsan.config for kcsan). Every option these files assign is then checked
# in the .config: one that Kconfig dropped fails the build. Builds vmlinux and the
# modules (log: build/debug-kernel-<flavour>.log) and installs the modules into
# .cache/debug-kernel/root-<KVER>/. The result is cached: a stamp (source version,
# configuration files, compiler) skips all of this when nothing changed.
#
# Writes .cache/debug-kernel/env-<flavour> with the variables of kernel.sh (KVER, ROOT,
# KH, KCOMMON_MAKEFILE, KMAKE_EXTRA, VMLINUX, KCONFIG), KH being the build directory,
# and prints its path as the last line on stdout. Progress goes to stderr.
set -euo pipefail

FLAVOUR=${1:-kasan}
[ "$FLAVOUR" = 1 ] && FLAVOUR=kasan
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm
CACHE=${OCQ_CACHE:-$TOP/.cache}
DK=$CACHE/debug-kernel
PKG=linux-source-6.12

log() { echo "debug-kernel: $*" >&2; }
die() { echo "debug-kernel: error: $*" >&2; exit 1; }

FRAGS=("$VM/debug-kernel.config")
case $FLAVOUR in
kasan) ;;
kcsan) FRAGS+=("$VM/debug-kernel-kcsan.config") ;;
*) die "unknown flavour '$FLAVOUR' (kasan or kcsan)" ;;
esac

# Build tools: only what is missing; apt-get update first when installing.
ensure_tools() {
	local need=() c
	for c in make:make gcc:gcc flex:flex bison:bison bc:bc perl:perl cpio:cpio \
		 xz:xz-utils depmod:kmod dpkg-deb:dpkg apt-cache:apt; do
		command -v "${c%%:*}" >/dev/null || [ -x "/sbin/${c%%:*}" ] || need+=("${c#*:}")
	done
	[ -f /usr/include/gelf.h ] || need+=(libelf-dev)		# objtool
	[ -f /usr/include/openssl/opensslv.h ] || need+=(libssl-dev)	# scripts/
	[ ${#need[@]} -eq 0 ] && return 0
	log "installing ${need[*]}"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${need[@]}" >/dev/null
}

candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'; }

ensure_tools
mkdir -p "$DK" "$TOP/build"
# One build per flavour at a time; others wait, then find the cache ready.
exec 9> "$DK/.$FLAVOUR.lock"
flock 9

SVER=$(candidate "$PKG")
if [ -z "$SVER" ] || [ "$SVER" = "(none)" ]; then
	log "no candidate for $PKG in the apt cache, running apt-get update"
	apt-get update -q >/dev/null
	SVER=$(candidate "$PKG")
fi
if [ -z "$SVER" ] || [ "$SVER" = "(none)" ]; then die "package $PKG not found"; fi
V=${SVER//[^A-Za-z0-9.+-]/_}		# for paths: 6.12.117-1~deb12u1 -> 6.12.117-1_deb12u1
SRC=$DK/src-$V
O=$DK/build-$FLAVOUR-$V
LOG=$TOP/build/debug-kernel-$FLAVOUR.log
RLOG=build/debug-kernel-$FLAVOUR.log

# ---- source: unpacked once per version (.ocq-unpacked is written last) ----
if [ ! -f "$SRC/.ocq-unpacked" ]; then
	log "$PKG $SVER: downloading"
	rm -rf "$DK/debs" "$SRC" "$SRC.tmp" && mkdir -p "$DK/debs" "$SRC.tmp"
	(cd "$DK/debs" && { apt-get download -q "$PKG=$SVER" 2>&1 |
		grep -v -e 'Download is performed unsandboxed' -e '^Get:' -e '^Fetched' >&2 || true; })
	deb=$(find "$DK/debs" -name "${PKG}_*.deb" | head -1)
	[ -n "$deb" ] || die "download of $PKG failed"
	log "unpacking $(basename "$deb")"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$PKG.tar.xz" | xz -dc |
		tar -x -C "$SRC.tmp" --strip-components=1
	[ -f "$SRC.tmp/Makefile" ] || die "no kernel source in $deb"
	mv "$SRC.tmp" "$SRC"
	touch "$SRC/.ocq-unpacked"
	rm -rf "$DK/debs"
fi

# ---- the configuration: the fragments, then the release name of this flavour ----
mkdir -p "$O"
{
	cat "${FRAGS[@]}"
	echo "CONFIG_LOCALVERSION=\"-debug-$FLAVOUR\""
	echo "# CONFIG_LOCALVERSION_AUTO is not set"
} > "$O/ocq.config.new"
stamp="$PKG $SVER $FLAVOUR $(sha256sum < "$O/ocq.config.new" | cut -c1-16)"
stamp+=" $(gcc --version | head -1)"

kmake() {	# make in the build directory; LOCALVERSION= : no "+" suffix
	make -C "$SRC" O="$O" LOCALVERSION= "$@"
}

cache_ok() {
	local kver first

	[ "$(cat "$O/.ocq-stamp" 2>/dev/null)" = "$stamp" ] || return 1
	kver=$(cat "$O/include/config/kernel.release" 2>/dev/null) || return 1
	first=$(head -1 "$DK/root-$kver/lib/modules/$kver/modules.dep" 2>/dev/null | cut -d: -f1)
	[ -n "$first" ] && [ -f "$DK/root-$kver/lib/modules/$kver/$first" ] && [ -s "$O/vmlinux" ]
}

# Every assignment of the fragments (the last one of a symbol counts) holds in .config:
# =y is y, =m is m or y (built in also works), a string or number is equal, "is not
# set" is unset.
verify_config() {
	local sym want have bad=0

	while read -r sym want; do
		have=$(sed -n "s/^CONFIG_$sym=//p" "$O/.config")
		case $want in
		n) [ -z "$have" ] && continue ;;
		m) [ "$have" = m ] || [ "$have" = y ] && continue ;;
		*) [ "$have" = "$want" ] && continue ;;
		esac
		log "CONFIG_$sym: wanted ${want}, got ${have:-unset} (an unmet dependency?)"
		bad=1
	done < <(sed -n -e 's/^CONFIG_\([A-Za-z0-9_]*\)=\(.*\)$/\1 \2/p' \
			-e 's/^# CONFIG_\([A-Za-z0-9_]*\) is not set$/\1 n/p' "$O/ocq.config" |
		 awk '{ v[$1] = $0; if (!($1 in o)) o[$1] = n++ } END {
			for (s in o) k[o[s]] = s; for (i = 0; i < n; i++) print v[k[i]] }')
	[ $bad = 0 ] || die "the configuration is not what debug-kernel.config asks for"
}

if cache_ok; then
	KVER=$(cat "$O/include/config/kernel.release")
	log "$KVER (cached; built in $(cat "$O/.ocq-build-time" 2>/dev/null || echo '?')s)"
else
	rm -f "$O/.ocq-stamp"
	mv "$O/ocq.config.new" "$O/ocq.config"
	unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
	log "configuring $FLAVOUR (allnoconfig + $(basename -a "${FRAGS[@]}" | tr '\n' ' '| sed 's/ $//'))"
	kmake KCONFIG_ALLCONFIG="$O/ocq.config" allnoconfig > "$LOG" 2>&1 ||
		die "allnoconfig failed (log: $RLOG)"
	kmake olddefconfig >> "$LOG" 2>&1 || die "olddefconfig failed (log: $RLOG)"
	verify_config
	KVER=$(kmake -s kernelrelease 2>/dev/null)
	[ -n "$KVER" ] || die "no kernel release"
	log "building $KVER with -j$(nproc) (log: $RLOG; slow: many minutes)"
	t0=$(date +%s)
	kmake -j"$(nproc)" vmlinux modules >> "$LOG" 2>&1 ||
		{ tail -20 "$LOG" >&2; die "build failed (log: $RLOG)"; }
	t1=$(date +%s)
	echo $((t1 - t0)) > "$O/.ocq-build-time"
	log "built $KVER in $((t1 - t0))s"
	R=$DK/root-$KVER
	rm -rf "$R"
	kmake INSTALL_MOD_PATH="$R" DEPMOD=/bin/true modules_install >> "$LOG" 2>&1 ||
		die "modules_install failed (log: $RLOG)"
	depmod -b "$R" "$KVER"
	echo "$stamp" > "$O/.ocq-stamp"
fi
rm -f "$O/ocq.config.new"

cat > "$DK/env-$FLAVOUR" <<EOT
KVER='$KVER'
ROOT='$DK/root-$KVER'
KH='$O'
KCOMMON_MAKEFILE='$SRC/Makefile'
KMAKE_EXTRA=''
VMLINUX='$O/vmlinux'
KCONFIG='$O/.config'
EOT
echo "$DK/env-$FLAVOUR"
