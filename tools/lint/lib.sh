# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by lint.sh and format.sh (sourced, not run):
#   - where the repository and the lint cache are;
#   - which files are "ours": kernel C and the C++ userspace tools;
#   - installing missing tools with apt-get;
#   - fetching checkpatch.pl, its data files, kernel-doc and the Sphinx
#     extension that runs it (Documentation/sphinx/, for make htmldocs) from
#     Debian's linux-source-6.1 package into a cache reused while the package
#     version stays the same;
#   - extracting chosen files of any linux-source-X.Y package (ksrc_fetch;
#     tools/testing/ulps/build.sh takes the ULPs' sources that way).

LINT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$LINT_DIR/../.." && pwd -P)
CACHE="$REPO/.cache/lint"
KSRC_PKG=linux-source-6.1
KSRC_DIR="$CACHE/$KSRC_PKG"

# Kernel C lives here (relative to the repository root).
KERNEL_DIRS=(drivers include selftests/modules)

note() { printf '%s\n' "$*" >&2; }
die() { note "lint: $*"; exit 2; }

# List files under the given directories, one per line, relative to the repository,
# sorted.  Inside a git work tree, git-ignored files (build output) are
# left out; untracked but not ignored files are included.
list_tree()
{
	local d existing=()

	for d in "$@"; do
		[[ -d "$REPO/$d" ]] && existing+=("$d")
	done
	((${#existing[@]})) || return 0
	if command -v git >/dev/null &&
	   git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$REPO" ls-files -z --cached --others --exclude-standard \
			-- "${existing[@]}" | tr '\0' '\n'
	else
		(cd "$REPO" && find "${existing[@]}" -type f)
	fi | while IFS= read -r f; do
		[[ -f "$REPO/$f" ]] && printf '%s\n' "$f"
	done | LC_ALL=C sort -u
}

# Kernel C sources and headers; Kbuild's generated *.mod.c are not ours.
kernel_files()
{
	list_tree "${KERNEL_DIRS[@]}" | grep -E '\.[ch]$' |
		grep -vE '\.mod\.c$' || true
}

# The tool a file under tools/ belongs to: tools/testing/NAME or tools/NAME.
tool_dir()
{
	case "$1" in
	tools/testing/*/*) local r=${1#tools/testing/}; echo "tools/testing/${r%%/*}" ;;
	tools/*/*) local r=${1#tools/}; echo "tools/${r%%/*}" ;;
	*) echo tools ;;
	esac
}

# C++ sources and headers of the userspace tools under tools/.  A *.h
# file counts as C++ unless its tool (tool_dir) has C sources (*.c): then
# it is that C code's header, and C under tools/ is not checked here.
tools_cxx_files()
{
	local all f

	all=$(list_tree tools | grep -v '^tools/lint/' || true)
	[[ -n "$all" ]] || return 0
	while IFS= read -r f; do
		case "$f" in
		*.cpp | *.cc | *.cxx | *.hpp | *.hh | *.hxx)
			printf '%s\n' "$f" ;;
		*.h)
			grep -qE "^$(tool_dir "$f")/.*\.c$" <<<"$all" ||
				printf '%s\n' "$f" ;;
		esac
	done <<<"$all"
}

# Run a command as root (directly, or through sudo when available).
as_root()
{
	if ((EUID == 0)); then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "need root to run: $*"
	fi
}

APT_UPDATED=0
apt_update_once()
{
	((APT_UPDATED)) && return 0
	note "setup: apt-get update"
	as_root apt-get update -q >/dev/null || die "apt-get update failed"
	APT_UPDATED=1
}

apt_install()
{
	note "setup: apt-get install $*"
	# A fresh machine has no package lists yet.
	compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null ||
		apt_update_once
	if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "$@" >/dev/null 2>&1; then
		apt_update_once
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install \
			-y -q --no-install-recommends "$@" >/dev/null ||
			die "apt-get install $* failed"
	fi
}

