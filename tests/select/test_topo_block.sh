#!/bin/bash
# topology/topoml on Slurm's block topology (24.11+): a topology.conf of
# BlockName= lines makes it wrap topology/block; whole-node jobs are placed
# by the engine on whole base blocks where they fit (exactly `topoml
# place`'s answer), --segment jobs by topology/block itself (Slurm's own
# evaluation), --exclusive=topo keeps other jobs off a job's blocks (and
# the job off busy blocks) as topology/block does, the engine offers only
# aligned groups (topology/block refuses others), and scontrol show
# topology prints the blocks and the model.
#
# 16 emulated nodes c1..c16 in four base blocks of 4, BlockSizes=4,8,16.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
topo_plugin_need 2411 "topology/topoml"

work=""
cluster_tmpdir work topo-block
{
	for b in 0 1 2 3; do
		echo "BlockName=b$b Nodes=c[$((b * 4 + 1))-$((b * 4 + 4))]"
	done
	echo "BlockSizes=4,8,16"
} >"$work/topology.conf"
# partition stock: topology/block alone (Placement=off), same nodes
printf 'Debug=1\nPartitionName=stock Placement=off\n' >"$work/topoml.conf"

CLUSTER_SLURMD=0 CLUSTER_CLOUD=16 CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="PartitionName=stock Nodes=c[1-16] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" \
	cluster_start topo-block || exit $?
log=$CLUSTER_DIR/log/slurmctld.log
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
grep -q "topology/topoml: wraps topology/block" "$log" ||
	cluster_fail "not wrapping topology/block: $(grep -i topo "$log" | tail -5)"

blocks() {
	scontrol show hostnames "$1" | sed 's/^c//' |
		awk '{ print int(($1 - 1) / 4) }' | sort -u | wc -l
}

for spec in "a 2" "b 3" "c 4"; do
	# shellcheck disable=SC2086 # two words
	set -- $spec
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/topology.conf" "$2" "$busy" allreduce \
		$(sel_owners)) || cluster_fail "$1: topoml place failed"
	id=$(cluster_submit -N "$2" -J "$1") || cluster_fail "$1: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "$1 did not start: $(cluster_job_reason "$id")"
	sel_same_nodes "$nodes" "$want" ||
		cluster_fail "$1: slurmctld gave $nodes, topoml place says $want (busy: ${busy:-none})"
	grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
		cluster_fail "$1: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
	[ "$(blocks "$nodes")" = 1 ] ||
		cluster_fail "$1: $2 nodes on $(blocks "$nodes") blocks"
	echo "$1 $2 -> $nodes"
done

# --segment: topology/block's own evaluation (segments of 2 nodes): the
# nodes it gives alone (partition stock) on the same state.
id=$(cluster_submit -p stock -N 4 --segment=2) || cluster_fail "stock: sbatch"
stock=$(cluster_job_wait_start "$id") ||
	cluster_fail "stock --segment=2 did not start: $(cluster_job_reason "$id")"
scancel "$id"
cluster_job_wait_gone "$id" || cluster_fail "stock: not cancelled"
cluster_settle
id=$(cluster_submit -N 4 --segment=2 -J s) || cluster_fail "s: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "s (--segment=2) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=-1 .*fallback: --segment" \
	"$log" || cluster_fail "s: no fallback: $(grep "JobId=$id" "$log" | tail -3)"
sel_same_nodes "$nodes" "$stock" ||
	cluster_fail "s: --segment=2 on $nodes, topology/block alone $stock"
echo "s -N 4 --segment=2 -> $nodes (as topology/block alone)"

# --exclusive=topo (topology/block supports it; cons_tres applies it
# through whole_topo): no other job on the job's blocks, although the
# engine alone would fill them (`topoml place` says where).
cluster_cancel_all
cluster_settle
block_of() {
	topo_units "$1" 4 | uniq | paste -sd,
}
id=$(cluster_submit -N 2 --exclusive=topo -J x) || cluster_fail "x: sbatch"
x_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "x (--exclusive=topo) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
	cluster_fail "x: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
