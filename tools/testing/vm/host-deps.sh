#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# host-deps.sh - install the host tools a step needs, only those that are missing.
#
# Usage: tools/testing/vm/host-deps.sh build|check|tools
#   tools  what the C++ tools (tools/ocq-demo) and their unit tests build with: g++,
#          CLI11, nlohmann-json and GoogleTest (make host-tests, lint)
#   build  that and the module build's tools
#   check  that and what booting the test guest needs
# Runs apt-get update + install (Debian 12) when something is missing; never installs a
# kernel on the host.
set -euo pipefail

mode=${1:-build}
tools=(make:make g++:g++)
# files: the header-only libraries ocq-demo builds with, the GoogleTest headers (what
# clang-tidy reads) and sources (what its unit test builds; libgtest-dev needs them)
files=(/usr/include/CLI/CLI.hpp:libcli11-dev /usr/include/nlohmann/json.hpp:nlohmann-json3-dev
       /usr/include/gtest/gtest.h:libgtest-dev
       /usr/src/googletest/googletest/src/gtest-all.cc:googletest)
[ "$mode" != tools ] &&
	tools+=(gcc-12:gcc-12 bc:bc rsync:rsync xz:xz-utils zstd:zstd depmod:kmod
		readelf:binutils pahole:dwarves)
[ "$mode" = check ] &&
	tools+=(qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio
		rdma:iproute2 ip:iproute2 timeout:coreutils gzip:gzip)
need=()
for t in "${tools[@]}"; do
	if ! command -v "${t%%:*}" >/dev/null && [ ! -x "/usr/sbin/${t%%:*}" ] &&
	   [ ! -x "/sbin/${t%%:*}" ]; then
		need+=("${t#*:}")
	fi
done
for f in "${files[@]}"; do
	[ -e "${f%%:*}" ] || need+=("${f#*:}")
done
# busybox from the busybox (dynamic) package cannot run in the guest: want the static one.
if [ "$mode" = check ] && command -v busybox >/dev/null &&
   ldd "$(command -v busybox)" >/dev/null 2>&1; then
	need+=(busybox-static)
fi
[ ${#need[@]} -eq 0 ] && exit 0
need=($(printf '%s\n' "${need[@]}" | sort -u))
echo "host-deps: installing ${need[*]}" >&2
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
