#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms.sh - prove that the DKMS package (dkms.conf) builds, with Debian's dkms.
#
# Usage: tools/testing/dkms.sh [METAPACKAGE]    (default: linux-image-amd64)
#
# Fetches the Debian kernel METAPACKAGE names (tools/testing/vm/kernel.sh: its headers
# are unpacked, not installed), installs the dkms package if it is missing, copies the
# package's files into a temporary source tree and runs dkms add, dkms build -k <kver>
# and dkms remove there, with a temporary DKMS tree: nothing under /usr/src,
# /var/lib/dkms or /lib/modules is used.  dkms is pointed at the unpacked headers with
# --kernelsourcedir.  Those headers' Makefile includes an absolute
# /usr/src/linux-headers-<ver>-common/Makefile: when this machine has no such
# directory, a symbolic link to the unpacked one stands in for it during the build and
# is removed afterwards (a directory that exists is left alone and used as it is).
#
# Exit status: 0 if the package built and both modules were produced, 1 otherwise.
set -euo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
# What a DKMS source tree of ocq holds (the ocq-dkms package installs the same).
mapfile -t PKG_FILES < <(grep -v '^#' "$TOP/scripts/package/dkms-files")
MODULES=(ib_ocq ocq_demo)

log() { echo "dkms-check: $*" >&2; }
die() { log "error: $*"; exit 1; }

ENV=$("$TOP"/tools/testing/vm/kernel.sh "$META" | tail -1)
# shellcheck source=/dev/null
. "$ENV"

if ! command -v dkms >/dev/null; then
	log "installing dkms"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		dkms >/dev/null
fi

name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$TOP/dkms.conf")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$TOP/dkms.conf")
[ "$ver" = "$(cat "$TOP/VERSION")" ] ||
	die "dkms.conf PACKAGE_VERSION=$ver differs from VERSION $(cat "$TOP/VERSION")"

tmp=$(mktemp -d)
common=
cleanup() {
	[ -n "$common" ] && [ -L "$common" ] && rm -f "$common"
	rm -rf "$tmp"
}
trap cleanup EXIT

common=/usr/src/${KCOMMON_MAKEFILE#"$ROOT"/usr/src/}
common=${common%/Makefile}
if [ -e "$common" ]; then
	log "using the existing $common"
	common=
else
	ln -s "${KCOMMON_MAKEFILE%/Makefile}" "$common"
fi

src=$tmp/src/$name-$ver
mkdir -p "$src" "$tmp/dkms" "$tmp/install"
(cd "$TOP" && tar -c --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
	--exclude='.*.cmd' --exclude='*.order' --exclude='*.symvers' "${PKG_FILES[@]}") |
	tar -x -C "$src"

trees=(--sourcetree "$tmp/src" --dkmstree "$tmp/dkms" --installtree "$tmp/install")
rc=0
dkms add -m "$name" -v "$ver" "${trees[@]}" || rc=$?
if [ $rc = 0 ]; then
	log "dkms build -m $name -v $ver -k $KVER"
	dkms build -m "$name" -v "$ver" -k "$KVER" --kernelsourcedir "$KH" "${trees[@]}" ||
		rc=$?
fi
if [ $rc = 0 ]; then
	dkms status -m "$name" -v "$ver" -k "$KVER" "${trees[@]}"
	for m in "${MODULES[@]}"; do
		ko=$(find "$tmp/dkms/$name/$ver/$KVER" -name "$m.ko*" | head -1)
		if [ -n "$ko" ]; then
			log "built ${ko#"$tmp"/dkms/}"
		else
			log "$m.ko missing"
			rc=1
		fi
	done
else
	find "$tmp/dkms" -name make.log -exec tail -40 {} \; 2>/dev/null || true
fi
dkms remove -m "$name" -v "$ver" --all "${trees[@]}" >/dev/null 2>&1 || true
[ $rc = 0 ] && log "ok: $name $ver builds for $KVER"
exit $rc
