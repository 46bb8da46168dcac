#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
# Fuzz every writable debugfs file of ib_ocq and ocq_demo: 2500 random and malformed
# writes by default, 10^4 or more with FUZZ_WRITES= (one write(2) each) to the demo's control file and to ib_ocq's fail_nth (and
# to any other writable file found under their directories), from a seeded generator.
#
# control: a malformed command (unknown command or key, no or empty value, repeated
#   key, bad or out-of-range number, bad mix or path, calls and duration_ms both 0,
#   stop with an argument or when idle, binary bytes, CR, a NUL anywhere, longer
#   than a page) is refused: the write fails, error= is set, nothing else in
#   the file changes, and during a run the error is the parser's, not "a run is
#   active". A valid-looking start (random in-range values, odd whitespace, leading
#   zeros or '+') may be accepted only when idle: then the
#   run is running (or done), error= is cleared, refused writes leave its parameters
#   alone, a later stop (or its own end) leaves it clean (0 errors, reorders, lost,
#   duplicated). A valid command followed by a NUL and bytes is malformed: the NUL
#   would hide what follows it. A write(2) of 0 bytes cannot be made from the shell
#   (echo -n '' writes nothing); a lone NUL stands in for it.
# fail_nth: a canonical number is accepted and read back, a non-number is refused and
#   leaves it at 0; accepted values are reset to 0 at once.
# tune (each ordered CQ's, while a run has them): about one write in ten goes to the
#   tune file of one of the run's CQs (none while idle: the write is skipped).  A
#   malformed one (unknown or repeated key, no "=" or no value, not a decimal
#   number, out of range, a NUL, longer than 128 bytes, no key at all) is refused; a
#   valid-looking one (keys in range, odd blanks) may be refused for the CQ it meets
#   (DIM with a suspension, a deferral on a postponed arm); a refused one leaves the
#   file as it was.
# Afterwards: a clean demo run, fail_nth 0, ib_ocq's allocs and live at baseline.
#
# The inputs are precomputed by awk from a Park-Miller generator: FUZZ_SEED=N and
# FUZZ_WRITES=N (environment; from the host: make check KAPPEND="FUZZ_WRITES=10000",
# the kernel hands such parameters to init as environment) reproduce a run; a failure prints the seed, the write's
# number and its input (in echo -e notation).
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

D=/sys/kernel/debug/ib_ocq
FAIL=$D/fail_nth
WRITES=${FUZZ_WRITES:-2500}
SEED=${FUZZ_SEED:-$(((RANDOM * 32768 + RANDOM) % 2147483646 + 1))}
IN=/tmp/fuzz.in
RUN_CAP=10	# control writes during a run before the test stops it itself

cleanup() {
	[ -w "$FAIL" ] && echo 0 > "$FAIL"
	demo_cmd stop 2>/dev/null
	demo_unload
}
trap cleanup EXIT

demo_load || ksft_fail "loading the modules failed"
[ -w "$FAIL" ] || ksft_fail "no $FAIL"
[ "$(demo_get state)" != running ] || ksft_fail "a run is active before the fuzz"
allocs0=$(ksft_ocq_count allocs) && live0=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
echo "seed $SEED, $WRITES writes; baseline: allocs $allocs0, live $live0"

# the writable files, found at run time; all but control and fail_nth are fuzzed
# without an oracle (no crash, no kernel report)
writable() {
	find $D /sys/kernel/debug/ocq_demo -type f -perm -200 2>/dev/null | sort
}
# the tune files of the live ordered CQs of ocq_demo's run: fuzzed as T below
tune_files() {
	local d

	for d in $D/ocq*; do
		[ -w "$d/tune" ] && grep -qx 'owner ocq_demo' "$d/info" 2>/dev/null &&
			echo "$d/tune"
	done
}
FILES=$(writable)
echo "writable files:" $FILES
case " $(echo $FILES) " in *" $CTL "*) ;; *) ksft_fail "$CTL is not writable" ;; esac
OTHER=
for f in $FILES; do
	[ "$f" = "$CTL" ] || [ "$f" = "$FAIL" ] || OTHER="$OTHER $f"
