#!/bin/bash
# The Slurm baselines are Slurm: a real slurmctld (select/cons_tres, no
# select/topoml) places a sequence of exclusive jobs on 1024 emulated CLOUD
# nodes, with cancellations making holes, and after every submission the
# job's node list must equal `topoml place --policy P` on the same free
# nodes (every fifth job also names one node it must get, sbatch -w):
#   1. TopologyPlugin=topology/tree, 3-level fat-tree, 32 nodes per leaf,
#      against slurm-tree (_eval_nodes_topo);
#   2. the same with TopologyParam=dragonfly on a dragonfly-shaped
#      topology.conf (routers as leaves, one switch per group, one root),
#      against slurm-dragonfly (_eval_nodes_dfly);
#   3. no topology at all, against linear (_eval_nodes' best fit).
# Slurm prefers nodes that are already powered up (a cancelled job leaves
# its CLOUD nodes "idle#") over powered-down ones ("idle~"); the test hands
# that state to topoml with --powered-down.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v slurmctld >/dev/null || { echo "SKIP: no slurmctld"; exit 77; }
TOPOML=${TOP_BUILDDIR:-$(cd "$TESTS_DIR/.." && pwd)}/contrib/topoml
[ -x "$TOPOML" ] || { echo "FAIL: $TOPOML not built"; exit 1; }

STEPS=${BASELINE_STEPS:-60}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/topoml-baseline.XXXXXX")
FAILS=0
NREQ=0
CHECKED=0
MULTI=0

expand() { scontrol show hostnames "$1" 2>/dev/null | sort -V | paste -sd,; }

# Free and powered-down nodes as slurmctld sees them now.
state() {
	sinfo -h -N -o '%N %t' >"$WORK/sinfo"
	BUSY=$(awk '$2 !~ /^idle[~#]?$/ {print $1}' "$WORK/sinfo" |
		sort -uV | paste -sd,)
	DOWN=$(awk '$2 == "idle~" {print $1}' "$WORK/sinfo" | sort -uV |
		paste -sd,)
	NFREE=$(awk '$2 ~ /^idle[~#]?$/' "$WORK/sinfo" | sort -u | wc -l)
}

