# SPDX-License-Identifier: GPL-2.0
#
# hostenv.sh - what else the host did during a bench boot (source it: make bench and
# make ulp-bench).  A measurement on a loaded or stolen-from host is weak evidence;
# these numbers say how loaded it was.
#
#   hostenv_begin FILE   snapshot now (before the boot); FILE gets the JSON at the end
#   hostenv_sample       a 1-minute load average sample, at most every 30 s (call it
#                        from the boot's watch loop)
#   hostenv_end          snapshot again (after the boot) and write FILE:
#     {"before":SNAP,"after":SNAP,"samples":[[TIME,LOAD1],...]}
#   SNAP: {"time":EPOCH,"loadavg":[1-min,5-min,15-min],
#          "cpu":[user,nice,system,idle,iowait,irq,softirq,steal]}  (/proc/stat jiffies)

hostenv_snap() {
	printf '{"time":%s,"loadavg":[%s],"cpu":[%s]}' "$(date +%s)" \
		"$(awk '{ print $1 "," $2 "," $3 }' /proc/loadavg)" \
		"$(awk '/^cpu / { print $2 "," $3 "," $4 "," $5 "," $6 "," $7 "," $8 "," $9 }' /proc/stat)"
}

hostenv_begin() {
	HOSTENV_FILE=$1
	HOSTENV_BEFORE=$(hostenv_snap)
	HOSTENV_SAMPLES=""
	HOSTENV_LAST=0
}

hostenv_sample() {
	local now

	now=$(date +%s)
	[ $((now - HOSTENV_LAST)) -ge 30 ] || return 0
	HOSTENV_LAST=$now
	HOSTENV_SAMPLES="$HOSTENV_SAMPLES${HOSTENV_SAMPLES:+,}[$now,$(cut -d' ' -f1 /proc/loadavg)]"
}

hostenv_end() {
	printf '{"before":%s,"after":%s,"samples":[%s]}\n' "$HOSTENV_BEFORE" \
		"$(hostenv_snap)" "$HOSTENV_SAMPLES" > "$HOSTENV_FILE"
}
