#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel.sh - fetch a Debian kernel (image, headers, kbuild) without installing it.
#
# Usage: tools/testing/vm/kernel.sh [METAPACKAGE]    (default: linux-image-amd64)
#
# Resolves the concrete kernel version behind a Debian linux-image metapackage, downloads
# the image (the -unsigned variant when it exists), the headers, headers-common(-rt) and
# kbuild packages with apt-get download, and extracts them into .cache/kernels/<KVER>/root.
# The cache is reused while the resolved package versions are unchanged (stamp file).
# Also runs depmod -b on the extracted modules and unpacks the ELF vmlinux from the
# bzImage (xz or zstd payload) so QEMU can boot it through its PVH entry point.
#
# Writes .cache/kernels/<KVER>/env (shell syntax) with:
#   KVER               kernel release, e.g. 6.1.0-57-amd64
#   ROOT               extracted package tree (lib/modules/KVER, usr/src, boot)
#   KH                 prepared headers build dir (the KDIR of a normal build)
#   KCOMMON_MAKEFILE   the headers' common Makefile (use: make -f $KCOMMON_MAKEFILE -C $KH)
#   KMAKE_EXTRA        extra make variables needed by this tree (may be empty)
#   VMLINUX            bootable ELF vmlinux (PVH)
#   KCONFIG            the kernel's .config
# and prints the path of that env file as the last line on stdout. Progress goes to stderr.
set -euo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
CACHE=${OCQ_CACHE:-$TOP/.cache}

log() { echo "kernel: $*" >&2; }
die() { echo "kernel: error: $*" >&2; exit 1; }

