# Sourced by the CLI tests: T (a scratch directory, removed on exit), a
# failure count, and run / expect_rc.
# SPDX-License-Identifier: GPL-2.0-or-later
T=$(mktemp -d "/tmp/${0##*/}.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# run CMD...: sets rc, out, err
run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}
expect_rc() {	# WANT LABEL
	if [ "$rc" -eq "$1" ]; then ok "$2 (exit $rc)"
	else fail "$2: exit $rc, wanted $1: $out $err"; fi
}
