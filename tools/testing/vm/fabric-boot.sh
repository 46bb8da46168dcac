# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# fabric-boot.sh - the two-node boot of make check, sourced by check.sh after boot.sh.
#
# Two guests, A and B, each with its own copy of the kernel and the same initramfs, one
# vCPU each, joined by a virtual Ethernet wire that needs nothing of the host's
# network: each guest's virtio-net NIC (netdev "wire", eth0 in the guest) sends its
# frames as UDP datagrams on the loopback to a port the other QEMU reads (-netdev
# dgram).  UDP, as a wire, drops what the other end cannot take; unix datagram
# sockets made the sender wait instead (10 datagrams queued at most by default),
# and a transmit queue stalled for a minute is no wire's fault.  Node A
# (10.11.13.1) runs the tests as a single-node boot does; node B (10.11.13.2) serves
# them: its /init runs fabric-guest's server instead of tests, and it has a disk
# (virtio-blk, /dev/vda, a sparse file of FABRIC_DISK_MB MiB) that outlives its resets.
# rxe0 is on eth0 on both.  The control channel is each guest's second serial port,
# joined by fabric-relay.py on the host, which also drives both QEMU monitors (the
# link taken down and up, node B reset, sysrq): never the wire.
#
#   fabric_start BASE DIR LOG ERR [NAME...]
#                                  start both nodes and the relay: node A with BASE and
#                                  the tests of DIR (tests.list, tests.start, and the
#                                  files NAME of DIR), its console in LOG, QEMU's
#                                  output in ERR; node B's console in LOG with -b
#                                  before .log; sets qpid (A)
#   fabric_poll                    node B's new console lines: a kernel problem on it
#                                  goes through parse_line as a kernel line of node A
#                                  ("# kmsg: [B] ..."), so it fails the running test;
#                                  returns 1 once node B's QEMU is gone
#   fabric_dump_blocked            Alt-SysRq-W on both nodes (the relay's SIGUSR1),
#                                  then a few seconds for the stacks to reach the
#                                  consoles; node B's go to the running test's log
#   fabric_stop                    stop node B and the relay (node A is the caller's)

FABRIC_DISK_MB=${FABRIC_DISK_MB:-512}
# Debian's python3 before any other in PATH (a pyenv shim can take seconds)
FABRIC_PY=$(command -v /usr/bin/python3 || command -v python3)

fabric_env() {	# NODE
	cat <<-EOF
	FABRIC_NODE=$1
	FABRIC_ADDR_A=10.11.13.1
	FABRIC_ADDR_B=10.11.13.2
	RXE_NETDEV=eth0
	RXE_ADDR=10.11.13.$([ "$1" = a ] && echo 1 || echo 2)/24
	EOF
}

# fabric_qemu NODE INITRD LOG ERR EXTRA...: one node in the background; its pid on
# stdout.  no_timer_check: two TCG guests on a loaded host fail the kernel's early
# check of the IO-APIC timer now and then ("IO-APIC + timer doesn't work!", a panic).
fabric_qemu() {
	local n=$1 initrd=$2 log=$3 err=$4 peer

	shift 4
	peer=$([ "$n" = a ] && echo b || echo a)
	qemu-system-x86_64 "${QACCEL[@]}" -smp 1 -m "$MEM" -kernel "$VMLINUX" \
		-initrd "$initrd" -append "$APPEND no_timer_check" -nic none -display none \
		-serial "file:$log" \
		-chardev "socket,id=ctl,path=$FABRIC_RUN/ctl-$n.sock,server=on,wait=off" \
		-device isa-serial,chardev=ctl \
		-monitor "unix:$FABRIC_RUN/mon-$n.sock,server=on,wait=off" \
		-netdev "dgram,id=wire,local.type=inet,local.host=127.0.0.1,local.port=${FABRIC_PORT[$n]},remote.type=inet,remote.host=127.0.0.1,remote.port=${FABRIC_PORT[$peer]}" \
		-device "virtio-net-pci,netdev=wire,mac=52:54:00:0f:ab:0$([ "$n" = a ] && echo 1 || echo 2)" \
		"$@" </dev/null > "$err" 2>&1 &
	echo $!
}