# host tools: only what is missing; apt-get update first when installing.
ensure_tools() {
	local need=() c
	for c in apt-cache:apt dpkg-deb:dpkg depmod:kmod modprobe:kmod xz:xz-utils zstd:zstd \
		 readelf:binutils; do
		command -v "${c%%:*}" >/dev/null || need+=("${c#*:}")
	done
	[ ${#need[@]} -eq 0 ] && return 0
	log "installing ${need[*]}"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
}

deps_of() { apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *|\?Depends: //p'; }

resolve_kver() {
	deps_of "$META" | sed -n 's/^linux-image-\(.*\)$/\1/p' | grep -v -- '-unsigned$' | head -1
}

candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'; }

ensure_tools
KVER=$(resolve_kver || true)
if [ -z "$KVER" ]; then
	log "cannot resolve $META from the apt cache, running apt-get update"
	apt-get update -q >/dev/null
	KVER=$(resolve_kver || true)
fi
[ -n "$KVER" ] || die "cannot resolve a kernel version from package '$META' (is it a linux-image metapackage?)"

IMG=linux-image-$KVER-unsigned
[ -n "$(candidate "$IMG")" ] && [ "$(candidate "$IMG")" != "(none)" ] || IMG=linux-image-$KVER
HDR=linux-headers-$KVER
HCOMMON=$(deps_of "$HDR" | grep -E '^linux-headers-.*-common(-rt)?$' | head -1 || true)
KBUILD=$(deps_of "$HDR" | grep -E '^linux-kbuild-' | head -1 || true)
[ -n "$HCOMMON" ] && [ -n "$KBUILD" ] || die "cannot resolve the dependencies of $HDR"
PKGS=("$IMG" "$HDR" "$HCOMMON" "$KBUILD")

D=$CACHE/kernels/$KVER
mkdir -p "$CACHE/kernels"
# One fetcher per kernel at a time; others wait, then find the cache ready.
exec 9> "$CACHE/kernels/.$KVER.lock"
flock 9
# The stamp names the candidate version of every package: a new upload refetches.
stamp=$KVER$(apt-cache policy "${PKGS[@]}" 2>/dev/null |
	awk '/^[^ ]/ { p = $1 } /Candidate:/ { printf " %s%s", p, $2 }')

# The unpacked tree is complete: the stamp is written last, and a module it lists exists.
cache_ok() {
	local first

	[ "$(cat "$D/stamp" 2>/dev/null)" = "$stamp" ] || return 1
	first=$(head -1 "$D/root/lib/modules/$KVER/modules.dep" 2>/dev/null | cut -d: -f1)
	[ -n "$first" ] && [ -f "$D/root/lib/modules/$KVER/$first" ] &&
		[ -f "$D/root/boot/vmlinuz-$KVER" ]
}

if ! cache_ok; then
	log "$META -> $KVER: downloading ${PKGS[*]}"
	rm -rf "$D/root" "$D/debs" "$D/vmlinux" "$D/stamp" "$D/env" && mkdir -p "$D/debs" "$D/root"
	(cd "$D/debs" && apt-get download -q "${PKGS[@]}" 2>&1 |
		grep -v -e 'Download is performed unsandboxed' -e '^Get:' >&2 || true)
	for p in "${PKGS[@]}"; do
		deb=$(ls "$D/debs/${p}_"*.deb 2>/dev/null | head -1)
		[ -n "$deb" ] || die "download of $p failed"
		dpkg-deb -x "$deb" "$D/root"
	done
	depmod -b "$D/root" "$KVER"     # the image .deb ships no modules.dep
	rm -rf "$D/debs"                # extracted: the .debs are not needed any more
	echo "$stamp" > "$D/stamp"
else
	log "$META -> $KVER (cached)"
fi

ROOT=$D/root
KH=$ROOT/usr/src/linux-headers-$KVER
[ -f "$KH/Makefile" ] || die "no headers Makefile in $KH"
# $KH/Makefile is a single "include /usr/src/linux-headers-...-common/Makefile" (absolute).
KCOMMON_MAKEFILE=$ROOT$(sed -n 's/^include *//p' "$KH/Makefile" | head -1)
[ -f "$KCOMMON_MAKEFILE" ] || die "common Makefile $KCOMMON_MAKEFILE missing"

# Modules' BTF needs pahole when the headers ship a vmlinux (6.12); fall back to no BTF.
KMAKE_EXTRA=
if grep -q '^CONFIG_DEBUG_INFO_BTF_MODULES=y' "$KH/.config" && [ -f "$KH/vmlinux" ] &&
   ! command -v pahole >/dev/null; then
	log "installing dwarves (pahole) for module BTF"
	{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends dwarves; } >/dev/null 2>&1 || true
	command -v pahole >/dev/null || KMAKE_EXTRA=CONFIG_DEBUG_INFO_BTF_MODULES=
fi

# The ELF vmlinux inside the bzImage: xz payload on 6.1, zstd on 6.12.
VMLINUZ=$ROOT/boot/vmlinuz-$KVER
VMLINUX=$D/vmlinux
if [ ! -s "$VMLINUX" ]; then
	for magic in '\xfd7zXZ\x00:xz' '\x28\xb5\x2f\xfd:zstd'; do
		off=$(LC_ALL=C grep -obUaP "${magic%:*}" "$VMLINUZ" | head -1 | cut -d: -f1 || true)
		[ -n "$off" ] || continue
		tail -c +$((off + 1)) "$VMLINUZ" | ${magic#*:} -dc 2>/dev/null > "$VMLINUX.tmp" || true
		if readelf -h "$VMLINUX.tmp" >/dev/null 2>&1; then
			mv "$VMLINUX.tmp" "$VMLINUX"
			break
		fi
	done
	rm -f "$VMLINUX.tmp"
	[ -s "$VMLINUX" ] || die "cannot unpack vmlinux from $VMLINUZ"
fi

cat > "$D/env" <<EOT
KVER='$KVER'
ROOT='$ROOT'
KH='$KH'
KCOMMON_MAKEFILE='$KCOMMON_MAKEFILE'
KMAKE_EXTRA='$KMAKE_EXTRA'
VMLINUX='$VMLINUX'
KCONFIG='$KH/.config'
EOT
echo "$D/env"
