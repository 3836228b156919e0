#!/bin/bash
# contrib/topoml.spec as far as Debian's rpm tools read it: rpmspec parses
# and expands it (both with and without select/topoml's Slurm source),
# every subpackage is declared, and rpmlint finds no error or warning
# (contrib/topoml-rpmlint.toml filters other distributions' conventions).
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
spec=$TOP_SRCDIR/contrib/topoml.spec
command -v rpmspec >/dev/null ||
	{ echo "SKIP: rpmspec missing (apt-get install rpm)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

out=$(rpmspec -P "$spec" 2>&1) || fail "rpmspec -P: $out"
ver=$(sed -n 's/^AC_INIT(\[topoml\], \[\([^]]*\)\].*/\1/p' \
	"$TOP_SRCDIR/configure.ac")
[ -n "$ver" ] || fail "no version in configure.ac"
echo "$out" | grep -q "^Version: *$ver\$" ||
	fail "spec version is not configure.ac's $ver"
names=$(rpmspec -q --qf '%{NAME}\n' "$spec" 2>/dev/null | sort | paste -sd' ')
want="libtopoml-ckpt libtopoml-ckpt-devel python3-topoml-ckpt slurm-topoml-spank topoml"
[ "$names" = "$want" ] || fail "packages without slurm_source: $names"
names=$(rpmspec -q --qf '%{NAME}\n' --define 'slurm_source /x' "$spec" \
	2>/dev/null | sort | paste -sd' ')
want="libtopoml-ckpt libtopoml-ckpt-devel python3-topoml-ckpt slurm-topoml-select slurm-topoml-spank topoml"
[ "$names" = "$want" ] || fail "packages with slurm_source: $names"
# The plugins require what Slurm checks when it loads them: the select
# plugin its major.minor.micro, the SPANK plugin its major.minor; any
# release of the package of that Slurm version will do.
req=$(rpmspec -q --qf '%{NAME}:[ %{REQUIRENEVRS},]\n' \
	--define 'slurm_source /x' "$spec" 2>/dev/null)
sv=$(echo "$req" | sed -n 's/^slurm-topoml-select: [^ ]* >= \([0-9.]*\),.*/\1/p')
[ -n "$sv" ] || fail "no Slurm version in the select plugin's Requires: $req"
next_micro=$(echo "$sv" | awk -F. '{ printf "%s.%s.%d", $1, $2, $3 + 1 }')
minor=$(echo "$sv" | cut -d. -f1-2)
next_minor=$(echo "$sv" | awk -F. '{ printf "%s.%02d", $1, $2 + 1 }')
slurm='slurm(\(x86-64\))?'
echo "$req" | grep -Eq "^slurm-topoml-select: $slurm >= $sv, $slurm < $next_micro~,\$" ||
	fail "select plugin does not require Slurm $sv.x: $req"
echo "$req" | grep -Eq "^slurm-topoml-spank: $slurm >= $minor, $slurm < $next_minor~,\$" ||
	fail "SPANK plugin does not require Slurm $minor.x: $req"
echo "$out" | grep -q '^URL: *https://' || fail "no URL"
if command -v rpmlint >/dev/null; then
	lint=$(rpmlint -c "$TOP_SRCDIR/contrib/topoml-rpmlint.toml" "$spec" 2>&1)
	echo "$lint" | grep -q ' 0 errors, 0 warnings' ||
		fail "rpmlint: $lint"
else
	echo "rpmlint missing: lint not checked"
fi
echo "PASS: $spec parses, version $ver, 6 subpackages, rpmlint clean"
