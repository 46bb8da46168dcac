#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# format.sh - reformat our sources in place with clang-format: the kernel C
# under drivers/, include/ and selftests/modules/ with the kernel's
# .clang-format, the C++ tools under tools/ with tools/.clang-format.
# These are the files and styles that `make lint` checks.
#
# Usage (from anywhere; `make format` runs it from the repository root):
#   bash tools/lint/format.sh
#
# clang-format only moves whitespace, braces and line breaks; review the
# result with `git diff` before committing.

set -euo pipefail

# shellcheck source=tools/lint/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main()
{
	local files=()

	ensure_tools clang-format
	mapfile -t files < <(kernel_files; tools_cxx_files)
	if ((${#files[@]} == 0)); then
		echo "format: no sources"
		return
	fi
	(cd "$REPO" && clang-format -i --style=file "${files[@]}")
	echo "format: ran clang-format on ${#files[@]} files"
}

main "$@"
