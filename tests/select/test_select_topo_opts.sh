#!/bin/bash
# select/topoml beside Slurm's own topology plugins (tree on every release,
# block from 24.05, topology.yaml from 25.05, each skipped before): the
# job options those plugins enforce keep their documented meaning when
# select/topoml narrows the candidate nodes first.
#
#   --switches=N[@T]   topology/tree: at most N leaf switches, the job
#                      waits up to T for them, then takes more
#   --segment=N        topology/block: every segment of N nodes inside one
#                      base block; a node count not divisible is refused
#   --exclusive=topo   topology/block: no other job on the job's blocks
#   topology.yaml      25.05+: each partition its own topology (tree,
#                      block, flat), each enforced as above
#
# and, on every release, blocks given in topoml.conf's TopologyFile= beside
# topology/tree: nothing refuses what is not aligned, so a job no aligned
# group has room for goes into a larger one at once, unless the row is
# crowded: then it stays pending (Resources) until its aligned group frees
# (the engine's hold, topology/place/place_block.c).
#
# select/topoml narrows to the engine's choice and lets cons_tres with the
# configured topology plugin decide inside it; when the plugin refuses the
# narrowed set, the next choice and finally all candidates (plain
# cons_tres) are tried, so the plugin's constraint always holds.  The
# engine reads Slurm's topology.conf (tree or block) beside slurm.conf;
# with topology.yaml, topoml.conf's TopologyFile= (the tree's leaves).
#
# SPDX-License-Identifier: GPL-2.0-or-later

set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

PER=8		# nodes per leaf switch / base block
UNITS=8
NODES=$((PER * UNITS))
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-topo-opts.XXXXXX")
chmod 755 "$work"
trap 'cluster_stop; rm -rf "$work"' EXIT
topo_gen_tree $UNITS $PER >"$work/tree.conf"
topo_gen_block $UNITS $PER 8,16,32,64 >"$work/block.conf"

# Three nodes busy on each of the first LEAVES units (-w: exact nodes).
blockers() {
	local l
	for l in $(seq 0 $(($1 - 1))); do
		topo_submit -N3 -w "c[$((l * PER + 1))-$((l * PER + 3))]" \
			${2:+-p "$2"} >/dev/null || cluster_fail "blocker $l"
	done
}

started() {	# JOBID WHAT: nodes of a job that must start
	sel_wait_start "$1" 100 || cluster_fail "$2 did not start: $(topo_reason "$1")"
}

# ---- --switches=N[@T] with topology/tree ----
check_switches() {	# PARTITION ("" = default)
	local p=${1:-} a b nl t0 w
	# Every leaf has 5 free nodes: 6 nodes need 2 leaves.
	blockers $UNITS "$p"
	t0=$(date +%s)
	a=$(topo_submit -N6 --switches=1@0:06 ${p:+-p "$p"}) ||
		cluster_fail "sbatch --switches=1@0:06"
	b=$(topo_submit -N6 --switches=1 ${p:+-p "$p"}) ||
		cluster_fail "sbatch --switches=1"
	sleep 3
	# Waiting for one leaf, not started on two.
	[ "$(sel_state "$a")" = PENDING ] ||
		cluster_fail "--switches=1@0:06 started within 3 s on $(squeue -h -j "$a" -o %N) (no leaf had 6 free nodes)"
	nl=$(sel_wait_start "$a" 200) ||
		cluster_fail "--switches=1@0:06 still $(topo_reason "$a") after 20 s"
	w=$(($(date +%s) - t0))
	[ "$w" -ge 5 ] || cluster_fail "--switches=1@0:06 started after $w s"
	[ "$(topo_unit_count "$nl" $PER)" -ge 2 ] ||
		cluster_fail "--switches=1@0:06: $nl (6 nodes on one leaf?)"
	echo "--switches=1@0:06${p:+ ($p)}: pending, then after ${w} s on" \
		"$(topo_unit_count "$nl" $PER) leaves ($nl, placed by $(topo_placed "$a"))"
	# No time given: Slurm's max_switch_wait (300 s) — still waiting.
	[ "$(sel_state "$b")" = PENDING ] ||
		cluster_fail "--switches=1 started on $(squeue -h -j "$b" -o %N)"
	# Free leaf 5 (and the job of 6 that now spans leaves): b fits there.
	scancel "$a"
	scancel "$(squeue -h -o '%i %N' | awk -v n="c[$((5 * PER + 1))-$((5 * PER + 3))]" '$2 == n { print $1 }')"
	nl=$(started "$b" "--switches=1 after a leaf emptied")
	[ "$(topo_unit_count "$nl" $PER)" = 1 ] ||
		cluster_fail "--switches=1: $nl spans $(topo_unit_count "$nl" $PER) leaves"
	echo "--switches=1${p:+ ($p)}: pending until a leaf emptied, then $nl" \
		"(placed by $(topo_placed "$b"))"
	# With room on one leaf the engine's choice is taken, in one leaf.
	a=$(topo_submit -N2 --switches=1 ${p:+-p "$p"})
	nl=$(started "$a" "--switches=1 -N2")
	[ "$(topo_unit_count "$nl" $PER)" = 1 ] ||
		cluster_fail "--switches=1 -N2: $nl"
	[ "$(topo_placed "$a")" = topoml ] ||
		cluster_fail "--switches=1 -N2 with room: placed by '$(topo_placed "$a")', not the engine"
	echo "--switches=1 -N2${p:+ ($p)}: $nl, placed by topoml"
	scancel -p "${p:-main}"
	sleep 1
}

