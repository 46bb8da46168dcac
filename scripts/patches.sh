#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# patches.sh - ocq as a kernel patch series against Debian's linux-source-6.12,
# checked with the kernel's checkpatch.pl and built in tree.
#
# Usage: scripts/patches.sh            (make patches; QUICK=1: no in-tree build)
#
# 1. linux-source-6.12, at the version apt offers now, is downloaded with
#    apt-get download and extracted whole into .cache/patches/linux-source-6.12/
#    (git-ignored; reused while apt offers the same version).
# 2. A copy of it, build/patches-tree/gen/, becomes a git repository with one
#    commit, "Debian linux-source-<version>".  ocq is added where
#    Documentation/layout.rst says it lives upstream, one logical change per
#    commit.  The file lists come from this tree: the objects of
#    drivers/infiniband/core/Kbuild, the headers next to them, include/rdma/,
#    include/trace/events/, scripts/coccinelle/api/.  The out-of-tree-only
#    parts are changed on the copy, never here: ocq.c's module_init/module_exit
#    become ib_ocq_init()/ib_ocq_cleanup(), called from ib_core_init() and
#    ib_core_cleanup(); its MODULE_* lines go; paths of this tree's documents
#    become the kernel's.
# 3. git format-patch writes the series to build/patches/; every patch must pass
#    the source's scripts/checkpatch.pl --strict with no error, warning or check
#    (logs: build/patches-logs/).
# 4. Unless QUICK=1: the series is applied with git am to a second copy of the
#    source (build/patches-tree/am/), which is configured with the config of
#    Debian's 6.12 kernel (tools/testing/vm/kernel.sh linux-image-6.12-amd64),
#    "make olddefconfig modules_prepare", then "make M=drivers/infiniband/core
#    W=1".  The build must succeed, and no warning may be located in a file the
#    series adds or changes; upstream's own W=1 warnings are counted, not fatal.
#
# Prints a summary (patches, checkpatch per patch, build); exits non-zero on any
# failure.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source=tools/lint/lib.sh
source "$TOP/tools/lint/lib.sh"   # ksrc_candidate, ksrc_fetch, ensure_tools, list_tree
log() { echo "patches: $*" >&2; }
die() { echo "patches: error: $*" >&2; exit 1; }   # also for lib.sh's functions

QUICK=${QUICK:-}
[ "$QUICK" = 0 ] && QUICK=
JOBS=${JOBS:-2}
SPKG=linux-source-6.12
META=linux-image-6.12-amd64     # whose config the in-tree build uses
CACHE_DIR=$TOP/.cache/patches
PRISTINE=$CACHE_DIR/$SPKG
TREES=$TOP/build/patches-tree
GEN=$TREES/gen
AM=$TREES/am
OUT=$TOP/build/patches
LOGS=$TOP/build/patches-logs
CORE=drivers/infiniband/core
T0=$(date +%s)

# The identity of the commits and of their Signed-off-by: this repository's git
# user, else the project's.
NAME=$(git -C "$TOP" config user.name || true)
EMAIL=$(git -C "$TOP" config user.email || true)
if [ -z "$NAME" ] || [ -z "$EMAIL" ]; then NAME="ocq maintainers"; EMAIL="ocq@example.org"; fi
g() {
	# zlib's fastest level for the 90000 loose objects of the first commit
	git -c user.name="$NAME" -c user.email="$EMAIL" -c gc.auto=0 -c core.autocrlf=false \
		-c init.defaultBranch=master -c core.looseCompression=1 "$@"
}

ensure_tools git perl dpkg-deb xz
[ -n "$QUICK" ] || ensure_tools make gcc flex bison bc
if [ -z "$QUICK" ]; then
	[ -f /usr/include/gelf.h ] || apt_install libelf-dev           # objtool
	[ -f /usr/include/openssl/opensslv.h ] || apt_install libssl-dev # scripts/
fi

