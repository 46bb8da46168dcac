# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# lib.sh - helpers of the ULP tests (source it after /selftests/lib/ksft.sh).
#
# The kernel's own ULPs, stock and converted to ocq by the semantic patches, are at
# /ko/ulps/{stock,ocq}/ when make check built them for this run (tools/testing/vm/
# check.sh); /ko/ulps/status says "ok", "skip: why" or "fail: why".
#
#   ulp_require                 skip or fail the test unless the ULPs and rxe0 are there
#   ulp_ocq_fresh               (re)load /ko/ib_ocq.ko: no ordered CQ left by earlier tests
#   ulp_ocq_live                ordered CQs alive now (debugfs ib_ocq/live); fails
#                               without a count
#   ulp_ocq_sum FIELD           FIELD of every ordered CQ's stats, summed
#   ulp_ocq_table               one line per ordered CQ: name, owner, poll_ctx, completions
#   ulp_ocq_snap                one line per ordered CQ: its debugfs name (ocqN-DEV-cqM,
#                               unique per CQ), its completions, owner and poll_ctx
#   ulp_ocq_delta SNAP0 SNAP1   the completions SNAP1's CQs counted since SNAP0, summed
#                               (a CQ that SNAP0 lacks counts from 0; one SNAP1 lacks,
#                               freed meanwhile, not at all)
#   ulp_timed_dd DD-ARGS...     run busybox dd, print its seconds (from /proc/uptime)
#   ulp_rate MIB SECONDS        MiB/s, one decimal ("?" for 0 s)
#
# RDS (ulp_rds, make ulp-bench): the kernel's rds.ko and rds_rdma.ko of a variant at
# /ko/ulps/VARIANT/ (the converted rds_rdma.ko needs ib_ocq loaded), and rds-io
# (tools/testing/ulps/rds-io.c) in /usr/bin/.
#
#   ULP_RDS_VARIANTS            the RDS variants the tests run, "stock ocq" unless set
#   rds_load VARIANT            insmod VARIANT's rds.ko and rds_rdma.ko (after
#                               rds_unload); says why and returns 1 if one is missing
#   rds_unload                  rmmod rds_rdma, rds_tcp and rds if loaded
#   rds_field JSON NAME         the number NAME of an rds-io --json line (its counters'
#                               included; 0 for a counter that did not change)
#   rxe_hw_counter NAME         rxe0's port 1 hardware counter NAME (rdma_recvs, ...)
#   rxe_hw_counters             rxe0's port 1 hardware counters that are not 0, "NAME
#                               VALUE ..." on one line
#   rds_probes_on               kprobes (group ulp_rds) on ib_ocq's
#                               ib_poll_cq_and_arm() and ib_poll_cq_and_arm_solicited(),
#                               enabled; ib_ocq must be loaded
#   rds_probe_hits              their calls since rds_probes_on: "ARM SOLICITED"
#   rds_probes_off              disable and remove them (before rmmod ib_ocq; no-op
#                               without them)

ULP_KO=/ko/ulps
OCQ_DBG=/sys/kernel/debug/ib_ocq
ULP_RDS_VARIANTS=${ULP_RDS_VARIANTS:-stock ocq}
TRACEFS=/sys/kernel/tracing

ulp_require() {
	local st

	st=$(cat "$ULP_KO/status" 2>/dev/null) ||
		ksft_fail "no $ULP_KO/status: an initramfs without the ULP step"
	case $st in
	ok) ;;
	skip:*) ksft_skip "the kernel's ULPs: ${st#skip: }" ;;
	*) ksft_fail "the kernel's ULPs: ${st#fail: }" ;;
	esac
	[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
}

ulp_ocq_fresh() {
	if kmod_loaded ib_ocq; then
		rmmod ib_ocq || { echo "ib_ocq is loaded and in use"; return 1; }
	fi
	insmod /ko/ib_ocq.ko
}

ulp_ocq_live() {
	ksft_ocq_count live
}

