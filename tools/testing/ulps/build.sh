#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh - the kernel's own NFS/RDMA, NVMe-oF and RDS ULPs, converted to ocq by
# semantic patches, built next to the stock ones against a Debian kernel.
#
# Usage: tools/testing/ulps/build.sh [METAPACKAGE]    (default: linux-image-amd64)
#
# 1. tools/testing/vm/build.sh resolves and fetches the kernel (kernel.sh) and builds
#    ib_ocq.ko; its Module.symvers gives the converted ULPs ib_ocq's exports.
# 2. Debian's linux-source-X.Y of the kernel's image package's version (an earlier
#    one than apt's candidate if need be; none is an error) is downloaded with
#    apt-get download, and only the ULPs' sources are extracted from it into
#    .cache/ulps/linux-source-X.Y/ (git-ignored; reused while the version holds):
#      net/sunrpc/xprtrdma/                       -> rpcrdma.ko (its Makefile as Kbuild)
#      drivers/nvme/host/{rdma.c,nvme.h,fabrics.h} -> nvme-rdma.ko
#      drivers/nvme/target/{rdma.c,nvmet.h}         -> nvmet-rdma.ko
#      net/rds/                                   -> rds.ko, rds_rdma.ko (its Makefile
#                                                    as Kbuild; rds_tcp.ko is built too
#                                                    but not kept)
#    Every header they include must be in that list or in the kernel's headers package.
# 3. They are copied to build/<KVER>/ulps/stock/ and build/<KVER>/ulps/ocq/, and two
#    semantic patches convert the ocq copy: scripts/coccinelle/api/ib_ocq_dropin.cocci
#    the CQ calls of ib_core (ib_alloc_cq() and the rest: NFS/RDMA, NVMe-oF), then
#    scripts/coccinelle/api/ib_poll_cq_and_arm.cocci a tasklet's hand-rolled poll,
#    arm, poll again (RDS's rds_rdma: net/rds/ib_cm.c).  The diff is printed on stdout
#    (and kept in build/<KVER>/ulps/ocq.diff).  It is an error if spatch fails, if a
#    file with CQ calls or ib_poll_cq() loops is left unchanged or keeps one, or if a
#    file without either changes.
# 4. Both trees are built out of tree against the kernel headers (M=); the modules are
#    copied to build/<KVER>/ulps/{stock,ocq}/*.ko.  Each module's vermagic must equal
#    the one of the kernel's own module, the converted ones (all but rds.ko, whose
#    source the semantic patches leave alone) must depend on ib_ocq and the stock
#    ones must not.
# 5. ulp-io (ulp-io.c), the ULP tests' I/O tool, and rds-io (rds-io.c), the AF_RDS
#    traffic of the RDS test and bench, are built static into
#    build/<KVER>/guest-bin/, which the guest has in /usr/bin/.
set -euo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm
COCCI=$TOP/scripts/coccinelle/api/ib_ocq_dropin.cocci
COCCI_LOOPS=$TOP/scripts/coccinelle/api/ib_poll_cq_and_arm.cocci
# The CQ calls of ib_core that ib_ocq_dropin.cocci converts.
CQ_CALLS='\<(ib_alloc_cq|ib_alloc_cq_any|ib_free_cq|ib_cq_pool_get|ib_cq_pool_put|ib_process_cq_direct)[[:space:]]*\('
# The polls of the loops that ib_poll_cq_and_arm.cocci converts (a call, not a comment's
# "ib_poll_cq()").
POLL_CALLS='\<ib_poll_cq[[:space:]]*\([^)]'

# shellcheck source=tools/lint/lib.sh
source "$TOP/tools/lint/lib.sh"    # ksrc_candidate, ksrc_has_version, ksrc_fetch, ensure_tools
log() { echo "ulps: $*" >&2; }
die() { echo "ulps: error: $*" >&2; exit 1; }   # also for lib.sh's functions

if [ -n "${DEBUG_KERNEL:-}" ] && [ "$DEBUG_KERNEL" != 0 ]; then
	die "DEBUG_KERNEL=$DEBUG_KERNEL: the ULPs come from a Debian linux-source package of the" \
		"KERNEL= image's version; run without DEBUG_KERNEL"
fi
ensure_tools spatch dpkg-deb xz rsync