# ---- --segment and --exclusive=topo with topology/block ----
check_block() {	# PARTITION ("" = default)
	local p=${1:-} s s5 x y z nl bad
	blockers 4 "$p"
	# Refused at submission (the client checks), as with cons_tres.
	if topo_submit -N6 --segment=4 ${p:+-p "$p"} >/dev/null 2>&1; then
		cluster_fail "--segment=4 -N6 accepted"
	fi
	s=$(topo_submit -N8 --segment=4 ${p:+-p "$p"})
	nl=$(started "$s" "--segment=4 -N8")
	bad=$(topo_units "$nl" $PER | uniq -c | awk '$1 % 4')
	[ -z "$bad" ] || cluster_fail "--segment=4: $nl has a segment across blocks"
	echo "--segment=4 -N8${p:+ ($p)}: $nl (placed by $(topo_placed "$s"))"
	s5=$(topo_submit -N10 --segment=5 ${p:+-p "$p"})
	nl=$(started "$s5" "--segment=5 -N10")
	bad=$(topo_units "$nl" $PER | uniq -c | awk '$1 % 5')
	[ -z "$bad" ] || cluster_fail "--segment=5: $nl has a segment across blocks"
	echo "--segment=5 -N10${p:+ ($p)}: $nl (placed by $(topo_placed "$s5"))"
	x=$(topo_submit -N4 --exclusive=topo ${p:+-p "$p"})
	nl=$(started "$x" "--exclusive=topo -N4")
	echo "--exclusive=topo -N4${p:+ ($p)}: $nl (placed by $(topo_placed "$x"))"
	y=$(topo_submit -N2 ${p:+-p "$p"})
	started "$y" "-N2 after --exclusive=topo" >/dev/null
	# 12 nodes: inside one block of 16 (two aligned base blocks).
	z=$(topo_submit -N12 ${p:+-p "$p"})
	nl=$(started "$z" "-N12")
	[ "$(topo_units "$nl" $PER | awk '{ print int($1 / 2) }' | uniq | wc -l)" = 1 ] ||
		cluster_fail "-N12: $nl is not inside one block of 16"
	echo "-N12${p:+ ($p)}: $nl (placed by $(topo_placed "$z"))"
	# No other job on the exclusive job's base blocks.
	local mine others
	mine=$(topo_units "$(squeue -h -j "$x" -o %N)" $PER | uniq)
	others=$(squeue -h -t R,CF -o '%i %N' | awk -v x="$x" '$1 != x { print $2 }' |
		while read -r n; do topo_units "$n" $PER; done | sort -u)
	for u in $mine; do
		echo "$others" | grep -qx "$u" &&
			cluster_fail "--exclusive=topo job $x shares block $u: $(squeue -o '%i %N')"
	done
	echo "--exclusive=topo${p:+ ($p)}: blocks ${mine//$'\n'/ } held by no other job"
	scancel -p "${p:-main}"
	sleep 1
}