done
set -- $OTHER
NG=$#

# ---- the inputs: "TARGET CLASS PAYLOAD" per line ----
# TARGET: C control, F fail_nth, G<n> the nth other file. CLASS: R must be refused,
# E valid-looking (may be accepted when idle), S a stop (accepted only during a run),
# N<v> a number fail_nth must take, G no oracle. PAYLOAD: echo -e notation, every byte
# that is not printable ASCII as \0NNN.
gen() {
	awk -v seed="$SEED" -v n="$1" -v ng="$NG" '
function rnd(m) { S = (S * 16807) % 2147483647; return S % m }
function pick(l,   a, k) { k = split(l, a, "|"); return a[rnd(k) + 1] }
function oct(b) { return sprintf("\\0%03o", b) }
function byte(   b) {
	b = rnd(256)
	return (b >= 33 && b <= 126 && b != 92 && b != 124) ? sprintf("%c", b) : oct(b)
}
function bin(k,   s) { s = ""; while (k-- > 0) s = s byte(); return s }
function bin0(k,   s, b) {	# no NUL: inside a command, a NUL would cut off its defect
	s = ""
	while (k-- > 0) { b = byte(); s = s (b == "\\0000" ? "\\0001" : b) }
	return s
}
function word(k,   s) {
	s = ""
	while (k-- > 0) s = s substr("abcdefghijklmnopqrstuvwxyz_", rnd(27) + 1, 1)
	return s
}
function digits(k,   s) { s = substr("123456789", rnd(9) + 1, 1); while (--k > 0) s = s rnd(10); return s }
function rep(c, k,   s) {	# k times c, by doubling
	s = ""
	for (; k > 0; k = int(k / 2)) { if (k % 2) s = s c; c = c c }
	return s
}
function sep() { return pick(" | | |  |\\0011| \\0011 |\\0012|\\0012 ") }
function num(v,   r) {	# a valid number, sometimes spelled oddly
	r = rnd(20)
	if (r == 0) return "+" v
	if (r == 1) return rep("0", 1 + rnd(40)) v
	return v
}
function validval(k,   i, s, w, a, m, sum) {
	if (k == "conns") return num(rnd(10) ? 1 + rnd(4) : 8)
	if (k == "credits") return num(1 + rnd(128))
	if (k == "calls") return num(rnd(50) ? rnd(100000) : 4294967295)
	if (k == "duration_ms") return num(rnd(10) ? 1 + rnd(60000) : 3600000)
	if (k == "echo_size") return num(rnd(10) ? 1 + rnd(4096) : 4096)
	if (k == "chunk_size") return num(rnd(10) ? 512 + rnd(1048065) : pick("512|1048576"))
	if (k == "work_ns") return num(rnd(20) ? rnd(1001) : 1000000)
	if (k == "postpone") return num(rnd(2))
	if (k == "path") return pick("ocq-strict|ocq-flow|ocq-parallel|upstream-wq|upstream-unbound|upstream-softirq")
	# mix: a non-empty subset in random order, the first weight non-zero
	m = split("null echo read write", a, " ")
	for (i = m; i > 1; i--) { w = 1 + rnd(i); s = a[i]; a[i] = a[w]; a[w] = s }
	m = 1 + rnd(4); s = ""
	for (i = 1; i <= m; i++) {
		w = (i == 1) ? 1 + rnd(100) : rnd(101)
		s = s (i > 1 ? "," : "") a[i] ":" num(w)
	}
	return s
}
function badnum(k) {
	if (rnd(2)) return pick("-1|-0|2x|x2|0x10|1e3|1.5|+|++1|+-1|99999999999999999999|18446744073709551616|1,2|0b1|1_000|NaN|inf|3\\0015|\\0357\\0274\\0221|\\0000|\\00004")
	return word(1 + rnd(3)) bin0(rnd(3))
}
function outofrange(k) {
	if (k == "conns") return pick("0|" (17 + rnd(100000)) "|4294967296|18446744073709551615")
	if (k == "credits") return pick("0|" (129 + rnd(100000)) "|4294967297")
	if (k == "calls") return pick("4294967296|4294967297|" digits(11 + rnd(9)) "|18446744073709551615")
	if (k == "duration_ms") return pick("3600001|" (3600001 + rnd(2000000000)) "|" digits(12))
	if (k == "echo_size") return pick("0|4097|" (4097 + rnd(1000000)))
	if (k == "chunk_size") return pick("0|511|" rnd(512) "|1048577|" (1048577 + rnd(1000000000)))
	if (k == "work_ns") return pick("1000001|" (1000001 + rnd(2000000000)))
	return pick("2|3|" (2 + rnd(1000)) "|" digits(10))	# postpone
}
function badmix() {
	return pick("null|null:|:1|foo:1|null:1,null:2|null:0,echo:0|null:0|null:101|null:1,|,null:1|null:-1|NULL:1|null:1:2|null:1,,echo:1|echo:" (101 + rnd(1000)) "|" word(4) ":1|null:0,echo:0,read:0,write:0|null=1")
}
function badpath() {
	return pick("nope|OCQ-FLOW|ocq-flo|ocq-flowx|ocq_flow|ocq|upstream|ocq-strict,ocq-flow|" word(8) "|ocq-flow\\0015|ocq-flow\\0001")
}
# "start" with 0-4 valid pairs (keys distinct, skipping those in "skip")
function pairs(skip,   a, i, m, t, s, k) {
	m = split("conns credits calls duration_ms mix echo_size chunk_size path work_ns postpone", a, " ")
	for (i = m; i > 1; i--) { t = 1 + rnd(i); s = a[i]; a[i] = a[t]; a[t] = s }
	k = rnd(5); NP = 0
	for (i = 1; i <= m && NP < k; i++) {
		if (index(skip, " " a[i] " ")) continue
		NP++; PK[NP] = a[i]; PV[NP] = a[i] "=" validval(a[i])
	}
}
function join(   s, i) { s = ""; for (i = 1; i <= NP; i++) s = s sep() PV[i]; return s }
function lead() { return rnd(8) ? "" : pick(" |\\0011|\\0012|  ") }
function validstart(   s) {
	pairs(" ")
	s = lead() "start" join()
	if (!rnd(4)) s = s "\\0012"
	if (!rnd(8)) s = s sep()
	if (!rnd(50)) s = "start" rep(" ", 2000 + rnd(2000)) "conns=1"
	return s
}
# a start with one certain defect, placed among valid pairs
function badstart(   d, k, tok, i, at, s, nk) {
	d = rnd(11)
	k = pick("conns|credits|calls|duration_ms|echo_size|chunk_size|work_ns|postpone")
	if (d == 9) pairs(" calls duration_ms "); else pairs(" ")
	if (d == 0) tok = pick(word(1 + rnd(12)) "|conn|Conns|CONNS|connss|duration|chunk|start|stop|x" bin0(1 + rnd(6))) "=" validval("conns")
	else if (d == 1) tok = pick("conns|" word(1 + rnd(8)) "|start|stop|" k)
	else if (d == 2) tok = "=" pick("1|" validval(k) "|=")
	else if (d == 3) tok = pick(k "|mix|path") "="
	else if (d == 4) {	# a key given twice
		if (NP == 0) { NP = 1; PK[1] = k; PV[1] = k "=" validval(k) }
		nk = PK[1 + rnd(NP)]
		tok = nk "=" validval(nk)
	}
	else if (d == 5) tok = k "=" badnum(k)
	else if (d == 6) tok = k "=" outofrange(k)
	else if (d == 7) tok = "mix=" badmix()
	else if (d == 8) tok = "path=" badpath()
	else if (d == 9) tok = "calls=0" sep() "duration_ms=0"
	else tok = "postpone=" pick("yes|true|on|-1|2|y")
	# the defect somewhere among the pairs (a repeat comes after its first)
	at = (d == 4) ? NP + 1 : 1 + rnd(NP + 1)
	s = ""
	for (i = 1; i <= NP + 1; i++) {
		if (i == at) s = s sep() tok
		if (i <= NP) s = s sep() PV[i]
	}
	s = lead() "start" s
	if (!rnd(6)) s = s "\\0000" bin(1 + rnd(20))
	if (!rnd(100)) s = s rep(" ", 1000 + rnd(3000))
	return s
}
function badcmd(   r) {
	r = rnd(100)	# the long ones (5-9) are slow to feed to a write: 1 in 20
	r = r < 5 ? 5 + r : substr("0123401234", 1 + r % 10, 1) + (r % 20 < 4 ? 10 : 0)
	if (r == 0) return pick("\\0012|  |\\0011\\0012| \\0011 \\0012|\\0000|\\0000start|\\0000stop|\\0012\\0012\\0012")
	if (r == 1) return pick("START|Start|starts|sta|stopp|sto|STOP|stop?|start=1|stopstart|restart|" word(1 + rnd(10)))
	if (r == 2) return "stop" sep() pick("x|stop|now|start|conns=1|" word(3) "|\\0001")
	if (r == 3) return bin(1 + rnd(64))
	if (r == 4) return pick("stop\\0015|stop\\0015\\0012|start\\0015|\\0015stop|stop\\0013|start\\0014conns=1")
	if (r == 5) return pick("start|stop") rep(" ", 4096 + rnd(1000)) pick("|conns=1")
	if (r == 6) return "start" sep() rep("a", 4090 + rnd(100))
	if (r == 7) return "start" sep() "conns=2" rep(" conns=2", 1 + rnd(400))
	if (r == 8) return "start" sep() "conns=" rep("0", 3000 + rnd(500)) "17"
	if (r == 9) return "start" sep() word(1000 + rnd(2500)) "=1"
	if (r == 10) return pick("start conns=2\\0012stop|stop\\0012start|start\\0012\\0012start|stop stop|start\\0012conns=0|start conns=2\\0000conns=99|start\\0000" bin(1 + rnd(10)) "|stop\\0000" bin(1 + rnd(10)))
	return word(2) "\\0000" "start"
}
function stopcmd() {
	return pick("stop|stop\\0012|stop\\0012|stop| stop|\\0011stop \\0012|\\0012stop\\0012\\0012|stop  ")
}
function fnum(   r) {
	r = rnd(10)
	if (r < 7) return pick("0|1|2|3|" rnd(100) "|" rnd(2147483647) "|2147483647")
	return rnd(1000000)
}
function fbad() {
	return pick("\\0012| 1|1 |abc|x1|1x|--1|1.5|\\0000|\\00001|1\\0012\\0012|0x|08|one|0x1g|1e3|\\00111|+|-|" word(1 + rnd(5)) bin(rnd(20)) "|" rep(" ", 30) "1")
}
function fodd() {
	return pick("+5|0x1f|017|-1|-2147483648|4294967296|99999999999999999999|" rep("0", 23) word(3) "|" rnd(1000) "\\0000x|-" rnd(100))
}
function tval(k) {	# a value in range of a tune key
	if (k == "dim") return rnd(2)
	if (k == "defer_polls") return num(rnd(101))
	if (k == "defer_usecs") return num(rnd(4) ? rnd(500) : rnd(10001))
	return num(rnd(4) ? rnd(1000) : rnd(100001))	# suspend_usecs
}
function tkey() { return pick("defer_usecs|defer_polls|dim|suspend_usecs") }
function tvalid(   s, k, m, i, a, t) {
	m = split("defer_usecs defer_polls dim suspend_usecs", a, " ")
	for (i = m; i > 1; i--) { t = 1 + rnd(i); s = a[i]; a[i] = a[t]; a[t] = s }
	k = 1 + rnd(m); s = ""
	for (i = 1; i <= k; i++) s = s (i > 1 ? sep() : lead()) a[i] "=" tval(a[i])
	if (!rnd(4)) s = s "\0012"
	return s
}
function tbad(   d, k) {
	d = rnd(10); k = tkey()
	if (d == 0) return pick(word(1 + rnd(12)) "|defer|DIM|dim_|defer_usec") "=" rnd(10)
	if (d == 1) return k
	if (d == 2) return k "="
	if (d == 3) return k "=" badnum(k)
	if (d == 4) return pick("defer_usecs=10001|defer_polls=101|dim=2|suspend_usecs=100001|defer_usecs=4294967296|dim=" (2 + rnd(1000)))
	if (d == 5) return k "=" tval(k) sep() k "=" tval(k)
	if (d == 6) return k "=" tval(k) "\0000" bin(1 + rnd(8))
	if (d == 7) return "defer_usecs=1" rep(" ", 130 + rnd(200))
	if (d == 8) return pick("\0012| |\0011\0012|  ")
	return "=" tval(k)
}
function payload(p) {	# a leading "-" would be an echo option
	if (substr(p, 1, 1) == "-") p = "\\0055" substr(p, 2)
	return p
}
BEGIN {
	S = seed % 2147483647; if (S <= 0) S = 1
	for (i = 0; i < 5; i++) rnd(2)
	for (i = 1; i <= n; i++) {
		r = rnd(1000)
		if (ng > 0 && r < 50) { print "G" (1 + rnd(ng)) " G " payload(rnd(2) ? badcmd() : fbad()); continue }
		if (r >= 900) { print (rnd(2) ? "T V " payload(tvalid()) : "T R " payload(tbad())); continue }
		if (r < 200) {
			q = rnd(10)
			if (q < 4) { v = fnum(); print "F N" v " " v (rnd(2) ? "\\0012" : "") }
			else if (q < 8) print "F R " payload(fbad())
			else print "F E " payload(fodd())
			continue
		}
		r = rnd(1000)
		if (r < 10) print "C E " payload(validstart())
		else if (r < 70) print "C S " stopcmd()
		else if (r < 600) print "C R " payload(badstart())
		else print "C R " payload(badcmd())
	}
}'
}

