#!/bin/bash
# topology/topoml on a network Slurm has no topology.conf for (24.11+): a
# 3-D torus from topoml.conf's JSON.  It wraps Slurm's flat plugin
# (topology/default on 24.11, topology/flat from 25.11); whole-node jobs
# are the engine's boxes (exactly `topoml place`'s answer), and scontrol
# show topology prints the engine's model.
#
# 64 emulated nodes c1..c64 on a 4x4x4 torus, x fastest, and c65, which
# the model lacks: a job that needs it gets Slurm's own evaluation.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
topo_plugin_need 2411 "topology/topoml"

work=""
cluster_tmpdir work topo-torus
cat >"$work/topoml.json" <<'JSON'
{ "family": "torus", "dims": [4, 4, 4], "wrap": [true, true, true],
  "node_pattern": { "prefix": "c", "first": 1, "digits": 0, "order": "xyz" } }
JSON
printf 'TopologyFile=%s\nDebug=1\n' "$work/topoml.json" >"$work/topoml.conf"

CLUSTER_SLURMD=0 CLUSTER_CLOUD=65 CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	cluster_start topo-torus || exit $?
log=$CLUSTER_DIR/log/slurmctld.log
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
grep -q "topology/topoml: wraps topology/\(default\|flat\)" "$log" ||
	cluster_fail "not wrapping Slurm's flat plugin: $(grep -i topo "$log" | tail -5)"

for spec in "a 8" "b 4" "c 8" "d 2"; do
	# shellcheck disable=SC2086 # two words
	set -- $spec
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/topoml.json" "$2" "$busy" allreduce \
		$(sel_owners)) || cluster_fail "$1: topoml place failed"
	id=$(cluster_submit -N "$2" -J "$1") || cluster_fail "$1: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "$1 did not start: $(cluster_job_reason "$id")"
	sel_same_nodes "$nodes" "$want" ||
		cluster_fail "$1: slurmctld gave $nodes, topoml place says $want (busy: ${busy:-none})"
	grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
		cluster_fail "$1: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
	echo "$1 $2 -> $nodes"
done
id=$(cluster_submit -N 2 -w c65 -J e) || cluster_fail "e: sbatch"
nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "e (-w c65) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=-1 .*fallback: " "$log" ||
	cluster_fail "e: no fallback: $(grep "JobId=$id" "$log" | tail -3)"
why=$(grep -o "JobId=$id rc=0 attempt=-1 .*" "$log" | head -1)
echo "e 2 -w c65 -> $nodes (${why#*fallback: })"
topo=$(scontrol show topology 2>&1)
echo "$topo" | grep -q "^topoml model: torus" ||
	cluster_fail "scontrol show topology shows no model: $topo"
echo "$topo" | grep "topoml model"
_cluster_alive "$pid" || cluster_fail "slurmctld died"
echo "PASS: topology/topoml places on a torus from topoml.conf"
