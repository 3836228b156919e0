#!/bin/bash
# topology/topoml on a dragonfly from topoml.conf (24.11+; over Slurm's
# flat plugin): whole-node jobs land in the fewest groups (exactly `topoml
# place`'s answer) where the wrapped plugin alone spans more; node-sharing
# jobs are narrowed by the engine and sized by cons_tres, two jobs on
# every node, and run; a request the engine does not model (--contiguous
# or GPUs per job) or cannot meet (--switches=1, one node per router)
# gets the very nodes the wrapped plugin alone chooses.
#
# 8 slurmd nodes n1..n8 in 4 groups of 2 that interleave in node order
# (group k: n(k+1), n(k+5)), so Slurm's own choice, in node order, spans
# the most groups.  Partition main: topoml; stock (Placement=off in
# topoml.conf): the wrapped plugin alone, on the same nodes and state;
# shared and stockshared: the same with nodes shared by CPUs.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
topo_plugin_need 2411 "topology/topoml"

work=""
cluster_tmpdir work topo-dragonfly
{
	echo '{ "family": "dragonfly", "global_links": "all-to-all", "groups": ['
	for g in 0 1 2 3; do
		printf '%s { "name": "g%d", "routers": [' \
			"$([ $g = 0 ] || echo ,)" $g
		printf ' {"name": "g%dr0", "nodes": "n%d"},' $g $((g + 1))
		printf ' {"name": "g%dr1", "nodes": "n%d"} ] }\n' $g $((g + 5))
	done
	echo '] }'
} >"$work/topoml.json"
mkdir "$work/dev"
: >"$work/dev/gpu0"
: >"$work/dev/gpu1"
printf 'TopologyFile=%s\nDebug=1\n%s\n%s\n' "$work/topoml.json" \
	"PartitionName=stock Placement=off" \
	"PartitionName=stockshared Placement=off" >"$work/topoml.conf"

CLUSTER_SLURMD=8 CLUSTER_CLOUD=0 CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_NODE_EXTRA="Gres=gpu:2" \
	CLUSTER_GRES_CONF="NodeName=n[1-8] Name=gpu File=$work/dev/gpu[0-1]" \
	CLUSTER_CONF_EXTRA="GresTypes=gpu
PartitionName=stock Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
PartitionName=shared Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=NO
PartitionName=stockshared Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=NO" \
	cluster_start topo-dragonfly || exit $?
log=$CLUSTER_DIR/log/slurmctld.log
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
grep -q "topology/topoml: wraps topology/\(default\|flat\)" "$log" ||
	cluster_fail "not wrapping Slurm's flat plugin: $(grep -i topo "$log" | tail -5)"

# groups NODES: how many dragonfly groups a host list spans
groups() {
	scontrol show hostnames "$1" | sed 's/^n//' |
		awk '{ print ($1 - 1) % 4 }' | sort -u | wc -l
}

# logged ID: the job's eval_nodes line (the last)
logged() {
	grep "eval_nodes JobId=$1 " "$log" | tail -1
}

# stock_run PARTITION ARGS...: the nodes the wrapped plugin alone gives the
# request on the present state (a partition with Placement=off), then
# cancelled and settled.
stock_run() {
	local part=$1 id nodes
	shift
	id=$(cluster_submit -p "$part" "$@") || cluster_fail "stock: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "stock $* did not start: $(cluster_job_reason "$id")"
	logged "$id" | grep -q "rc=0 attempt=-1 .*fallback: " ||
		cluster_fail "stock $*: $(logged "$id")"
	scancel "$id"
	cluster_job_wait_gone "$id" || cluster_fail "stock $*: not cancelled"
	cluster_settle
	echo "$nodes"
}

# Whole-node jobs: the engine's groups against the wrapped plugin's.
for spec in "a 2" "b 4"; do
	# shellcheck disable=SC2086 # two words
	set -- $spec
	stock=$(stock_run stock -N "$2") || exit 1
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/topoml.json" "$2" "$busy" allreduce \
		$(sel_owners)) || cluster_fail "$1: topoml place failed"
	id=$(cluster_submit -N "$2" -J "$1") || cluster_fail "$1: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "$1 did not start: $(cluster_job_reason "$id")"
	sel_same_nodes "$nodes" "$want" ||
		cluster_fail "$1: slurmctld gave $nodes, topoml place says $want (busy: ${busy:-none})"
	logged "$id" | grep -q "rc=0 attempt=0 " ||
		cluster_fail "$1: not placed by the engine: $(logged "$id")"
	[ "$(groups "$nodes")" = $(($2 / 2)) ] ||
		cluster_fail "$1: $2 nodes on $(groups "$nodes") groups"
	[ "$(groups "$nodes")" -lt "$(groups "$stock")" ] ||
		cluster_fail "$1: $nodes ($(groups "$nodes") groups), the wrapped plugin alone $stock ($(groups "$stock"))"
	echo "$1 -N $2 -> $nodes ($(groups "$nodes") groups; alone: $stock, $(groups "$stock") groups)"
	last=$id
done

# Not modelled: --contiguous, with a's group busy, gets the very nodes
# the wrapped plugin alone chooses (the engine's would be one group).
scancel "$last"
cluster_job_wait_gone "$last" || cluster_fail "b: not cancelled"
cluster_settle
stock=$(stock_run stock -N 2 --contiguous) || exit 1
id=$(cluster_submit -N 2 --contiguous -J c) || cluster_fail "c: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "c (--contiguous) did not start: $(cluster_job_reason "$id")"
logged "$id" | grep -q "rc=0 attempt=-1 .*fallback: --contiguous" ||
	cluster_fail "c: no fallback: $(logged "$id")"