fabric_start() {
	local base=$1 d=$2 log=$3 err=$4 n f pa pb

	# unix socket paths are short: a directory of its own under /tmp
	FABRIC_RUN=$(mktemp -d /tmp/ocq-fabric.XXXXXX)
	FABRIC_BLOG=${log%.log}-b.log
	FABRIC_RELAY_LOG=${log%.log}-relay.log
	for n in a b; do
		mkdir -p "$d/$n/fabric"
		fabric_env $n > "$d/$n/fabric/env"
		cp "$VM/fabric-guest" "$d/$n/fabric/guest.sh"
	done
	shift 4
	for f in tests.list tests.start "$@"; do
		cp "$d/$f" "$d/a/"
	done
	: > "$d/b/tests.list"
	echo 1 > "$d/b/tests.start"
	vm_initrd "$base" "$d/a" "$d/initrd-a" tests.list tests.start fabric fabric/env \
		fabric/guest.sh "$@"
	vm_initrd "$base" "$d/b" "$d/initrd-b" tests.list tests.start fabric fabric/env \
		fabric/guest.sh
	# two free UDP ports of the loopback for the wire's ends
	read -r pa pb < <("$FABRIC_PY" -c 'import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
	declare -gA FABRIC_PORT=([a]=$pa [b]=$pb)
	truncate -s "${FABRIC_DISK_MB}M" "$FABRIC_RUN/disk-b.img"
	: > "$FABRIC_BLOG"
	FABRIC_BPID=$(fabric_qemu b "$d/initrd-b" "$FABRIC_BLOG" "${err%.err}-b.err" \
		-drive "file=$FABRIC_RUN/disk-b.img,format=raw,if=none,id=disk,cache=unsafe" \
		-device virtio-blk-pci,drive=disk)
	qpid=$(fabric_qemu a "$d/initrd-a" "$log" "$err" -no-reboot)
	"$FABRIC_PY" "$VM/fabric-relay.py" --dir "$FABRIC_RUN" --log "$FABRIC_RELAY_LOG" &
	FABRIC_RPID=$!
	FABRIC_BOFF=0 FABRIC_BINIT=0
}

fabric_poll() {
	local size chunk rest line

	size=$(stat -c %s "$FABRIC_BLOG" 2>/dev/null || echo 0)
	if [ "$size" -gt "$FABRIC_BOFF" ]; then
		chunk=$(tail -c +$((FABRIC_BOFF + 1)) "$FABRIC_BLOG" | head -c $((size - FABRIC_BOFF)) |
			tr -d '\0'; echo x)
		chunk=${chunk%x}
		# an incomplete last line is read again next time
		rest=${chunk##*$'\n'}
		chunk=${chunk%"$rest"}
		FABRIC_BOFF=$((size - $(LC_ALL=C; echo ${#rest})))
		while IFS= read -r line; do
			line=${line%$'\r'}
			case $line in
			"# OCQ-INIT"*) FABRIC_BINIT=1 ;;
			# a new boot of node B: its early messages are not a test's
			*"Linux version "*) FABRIC_BINIT=0 ;;
			esac
			[ $FABRIC_BINIT = 1 ] && [[ $line =~ $BAD_RE ]] &&
				parse_line "# kmsg: [B] $line"
		done <<< "${chunk%$'\n'}"
	fi
	kill -0 "$FABRIC_BPID" 2>/dev/null
}

fabric_dump_blocked() {
	local s0

	s0=$(stat -c %s "$FABRIC_BLOG" 2>/dev/null || echo 0)
	kill -USR1 "$FABRIC_RPID" 2>/dev/null || return 0
	sleep 5
	# node A's stacks come with its console; node B's are copied to the test's log
	[ -n "$p_cur" ] && tail -c +$((s0 + 1)) "$FABRIC_BLOG" | tr -d '\0\r' |
		sed 's/^/# kmsg: [B] /' >> "$LOGDIR/tests/$p_cur.log"
}

fabric_stop() {
	kill "$FABRIC_BPID" 2>/dev/null
	wait "$FABRIC_BPID" 2>/dev/null
	kill "$FABRIC_RPID" 2>/dev/null
	wait "$FABRIC_RPID" 2>/dev/null
	# node B's kernel problems that came last
	fabric_poll
	rm -rf "$FABRIC_RUN"
}