# ---- 1. the source, extracted whole, once per version ----
SVER=$(ksrc_candidate "$SPKG")
if [ -z "$SVER" ] || [ "$SVER" = "(none)" ]; then
	apt_update_once
	SVER=$(ksrc_candidate "$SPKG")
fi
if [ -z "$SVER" ] || [ "$SVER" = "(none)" ]; then die "apt knows no $SPKG (apt-get update?)"; fi
mkdir -p "$CACHE_DIR"
exec 8> "$CACHE_DIR/.$SPKG.lock"
flock 8
if [ "$(cat "$PRISTINE.version" 2>/dev/null)" != "$SVER" ] || [ ! -f "$PRISTINE/Makefile" ]; then
	rm -rf "$PRISTINE" "$PRISTINE.new" "$PRISTINE.version"
	log "extracting $SPKG $SVER into ${PRISTINE#"$TOP"/}"
	ksrc_fetch "$SPKG" "$SVER" "$PRISTINE.new"     # no paths: the whole tarball
	[ -f "$PRISTINE.new/Makefile" ] || die "no kernel source in $SPKG $SVER"
	mv "$PRISTINE.new" "$PRISTINE"
	echo "$SVER" > "$PRISTINE.version"             # last: the cache is complete
else
	log "$SPKG $SVER (cached)"
fi
flock -u 8
[ -x "$PRISTINE/scripts/checkpatch.pl" ] || die "no scripts/checkpatch.pl in $SPKG"

# A fresh git repository of the source at $1, with one commit.
fresh_tree() {
	local d=$1

	rm -rf "$d"
	mkdir -p "$(dirname "$d")"
	cp -a "$PRISTINE" "$d"
	g -C "$d" init -q
	g -C "$d" add -A -f     # Debian's .gitignore ignores the whole top level
	g -C "$d" commit -q -m "Debian linux-source-$SVER"
}

# ---- 2. the files of each patch, from this tree ----
# The objects of ib_ocq.ko in the out-of-tree Kbuild (continuation lines joined).
mapfile -t OBJS < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$TOP/$CORE/Kbuild" |
	sed -n 's/^ib_ocq-[^ :+]*[[:space:]]*[:+]\?=//p' | tr -s ' \t' '\n' | grep '\.o$' || true)
