#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# initramfs.sh - build the guest's busybox initramfs for one kernel.
#
# Usage: tools/testing/vm/initramfs.sh ENVFILE OUT.cpio.gz
#
# Content: busybox (static), /init (guest-init), the kernel modules named by "module"
# lines of selftests/guest.conf with their dependencies (decompressed, loaded in
# dependency order from /modules.order), those named by "kmod" lines with their
# dependencies (not loaded at boot; /lib/modules/deps/NAME lists the files in load
# order, for kmod_load of selftests/lib/ksft.sh), host programs named by "bin" lines
# with their libraries, our modules from build/<KVER>/ko/ at /ko/, the kernel's own
# ULPs built by tools/testing/ulps/build.sh (build/<KVER>/ulps/{stock,ocq}/*.ko, debug
# info stripped) at /ko/ulps/{stock,ocq}/, build/<KVER>/guest-bin/* at /usr/bin/, and
# selftests/ at /selftests/. The test list is not in it: the runner appends a small
# second archive per boot.
#
# ULPS_STATUS (environment, from check.sh) is written to /ko/ulps/status: "ok" when the
# ULPs were built for this run, "skip: <why>" or "fail: <why>" when they were not; the
# ULP modules are copied only with "ok".
set -euo pipefail

ENV=$1
OUT=$2
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
. "$ENV"
B=$TOP/build/$KVER
CONF=$TOP/selftests/guest.conf
S=$B/initramfs
pkg_roots=()
die() { echo "initramfs: error: $*" >&2; exit 1; }

rm -rf "$S"
mkdir -p "$S"/{bin,sbin,usr/bin,usr/sbin,lib/modules,proc,sys,dev,tmp,run,ko,etc}
cp "$(command -v busybox)" "$S/bin/busybox"
install -m 0755 "$TOP/tools/testing/vm/guest-init" "$S/init"
: > "$S/modules.order"

conf() { sed -n "s/^$1[[:space:]]\+\([^[:space:]#]\+\).*/\1/p" "$CONF" 2>/dev/null; }

add_module() {	# KO [noload]: a .ko[.xz|.zst|.gz] path of the extracted kernel tree
	local ko=$1 b

	b=$(basename "$ko")
	b=${b%.xz}; b=${b%.zst}; b=${b%.gz}
	[ -f "$S/lib/modules/$b" ] && return 0
	case $ko in
	*.xz)  xz -dc "$ko" ;;
	*.zst) zstd -qdc "$ko" ;;
	*.gz)  gzip -dc "$ko" ;;
	*)     cat "$ko" ;;
	esac > "$S/lib/modules/$b"
	[ "${2:-}" = noload ] || echo "$b" >> "$S/modules.order"
}

for m in $(conf module); do
	# One module per call: more names on the line would be taken as parameters.
	deps=$(modprobe -d "$ROOT" -S "$KVER" --show-depends "$m" 2>&1) ||
		die "module $m: $deps"
	while read -r verb path _; do
		[ "$verb" = insmod ] && add_module "$path"
	done <<< "$deps"
done

# After every boot module: a dependency shared with one of them is loaded at boot.
mkdir -p "$S/lib/modules/deps"
for m in $(conf kmod); do
	# a kernel built without it (a debug kernel's minimal config): the tests
	# that load it fail at their kmod_load, the others run
	if ! deps=$(modprobe -d "$ROOT" -S "$KVER" --show-depends "$m" 2>&1); then
		echo "initramfs: kmod $m is not a module of $KVER: the tests that load it will fail" >&2
		continue
	fi
	: > "$S/lib/modules/deps/$m"
	while read -r verb path _; do
		[ "$verb" = insmod ] || continue
		add_module "$path" noload
		b=$(basename "$path"); b=${b%.xz}; b=${b%.zst}; b=${b%.gz}
		grep -qx "$b" "$S/lib/modules/deps/$m" || echo "$b" >> "$S/lib/modules/deps/$m"
	done <<< "$deps"
done