t0=$(cut -d' ' -f1 /proc/uptime)
gen "$WRITES" > $IN || ksft_fail "awk failed"
t1=$(cut -d' ' -f1 /proc/uptime)
[ "$(wc -l < $IN)" = "$WRITES" ] || ksft_fail "generated $(wc -l < $IN) inputs, not $WRITES"
echo "generated $WRITES inputs in $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.1f", b - a }')s"

# snap: the control file: S_ALL (all lines but error=), S_FIX (the run's parameters),
# S_STATE, S_ERR, S_BAD (non-zero verification counters)
snap() {
	local l

	S_ALL= S_FIX= S_STATE= S_ERR= S_BAD=
	while IFS= read -r l; do
		case $l in
		error=*) S_ERR=${l#error=}; continue ;;
		state=*) S_STATE=${l#state=} ;;
		path=*|conns=*|credits=*|calls_target=*) S_FIX="$S_FIX $l" ;;
		errors=*|reorders=*|lost=*|failed=*|duplicated=*) [ "${l#*=}" = 0 ] || S_BAD="$S_BAD $l" ;;
		esac
		S_ALL="$S_ALL $l"
	done < "$CTL"
}

i=0 nwrite=0 nref=0 nacc=0 nstart=0 nstop=0 ndone=0 nforced=0 naborted=0
nf=0 nfref=0 nfacc=0 ng=0 ngacc=0 running=0 inrun=0 run_cs=0 run_t0=0
nt=0 ntacc=0 ntidle=0
tgt= cls= p=

