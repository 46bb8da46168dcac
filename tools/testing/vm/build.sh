#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh - build all ocq modules against a fetched Debian kernel.
#
# Usage: [DEBUG_KERNEL=1|kasan|kcsan] tools/testing/vm/build.sh [METAPACKAGE]
#
# Copies the module sources (Kbuild drivers include selftests/modules) into
# build/<KVER>/src so that two kernels never share objects, builds them there with the
# headers' own make (W=1 unless W= says otherwise) and collects the .ko files in
# build/<KVER>/ko/. Fails when the build fails or the compiler prints a warning.
# Also builds the static tools/ocq-demo front end into build/<KVER>/guest-bin/.
# Prints the kernel env file (see kernel.sh) as the last line on stdout.
set -euo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm

"$VM"/host-deps.sh build
# DEBUG_KERNEL=1|kasan|kcsan: our own debug kernel (debug-kernel.sh) instead of META.
if [ -n "${DEBUG_KERNEL:-}" ] && [ "$DEBUG_KERNEL" != 0 ]; then
	ENV=$("$VM"/debug-kernel.sh "$DEBUG_KERNEL" | tail -1)
else
	ENV=$("$VM"/kernel.sh "$META" | tail -1)
fi
. "$ENV"

B=$TOP/build/$KVER
mkdir -p "$B/src" "$B/ko"
# One build per kernel copy at a time (make check holds its own lock around this).
exec 7> "$B/.build.lock"
flock 7
srcs=()
for s in Kbuild drivers include selftests/modules; do
	[ -e "$TOP/$s" ] && srcs+=("$s")
done
# rsync keeps the objects of unchanged files (incremental builds); build products are
# excluded, which also protects them from --delete.
(cd "$TOP" && rsync -aR --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.order' --exclude='*.symvers' \
	--exclude='.*.d' --exclude='.tmp_*' "${srcs[@]}" "$B/src/")

# Don't let the user-facing make's variables (KERNEL=, TESTS=, ...) reach the kernel's.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
echo "  BUILD   $KVER (W=${W:-1})" >&2
rc=0
# shellcheck disable=SC2086
make -f "$KCOMMON_MAKEFILE" -C "$KH" M="$B/src" W="${W:-1}" -j"$(nproc)" $KMAKE_EXTRA \
	modules > "$B/build.log" 2>&1 || rc=$?
grep -v -E -e '^make(\[[0-9]+\])?: (Entering|Leaving) directory' -e '^Skipping BTF generation' "$B/build.log" >&2 || true
if [ $rc -ne 0 ]; then
	echo "build: FAILED for $KVER (log: ${B#$TOP/}/build.log)" >&2
	exit 1
fi
if grep -q 'warning:' "$B/build.log"; then
	# Objects with warnings would not be rebuilt (and the warning not seen) next time.
	rm -rf "$B/src"
	echo "build: compiler warnings for $KVER: the build must be warning-free" >&2
	exit 1
fi
rm -f "$B"/ko/*.ko
find "$B/src" -name '*.ko' -exec cp {} "$B/ko/" \;
echo "  KO      $(cd "$B/ko" && ls -- *.ko 2>/dev/null | tr '\n' ' ')" >&2

# The demo front end: a static C++17 program, for the guest's /usr/bin/ (guest-bin/);
# host-deps.sh above installed g++ and the libraries it builds with.
make -s -j"$(nproc)" -C "$TOP/tools/ocq-demo" O="$TOP/build/ocq-demo" >&2 ||
	{ echo "build: ocq-demo FAILED" >&2; exit 1; }
mkdir -p "$B/guest-bin"
cp "$TOP/build/ocq-demo/ocq-demo" "$B/guest-bin/"
echo "  BIN     ocq-demo" >&2
echo "$ENV"