# ---- blocks from topoml.conf's TopologyFile, Slurm's plugin not block ----
# The engine alone decides (no topology/block to refuse what is not
# aligned): a job no aligned group of its BlockSizes level holds goes into
# a larger aligned group on as few blocks, at once; but in a crowded row
# (the larger group would leave fewer free nodes than half its size, and
# an aligned group of its partition holds it once jobs there end) it
# waits for the aligned group (topology/place/place_block.c).  Blocks
# b0..b7 of 8 nodes; -N12 wants an aligned pair (b0-b1, b2-b3, ...).
check_crowded() {
	local log=$CLUSTER_DIR/log/slurmctld.log a b c d j nl held
	local hold="no aligned group of 2 base blocks holds 12 free nodes, and a larger one would leave fewer than 6 free"
	grep -q "select/topoml: .*block: $NODES nodes, $UNITS blocks of $PER" \
		"$log" || cluster_fail "no block model: $(grep topoml "$log" | tail -3)"
	# b0 and b3 busy, 4 nodes of each of b4..b7: no aligned pair has 12
	# free; b1 and b2 (16 free) are a pair of the aligned four b0-b3.
	# b0's job has a limit, so that backfill can plan past it
	a=$(topo_submit -N8 -t 30 -w "c[1-8]") || cluster_fail "blocker b0"
	b=$(topo_submit -N12 -w "c[25-36]") || cluster_fail "blocker b3-b4"
	c=$(topo_submit -N12 -w "c[41-44,49-52,57-60]") ||
		cluster_fail "blocker b5-b7"
	for id in $a $b $c; do started "$id" "blocker $id" >/dev/null; done
	# 32 free: not crowded, -N12 at once on b1 and b2 (topology/block
	# would hold it for an aligned pair).
	j=$(topo_submit -N12) || cluster_fail "sbatch -N12 (larger group)"
	nl=$(started "$j" "-N12, no aligned pair free")
	[ "$(topo_units "$nl" $PER | uniq | paste -sd,)" = 1,2 ] &&
		[ "$(topo_placed "$j")" = topoml ] ||
		cluster_fail "-N12, no aligned pair free: $nl placed by '$(topo_placed "$j")', want b1 and b2 by the engine"
	echo "blocks (TopologyFile): -N12, no aligned pair free: $nl at once (a larger group)"
	scancel "$j"
	cluster_job_wait_gone "$j" || cluster_fail "-N12 not cancelled"
	# The rest of b4..b7 busy: 16 free, -N12 on b1 and b2 would leave 4,
	# fewer than 6.  It waits for b0-b1.
	d=$(topo_submit -N16 -w "c[37-40,45-48,53-56,61-64]") ||
		cluster_fail "blocker b4-b7"
	started "$d" "blocker b4-b7" >/dev/null
	cluster_settle
	j=$(topo_submit -N12) || cluster_fail "sbatch -N12 (crowded)"
	for _ in $(seq 1 300); do
		grep -q "JobId=$j .*$hold" "$log" && break
		sleep 0.1
	done
	held=$(topo_reason "$j")
	case "$held" in
	PENDING*) ;;
	*) cluster_fail "crowded row: -N12 $held on $(squeue -h -j "$j" -o %N), not held for b0-b1" ;;
	esac
	grep -q "JobId=$j .*$hold" "$log" ||
		cluster_fail "crowded row: no hold logged: $(grep "JobId=$j" "$log" | tail -3)"
	# backfill reserves the group it waits for: b0-b1, as b0's job ends
	# by its limit (not the larger group it declines)
	for _ in $(seq 1 100); do
		planned=$(scontrol -o show job "$j" |
			  sed -n 's/.* SchedNodeList=\([^ ]*\).*/\1/p')
		[ -n "$planned" ] && break
		sleep 0.1
	done
	[ "$(topo_units "$planned" $PER | uniq | paste -sd,)" = 0,1 ] ||
		cluster_fail "crowded row: backfill planned -N12 on '$planned', want b0-b1"
	scancel "$a"
	nl=$(started "$j" "-N12 once b0 freed")
	[ "$(topo_units "$nl" $PER | uniq | paste -sd,)" = 0,1 ] ||
		cluster_fail "crowded row: -N12 on $nl once b0 freed, want b0-b1"
	echo "blocks (TopologyFile), crowded row: -N12 $held, planned on $planned, then $nl once b0 freed"
	cluster_cancel_all
}

echo "== topology/tree (topology.conf), select/topoml with the same leaves"
printf 'TopologyFile=%s\n' "$work/tree.conf" >"$work/topoml-tree.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/tree.conf CLUSTER_TOPOML_CONF=$work/topoml-tree.conf \
	cluster_start topo-opts-tree || exit $?
check_switches ""
cluster_stop

echo "== blocks (topoml.conf TopologyFile), select/topoml beside topology/tree"
printf 'TopologyFile=%s\nDebug=1\n' "$work/block.conf" >"$work/topoml-blocks.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/tree.conf CLUSTER_TOPOML_CONF=$work/topoml-blocks.conf \
	cluster_start topo-opts-blocks || exit $?
check_crowded
cluster_stop
if [ "$CLUSTER_SLURM_VERSION" -lt 2405 ]; then
	echo "SKIP: --segment, --exclusive=topo, topology/block need Slurm 24.05+"
	echo "PASS: --switches"
	exit 0