# Install the Debian packages that provide whatever is missing.  perl is
# checked through Pod::Usage (kernel-doc needs it) because a bare Debian
# has perl-base, whose /usr/bin/perl lacks that module.
ensure_tools()
{
	local want=() cmd pkg

	for cmd in "$@"; do
		if [[ "$cmd" == perl ]]; then
			perl -MPod::Usage -e 1 2>/dev/null && continue
		else
			command -v "$cmd" >/dev/null && continue
		fi
		case "$cmd" in
		xz) pkg=xz-utils ;;
		dpkg-deb) pkg=dpkg ;;
		spatch) pkg=coccinelle ;;
		*) pkg=$cmd ;;
		esac
		want+=("$pkg")
	done
	((${#want[@]} == 0)) || apt_install "${want[@]}"
}

# The version of a package (default: linux-source-6.1) that apt would
# install now; empty or "(none)" when apt knows no such package.
ksrc_candidate()
{
	apt-cache policy "${1:-$KSRC_PKG}" 2>/dev/null |
		awk '/Candidate:/ { print $2 }'
}

# ksrc_has_version PKG VERSION: true when apt can download PKG at VERSION.
# An archive keeps earlier versions beside the candidate for a while, so a
# source package can be fetched at an image's version after it moved on.
ksrc_has_version()
{
	apt-cache madison "$1" 2>/dev/null |
		awk -F '|' -v v="$2" '{ gsub(/ /, "", $2) } $2 == v && $3 ~ /Packages/ { f = 1 }
			END { exit !f }'
}

# ksrc_fetch PKG VERSION DEST PATH...: download Debian's kernel source
# package PKG (linux-source-X.Y) at VERSION with apt-get download and
# extract only the PATHs (files or directories, relative to the top of the
# kernel tree) of its tarball into DEST.  The .deb is not kept.
ksrc_fetch()
{
	local pkg=$1 version=$2 dest=$3 tmp deb
	shift 3

	tmp=$(mktemp -d)
	# apt's download sandbox user must be able to write there.
	if id _apt >/dev/null 2>&1; then
		chown _apt "$tmp" 2>/dev/null || true
	fi
	note "setup: downloading $pkg $version (about 140 MB)"
	if ! (cd "$tmp" && apt-get download -q "$pkg=$version") \
		>"$tmp/download.log" 2>&1; then
		cat "$tmp/download.log" >&2
		rm -rf "$tmp"
		die "apt-get download $pkg=$version failed"
	fi
	deb=$(echo "$tmp"/*.deb)
	mkdir -p "$dest"
	if ! dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$dest" --strip-components=1 "${@/#/$pkg/}"; then
		rm -rf "$tmp"
		die "extracting $* from $pkg $version failed"
	fi
	rm -rf "$tmp"
}

# Download the package and extract only the files lint needs into $2.
ksrc_extract()
{
	local version=$1 dest=$2

	note "setup: checkpatch.pl, kernel-doc and its Sphinx extension from $KSRC_PKG"
	ksrc_fetch "$KSRC_PKG" "$version" "$dest" .clang-format \
		scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch scripts/kernel-doc \
		Documentation/sphinx
}

# Make sure $KSRC_DIR holds the kernel's lint scripts from the current
# package version.  The cache keeps them together with a VERSION file;
# it is fetched again only when apt offers another version.
ensure_kernel_scripts()
{
	local want have="" new

	mkdir -p "$CACHE"
	# The cache must never be committed, whatever the .gitignore says.
	[[ -f "$CACHE/.gitignore" ]] || printf '*\n' >"$CACHE/.gitignore"
	# A cache from before the Sphinx extension was extracted is refetched.
	[[ -f "$KSRC_DIR/VERSION" && -f "$KSRC_DIR/Documentation/sphinx/kerneldoc.py" ]] &&
		have=$(<"$KSRC_DIR/VERSION")

	want=$(ksrc_candidate "$KSRC_PKG")
	if [[ -z "$want" || "$want" == "(none)" ]]; then
		apt_update_once
		want=$(ksrc_candidate "$KSRC_PKG")
	fi
	if [[ -z "$want" || "$want" == "(none)" ]]; then
		[[ -n "$have" ]] || die "apt knows no $KSRC_PKG package"
		note "setup: apt knows no $KSRC_PKG; using cached $have"
		return 0
	fi
	[[ "$have" == "$want" ]] && return 0

	ensure_tools dpkg-deb xz
	new="$KSRC_DIR.new"
	rm -rf "$new"
	ksrc_extract "$want" "$new"
	printf '%s\n' "$want" >"$new/VERSION"
	rm -rf "$KSRC_DIR"
	mv "$new" "$KSRC_DIR"
}