run_sequence() {
	local policy=$1 topo=$2 sizes=(1 2 3 4 5 7 8 12 16 17 24 31 32 33 40 48 63 64 65 100)
	local step k id nl i expect got jobs=() exp_leaves
	RANDOM=4242
	for step in $(seq 1 "$STEPS"); do
		cluster_settle
		if [ ${#jobs[@]} -gt 0 ] && [ $((RANDOM % 10)) -lt 3 ]; then
			i=$((RANDOM % ${#jobs[@]}))
			scancel "${jobs[$i]}"
			jobs=("${jobs[@]:0:$i}" "${jobs[@]:$((i + 1))}")
			continue
		fi
		state
		k=${sizes[$((RANDOM % ${#sizes[@]}))]}
		if [ "$k" -gt "$NFREE" ]; then
			# full: free the oldest job instead
			scancel "${jobs[0]}"
			jobs=("${jobs[@]:1}")
			continue
		fi
		# every fifth job names one free node it must get (-w)
		REQ=
		if [ $((RANDOM % 5)) = 0 ]; then
			REQ=$(awk '$2 ~ /^idle[~#]?$/ {print $1}' \
				"$WORK/sinfo" | sort -u | shuf -n 1 \
				--random-source=<(yes $step))
		fi
		expect=$("$TOPOML" place --topology "$topo" --policy "$policy" \
			--nodes "$k" ${BUSY:+--busy "$BUSY"} ${REQ:+--required "$REQ"} \
			${DOWN:+--powered-down "$DOWN"} | sed -n 's/^nodes: //p')
		[ -n "$expect" ] || cluster_fail "topoml place gave no nodes for $k"
		id=$(sbatch --parsable -N "$k" --exclusive -o /dev/null \
			${REQ:+-w "$REQ"} --wrap 'sleep 100000') ||
			cluster_fail "sbatch -N $k"
		[ -n "$REQ" ] && NREQ=$((NREQ + 1))
		nl=
		for i in $(seq 1 100); do
			nl=$(squeue -h -j "$id" -t R,CF -o '%N')
			[ -n "$nl" ] && break
			sleep 0.1
		done
		[ -n "$nl" ] || cluster_fail "job $id ($k nodes) did not start: $(squeue -h -j "$id" -o '%T %r')"
		jobs+=("$id")
		CHECKED=$((CHECKED + 1))
		exp_leaves=$("$TOPOML" place --topology "$topo" --policy "$policy" \
			--nodes "$k" ${BUSY:+--busy "$BUSY"} ${REQ:+--required "$REQ"} \
			${DOWN:+--powered-down "$DOWN"} --json |
			sed -n 's/.*"span":\([0-9]*\).*/\1/p')
		[ "${exp_leaves:-1}" -gt 1 ] && MULTI=$((MULTI + 1))
		got=$(expand "$nl")
		if [ "$got" != "$(expand "$expect")" ]; then
			echo "MISMATCH $policy step $step: -N $k" >&2
			echo "  busy:   ${BUSY:-none}" >&2
			echo "  -w:     ${REQ:-none}" >&2
			echo "  down:   ${DOWN:-none}" >&2
			echo "  slurm:  $nl" >&2
			echo "  topoml: $expect" >&2
			FAILS=$((FAILS + 1))
		fi
	done
	scancel "${jobs[@]}" 2>/dev/null
}

# 1. fat-tree, topology/tree
"$TOPOML" generate fat-tree --nodes 1024 --per-leaf 32 --radix 8 \
	--prefix c -o "$WORK/tree.conf" >/dev/null ||
	cluster_fail "topoml generate"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=1024 CLUSTER_TOPOLOGY=$WORK/tree.conf \
	cluster_start baseline-tree
run_sequence slurm-tree "$WORK/tree.conf"
echo "slurm-tree: $CHECKED placements compared ($NREQ with -w), $MULTI on several leaves, $FAILS mismatches"
cluster_stop

# 2. dragonfly: 8 groups x 8 routers x 16 nodes as Slurm's dragonfly file
{
	r=0
	for g in $(seq 0 7); do
		for i in $(seq 0 7); do
			lo=$((r * 16 + 1))
			echo "SwitchName=r$r Nodes=c[$lo-$((lo + 15))]"
			r=$((r + 1))
		done
	done
	for g in $(seq 0 7); do
		echo "SwitchName=g$g Switches=r[$((g * 8))-$((g * 8 + 7))]"
	done
	echo "SwitchName=top Switches=g[0-7]"
} >"$WORK/dfly.conf"
tree_checked=$CHECKED tree_multi=$MULTI
CHECKED=0 MULTI=0
CLUSTER_SLURMD=0 CLUSTER_CLOUD=1024 CLUSTER_TOPOLOGY=$WORK/dfly.conf \
	CLUSTER_TOPOLOGY_PARAM=dragonfly cluster_start baseline-dfly
grep -q '^TopologyParam=dragonfly' "$SLURM_CONF" ||
	cluster_fail "TopologyParam=dragonfly missing"
run_sequence slurm-dragonfly "$WORK/dfly.conf"
echo "slurm-dragonfly: $CHECKED placements compared ($NREQ with -w, both), $MULTI on several leaves, $FAILS mismatches (both)"
cluster_stop

# 3. no topology (topology/none): cons_tres's plain best fit, against
#    linear (the node names come from the tree file; linear ignores its
#    switches)
dfly_checked=$CHECKED dfly_multi=$MULTI
CHECKED=0 MULTI=0
CLUSTER_SLURMD=0 CLUSTER_CLOUD=1024 CLUSTER_TOPOLOGY_PLUGIN=topology/none \
	cluster_start baseline-linear
run_sequence linear "$WORK/tree.conf"
echo "linear: $CHECKED placements compared ($NREQ with -w, all), $FAILS mismatches (all)"
cluster_stop
rm -rf "$WORK"

[ "$CHECKED" -ge 10 ] || { echo "FAIL: too few linear placements"; exit 1; }
CHECKED=$dfly_checked MULTI=$dfly_multi
[ "$tree_checked" -ge 10 ] && [ "$CHECKED" -ge 10 ] ||
	{ echo "FAIL: too few placements compared"; exit 1; }
[ "$tree_multi" -ge 3 ] && [ "$MULTI" -ge 3 ] ||
	{ echo "FAIL: too few multi-leaf placements to prove anything"; exit 1; }
[ "$FAILS" = 0 ] || { echo "FAIL: $FAILS placements differ from Slurm"; exit 1; }
echo "PASS: every node list equals Slurm's"