ulp_ocq_sum() {
	cat "$OCQ_DBG"/ocq*/stats 2>/dev/null |
		awk -v f="$1" '$1 == f { n += $2 } END { printf "%d\n", n }'
}

ulp_ocq_table() {
	local d

	for d in "$OCQ_DBG"/ocq*; do
		[ -d "$d" ] || continue
		printf '%-24s owner %-10s poll_ctx %-9s pooled %s completions %s\n' \
			"$(basename "$d")" "$(sed -n 's/^owner //p' "$d/info")" \
			"$(sed -n 's/^poll_ctx //p' "$d/info")" "$(sed -n 's/^pooled //p' "$d/info")" \
			"$(sed -n 's/^completions //p' "$d/stats")"
	done
}

ulp_ocq_snap() {
	local d

	for d in "$OCQ_DBG"/ocq*; do
		[ -d "$d" ] || continue
		echo "${d##*/} $(sed -n 's/^completions //p' "$d/stats")" \
			"$(sed -n 's/^owner //p' "$d/info") $(sed -n 's/^poll_ctx //p' "$d/info")"
	done
}

ulp_ocq_delta() {
	{ echo "$1"; echo "--"; echo "$2"; } | awk '
		$1 == "--" { second = 1; next }
		NF >= 2 && !second { before[$1] = $2; next }
		NF >= 2 { n += $2 - before[$1] }
		END { printf "%d\n", n }'
}

ulp_timed_dd() {
	local t0 t1

	t0=$(cut -d' ' -f1 /proc/uptime)
	dd "$@" 2> /tmp/ulp_dd.err || { cat /tmp/ulp_dd.err >&2; return 1; }
	t1=$(cut -d' ' -f1 /proc/uptime)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

ulp_rate() {
	awk -v m="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f\n", m / s; else print "?" }'
}

rds_unload() {
	local m

	for m in rds_rdma rds_tcp rds; do
		kmod_loaded $m || continue
		rmmod $m || { echo "rmmod $m failed"; return 1; }
	done
}

rds_load() {
	local m

	rds_unload || return 1
	for m in rds rds_rdma; do
		if [ ! -f "$ULP_KO/$1/$m.ko" ]; then
			echo "no $ULP_KO/$1/$m.ko: make ulps built no $1 RDS" \
				"(ULP_RDS_VARIANTS='$ULP_RDS_VARIANTS' expects it)"
			return 1
		fi
		insmod "$ULP_KO/$1/$m.ko" || { echo "insmod $1/$m.ko failed"; return 1; }
	done
}

rds_field() {
	echo "$1" | sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" | grep . || echo 0
}

rxe_hw_counter() {
	cat "/sys/class/infiniband/$RXE_DEV/ports/1/hw_counters/$1"
}

rxe_hw_counters() {
	local f

	for f in "/sys/class/infiniband/$RXE_DEV/ports/1/hw_counters"/*; do
		[ "$(cat "$f")" = 0 ] || printf '%s %s ' "${f##*/}" "$(cat "$f")"
	done
	echo
}

rds_probes_on() {
	rds_probes_off || return 1
	{ echo "p:ulp_rds/ocq_arm ib_poll_cq_and_arm" &&
		echo "p:ulp_rds/ocq_arm_sol ib_poll_cq_and_arm_solicited"; } \
		>> $TRACEFS/kprobe_events || return 1
	echo 1 > $TRACEFS/events/ulp_rds/enable
}

rds_probe_hits() {
	awk '$1 == "ocq_arm" { a = $2 } $1 == "ocq_arm_sol" { s = $2 }
		END { printf "%d %d\n", a, s }' $TRACEFS/kprobe_profile
}

rds_probes_off() {
	[ -d $TRACEFS/events/ulp_rds ] || return 0
	echo 0 > $TRACEFS/events/ulp_rds/enable &&
		{ echo "-:ulp_rds/ocq_arm" && echo "-:ulp_rds/ocq_arm_sol"; } \
		>> $TRACEFS/kprobe_events
}
