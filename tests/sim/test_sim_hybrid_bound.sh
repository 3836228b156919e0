#!/bin/bash
# topoml sim --hybrid's bound on DP transfers through the top, on free
# node sets worked out by hand (the machine of tests/fixtures/hybrid:
# 32 leaves of 18 nodes c1.., each leaf one NVLink domain, spines of 4
# leaves; --hybrid 4 --hybrid-tp 8: a tensor group is 2 nodes, and its
# 8 data-parallel rings each take one rank of every group of a stage).
# "dp cross top: free bound" counts the placements that split no more
# tensor groups over NVLink domains (nor over the top) than topoml's,
# "more TP split allowed" those with any number split (over the top no
# more).  Each job runs alone on the nodes that --avoid leaves free.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
topoml=${TOP_BUILDDIR:-../..}/contrib/topoml
src=${TESTS_DIR:-$(dirname "$0")/..}
topo=$src/fixtures/hybrid/fattree-nvl576.json
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_sim_hybrid_bound.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# avoid FREE...: the hostlist of every node but those numbered
avoid() {
	local list= from=0 v

	for v in "$@" 577; do
		[ $((v - 1)) -ge $((from + 1)) ] &&
			list+=,$((from + 1))-$((v - 1))
		[ $((v - 1)) -eq $((from + 1)) ] && list+=,$((v - 1))
		from=$v
	done
	echo "c[${list#,}]"
}

# run TAG NODES FREE...: one job of NODES nodes on the FREE nodes; the
# figures of topoml's run in $tmp/TAG
run() {
	local tag=$1 n=$2

	shift 2
	printf 'submit,nodes,runtime,walltime\n0,%s,100,100\n' "$n" \
		>"$tmp/$tag.csv"
	"$topoml" sim -q -t "$topo" -T "$tmp/$tag.csv" -p topoml --hybrid 4 \
		--hybrid-tp 8 --avoid "$(avoid "$@")" >"$tmp/$tag" 2>&1 ||
		fail "$tag: sim: $(cat "$tmp/$tag")"
}
row() {
	awk -v l="$2" 'index($0, l) == 1 { split(substr($0, 27), f, " ");
		print f[1] }' "$tmp/$1"
}
# expect TAG DP SPLIT BOUND ANY
expect() {
	local dp split lb any

	dp=$(row "$1" "dp cross top/group")
	split=$(row "$1" "TP groups split NVL dom")
	lb=$(row "$1" "dp cross top: free bound")
	any=$(row "$1" "  more TP split allowed")
	echo "$1: DP top $dp, TP split $split, bound $lb, with more" \
		"split allowed $any"
	[ "$dp $split $lb $any" = "$2 $3 $4 $5" ] ||
		fail "$1: want DP top $2, TP split $3, bound $4 and $5"
}

# One stage (34 nodes: 17 groups, pp 1, dp 17), Theta's job on seven
# spines (doc/results.md).  Free per spine (whole groups + nodes alone):
# 1: c53-54 + c36; 2: c107-108 + c90, c126, c144; 3: c215-216 + c162,
# c180; 4: c269-270, c287-288 + c234; 5-7: 3, 3 and 4 groups.  15 whole
# groups for 17: at least 2 split, and with 2 every whole group is used,
# so each ring visits all 7 spines: 8 rings x 7 = 56, what topoml sends.
# Leaving spine 1 out (its 3 nodes are the 3 to spare) takes 14 whole
# groups and 3 pairs of single nodes, one over the top (spines 2 and 4
# hold odd counts): 6 spines, 48, with one group more split.
run one 34 36 53 54 90 107 108 126 144 162 180 215 216 234 269 270 287 \
	288 323 324 341 342 359 360 395 396 413 414 431 432 449 450 467 \
	468 485 486 503 504
expect one 56 2 56 48

# Two stages (8 nodes: 4 groups, pp 2, dp 2).  Free: spine 1: c1-2 +
# c19, c37; spine 2: c73-74 + c91, c109; spine 3: c145-146.  3 whole
# groups for 4: with 1 split all three are used, and one stage holds two
# of them from two spines: its 8 rings of 2 ranks cross the top twice,
# 16.  With 2 split each stage fits in spine 1 or 2: 0.
run two 8 1 2 19 37 73 74 91 109 145 146
expect two 16 1 16 0
# One stage (34 nodes: 17 groups, pp 1, dp 17) on every free node:
# spine 1: c1-24 (12 whole groups), spine 2: c73-80 (4), and one node
# alone in spines 3 and 4 (c145, c217), so one group lies over the top.
# Each ring takes one node of every group: the 4 rings of a group's
# first node visit spines 1, 2 and that node's spine, those of its
# second spines 1, 2 and the other: 3 spines each, 8 rings x 3 = 24.
# Counting only the domains of the whole groups (2 spines) gave 16.
run three 34 $(seq 1 24) $(seq 73 80) 145 217
expect three 24 1 24 24
echo "PASS: topoml sim --hybrid: the DP bound keeps topoml's TP splits"