bad() {
	echo "FAIL: seed $SEED, write $i of $WRITES, to ${tgt:-?}, class $cls:" \
		"input '$p': $*"
	echo "  state=$S_STATE error=$S_ERR$S_BAD"
	echo "  reproduce: FUZZ_SEED=$SEED FUZZ_WRITES=$i sh $0"
	exit $KSFT_FAIL
}

# the run ended (stopped or done): it must be clean; wait until it is settled
run_ended() {
	local prev k=0

	snap
	while [ "$S_STATE" = running ] || [ "$S_ALL" != "$prev" ]; do
		k=$((k + 1))
		[ $k -gt 300 ] && bad "the run does not settle (state $S_STATE)"
		prev=$S_ALL
		sleep 0.1
		snap
	done
	[ -z "$S_BAD" ] || bad "the run ended unclean:$S_BAD"
	running=0 prev_all=$S_ALL
	now
	run_cs=$((run_cs + NOW - run_t0))
}

now() {	# NOW: the uptime in centiseconds
	read -r NOW _ < /proc/uptime
	NOW=${NOW%.*}${NOW#*.}
}

drain_kmsg() {	# the control file's pr_info lines are expected; show the rest
	dmesg -c | grep -v '\] ocq_demo: control: ' | sed 's/^/kmsg: /'
}

snap
prev_all=$S_ALL
while IFS= read -r rec; do
	i=$((i + 1))
	t=${rec%% *} rest=${rec#* }
	cls=${rest%% *} p=${rest#* }
	case $t in
	C) tgt=$CTL ;;
	F) tgt=$FAIL ;;
	G*) eval tgt=\${${t#G}} ;;
	T)
		# a tune file of the run's ordered CQs; none while idle
		tgt=$(tune_files | head -n 1)
		if [ -z "$tgt" ]; then
			ntidle=$((ntidle + 1)) nwrite=$((nwrite + 1))
			continue
		fi
		read -r tprev < "$tgt" 2>/dev/null
		;;
	esac
	nwrite=$((nwrite + 1))
	if echo -ne "$p" > "$tgt" 2>/dev/null; then acc=1; nacc=$((nacc + 1)); else acc=0; nref=$((nref + 1)); fi
	case $t in
	C)
		snap
		if [ $running = 0 ]; then
			if [ $acc = 0 ]; then
				[ -n "$S_ERR" ] || bad "refused without error="
				case $S_ERR in
				*"run failed"*)
					[ "$cls" = E ] || bad "a malformed command reached the run: $S_ERR"
					[ "$S_STATE" = aborted ] || bad "failed start left state $S_STATE"
					naborted=$((naborted + 1)) prev_all=$S_ALL
					continue ;;
				*"a run is active"*) bad "refused for a run while idle" ;;
				esac
				[ "$cls" != E ] || bad "a valid-looking start was refused: $S_ERR"
				[ "$S_ALL" = "$prev_all" ] || bad "a refused write changed the file"
			else
				[ "$cls" = E ] || bad "accepted (class $cls)"
				[ -z "$S_ERR" ] || bad "error= not cleared by an accepted start"
				nstart=$((nstart + 1)) running=1 inrun=0 prev_fix=$S_FIX
				now
				run_t0=$NOW
				case $S_STATE in
				running) ;;
				done) ndone=$((ndone + 1)); run_ended ;;
				*) bad "state $S_STATE after an accepted start" ;;
				esac
			fi
		else
			inrun=$((inrun + 1))
			if [ $acc = 0 ]; then
				[ -n "$S_ERR" ] || bad "refused without error= during a run"
				[ "$S_FIX" = "$prev_fix" ] || bad "a refused write changed the run:$S_FIX"
				case $cls:$S_ERR in
				E:*"a run is active"*) ;;
				E:*) bad "a valid start during a run refused for: $S_ERR" ;;
				*"a run is active"*) bad "a malformed command passed the parser" ;;
				esac
				case $S_STATE in
				running) [ "$cls" != S ] || bad "stop refused during a run" ;;
				done) ndone=$((ndone + 1)); run_ended ;;
				*) bad "state $S_STATE during a run" ;;
				esac
			else
				[ "$cls" = S ] || bad "accepted during a run (class $cls)"
				case $S_STATE in stopped|done) ;; *) bad "state $S_STATE after stop" ;; esac
				nstop=$((nstop + 1))
				run_ended
			fi
			if [ $running = 1 ] && [ $inrun -ge $RUN_CAP ]; then
				if demo_cmd stop 2>/dev/null; then nforced=$((nforced + 1)); fi
				run_ended
			fi
		fi
		;;
	F)
		nf=$((nf + 1))
		read -r v < "$FAIL"
		if [ $acc = 0 ]; then
			nfref=$((nfref + 1))
			[ "$v" = 0 ] || bad "refused, but fail_nth is $v"
			case $cls in N*) bad "fail_nth refused a number" ;; esac
		else
			nfacc=$((nfacc + 1))
			case $cls in
			R) bad "fail_nth accepted it (now $v)" ;;
			N*) [ "$v" = "${cls#N}" ] || bad "fail_nth reads $v" ;;
			esac
			echo 0 > "$FAIL"
		fi
		;;
	G*)
		ng=$((ng + 1))
		[ $acc = 1 ] && ngacc=$((ngacc + 1))
		;;
	T)
		nt=$((nt + 1))
		# the run may have ended meanwhile: its CQ and file went with it
		[ -e "$tgt" ] || continue
		read -r tnow < "$tgt"
		if [ $acc = 1 ]; then
			ntacc=$((ntacc + 1))
			[ "$cls" = V ] || bad "the tune file took it (now '$tnow')"
		else
			[ "$tnow" = "$tprev" ] || bad "refused, but the tune file went from '$tprev' to '$tnow'"
		fi
		;;
	esac
	if [ $((i % 1000)) = 0 ]; then
		echo "$i writes: $nacc accepted, $nref refused; $nstart starts, $nstop stops," \
			"$ndone done, $nforced stopped by the test; $((run_cs / 100))s with a run" \
			"active (uptime $(cut -d' ' -f1 /proc/uptime)s)"
		drain_kmsg
	fi