copy_lib() {
	[ -e "$S$1" ] && return 0
	mkdir -p "$S$(dirname "$1")"
	cp -L "$1" "$S$1"
}

for b in $(conf bin); do
	p=$(PATH=$PATH:/usr/sbin:/sbin command -v "$b") || die "program $b not found on the host"
	cp -L "$p" "$S/usr/bin/$b"
	for l in $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*'); do
		copy_lib "$l"
	done
done

cp "$B"/ko/*.ko "$S/ko/" 2>/dev/null || true
mkdir -p "$S/ko/ulps"
ULPS_STATUS=${ULPS_STATUS:-"skip: not built for this run (no ulp_ test selected)"}
if [ "$ULPS_STATUS" = ok ]; then
	for t in stock ocq; do
		mkdir -p "$S/ko/ulps/$t"
		for ko in "$B/ulps/$t"/*.ko; do
			[ -f "$ko" ] || die "ULPS_STATUS=ok but no ${B#"$TOP"/}/ulps/$t/*.ko"
			strip --strip-debug -o "$S/ko/ulps/$t/$(basename "$ko")" "$ko"
		done
	done
fi
echo "$ULPS_STATUS" > "$S/ko/ulps/status"

# The ULP tests' userspace (with ULPS_STATUS=ok only): "ulp-pkg PKG" lines name Debian
# packages fetched with apt-get download and unpacked into .cache/guest-pkgs/ (kept per
# version), "ulp-bin PATH" lines programs of theirs copied to /usr/bin with their
# libraries (the unpacked packages' first, then the host's); "etc FILE" lines (always)
# copy the host's /etc/FILE.
if [ "$ULPS_STATUS" = ok ]; then
	P=$TOP/.cache/guest-pkgs
	mkdir -p "$P"
	for pkg in $(conf ulp-pkg); do
		ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
		{ [ -n "$ver" ] && [ "$ver" != "(none)" ]; } || die "apt knows no package $pkg"
		d=$P/${pkg}_$(echo "$ver" | tr ':' '+')
		if [ ! -d "$d" ]; then
			rm -rf "$d.new" && mkdir -p "$d.new/deb"
			(cd "$d.new/deb" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
				die "apt-get download $pkg=$ver failed"
			dpkg-deb -x "$d.new"/deb/*.deb "$d.new/root"
			rm -rf "$d.new/deb"
			mv "$d.new" "$d"
		fi
		pkg_roots+=("$d/root")
	done
	libpath=
	for r in "${pkg_roots[@]}"; do
		libpath+="${libpath:+:}$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu"
	done
	for b in $(conf ulp-bin); do
		f=
		for r in "${pkg_roots[@]}"; do [ -f "$r$b" ] && f=$r$b && break; done
		[ -n "$f" ] || die "no $b in the ulp-pkg packages"
		cp -L "$f" "$S/usr/bin/$(basename "$b")"
		for l in $(LD_LIBRARY_PATH=$libpath ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
			dst=$l
			for r in "${pkg_roots[@]}"; do dst=${dst#"$r"}; done
			[ -e "$S$dst" ] && continue
			mkdir -p "$S$(dirname "$dst")"
			cp -L "$l" "$S$dst"
		done
	done
fi
for e in $(conf etc); do
	[ -f "/etc/$e" ] || die "no /etc/$e on the host"
	cp -L "/etc/$e" "$S/etc/$e"
done
if [ -d "$B/guest-bin" ]; then
	for f in "$B"/guest-bin/*; do
		[ -f "$f" ] || continue
		cp -L "$f" "$S/usr/bin/"
		for l in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
			copy_lib "$l"
		done
	done
fi
cp -a "$TOP/selftests" "$S/selftests"
# not our build products, if any were left in the tree
find "$S/selftests" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) \
	-delete 2>/dev/null || true

(cd "$S" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "  INITRD  ${OUT#$TOP/} ($(du -h "$OUT" | cut -f1); modules: $(tr '\n' ' ' < "$S/modules.order"))" >&2
