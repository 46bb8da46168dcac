#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 200
# The client asks for more credits than the server grants: it is held back
# (credit stalls), and the server never sees more calls outstanding than it
# granted (an over-run would count as an error), whatever the path.
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

cleanup() { demo_cmd stop 2>/dev/null; demo_unload; }
trap cleanup EXIT

demo_load || ksft_fail "loading the modules failed"
for c in 1 2 5; do
	for p in ocq-flow ocq-parallel upstream-wq; do
		demo_run conns=3 credits=$c calls=1500 mix=null:2,echo:1,read:1 \
			chunk_size=4096 path=$p || ksft_fail "credits=$c $p failed"
		demo_check_clean || ksft_fail "credits=$c $p not clean"
		stalls=$(demo_get credit_stalls)
		[ "$stalls" -gt 0 ] || ksft_fail "credits=$c $p: no credit stall"
		[ "$(demo_get credits)" = "$c" ] || ksft_fail "credits line wrong"
		echo "# credits=$c $p: $(demo_rate) calls/s credit_stalls=$stalls"
	done
done
# the most credits there are, with the client's slots exactly used up
demo_run conns=1 credits=128 calls=3000 mix=null:1,echo:1 path=ocq-flow ||
	ksft_fail "credits=128 failed"
demo_check_clean || ksft_fail "credits=128 not clean"
echo "# credits=128: $(demo_rate) calls/s"