done < $IN
tgt= cls= p=
[ $running = 0 ] || { demo_cmd stop 2>/dev/null && nforced=$((nforced + 1)); run_ended; }
drain_kmsg
t2=$(cut -d' ' -f1 /proc/uptime)
echo "writes: $nwrite ($(awk -v a=$t1 -v b=$t2 'BEGIN { printf "%.1f", b - a }')s):" \
	"$nacc accepted, $nref refused"
echo "control: $((nwrite - nf - ng - nt - ntidle)) writes; runs: $nstart started ($nstop stopped by a fuzzed" \
	"stop, $nforced by the test, $ndone done by themselves), $naborted failed to start;" \
	"$((run_cs / 100))s with a run active"
echo "fail_nth: $nf writes, $nfacc accepted, $nfref refused"
echo "tune: $nt writes, $ntacc accepted; $ntidle skipped (no run)"
[ $nt -gt 0 ] || ksft_fail "no write reached a tune file"
[ $NG = 0 ] || echo "other files ($OTHER): $ng writes, $ngacc accepted"
[ $nwrite = "$WRITES" ] || ksft_fail "made $nwrite writes, not $WRITES"

# ---- afterwards ----
[ "$(cat $FAIL)" = 0 ] || ksft_fail "fail_nth is $(cat $FAIL)"
# every writable file during a run was fuzzed (a run adds per-CQ directories)
demo_cmd start path=ocq-parallel duration_ms=600000 mix=null:1,echo:1 ||
	ksft_fail "start refused after the fuzz: $(demo_get error)"
new=$(writable | grep -v '/tune$')
tunes=$(tune_files)
demo_cmd stop || ksft_fail "stop refused after the fuzz: $(demo_get error)"
demo_check_clean || ksft_fail "the run after the fuzz is not clean"
[ "$new" = "$FILES" ] || ksft_fail "writable files during a run differ: $(echo $new)"
[ -n "$tunes" ] || ksft_fail "the run's ordered CQs have no tune file"
demo_run calls=2000 path=ocq-flow mix=null:1,echo:1,read:1,write:1 chunk_size=4096 ||
	ksft_fail "a run after the fuzz failed"
demo_check_clean || ksft_fail "the run after the fuzz is not clean"
[ "$(demo_get calls)" = 2000 ] || ksft_fail "calls $(demo_get calls), not 2000"
[ -z "$(demo_get error)" ] || ksft_fail "error= not cleared by a good command"
allocs=$(ksft_ocq_count allocs) && live=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
[ "$allocs" = "$allocs0" ] && [ "$live" = "$live0" ] ||
	ksft_fail "leaked: allocs $allocs0 -> $allocs, live $live0 -> $live"
echo "after: a clean run of 2000 calls; fail_nth 0, allocs $allocs, live $live"
exit $KSFT_PASS
