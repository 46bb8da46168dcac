# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# boot.sh - boot the test guest in QEMU; sourced by check.sh and demo.sh.
#
# Uses the kernel env (VMLINUX, KCONFIG; see kernel.sh), TOP, SMP, MEM, ACCEL
# (auto|tcg|kvm) and KAPPEND (added to the kernel command line).
#
#   vm_setup                       set APPEND (kernel command line) and QACCEL (QEMU
#                                  accelerator arguments); ACCEL becomes kvm or tcg
#   vm_initrd BASE DIR OUT NAME... write OUT: the archive BASE followed by a second
#                                  archive of the NAMEs (relative to DIR, a directory
#                                  before its contents), which the kernel unpacks
#                                  over the first
#   vm_start INITRD LOG ERR        start QEMU in the background with the serial
#                                  console in the file LOG, QEMU's own output in ERR;
#                                  sets qpid

vm_setup() {
	APPEND="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 slub_debug=FZPU softlockup_panic=1"
	APPEND+=" loglevel=5 tsc=unstable"
	grep -q '^CONFIG_PREEMPT_DYNAMIC=y' "$KCONFIG" && APPEND+=" preempt=full"
	APPEND+=${KAPPEND:+ $KAPPEND}

	case $ACCEL in
	kvm) QACCEL=(-accel kvm -cpu host) ;;
	tcg) QACCEL=(-accel tcg,thread=multi) ;;
	*)   if kvm_works; then ACCEL=kvm QACCEL=(-accel kvm -cpu host)
	     else ACCEL=tcg QACCEL=(-accel tcg,thread=multi); fi ;;
	esac
}

# KVM only after a probe boot proved it works (some hosts' /dev/kvm cannot run a stock
# kernel); the verdict is cached in build/kvm-verdict.
kvm_works() {
	local verdict=$TOP/build/kvm-verdict d out

	[ -w /dev/kvm ] || return 1
	if [ ! -f "$verdict" ]; then
		d=$(mktemp -d)
		mkdir -p "$d/bin"
		cp "$(command -v busybox)" "$d/bin/busybox"
		printf '#!/bin/busybox sh\n/bin/busybox echo OCQ-KVM-OK\n/bin/busybox poweroff -f\n' > "$d/init"
		chmod +x "$d/init"
		(cd "$d" && find . | cpio -o -H newc --quiet) | gzip -1 > "$d/probe.cpio.gz"
		out=$(timeout 15 qemu-system-x86_64 -accel kvm -cpu host -m 512M -smp 1 \
			-kernel "$VMLINUX" -initrd "$d/probe.cpio.gz" -nic none -display none \
			-serial stdio -monitor none -no-reboot \
			-append 'console=ttyS0 panic=-1 quiet' </dev/null 2>&1)
		if grep -q OCQ-KVM-OK <<< "$out"; then echo works; else echo broken; fi > "$verdict"
		rm -rf "$d"
	fi
	[ "$(cat "$verdict")" = works ]
}

vm_initrd() {
	local base=$1 dir=$2 out=$3 pad

	shift 3
	# Each archive is compressed on its own, and the first is padded to a 4-byte
	# boundary.
	cp "$base" "$out"
	pad=$(( (4 - $(stat -c %s "$out") % 4) % 4 ))
	head -c "$pad" /dev/zero >> "$out"
	(cd "$dir" && printf '%s\n' "$@" | cpio -o -H newc --quiet -R 0:0) | gzip -1 >> "$out"
}

vm_start() {
	qemu-system-x86_64 "${QACCEL[@]}" -smp "$SMP" -m "$MEM" -kernel "$VMLINUX" \
		-initrd "$1" -append "$APPEND" -nic none -display none -monitor none \
		-serial "file:$2" -no-reboot </dev/null > "$3" 2>&1 &
	qpid=$!
}
