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
grep -q '^topoml import-ib: warning: .*scalable unit su1' "$work/err" ||
	fail "no unit warning on stderr: $(cat "$work/err")"
"$TOPOML" check "$work/out.conf" >/dev/null || fail "check rejects the output"

"$TOPOML" import-ib -q --format json -o "$work/out.json" "$ib/railopt.topo" \
	>"$work/stdout" 2>"$work/err" || fail "import-ib --format json"
[ -s "$work/err" ] && fail "-q still warns: $(cat "$work/err")"
[ -s "$work/stdout" ] && fail "-o still writes to stdout"
head -c1 "$work/out.json" | grep -q '{' || fail "not JSON"
"$TOPOML" check "$work/out.json" >/dev/null || fail "check rejects the JSON"

# --json is --format json; the last of the two wins
"$TOPOML" import-ib -q --json "$ib/railopt.topo" >"$work/j.json" ||
	fail "import-ib --json"
cmp -s "$work/j.json" "$work/out.json" || fail "--json differs from --format json"
"$TOPOML" import-ib -q --json --format conf "$ib/railopt.topo" |
	grep -q '^SwitchName=' || fail "--json --format conf: not conf"
"$TOPOML" import-ib -q -j "$work" >/dev/null 2>"$work/err"
[ $? = 2 ] || fail "a directory as input: exit status not 2"
grep -q "^topoml import-ib: $work: not a regular file" "$work/err" ||
	fail "a directory as input: $(cat "$work/err")"

"$TOPOML" import-ib "$ib/bad-header.topo" >/dev/null 2>"$work/err"
[ $? = 1 ] || fail "bad file: exit status not 1"
grep -q "bad-header.topo:3:11: expected the quoted node id" "$work/err" ||
	fail "bad file: $(cat "$work/err")"

"$TOPOML" import-ib --format xml "$ib/railopt.topo" >/dev/null 2>&1
[ $? = 2 ] || fail "--format xml: exit status not 2"
"$TOPOML" import-ib "$work/none.topo" >/dev/null 2>"$work/err"
[ $? = 2 ] || fail "missing file: exit status not 2"
grep -q "^topoml import-ib: $work/none.topo: No such file" "$work/err" ||
	fail "missing file: $(cat "$work/err")"

# Hosts that are no cluster nodes (a fabric manager's "ubuntu", a
# "localhost"): warned about, and --hosts / --slurm-conf leave them out.
sed 's/"dgx-08 mlx5_/"ubuntu mlx5_/; s/"dgx-07 mlx5_/"localhost mlx5_/' \
	"$ib/railopt.topo" >"$work/odd.topo"
"$TOPOML" import-ib "$work/odd.topo" >"$work/out.conf" 2>"$work/err" ||
	fail "import-ib odd.topo: $(cat "$work/err")"
for h in ubuntu localhost; do
	grep -q "^topoml import-ib: warning: host '$h' cannot be a cluster node" \
		"$work/err" || fail "no warning for $h: $(cat "$work/err")"
done
grep -q "dgx-01" "$work/err" && fail "warned about a good host"
"$TOPOML" import-ib --hosts 'dgx-*' "$work/odd.topo" >"$work/out.conf" \
	2>"$work/err" || fail "--hosts: $(cat "$work/err")"
grep -qx 'SwitchName=su2 Nodes=dgx-\[05-06\] LinkSpeed=400' "$work/out.conf" ||
	fail "--hosts kept: $(cat "$work/out.conf")"
grep -q "warning: left out 2 hosts: localhost,ubuntu" "$work/err" ||
	fail "--hosts: $(cat "$work/err")"
grep -q "cannot be a cluster node" "$work/err" && fail "warned about a dropped host"
"$TOPOML" check "$work/out.conf" | grep -q "fat-tree: 6 nodes" ||
	fail "filtered output does not check"
printf 'NodeName=DEFAULT CPUs=8\nNodeName=dgx-[01-04] CPUs=64 # su1\nnodename=dgx-05\nNodeName=spare[1-2]\n' \
	>"$work/slurm.conf"
"$TOPOML" import-ib -q --slurm-conf "$work/slurm.conf" --format json \
	"$work/odd.topo" >"$work/out.json" || fail "--slurm-conf"
python3 - "$work/out.json" <<'PY' || fail "--slurm-conf kept: $(cat "$work/out.json")"
import json, sys
sw = {s["name"]: s for s in json.load(open(sys.argv[1]))["switches"]}
assert sw["su1"]["nodes"] == "dgx-[01-04]" and sw["su2"]["nodes"] == "dgx-05"
PY
"$TOPOML" import-ib -q --slurm-conf "$work/slurm.conf" --hosts '*-0[1-2]' \
	"$work/odd.topo" | grep -q '^SwitchName=su1 Nodes=dgx-\[01-02\]' ||
	fail "--hosts and --slurm-conf together"
! grep -q '^SwitchName=su2' <("$TOPOML" import-ib -q --hosts 'dgx-0[1-4]' \
	"$work/odd.topo") || fail "a switch without hosts left in"
"$TOPOML" import-ib --hosts 'zz*' "$work/odd.topo" >/dev/null 2>"$work/err"
[ $? = 1 ] && grep -q "no host of .* passes --hosts" "$work/err" ||
	fail "no host left: $(cat "$work/err")"
"$TOPOML" import-ib --slurm-conf "$work/none.conf" "$work/odd.topo" \
	>/dev/null 2>&1
[ $? = 2 ] || fail "missing slurm.conf: exit status not 2"

# Real ibnetdiscover files (not in the repository): every host kept by
# default is either warned about or passes the name check, and a --hosts
# filter writes a file topoml check accepts.
real=${REALDATA:-$TESTS_DIR/../../shared/realdata}/ibnetdiscover
if [ -d "$real" ]; then
	for f in "$real"/*; do
		"$TOPOML" import-ib "$f" >"$work/r.conf" 2>"$work/err"
		rc=$?
		[ $rc -le 1 ] || fail "real $f: exit $rc"
		[ $rc = 0 ] || continue
		"$TOPOML" check "$work/r.conf" >/dev/null ||
			fail "real $f: output does not check"
	done
	f=$real/ibtopotool_tests_3.topo
	if [ -f "$f" ]; then
		"$TOPOML" import-ib "$f" 2>"$work/err" >/dev/null
		grep -q "host 'r-ufm111' cannot be a cluster node (looks like a fabric-manager host)" \
			"$work/err" || fail "real UFM host: $(cat "$work/err")"
		"$TOPOML" import-ib -q --hosts 'r-ufm1*' "$f" | grep -q '^SwitchName=switch-de779e Nodes=r-ufm\[100-101\] ' ||
			fail "real file --hosts"
	fi
else
	echo "SKIP: no real ibnetdiscover files in $real"
fi
"$TOPOML" import-ib >/dev/null 2>&1
[ $? = 2 ] || fail "no file: exit status not 2"
"$TOPOML" import-ib --help | grep -q "usage: topoml import-ib" ||
	fail "--help"
echo "PASS: import-ib command line"
