#!/bin/bash
# topoml import-ib on the command line: output formats, -o, warnings on
# stderr (and -q), exit status 1 with a FILE:LINE error for a bad file,
# 2 for a usage error; what it writes passes `topoml check`.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOPOML=${TOP_BUILDDIR:-.}/contrib/topoml
[ -x "$TOPOML" ] || { echo "FAIL: $TOPOML not built"; exit 1; }
ib=$TESTS_DIR/fixtures/loaders/ib
work=$(mktemp -d /tmp/test_import_cli.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$TOPOML" import-ib "$ib/railopt.topo" >"$work/out.conf" 2>"$work/err" ||
	fail "import-ib railopt.topo: $(cat "$work/err")"
grep -qx 'SwitchName=su1 Nodes=dgx-\[01-04\] LinkSpeed=400' "$work/out.conf" ||
	fail "unit su1 not written: $(cat "$work/out.conf")"
grep -q '^warning: .*scalable unit su1' "$work/err" ||
	fail "no unit warning on stderr: $(cat "$work/err")"
"$TOPOML" check "$work/out.conf" >/dev/null || fail "check rejects the output"

"$TOPOML" import-ib -q --format json -o "$work/out.json" "$ib/railopt.topo" \
	>"$work/stdout" 2>"$work/err" || fail "import-ib --format json"
[ -s "$work/err" ] && fail "-q still warns: $(cat "$work/err")"
[ -s "$work/stdout" ] && fail "-o still writes to stdout"
head -c1 "$work/out.json" | grep -q '{' || fail "not JSON"
"$TOPOML" check "$work/out.json" >/dev/null || fail "check rejects the JSON"

"$TOPOML" import-ib "$ib/bad-header.topo" >/dev/null 2>"$work/err"
[ $? = 1 ] || fail "bad file: exit status not 1"
grep -q "bad-header.topo:3:11: expected the quoted node id" "$work/err" ||
	fail "bad file: $(cat "$work/err")"

"$TOPOML" import-ib --format xml "$ib/railopt.topo" >/dev/null 2>&1
[ $? = 2 ] || fail "--format xml: exit status not 2"
"$TOPOML" import-ib >/dev/null 2>&1
[ $? = 2 ] || fail "no file: exit status not 2"
"$TOPOML" import-ib --help | grep -q "usage: topoml import-ib" ||
	fail "--help"
echo "PASS: import-ib command line"
