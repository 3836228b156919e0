#!/bin/bash
# Make the orig tarballs of the topoml source package (format 3.0 (quilt)),
# next to the source tree: topoml_VERSION.orig.tar.xz (the tree without
# debian/: the tracked and untracked, not ignored, files in a checkout)
# and the component topoml_VERSION.orig-slurm.tar.gz, the Slurm source
# select/topoml is built against, exactly the release libslurm-dev is
# (Debian's slurm-wlm source of that version, its patches applied).  With
# them dpkg-source -b makes a .dsc that builds offline with nothing but
# its Build-Depends (sbuild, pbuilder).
#
# usage: debian/make-orig.sh [--slurm-source DIR | --slurm-tarball FILE]
#                            [--unpack]
#   --slurm-source DIR   an unpacked Slurm source of that release (e.g.
#                        /var/cache/topoml/slurm-wlm-22.05.8, which
#                        contrib/install-deps.sh prepares); default:
#                        apt-get source slurm-wlm=<libslurm-dev's version>
#                        (needs deb-src for the suite that has it: Debian
#                        12's is in bookworm-security, Debian 13's in
#                        trixie)
#   --slurm-tarball FILE the release's upstream tarball, e.g. Debian's
#                        slurm-wlm_24.11.5.orig.tar.gz from the pool, for
#                        a mirror that serves no .dsc (Debian's patches are
#                        then missing: fine while they change no header
#                        under src/ the plugins include)
#   --unpack             also unpack the component in slurm/ (dpkg-source
#                        -b and a build in this tree need it there)
# SPDX-License-Identifier: GPL-2.0-or-later
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
slurm_src=
slurm_tarball=
unpack=0
while [ $# -gt 0 ]; do
	case $1 in
	--slurm-source) slurm_src=${2:?--slurm-source needs DIR}; shift ;;
	--slurm-tarball) slurm_tarball=${2:?--slurm-tarball needs FILE}; shift ;;
	--unpack) unpack=1 ;;
	*) echo "usage: $0 [--slurm-source DIR | --slurm-tarball FILE]" \
		"[--unpack]" >&2; exit 2 ;;
	esac
	shift
done
die() { echo "make-orig: $*" >&2; exit 1; }

ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
uver=${ver%-*}
uver=${uver#*:}
out=$(dirname "$top")
slurm_ver=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null) ||
	die "libslurm-dev is not installed (the Slurm to build against)"
slurm_up=$(echo "$slurm_ver" | sed 's/^[0-9]*://; s/-[^-]*$//')

# ---- topoml itself ----
list=$(mktemp)
tmp=
trap 'rm -f "$list"; [ -n "$tmp" ] && rm -rf "$tmp"' EXIT
if git -C "$top" rev-parse --show-toplevel >/dev/null 2>&1; then
	git -C "$top" ls-files -co --exclude-standard
else
	(cd "$top" && find . -type f -o -type l | sed 's,^\./,,')
fi | grep -Ev '^(debian|slurm|\.git)(/|$)' | LC_ALL=C sort >"$list"
# Every file dated as the changelog entry: reproducible, and no file of
# 1970 in the packages (lintian: package-contains-ancient-file).
ts=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Timestamp)
tar -C "$top" --owner=0 --group=0 --numeric-owner --mtime=@"$ts" \
	--transform "s,^,topoml-$uver/,S" -T "$list" -cf - |
	xz -T1 >"$out/topoml_$uver.orig.tar.xz"
echo "make-orig: $out/topoml_$uver.orig.tar.xz"

# ---- the Slurm component ----
if [ -n "$slurm_tarball" ]; then
	tmp=$(mktemp -d)
	tar -C "$tmp" -xf "$slurm_tarball" ||
		die "cannot unpack $slurm_tarball"
	slurm_src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
elif [ -z "$slurm_src" ]; then
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get source -qq slurm-wlm="$slurm_ver" >/dev/null) ||
		die "apt-get source slurm-wlm=$slurm_ver failed (deb-src for" \
			"the suite that has it? bookworm-security for +deb12uN;" \
			"a mirror without .dsc files: --slurm-tarball)"
	slurm_src=$(find "$tmp" -maxdepth 1 -type d -name 'slurm-wlm-*' | head -1)
fi
# The select API header: src/common/ up to 22.05, src/interfaces/ since 23.02.
[ -f "$slurm_src/src/common/select.h" ] ||
	[ -f "$slurm_src/src/interfaces/select.h" ] ||
	die "$slurm_src is not a Slurm source tree"
sv=$(sed -n 's/^ *Version:[[:space:]]*//p' "$slurm_src/META")
[ "$sv" = "$slurm_up" ] ||
	die "$slurm_src is Slurm $sv, libslurm-dev $slurm_up"
# Debian's packaging and quilt's state are not Slurm's source.
tar -C "$slurm_src" --owner=0 --group=0 --numeric-owner --sort=name \
	--exclude=./debian --exclude=./.pc --transform "s,^\.,slurm-$sv,S" \
	-cf - . | gzip -n >"$out/topoml_$uver.orig-slurm.tar.gz"
echo "make-orig: $out/topoml_$uver.orig-slurm.tar.gz (Slurm $sv from $slurm_src)"
if [ $unpack = 1 ]; then
	rm -rf "$top/slurm"
	mkdir "$top/slurm"
	tar -C "$top/slurm" --strip-components=1 \
		-xzf "$out/topoml_$uver.orig-slurm.tar.gz"
	echo "make-orig: unpacked in $top/slurm"
fi
