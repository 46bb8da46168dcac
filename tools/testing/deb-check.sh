#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-check.sh - prove that the Debian packages install and remove cleanly: build them
# (scripts/package/mkdeb.sh), install the headers of the kernel METAPACKAGE names if
# they are missing, install ocq-dkms and ocq-tools with apt, check that DKMS built and
# installed both modules for that kernel and that ocq-demo runs, purge the packages and
# check that nothing of them is left; then purge the headers it installed (and the
# depmod files DKMS left for that kernel, if this system has no such kernel).
#
# This installs packages into the running system: for CI and throwaway machines.
#
# Usage: tools/testing/deb-check.sh [METAPACKAGE]    (default: linux-image-amd64)
set -euo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
ver=$(cat "$TOP/VERSION")
MODULES=(ib_ocq ocq_demo)
log() { echo "deb-check: $*" >&2; }
die() { log "error: $*"; exit 1; }
apt_q() { DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" >/dev/null; }

# the kernel release METAPACKAGE names: its linux-image-<KVER> dependency
KVER=$(apt-cache depends "$META" 2>/dev/null |
	sed -n 's/^ *Depends: linux-image-\([0-9].*\)$/\1/p' | head -n 1)
[ -n "$KVER" ] || die "no kernel release found for $META"
mapfile -t debs < <("$TOP"/scripts/package/mkdeb.sh | grep '\.deb$')
[ ${#debs[@]} = 2 ] || die "mkdeb.sh made ${#debs[@]} packages, want 2"

headers=
moddir=/lib/modules/$KVER
[ -e "$moddir" ] && moddir=	# not ours to remove
if ! dpkg-query -W -f='${Status}' "linux-headers-$KVER" 2>/dev/null | grep -q 'ok installed'; then
	headers=linux-headers-$KVER
	log "installing $headers"
	apt_q install --no-install-recommends "$headers" || die "could not install $headers"
fi
installed=0
cleanup() {
	[ $installed = 1 ] && apt_q purge ocq-dkms ocq-tools
	if [ -n "$headers" ]; then
		log "purging $headers"
		apt_q purge --autoremove "$headers" || log "could not purge $headers"
	fi
	# what depmod wrote for a kernel this system does not have
	if [ -n "$moddir" ] && [ -z "$(find "$moddir" -mindepth 1 ! -name 'modules.*')" ]; then
		rm -rf "$moddir"
	fi
}
trap cleanup EXIT

bad=()
log "apt-get install ${debs[*]##*/}"
installed=1
apt_q install --no-install-recommends "${debs[@]}" || die "installing the packages failed"
status=$(dkms status -m ocq -v "$ver" -k "$KVER")
log "dkms status: $status"
[[ $status == *": installed"* ]] || bad+=("dkms status for $KVER: '$status', want installed")
for m in "${MODULES[@]}"; do
	ko=$(find "/lib/modules/$KVER/updates" -name "$m.ko*" 2>/dev/null | head -n 1)
	if [ -z "$ko" ]; then
		bad+=("$m.ko not installed under /lib/modules/$KVER/updates")
		continue
	fi
	vm=$(modinfo -F vermagic "$ko")
	[[ $vm == "$KVER "* ]] || bad+=("$ko: vermagic '$vm', want $KVER")
	log "installed ${ko#/lib/modules/}"
done
demo=$(ocq-demo --version 2>&1) || bad+=("ocq-demo --version failed: $demo")
[ "$demo" = "ocq-demo $ver" ] || bad+=("ocq-demo --version: '$demo', want 'ocq-demo $ver'")

log "apt-get purge ocq-dkms ocq-tools"
apt_q purge ocq-dkms ocq-tools || die "purging the packages failed"
installed=0
left=$(dkms status -m ocq 2>&1)
[ -z "$left" ] || bad+=("dkms status after the purge: '$left'")
for p in /usr/src/ocq-"$ver" /var/lib/dkms/ocq /usr/sbin/ocq-demo; do
	[ ! -e "$p" ] || bad+=("$p left after the purge")
done
left=$(find "/lib/modules/$KVER" -name 'ib_ocq.ko*' -o -name 'ocq_demo.ko*' 2>/dev/null)
[ -z "$left" ] || bad+=("modules left after the purge: $left")

if [ ${#bad[@]} -gt 0 ]; then
	printf 'deb-check: FAIL: %s\n' "${bad[@]}" >&2
	exit 1
fi
log "ok: ocq-dkms and ocq-tools $ver-1 installed, built for $KVER by DKMS, and purged"