fi

echo "== topology/block (topology.conf), select/topoml reading the same file"
: >"$work/topoml-block.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/block.conf CLUSTER_TOPOLOGY_PLUGIN=topology/block \
	CLUSTER_TOPOML_CONF=$work/topoml-block.conf \
	cluster_start topo-opts-block || exit $?
check_block ""
cluster_stop

if [ "$CLUSTER_SLURM_VERSION" -lt 2505 ]; then
	echo "SKIP: topology.yaml (per-partition topologies) needs Slurm 25.05+"
	echo "PASS: --switches, --segment, --exclusive=topo"
	exit 0
fi

echo "== topology.yaml: partition ptree (tree), pblock (block), pflat (flat)"
{
	echo "- topology: ttree"
	echo "  cluster_default: true"
	echo "  tree:"
	echo "    switches:"
	sed -n 's/^SwitchName=\([^ ]*\) Nodes=\(.*\)/      - switch: \1\n        nodes: \2/p;
		s/^SwitchName=\([^ ]*\) Switches=\(.*\)/      - switch: \1\n        children: \2/p' \
		"$work/tree.conf"
	echo "- topology: tblock"
	echo "  block:"
	echo "    block_sizes: [8, 16, 32, 64]"
	echo "    blocks:"
	sed -n 's/^BlockName=\([^ ]*\) Nodes=\(.*\)/      - block: \1\n        nodes: \2/p' \
		"$work/block.conf"
	echo "- topology: tflat"
	echo "  flat: true"
} >"$work/topology.yaml"
# One topoml.conf for all partitions: the engine's tree narrows, each
# partition's plugin decides inside the narrowed nodes.
parts="PartitionName=ptree Nodes=c[1-$NODES] Topology=ttree MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
PartitionName=pblock Nodes=c[1-$NODES] Topology=tblock MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
PartitionName=pflat Nodes=c[1-$NODES] Topology=tflat MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY='' CLUSTER_TOPOLOGY_YAML=$work/topology.yaml \
	CLUSTER_TOPOML_CONF=$work/topoml-tree.conf CLUSTER_CONF_EXTRA=$parts \
	cluster_start topo-opts-yaml || exit $?
scontrol show partition pblock | grep -q 'Topology=tblock' ||
	cluster_fail "partition pblock has no Topology=tblock: $(scontrol show partition pblock)"
check_switches ptree
check_block pblock
# flat: no constraint; the engine's choice is taken (one leaf for 6 nodes).
f=$(topo_submit -N6 -p pflat)
nl=$(started "$f" "pflat -N6")
[ "$(topo_placed "$f")" = topoml ] && [ "$(topo_unit_count "$nl" $PER)" = 1 ] ||
	cluster_fail "pflat -N6: $nl placed by '$(topo_placed "$f")'"
echo "pflat -N6: $nl, placed by topoml on one leaf"
cluster_stop

if [ "$CLUSTER_SLURM_VERSION" -lt 2605 ]; then
	echo "SKIP: topology/ring needs Slurm 26.05+"
	rm -rf "$work"
	echo "PASS: --switches, --segment, --exclusive=topo, topology.yaml per partition"
	exit 0
fi
# topology/ring's topology.conf (RingName=) is no network the engine reads:
# slurmctld starts, and jobs get plain cons_tres with Slurm's ring plugin.
echo "== topology/ring (topology.conf RingName=): plain cons_tres"
for r in $(seq 0 $((NODES / 16 - 1))); do	# 26.05: rings of up to 16
	echo "RingName=r$r Nodes=c[$((r * 16 + 1))-$(((r + 1) * 16))]"
done >"$work/ring.conf"
: >"$work/topoml-ring.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/ring.conf CLUSTER_TOPOLOGY_PLUGIN=topology/ring \
	CLUSTER_TOPOML_CONF=$work/topoml-ring.conf \
	cluster_start topo-opts-ring || exit $?
grep -q "not a network the engine reads" "$CLUSTER_DIR/log/slurmctld.log" ||
	cluster_fail "no 'plain cons_tres' line for topology/ring"
r=$(topo_submit -N6)
nl=$(started "$r" "ring -N6")
[ -z "$(topo_placed "$r")" ] ||
	cluster_fail "ring -N6: placed by '$(topo_placed "$r")', not cons_tres"
echo "ring -N6: $nl, by cons_tres and topology/ring"
cluster_stop
rm -rf "$work"
echo "PASS: --switches, --segment, --exclusive=topo, topology.yaml per partition, topology/ring"