[ ${#OBJS[@]} -gt 0 ] || die "no ib_ocq-y objects in $CORE/Kbuild"
CFILES=()
for o in "${OBJS[@]}"; do
	f=$CORE/${o%.o}.c
	[ -f "$TOP/$f" ] || die "$CORE/Kbuild names $o but there is no $f"
	[ -e "$PRISTINE/$f" ] && die "$f already exists upstream: rename it"
	CFILES+=("$f")
done
for f in $(list_tree "$CORE" | grep '\.c$'); do
	[[ " ${CFILES[*]} " == *" $f "* ]] || log "warning: $f is not in $CORE/Kbuild: left out"
done
HFILES=$(list_tree "$CORE" | grep '\.h$' || true)
# include/rdma/ib_ocq_dropin.h stays out: in tree the semantic patch converts ULPs.
RDMA_H=$(list_tree include/rdma | grep '\.h$' | grep -v '/ib_ocq_dropin\.h$' || true)
TRACE_H=$(list_tree include/trace/events | grep '\.h$' || true)
COCCI=$(list_tree scripts/coccinelle | grep '\.cocci$' || true)
DOCS=(api design sq-accounting)     # Documentation/layout.rst: the kernel reader's documents
DOCDIR=Documentation/infiniband/ocq

# Which patch a source file belongs to (the first that claims it).
patch_of() {
	case $1 in
	*sq_acct*) echo sqacct ;;
	include/rdma/*) echo api ;;
	include/trace/*) echo trace ;;
	*/ocq_engine.[ch]) echo engine ;;
	*/ocq_cq.c) echo pool ;;
	*/ocq_direct.c) echo direct ;;
	scripts/coccinelle/*) echo cocci ;;
	*) echo ocq ;;          # ocq.c, ocq_priv.h and whatever is new in core/
	esac
}
declare -A FILES=()
for f in "${CFILES[@]}" $HFILES $RDMA_H $TRACE_H $COCCI; do
	p=$(patch_of "$f")
	FILES[$p]+="$f "
done

# In-tree form of a copied file: paths of this tree's documents become the
# kernel's, ib_ocq.ko is ib_core.ko, a file does not name itself (checkpatch's
# EMBEDDED_FILENAME).  ocq.c loses its module boilerplate.
intree() {
	local f=$1 doc

	case $f in *.c | *.h | *.cocci) sed -i 's/\<ib_ocq\.ko\>/ib_core.ko/g' "$f" ;; esac
	for doc in "${DOCS[@]}"; do
		sed -i "s|\\<Documentation/$doc\\.rst\\>|$DOCDIR/$doc.rst|g" "$f"
	done
	sed -i "s|\\<${f//./\\.}\\>|<this file>|g" "$f"
	if grep -qE 'LINUX_VERSION_CODE|KERNEL_VERSION\(' "$f"; then
		die "$f has kernel-version compat blocks: teach scripts/patches.sh to drop them"
	fi
	if [ "$f" = "$CORE/ocq.c" ]; then
		perl -0pi -e '
			$n += s/^static (int __init) ib_ocq_init\(void\)/$1 ib_ocq_init(void)/m;
			$n += s/^static void __exit ib_ocq_exit\(void\)/void ib_ocq_cleanup(void)/m;
			$n += s/^(#include "ocq_engine\.h"\n)/#include "core_priv.h"\n$1/m;
			s/^(module_init|module_exit|MODULE_[A-Z_]+)\(.*?\);\n//mgs;
			s/\n+\z/\n/;
			END { exit($n != 3) }' "$f" ||
			die "ocq.c: the init/exit functions or the includes are not where expected"
	fi
	if grep -nE '^(module_init|module_exit|MODULE_[A-Z_]+)\(' "$f"; then
		die "$f: module boilerplate left that ib_core cannot have"
	fi
}

# The MAINTAINERS entry of everything added so far (files sorted), at its
# alphabetical place; replaces the entry of the previous patch.
MAINT_TITLE="RDMA ORDERED COMPLETION QUEUES (OCQ)"
MAINT_FILES=()
maintainers() {
	local entry

	MAINT_FILES+=("$@")
	entry=$(printf 'M:\t%s <%s>\nL:\tlinux-rdma@vger.kernel.org\nS:\tMaintained\n' "$NAME" "$EMAIL"
		printf 'F:\t%s\n' "${MAINT_FILES[@]}" | LC_ALL=C sort -u)
	TITLE=$MAINT_TITLE ENTRY=$entry perl -0pi -e '
		my ($t, $e) = ($ENV{TITLE}, $ENV{ENTRY});
		s/\n\Q$t\E\n.*?\n\n/\n/s;
		my $done = 0;
		s{\n\n([A-Z0-9][^\n]*)\n(?=[A-Z]:\t)}{
			my $h = $1;
			if (!$done && $h ne "THE REST" && $h gt $t) { $done = 1; "\n\n$t\n$e\n\n$h\n" }
			else { "\n\n$h\n" }
		}ge;
		END { exit(!$done) }' MAINTAINERS || die "MAINTAINERS: no place for the ocq entry"
}

# commit SUBJECT BODY: everything staged, with a Signed-off-by.
commit() {
	[ ${#1} -le 75 ] || die "subject longer than 75 characters: $1"
	g -C "$GEN" add -A -f
	g -C "$GEN" commit -q -s -F - <<-EOT
	$1

	$2
	EOT
}

# has KEY: patch KEY has files; add_files KEY: copy them into the tree (the
# current directory), in in-tree form, and list them in MAINTAINERS.
has() { [ -n "${FILES[$1]:-}" ]; }
add_files() {
	local f added=()

	has "$1" || die "no file of this tree belongs to the patch '$1'"
	for f in ${FILES[$1]}; do
		[ -e "$f" ] && die "$f already exists upstream"
		mkdir -p "$(dirname "$f")"
		cp "$TOP/$f" "$f"
		intree "$f"
		added+=("$f")
	done
	maintainers "${added[@]}"
}

log "building the series on a copy of $SPKG $SVER (${GEN#"$TOP"/})"
fresh_tree "$GEN"
BASE=$(git -C "$GEN" rev-parse HEAD)
cd "$GEN"

if has sqacct; then
	SQ_C=
	[[ ${FILES[sqacct]} == *.c\ * ]] &&
		SQ_C="  The hot-path helpers are inline; the
allocation, teardown and reaping are in sq_acct.c."
	add_files sqacct
	commit "RDMA/core: Add send queue accounting helpers" \
"A ULP that signals only some of its send work requests must still know
when the unsignaled ones are done, and a ULP that shares one CQ between
many QPs must not post more work than the CQ has entries for.  Each ULP
does this bookkeeping on its own today, with its own wraparound and
memory ordering rules.

Add <rdma/ib_sq_acct.h>: wrapping 64-bit head, tail and signaled
counters per send queue, a selective signaling policy, the release of
the unsignaled requests that a signaled completion covers, and a CQ
credit shared by the QPs of one CQ.$SQ_C  Nothing uses them yet."
fi

add_files api
commit "RDMA/core: Add the ordered completion queue API" \
"ib_cq dispatches completions from one context per CQ, and its users
each repeat the poll, arm and re-poll dance that keeps a completion
from being stranded when the provider signals an event before the CQ
is armed.  ULPs that need completions handed to them in order, on any
CPU, with flow control, have no common code for it.

Add <rdma/ib_ocq.h>, the interface of ordered completion queues: the
arm policies and the poll-and-arm helpers, the ordering modes (strict,
per flow, parallel), the allocation calls mirroring ib_alloc_cq() and
ib_cq_pool_get(), pause and resume, and statistics.  The
implementation follows in the next patches."

add_files trace
commit "RDMA/core: Add trace events for ordered completion queues" \
"Add the ib_ocq trace system: events for a run of the engine, for the
arm and its outcome, for a completion handed to its consumer, and for
the watchdog rescuing a CQ whose notification was lost.  They identify
the CQ by its restrack id, as the existing cq trace events do."

add_files engine
commit "RDMA/core: Add the ordered completion engine" \
"Add the engine behind ordered CQs: a poll, dispatch and arm state
machine per CQ, with a gate word per unit of ordering that lets exactly
one context run it at a time while any number of event handlers kick
it.  A kick is never lost: a run that ends re-checks the gate before it
lets go.  Completions are handed on in CQ order, per QP, or per flow
domain, as the CQ's mode asks.

The engine also provides ib_poll_cq_and_arm() and ib_poll_and_notify(),
the poll-and-arm helpers for any CQ, and ib_cq_arm_policy(), which
picks how a provider's CQ is armed safely.

The engine touches the world only through ib_poll_cq(),
ib_req_notify_cq(), atomics and a schedule callback, so the same code
can be driven by a model checker outside the kernel."

add_files ocq
commit "RDMA/core: Add ordered CQ allocation and the object registry" \
"Add the plumbing around the engine: __ib_ocq_alloc() and ib_ocq_free()
create and destroy an ordered CQ over a CQ whose completion handler it
owns, with work items to run the engine on (bound or unbound per mode),
DIM moderation, a watchdog that rescues a CQ whose event was lost, and
pause and resume.  Live ordered CQs are kept in a registry, so that
ib_cq_to_ocq() finds the ordered CQ of a CQ, and debugfs lists them.

ib_ocq_init() and ib_ocq_cleanup() set up the workqueues, the registry
and debugfs; ib_core calls them once the next patches are in."

add_files pool
commit "RDMA/core: Add drop-in ordered CQ allocation and a CQ pool" \
"Add ib_ocq_alloc_cq(), ib_ocq_alloc_cq_any(), ib_ocq_free_cq(),
ib_ocq_cq_pool_get() and ib_ocq_cq_pool_put(): the same arguments as
the ib_cq calls they mirror, plus optional ordered CQ attributes, and
a plain struct ib_cq in return, so that a ULP converts by changing its
allocation calls and nothing else.  The pool shares CQs between QPs as
ib_cq_pool_get() does, each pooled CQ ordering per QP."

add_files direct
commit "RDMA/core: Add IB_POLL_DIRECT ordered CQs" \
"Add ib_ocq_process_cq_direct() for ordered CQs of IB_POLL_DIRECT, which
the ULP polls from its own context as nvme-rdma's poll queues do.  No
engine runs and the CQ is never armed: one caller at a time polls and
dispatches, which keeps the CQ's order."

# The build: the objects join ib_core, ib_core's init and cleanup call ours.
OBJLINE="ib_core-y +=			${OBJS[*]}"
OBJLINE=$OBJLINE perl -0pi -e '
	s/^(ib_core-y :=(?:[^\n]*\\\n)*[^\n]*\n)/$1$ENV{OBJLINE}\n/m or $bad = 1;
	END { exit($bad // 0) }' "$CORE/Makefile" ||
	die "$CORE/Makefile: no ib_core-y := block"
perl -0pi -e '
	s/^(void ib_sa_cleanup\(void\);\n)/$1\nint ib_ocq_init(void);\nvoid ib_ocq_cleanup(void);\n/m
		or $bad = 1;
	END { exit($bad // 0) }' "$CORE/core_priv.h" || die "$CORE/core_priv.h: no ib_sa_cleanup()"
perl -0pi -e '
	$n += s/(\tret = roce_gid_mgmt_init\(\);\n\tif \(ret\) \{\n[^\n]*\n\t\t)goto err_parent;(\n\t\}\n\n\treturn 0;\n\n)(err_parent:\n)/\tret = ib_ocq_init();\n\tif (ret) {\n\t\tpr_warn("Couldn\x27t init ordered CQs\\n");\n\t\tgoto err_parent;\n\t}\n\n$1goto err_ocq;$2err_ocq:\n\tib_ocq_cleanup();\n$3/;
	$n += s/^(static void __exit ib_core_cleanup\(void\)\n\{\n\troce_gid_mgmt_cleanup\(\);\n)/$1\tib_ocq_cleanup();\n/m;
	END { exit($n != 2) }' "$CORE/device.c" ||
	die "$CORE/device.c: ib_core_init() or ib_core_cleanup() is not as expected"
commit "RDMA/core: Build ordered completion queues into ib_core" \
"Link ordered CQs into ib_core, next to the ib_cq code they mirror.
ib_core_init() sets them up before RoCE GID management, the last step,
and ib_core_cleanup() tears them down in the reverse order, so that
they exist before any device can be registered and until the last one
is gone."

# The documents of a kernel reader, an index, and an entry in infiniband's.
mkdir -p "$DOCDIR"
for doc in "${DOCS[@]}"; do
	[ -f "$TOP/Documentation/$doc.rst" ] || die "no Documentation/$doc.rst"
	cp "$TOP/Documentation/$doc.rst" "$DOCDIR/$doc.rst"
	intree "$DOCDIR/$doc.rst"
	# A :doc: reference to a document of this tree that stays behind.
	DOCS_SENT=" ${DOCS[*]} " perl -pi -e '
		s{:doc:`([^`<]+)`}{index($ENV{DOCS_SENT}, " $1 ") >= 0 ? ":doc:`$1`" : "*$1* (out of tree)"}ge' \
		"$DOCDIR/$doc.rst"
done
{
	echo '.. SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause'
	echo
	echo '========================='
	echo 'Ordered completion queues'
	echo '========================='
	echo
	echo '.. toctree::'
	echo '   :maxdepth: 2'
	echo
	printf '   %s\n' "${DOCS[@]}"
} > "$DOCDIR/index.rst"
perl -0pi -e '
	s/(\.\. toctree::\n(?:   :[^\n]*\n)*\n)((?:   [^\n]+\n)*)/$1 . join("", sort(split(m{(?<=\n)}, $2), "   ocq\/index\n"))/e
		or $bad = 1;
	END { exit($bad // 0) }' Documentation/infiniband/index.rst ||
	die "Documentation/infiniband/index.rst: no toctree"
maintainers "$DOCDIR/"
commit "RDMA/core: Document ordered completion queues" \
"Add Documentation/infiniband/ocq/: the API and how to convert a ULP to
it, the design of the engine and the reasoning behind its ordering and
wakeup guarantees, and the send queue accounting helpers."

if has cocci; then
	add_files cocci
	commit "RDMA/core: Add semantic patches converting ULPs to ordered CQs" \
"Add a coccinelle script that converts a ULP's ib_alloc_cq(),
ib_alloc_cq_any(), ib_free_cq(), ib_cq_pool_get(), ib_cq_pool_put() and
ib_process_cq_direct() calls to their ordered CQ counterparts with the
default attributes, and adds the <rdma/ib_ocq.h> include.

Add another that converts a tasklet's hand-rolled poll, arm, poll again
of a CQ it made with ib_create_cq() (RDS's shape) to a loop on
ib_poll_cq_and_arm() or ib_poll_cq_and_arm_solicited(), after the arm's
flag, that reschedules the tasklet when the CQ is left unarmed."
fi
cd "$TOP"

# ---- 3. the series and checkpatch ----
rm -rf "$OUT" "$LOGS"
mkdir -p "$OUT" "$LOGS"
git -C "$GEN" format-patch -q -o "$OUT" "$BASE..HEAD"
mapfile -t PATCHES < <(find "$OUT" -name '*.patch' | LC_ALL=C sort)
N=${#PATCHES[@]}
[ "$N" -gt 0 ] || die "git format-patch wrote no patch"
log "checkpatch.pl --strict on $N patches"
CP_BAD=0
CP_SUMMARY=()
for p in "${PATCHES[@]}"; do
	b=$(basename "$p" .patch)
	(cd "$GEN" && perl scripts/checkpatch.pl --strict --show-types "$p") > "$LOGS/$b.checkpatch" 2>&1 || true
	tot=$(grep -E '^total: ' "$LOGS/$b.checkpatch" | tail -1)
	[ -n "$tot" ] || tot="checkpatch did not run"
	if [ "$tot" != "${tot#total: 0 errors, 0 warnings, 0 checks}" ]; then
		CP_SUMMARY+=("  ok    $b")
	else
		CP_BAD=$((CP_BAD + 1))
		CP_SUMMARY+=("  FAIL  $b: $tot (build/patches-logs/$b.checkpatch)")
		grep -E '^(ERROR|WARNING|CHECK):' "$LOGS/$b.checkpatch" | sed 's/^/          /' | head -20
	fi
done

# ---- 4. git am on a fresh copy, and the in-tree build ----
BUILD="skipped (QUICK=1)"
BUILD_OK=1
if [ -z "$QUICK" ]; then
	log "applying the series with git am to a fresh copy (${AM#"$TOP"/})"
	fresh_tree "$AM"
	AM_BASE=$(git -C "$AM" rev-parse HEAD)
	g -C "$AM" am -q "${PATCHES[@]}" > "$LOGS/git-am.log" 2>&1 ||
		{ cat "$LOGS/git-am.log" >&2; die "git am failed (build/patches-logs/git-am.log)"; }
	ENV=$("$TOP/tools/testing/vm/kernel.sh" "$META" | tail -1)
	# shellcheck source=/dev/null # KVER, KH, KCONFIG, KMAKE_EXTRA (kernel.sh)
	. "$ENV"
	[ -f "$KCONFIG" ] || die "no config of $META ($KCONFIG)"
	# shellcheck disable=SC2153 # KVER comes from the env file
	log "configuring with the config of $KVER; make olddefconfig modules_prepare"
	cp "$KCONFIG" "$AM/.config"
	# Debian's certificates are not in the source package.
	"$AM/scripts/config" --file "$AM/.config" --set-str SYSTEM_TRUSTED_KEYS '' \
		--set-str SYSTEM_REVOCATION_KEYS ''
	# The exports of vmlinux and of the modules outside core/ from the headers
	# package, for modpost's unresolved-symbol check (core/'s are this build's).
	awk -F '\t' -v core="$CORE/" 'index($3, core) != 1' "$KH/Module.symvers" > "$AM/Module.symvers"
	unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
	BLOG=$LOGS/build.log
	# shellcheck disable=SC2086 # KMAKE_EXTRA holds several words or none
	make -C "$AM" -j"$JOBS" $KMAKE_EXTRA olddefconfig modules_prepare > "$BLOG" 2>&1 ||
		{ tail -30 "$BLOG" >&2; die "make olddefconfig modules_prepare failed (build/patches-logs/build.log)"; }
	log "make M=$CORE W=1 -j$JOBS"
	# shellcheck disable=SC2086
	if ! make -C "$AM" -j"$JOBS" $KMAKE_EXTRA M="$CORE" W=1 >> "$BLOG" 2>&1; then
		tail -30 "$BLOG" >&2
		die "make M=$CORE W=1 failed (build/patches-logs/build.log)"
	fi
	[ -f "$AM/$CORE/ib_core.ko" ] || die "no $CORE/ib_core.ko after the build"
	awk -F '\t' '$2 == "ib_ocq_free_cq" && $3 ~ /ib_core$/ { f = 1 } END { exit !f }' \
		"$AM/$CORE/Module.symvers" || die "ib_core.ko does not export ib_ocq_free_cq"
	# Our files: whatever the series adds or changes.
	OURS_LIST=$(git -C "$AM" diff --name-only "$AM_BASE" HEAD)
	[ -n "$OURS_LIST" ] || die "git am left no change in ${AM#"$TOP"/}"
	mapfile -t OURS <<<"$OURS_LIST"
	ours_re=$(printf '%s\n' "${OURS[@]}" | sed 's/[.[\*^$]/\\&/g' | paste -sd '|')
	# modpost's warnings (section mismatches, unresolved symbols) count too.
	{ grep -E '(warning|error):' "$BLOG" | grep -E "(^|/)($ours_re):" || true
	  grep -E '^(WARNING|ERROR): modpost: ' "$BLOG" || true; } > "$LOGS/build.ours"
	n_up=$(grep -E ': (warning|error):' "$BLOG" | grep -cvE "(^|/)($ours_re):" || true)
	if [ -s "$LOGS/build.ours" ]; then
		BUILD_OK=0
		BUILD="FAIL: $(wc -l < "$LOGS/build.ours") W=1 warnings in our files:"
		sed 's/^/          /' "$LOGS/build.ours"
	else
		BUILD="ok: ib_core.ko built, 0 W=1 warnings in our files"
		BUILD+=" ($n_up in upstream's own files, not ours: build/patches-logs/build.log)"
	fi
fi

echo "patches: $N patches in ${OUT#"$TOP"/}/ against $SPKG $SVER"
echo "checkpatch --strict:"
printf '%s\n' "${CP_SUMMARY[@]}"
echo "in-tree build (make M=$CORE W=1): $BUILD"
echo "patches: $(($(date +%s) - T0))s"
[ "$CP_BAD" = 0 ] || die "checkpatch found something in $CP_BAD of $N patches"
[ "$BUILD_OK" = 1 ] || die "the in-tree build warns in our files"
echo "patches: ok"
