#!/bin/bash
# topoml place from the command line: the answer, its JSON, job owners
# (--job), exit statuses and error messages.
set -u
bld=${TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
topoml=$bld/contrib/topoml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1024 nodes c1..c1024, 32 per leaf, 8 leaves per middle switch.
"$topoml" generate fat-tree --nodes 1024 --per-leaf 32 --radix 8 \
	--prefix c -o "$work/t.conf" || fail "generate"
t=$work/t.conf

out=$("$topoml" place --topology "$t" --nodes 8 --busy 'c[1-28]') ||
	fail "place: $out"
# tightest fit: the 4 free nodes of leaf 1 cannot hold 8, leaf 2 can
echo "$out" | grep -qx 'nodes: c\[33-40\]' || fail "8 nodes: $out"
echo "$out" | grep -q 'span=1 (lower bound 1, 1 on the free nodes)' ||
	fail "score line: $out"

json=$("$topoml" place --topology "$t" --nodes 40 --json) || fail "json"
for k in nodes ring ring_cost ring_lower_bound ring_lower_bound_free \
	span span_lower_bound span_lower_bound_free largest_free_after; do
	echo "$json" | grep -q "\"$k\"" || fail "--json lacks $k: $json"
done

# Job 5 on leaves 0 and 1, job 6 on leaf 2 (8 free on each): a 40-node
# job takes leaf 2's 8 (no other multi-leaf job there) when it knows the
# owners, the lowest 8 when it only knows the nodes are busy.
owned=$("$topoml" place --topology "$t" --nodes 40 \
	--job '5=c[9-32,41-64]' --job '6=c[73-96]') || fail "--job"
echo "$owned" | grep -qx 'nodes: c\[65-72,97-128\]' || fail "--job: $owned"
blind=$("$topoml" place --topology "$t" --nodes 40 \
	--busy 'c[9-32,41-64,73-96]') || fail "--busy"
echo "$blind" | grep -qx 'nodes: c\[1-8,97-128\]' || fail "--busy: $blind"

# cannot place: exit 1 with the reason; usage errors: exit 2
err=$("$topoml" place --topology "$t" --nodes 2000 2>&1)
[ $? = 1 ] || fail "2000 nodes: exit status"
echo "$err" | grep -q 'cannot place 2000 nodes' || fail "reason: $err"
err=$("$topoml" place --topology "$t" --nodes 4 --job 'x=c1' 2>&1)
[ $? = 2 ] && echo "$err" | grep -q "'x=c1' is not ID=HOSTLIST" ||
	fail "--job x=c1: $err"
# exit statuses: 1 for an unknown node (invalid input), 2 for a malformed
# host list (a typo Slurm would read as a node name) or a missing file
err=$("$topoml" place --topology "$t" --nodes 4 --busy 'zz[1-2]' 2>&1)
[ $? = 1 ] && echo "$err" | grep -q -- '^topoml place: --busy: unknown nodes zz\[1-2\]' ||
	fail "unknown node: $err"
for bad in 'c[1-' 'c1]' 'c[[1-2]]'; do
	err=$("$topoml" place --topology "$t" --nodes 4 --busy "$bad" 2>&1)
	[ $? = 2 ] && echo "$err" | grep -qF -- "topoml place: --busy: malformed host list '$bad'" ||
		fail "malformed --busy $bad: $err"
done
err=$("$topoml" place --topology "$t" --nodes 4 --required 'c[3-1]' 2>&1)
[ $? = 2 ] && echo "$err" | grep -qF -- "--required: invalid host list 'c[3-1]'" ||
	fail "invalid range: $err"
err=$("$topoml" place --topology "$work/none.conf" --nodes 4 2>&1)
[ $? = 2 ] && echo "$err" | grep -q "^topoml place: $work/none.conf: No such file" ||
	fail "missing topology: $err"
printf 'SwitchName=s1 Nodes=a[1-2]\nSwitchName=s2 Switches=s9\n' >"$work/bad.conf"
"$topoml" place --topology "$work/bad.conf" --nodes 1 >/dev/null 2>&1
[ $? = 1 ] || fail "invalid topology: exit status not 1"

# --svg: the machine with the job, busy nodes by job and a legend
"$topoml" place --topology "$t" --nodes 40 --job '5=c[9-32,41-64]' \
	--busy 'c[200-210]' --svg "$work/p.svg" >/dev/null || fail "place --svg"
python3 - "$work/p.svg" <<'PY' || fail "place --svg picture: $(head -c 600 "$work/p.svg")"
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
text = " ".join(t.firstChild.data for t in d.getElementsByTagName("text")
                if t.firstChild)
for want in ("40-node job placed by topoml", "this job", "job 5", "busy",
             "free"):
    assert want in text, (want, text)
PY
"$topoml" place --topology "$t" --nodes 4 --svg /nonexistent/x.svg \
	>/dev/null 2>&1
[ $? = 2 ] || fail "--svg into a missing directory: exit status not 2"

# progress only when asked (stderr is not a terminal here)
err=$("$topoml" place --topology "$t" --nodes 4 2>&1 >/dev/null)
[ -z "$err" ] || fail "progress without a terminal: $err"
err=$("$topoml" place --topology "$t" --nodes 4 --progress 2>&1 >/dev/null)
echo "$err" | grep -q "^topoml place: placing 4 nodes on 1024" ||
	fail "--progress: $err"
err=$("$topoml" place --topology "$t" --nodes 4 --hint ring 2>&1)
[ $? = 2 ] && echo "$err" | grep -q "unknown hint 'ring'" ||
	fail "--hint ring: $err"
# The quick-start's comparison: the same jobs through stock Slurm's node
# choice and the engine, on three networks; topoml never worse, better on
# the dragonfly and the torus, and a picture with all six placements.
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cmp=$(bash "$src/contrib/demo/compare-placement.sh" "$topoml" "$work/cmp") ||
	fail "compare-placement.sh: $cmp"
echo "$cmp" | grep -Eq '^dragonfly \(8 groups\) +groups [2-8] \(best 1\).* groups 1 \(best 1\)' ||
	fail "compare: dragonfly row: $cmp"
echo "$cmp" | grep -Eq '^torus 16x8x8 +box ([0-9]{3,}) .* box 64 \(best 64\)' ||
	fail "compare: torus row: $cmp"
python3 - "$work/cmp/placement.svg" <<'PY' || fail "compare: picture"
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
titles = [t.firstChild.data for t in d.getElementsByTagName("text")
          if t.firstChild and "64-node job placed by" in t.firstChild.data]
assert len(titles) == 6, titles
PY
echo "PASS: topoml place CLI"