# 1. The kernel and ib_ocq.ko.
ENV=$(W="${W:-1}" "$VM"/build.sh "$META" | tail -1)
# shellcheck source=/dev/null # KVER, ROOT, KH, KCOMMON_MAKEFILE, KMAKE_EXTRA (kernel.sh)
. "$ENV"
# shellcheck disable=SC2153 # KVER comes from the env file
ALL_SYMVERS=$TOP/build/$KVER/src/Module.symvers
[ -f "$ALL_SYMVERS" ] || die "no ${ALL_SYMVERS#"$TOP"/}: the build of ib_ocq.ko left none"

# 2. The ULP sources of the image's version.
candidate() { local v; v=$(ksrc_candidate "$1"); [ "$v" = "(none)" ] || echo "$v"; }
IMG=linux-image-$KVER-unsigned      # the package kernel.sh fetched
[ -n "$(candidate "$IMG")" ] || IMG=linux-image-$KVER
IVER=$(candidate "$IMG")
[ -n "$IVER" ] || die "apt knows no $IMG (run apt-get update?)"
MM=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$KVER")
SPKG=linux-source-$MM
SVER=$(candidate "$SPKG")
[ -n "$SVER" ] || die "apt knows no $SPKG, the source of $KVER"
if [ "$SVER" != "$IVER" ]; then
	# The archive moves: a new source can land before its image does.
	ksrc_has_version "$SPKG" "$IVER" ||
		die "$SPKG is version $SVER but $IMG is version $IVER, and apt offers no" \
			"$SPKG $IVER: the ULP sources would not be the kernel's" \
			"(apt-get update, or a mirror that has both)"
	log "apt's $SPKG is $SVER, $IMG is $IVER: using $SPKG $IVER"
	SVER=$IVER
fi

ULP_PATHS=(net/sunrpc/xprtrdma drivers/nvme/host/rdma.c drivers/nvme/host/nvme.h
	   drivers/nvme/host/fabrics.h drivers/nvme/target/rdma.c drivers/nvme/target/nvmet.h
	   net/rds)
SRC=$TOP/.cache/ulps/$SPKG
mkdir -p "$TOP/.cache/ulps"
exec 8> "$TOP/.cache/ulps/.$SPKG.lock"
flock 8
if [ "$(cat "$SRC/VERSION" 2>/dev/null)" != "$SVER" ] ||
   [ "$(cat "$SRC/PATHS" 2>/dev/null)" != "${ULP_PATHS[*]}" ]; then
	rm -rf "$SRC" "$SRC.new"
	log "extracting the ULP sources from $SPKG $SVER"
	ksrc_fetch "$SPKG" "$SVER" "$SRC.new" "${ULP_PATHS[@]}"
	echo "${ULP_PATHS[*]}" > "$SRC.new/PATHS"
	echo "$SVER" > "$SRC.new/VERSION"    # last: the cache is complete
	mv "$SRC.new" "$SRC"
else
	log "$SPKG $SVER (cached)"
fi
# The lock stays held until the sources are copied (step 3): another build with other
# paths would extract them again in place.

# Every header the ULPs include is theirs (extracted) or the headers package's.
COMMON=$(dirname "$KCOMMON_MAKEFILE")
INC_DIRS=("$KH/include" "$KH/arch/x86/include/generated" "$KH/arch/x86/include/generated/uapi"
	  "$COMMON/include" "$COMMON/include/uapi" "$COMMON/arch/x86/include"
	  "$COMMON/arch/x86/include/uapi")