[ "$(blocks "$x_nodes")" = 1 ] || cluster_fail "x: on $x_nodes"
echo "x -N 2 --exclusive=topo -> $x_nodes"
for name in y z; do
	ex=""
	[ $name = z ] && ex=--exclusive=topo
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	alone=$(sel_expected "$work/topology.conf" 2 "$busy" allreduce \
		$(sel_owners)) || cluster_fail "$name: topoml place failed"
	id=$(cluster_submit -N 2 $ex -J $name) || cluster_fail "$name: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "$name did not start: $(cluster_job_reason "$id")"
	grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
		cluster_fail "$name: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
	# the engine alone shares a busy block: the check can fail
	topo_units "$busy" 4 | grep -qxF "$(block_of "$alone")" ||
		cluster_fail "$name: no test, the engine alone takes $alone"
	for b in $(topo_units "$busy" 4 | uniq); do
		topo_units "$nodes" 4 | grep -qx "$b" &&
			cluster_fail "$name ${ex:-(plain)}: on $nodes, block $b holds --exclusive=topo or is busy (busy: $busy)"
	done
	echo "$name -N 2 ${ex:-(plain)} -> $nodes (the engine alone: $alone; busy: $busy)"
done

# Only aligned groups: topology/block, wrapped, refuses any other nodes,
# so the engine offers none.  With b0 and b2 busy no aligned group of 8
# (b0-b1, b2-b3) has 5 free nodes: the job waits with the engine's
# reason (before, the engine offered b1 and b3 of the row of 16 and
# cons_tres refused them), then starts inside b0-b1 when b0 frees.
cluster_cancel_all
cluster_settle
for w in 'c[1-4]' 'c[9-12]'; do
	id=$(cluster_submit -N 4 -w "$w") || cluster_fail "busy $w: sbatch"
	cluster_job_wait_start "$id" >/dev/null ||
		cluster_fail "busy $w did not start: $(cluster_job_reason "$id")"
	[ "$w" = 'c[1-4]' ] && b0=$id
done
id=$(cluster_submit -N 5 -J aligned) || cluster_fail "aligned: sbatch"
want="eval_nodes JobId=$id rc=[0-9-]* attempt=-1 .*fallback: no aligned group"
for _ in $(seq 1 100); do
	grep -q "$want" "$log" && break
	sleep 0.1
done
grep -q "$want" "$log" ||
	cluster_fail "aligned: no engine refusal: $(cluster_job_reason "$id"); $(grep "JobId=$id" "$log" | tail -3)"
grep "JobId=$id " "$log" | grep -q "could not fit the job on the engine" &&
	cluster_fail "aligned: the engine offered nodes topology/block refuses"
case "$(cluster_job_reason "$id")" in
PENDING*) ;;
*) cluster_fail "aligned: $(cluster_job_reason "$id") on $(squeue -h -j "$id" -o %N)" ;;
esac
scancel "$b0"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "aligned did not start once b0 freed: $(cluster_job_reason "$id")"
[ "$(topo_units "$nodes" 8 | uniq)" = 0 ] ||
	cluster_fail "aligned: on $nodes, not inside b0-b1"
grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
	cluster_fail "aligned: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
echo "aligned -N 5: waited while b0 and b2 were busy, then $nodes"

topo=$(scontrol show topology 2>&1)
echo "$topo" | grep -q "BlockName=b0 .*c\[1-4\]" ||
	cluster_fail "scontrol show topology: $(echo "$topo" | head -3)"
echo "$topo" | grep -q "^topoml model: block: 16 nodes, 4 blocks of 4" ||
	cluster_fail "scontrol show topology shows no model: $topo"
_cluster_alive "$pid" || cluster_fail "slurmctld died"
echo "PASS: topology/topoml over topology/block"
