#!/bin/bash
# The README's first command: contrib/quickstart.sh on this build.  Asserts
# what it promises: select/topoml places the 64-node job at its lower bound,
# the side-by-side table shows stock Slurm and topoml on a fat-tree, a
# dragonfly and a torus, the pictures are written, the training job runs
# 16 ranks in network ring order, converges, and leaves complete
# checkpoints.
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$(BUILD_DIR=${TOP_BUILDDIR:-$src/build} timeout 900 \
	bash "$src/contrib/quickstart.sh" 2>&1)
rc=$?
fail() { echo "$out" | tail -40; echo "FAIL: $*"; exit 1; }
[ $rc = 0 ] || fail "quickstart exited $rc"

comment=$(echo "$out" | grep -m1 'topoml: placed=topoml hint=allreduce')
[ -n "$comment" ] || fail "no SystemComment for the 64-node job"
# span and ring cost at their lower bounds: leaves=A/A ring=B/B
echo "$comment" | grep -Eq 'leaves=([0-9]+)/\1 ring=([0-9]+)/\2' ||
	fail "64-node job not at its lower bound: $comment"

# Ranks in ring order: both ranks of n1, n3, n5, n7 (leaf 1), then leaf 2.
order=$(echo "$out" | sed -n 's/^rank \([0-9]*\) of 16 on \(n[0-9]\)$/\2/p' |
	paste -sd' ')
want="n1 n1 n3 n3 n5 n5 n7 n7 n2 n2 n4 n4 n6 n6 n8 n8"
[ "$order" = "$want" ] || fail "rank order '$order', want '$want'"

loss=$(echo "$out" | sed -n 's/^final loss \([0-9.]*\) over 16 ranks.*/\1/p')
[ -n "$loss" ] || fail "training did not finish"
awk -v l="$loss" 'BEGIN { exit !(l < 0.001) }' || fail "loss $loss"
echo "$out" | grep -q 'checkpoints: epoch latest step-000000000150 step-000000000200' ||
	fail "checkpoints not kept as every=50,keep=2"
echo "$out" | grep -q 'JobState=COMPLETED' || fail "training job not COMPLETED"

# Where it matters: the same jobs through stock Slurm and select/topoml.
# On the dragonfly topoml keeps the 64-node job in one group where stock
# spreads it, on the torus it takes an exact box; never worse anywhere.
echo "$out" | grep -Eq '^dragonfly \(8 groups\) +groups ([2-8]) \(best 1\), ring [0-9]+ +groups 1 \(best 1\)' ||
	fail "dragonfly row: $(echo "$out" | grep -A1 '^dragonfly')"
echo "$out" | grep -Eq '^torus 16x8x8 +box ([0-9]+) \(best 64\), ring [0-9]+ +box 64 \(best 64\), ring 64' ||
	fail "torus row: $(echo "$out" | grep -A1 '^torus')"
echo "$out" | grep -Eq '^fat-tree \(32 per leaf\) +leaves 2 \(best 2\), ring 132 +leaves 2 \(best 2\), ring 132' ||
	fail "fat-tree row: $(echo "$out" | grep -A1 '^fat-tree')"
pics=${TOP_BUILDDIR:-$src/build}/quickstart
for p in placement cluster-job; do
	python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' \
		"$pics/$p.svg" 2>/dev/null || fail "no valid picture $pics/$p.svg"
done
grep -q '64-node job placed by topoml' "$pics/cluster-job.svg" ||
	fail "cluster-job.svg does not show the job"
echo "PASS: quick-start ($comment; loss $loss)"