sel_same_nodes "$nodes" "$stock" ||
	cluster_fail "c: --contiguous on $nodes, the wrapped plugin alone $stock"
echo "c -N 2 --contiguous -> $nodes (as the wrapped plugin alone)"

# Not modelled: GPUs per job (--gpus=3 on 2 nodes of 2 GPUs), likewise.
stock=$(stock_run stock -N 2 --gpus=3) || exit 1
id=$(cluster_submit -N 2 --gpus=3 -J g) || cluster_fail "g: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "g (--gpus=3) did not start: $(cluster_job_reason "$id")"
logged "$id" | grep -q "rc=0 attempt=-1 .*fallback: GRES per job" ||
	cluster_fail "g: no fallback: $(logged "$id")"
sel_same_nodes "$nodes" "$stock" ||
	cluster_fail "g: --gpus=3 on $nodes, the wrapped plugin alone $stock"
echo "g -N 2 --gpus=3 -> $nodes (as the wrapped plugin alone)"
scancel "$id"
cluster_job_wait_gone "$id" || cluster_fail "g: not cancelled"
cluster_settle

# --switches=1 (here a router of one node): the engine finds nothing
# within it, so Slurm's flat evaluation (which has no switches) places the
# job, on the nodes it gives alone.
stock=$(stock_run stock -N 2 --switches=1) || exit 1
id=$(cluster_submit -N 2 --switches=1 -J e) || cluster_fail "e: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "e (--switches=1) did not start: $(cluster_job_reason "$id")"
logged "$id" | grep -q "rc=0 attempt=-1 .*fallback: .*within --switches" ||
	cluster_fail "e: no fallback: $(logged "$id")"
sel_same_nodes "$nodes" "$stock" ||
	cluster_fail "e: --switches=1 on $nodes, the wrapped plugin alone $stock"
echo "e -N 2 --switches=1 -> $nodes (as the wrapped plugin alone)"
scancel "$id"
cluster_job_wait_gone "$id" || cluster_fail "e: not cancelled"
cluster_settle

# Required and excluded nodes, a node range: the engine, within them.
id=$(cluster_submit -N 2-3 -w n4 -x n8 -J d) || cluster_fail "d: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "d (-N 2-3 -w n4 -x n8) did not start: $(cluster_job_reason "$id")"
logged "$id" | grep -q "rc=0 attempt=0 " ||
	cluster_fail "d: not placed by the engine: $(logged "$id")"
n=$(scontrol show hostnames "$nodes" | wc -l)
{ [ "$n" -ge 2 ] && [ "$n" -le 3 ]; } || cluster_fail "d: $n nodes ($nodes)"
scontrol show hostnames "$nodes" | grep -qx n4 ||
	cluster_fail "d: -w n4 not on n4: $nodes"
scontrol show hostnames "$nodes" | grep -qx n8 &&
	cluster_fail "d: -x n8 on n8: $nodes"
echo "d -N 2-3 -w n4 -x n8 -> $nodes"

# Node-sharing jobs: 8 jobs of 2 nodes x 2 CPUs fill the 32 CPUs, two
# jobs on every node, each in one group; every one runs a step.
cluster_cancel_all
cluster_settle
stock=$(stock_run stockshared -N 2 --ntasks-per-node=2) || exit 1
[ "$(groups "$stock")" -gt 1 ] ||
	cluster_fail "the wrapped plugin alone takes one group ($stock): no test"
for k in 1 2 3 4 5 6 7 8; do
	id=$(sbatch --parsable -p shared -N 2 --ntasks-per-node=2 -J "s$k" \
		-o "$work/s$k.out" \
		--wrap 'srun -l hostname; sleep 100000') ||
		cluster_fail "s$k: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "s$k did not start: $(cluster_job_reason "$id")"
	logged "$id" | grep -q "rc=0 attempt=0 " ||
		cluster_fail "s$k: not placed by the engine: $(logged "$id")"
	[ "$(groups "$nodes")" = 1 ] ||
		cluster_fail "s$k: on $nodes, $(groups "$nodes") groups"
	cpus=$(squeue -h -j "$id" -o %C)
	[ "$cpus" = 4 ] || cluster_fail "s$k: $cpus CPUs, 4 asked"
	echo "s$k -N 2 --ntasks-per-node=2 (shared) -> $nodes${stock:+ (alone: $stock)}"
	stock=""
done
[ "$(squeue -h -p shared -t R -o %i | wc -l)" = 8 ] ||
	cluster_fail "not all 8 sharing jobs run: $(squeue -h -o '%i %T %N')"
per=$(squeue -h -p shared -t R -o %N | xargs -n1 scontrol show hostnames |
	sort | uniq -c | awk '{ print $1 }' | sort -u | paste -sd,)
[ "$per" = 2 ] || cluster_fail "jobs per node: $per (2 each expected)"
for k in 1 2 3 4 5 6 7 8; do
	for _ in $(seq 1 300); do
		[ "$(wc -l <"$work/s$k.out" 2>/dev/null || echo 0)" -ge 4 ] &&
			break
		sleep 0.1
	done
	[ "$(wc -l <"$work/s$k.out" 2>/dev/null || echo 0)" -ge 4 ] ||
		cluster_fail "s$k: its step did not run 4 tasks: $(cat "$work/s$k.out" 2>&1)"
done
echo "8 sharing jobs run, 2 on every node, 4 tasks each"
cluster_cancel_all
_cluster_alive "$pid" || cluster_fail "slurmctld died"
echo "PASS: topology/topoml on a dragonfly from topoml.conf"
