#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkdeb.sh - build the Debian packages of ocq: ocq-dkms (the DKMS source tree of
# scripts/package/dkms-files, built by DKMS for every kernel with headers) and ocq-tools
# (ocq-demo), with Debian's debhelper and dh-dkms.
#
# Usage: scripts/package/mkdeb.sh [OUTDIR]    (default: build/deb)
#
# The packaging is scripts/package/debian/; the version is the VERSION file's, with
# Debian revision 1. The tree is copied (what git tracks, or the files themselves
# outside a git checkout) to OUTDIR/ocq-<version>/ and built there with
# dpkg-buildpackage -b; the packages land in OUTDIR. Missing build tools are installed
# with apt. The last line printed is the path of each package.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$TOP/build/deb}
ver=$(cat "$TOP/VERSION")
log() { echo "deb: $*" >&2; }
die() { log "error: $*"; exit 1; }

deps=(dpkg-dev debhelper dh-dkms g++ libcli11-dev nlohmann-json3-dev)
missing=()
for p in "${deps[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >/dev/null || die "could not install ${missing[*]}"
fi

src=$OUT/ocq-$ver
rm -rf "$src" "$OUT"/ocq*.deb "$OUT"/ocq_*
mkdir -p "$src"
if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard |
		tar -c --null -T -) | tar -x -C "$src"
else
	(cd "$TOP" && tar -c --exclude=./build --exclude=./.cache .) | tar -x -C "$src"
fi
cp -a "$TOP/scripts/package/debian" "$src/debian"
cat > "$src/debian/changelog" <<CHANGELOG
ocq ($ver-1) unstable; urgency=medium

  * ocq $ver.

 -- $(sed -n 's/^Maintainer: //p' "$src/debian/control")  $(date -R -d "@$(git -C "$TOP" log -1 --format=%ct 2>/dev/null || date +%s)")
CHANGELOG

log "dpkg-buildpackage -b in ${src#"$TOP"/}"
(cd "$src" && dpkg-buildpackage -b -us -uc) > "$OUT/build.log" 2>&1 ||
	{ tail -40 "$OUT/build.log" >&2; die "dpkg-buildpackage failed; log: ${OUT#"$TOP"/}/build.log"; }
rm -rf "$src"
ls "$OUT"/ocq-dkms_"$ver"-1_all.deb "$OUT"/ocq-tools_"$ver"-1_*.deb