missing=()
while IFS=: read -r f h; do
	case $h in
	\"*) h=${h#\"}; h=${h%\"}; [ -f "$SRC/$(dirname "$f")/$h" ] || missing+=("$f: \"$h\"") ;;
	*) h=${h#<}; h=${h%>}; found=
	   for d in "${INC_DIRS[@]}"; do [ -f "$d/$h" ] && found=1 && break; done
	   [ -n "$found" ] || missing+=("$f: <$h>") ;;
	esac
done < <(cd "$SRC" && grep -rHoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]+[">]' \
	--include='*.[ch]' net drivers | sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*/:/')
[ ${#missing[@]} -eq 0 ] ||
	die "headers that neither the extracted sources nor the headers package have:" \
		"${missing[*]} (add them to ULP_PATHS)"

# 3. stock and ocq copies; the semantic patch on the ocq one.
B=$TOP/build/$KVER/ulps
mkdir -p "$B"
exec 7> "$B/.lock"
flock 7
# ib_ocq's exports only (as make install's Module.symvers), for the converted build.
SYMVERS=$B/ib_ocq.symvers
awk -F '\t' '$3 ~ /(^|\/)ib_ocq$/' "$ALL_SYMVERS" > "$SYMVERS"
awk -F '\t' '$2 == "ib_ocq_free_cq" { f = 1 } END { exit !f }' "$SYMVERS" ||
	die "${ALL_SYMVERS#"$TOP"/} has no ib_ocq_free_cq of ib_ocq"
STAGE=$B/.stage
rm -rf "$STAGE"
mkdir -p "$STAGE/stock"
(cd "$SRC" && cp -a --parents "${ULP_PATHS[@]}" "$STAGE/stock/")
flock -u 8
# The kbuild files: xprtrdma's and RDS's own Makefiles, two lines for each NVMe module.
mv "$STAGE/stock/net/sunrpc/xprtrdma/Makefile" "$STAGE/stock/net/sunrpc/xprtrdma/Kbuild"
mv "$STAGE/stock/net/rds/Makefile" "$STAGE/stock/net/rds/Kbuild"
printf 'obj-m += nvme-rdma.o\nnvme-rdma-y := rdma.o\n' > "$STAGE/stock/drivers/nvme/host/Kbuild"
printf 'obj-m += nvmet-rdma.o\nnvmet-rdma-y := rdma.o\n' > "$STAGE/stock/drivers/nvme/target/Kbuild"
printf 'obj-m += net/sunrpc/xprtrdma/ drivers/nvme/host/ drivers/nvme/target/ net/rds/\n' \
	> "$STAGE/stock/Kbuild"
cp -a "$STAGE/stock" "$STAGE/ocq"

: > "$B/spatch.log"
for c in "$COCCI" "$COCCI_LOOPS"; do
	log "spatch $(realpath --relative-to="$TOP" "$c") on the ocq copy"
	# --no-includes --include-headers: the .cocci's Options line, which only coccicheck
	# reads.
	if ! (cd "$STAGE/ocq" && spatch -D patch --very-quiet --no-includes --include-headers \
		--sp-file "$c" --dir . --in-place) >> "$B/spatch.log" 2>&1 ||
	   grep -qE '^(Fatal error|EXN|exception|parse error)' "$B/spatch.log"; then
		cat "$B/spatch.log" >&2
		die "spatch failed (log: ${B#"$TOP"/}/spatch.log)"
	fi
done
(cd "$STAGE" && diff -ru stock ocq) > "$B/ocq.diff" || true
cat "$B/ocq.diff"

files_with() {	# REGEX: the files of the stock copy that match it
	(cd "$STAGE/stock" && grep -rlE "$1" --include='*.[ch]' . | sed 's|^\./||' | sort)
}
mapfile -t with_calls < <(files_with "$CQ_CALLS")
mapfile -t with_loops < <(files_with "$POLL_CALLS")
mapfile -t with_either < <(printf '%s\n' "${with_calls[@]}" "${with_loops[@]}" | sort -u)
mapfile -t changed < <(cd "$STAGE" && diff -rq stock ocq | sed -nE 's|^Files stock/(.*) and ocq/.* differ$|\1|p' | sort)
[ ${#with_calls[@]} -gt 0 ] || die "no CQ call of ib_core in the ULP sources: not the expected tree"
[ ${#with_loops[@]} -gt 0 ] || die "no ib_poll_cq() loop in the ULP sources: not the expected tree"
for f in "${with_either[@]}"; do
	cmp -s "$STAGE/stock/$f" "$STAGE/ocq/$f" &&
		die "the semantic patches changed nothing in $f, which has CQ calls of ib_core" \
			"or ib_poll_cq() loops:" \
			"$(grep -nE "$CQ_CALLS|$POLL_CALLS" "$STAGE/stock/$f" | tr '\n' ' ')"
	if grep -qE "$CQ_CALLS|$POLL_CALLS" "$STAGE/ocq/$f"; then
		die "$f keeps CQ calls of ib_core or ib_poll_cq() loops after the semantic" \
			"patches: $(grep -nE "$CQ_CALLS|$POLL_CALLS" "$STAGE/ocq/$f" | tr '\n' ' ')"
	fi
	grep -q '^#include <rdma/ib_ocq.h>' "$STAGE/ocq/$f" ||
		die "the semantic patches added no #include <rdma/ib_ocq.h> to $f"
done
[ "${changed[*]}" = "${with_either[*]}" ] ||
	die "the semantic patches changed ${changed[*]:-nothing}; the files with CQ calls or" \
		"ib_poll_cq() loops are ${with_either[*]}"
log "converted: ${changed[*]}"

# 4. Build both trees.  rsync -c keeps the objects of files whose content did not change.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
JOBS=$(( $(nproc) < 2 ? $(nproc) : 2 ))
MODS=(rpcrdma nvme-rdma nvmet-rdma rds rds_rdma)
# rds.ko has no CQ: the same source in both trees, built in each for rds_rdma.ko.
UNCONVERTED=(rds)
for t in stock ocq; do
	rsync -ac --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
		--exclude='.*.cmd' --exclude='*.order' --exclude='*.symvers' --exclude='.*.d' \
		--exclude='.tmp_*' "$STAGE/$t/" "$B/$t/"
	# The converted ULPs: ocq's headers (the copy ib_ocq.ko was built from) after the
	# kernel's, and ib_ocq's exports.
	extra=()
	[ $t = ocq ] && extra=(KCPPFLAGS="-I$TOP/build/$KVER/src/include" KBUILD_EXTRA_SYMBOLS="$SYMVERS")
	log "BUILD $t ($KVER)"
	rc=0
	# shellcheck disable=SC2086 # KMAKE_EXTRA holds several words
	make -f "$KCOMMON_MAKEFILE" -C "$KH" M="$B/$t" -j"$JOBS" $KMAKE_EXTRA "${extra[@]}" \
		modules > "$B/build-$t.log" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		tail -n 30 "$B/build-$t.log" >&2
		die "the $t build failed (log: ${B#"$TOP"/}/build-$t.log)"
	fi
	if grep -E 'WARNING: modpost: .*undefined' "$B/build-$t.log" >&2; then
		die "the $t modules have undefined symbols (log: ${B#"$TOP"/}/build-$t.log)"
	fi
	rm -f "$B/$t"/*.ko
	for m in "${MODS[@]}"; do
		ko=$(find "$B/$t" -mindepth 2 -name "$m.ko" -print -quit)
		[ -n "$ko" ] || die "the $t build made no $m.ko"
		cp "$ko" "$B/$t/"
	done
done

# The modules against the kernel's own: same vermagic; ib_ocq among the converted
# ones' dependencies only.
KMOD=$ROOT/lib/modules/$KVER/kernel
has_dep() { tr ',' '\n' <<<"$1" | grep -qx "$2"; }
for m in "${MODS[@]}"; do
	ref=$(find "$KMOD" \( -name "$m.ko" -o -name "$m.ko.*" \) -print -quit)
	[ -n "$ref" ] || die "the kernel has no $m module under ${KMOD#"$TOP"/}"
	want=$(modinfo -F vermagic "$ref")
	for t in stock ocq; do
		ko=$B/$t/$m.ko
		vm=$(modinfo -F vermagic "$ko")
		deps=$(modinfo -F depends "$ko")
		[ "$vm" = "$want" ] ||
			die "$t/$m.ko: vermagic '$vm', the kernel's $m: '$want'"
		if [ $t = ocq ] && [[ " ${UNCONVERTED[*]} " != *" $m "* ]]; then
			has_dep "$deps" ib_ocq || die "ocq/$m.ko does not depend on ib_ocq (depends: $deps)"
		else
			! has_dep "$deps" ib_ocq || die "$t/$m.ko depends on ib_ocq (depends: $deps)"
		fi
		printf '  %-5s %-14s vermagic %s; depends %s\n' "$t" "$m.ko" "$vm" "$deps" >&2
	done
done
# 5. The tests' I/O tools.
mkdir -p "$TOP/build/$KVER/guest-bin"
for p in ulp-io rds-io; do
	gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$TOP/build/$KVER/guest-bin/$p" \
		"$TOP/tools/testing/ulps/$p.c" || die "building $p"
done
log "ok: ${MODS[*]/%/.ko} in ${B#"$TOP"/}/{stock,ocq}/ ($SPKG $SVER, $KVER), ulp-io and" \
	"rds-io in build/$KVER/guest-bin/"
