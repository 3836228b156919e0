#!/bin/bash
# topology/topoml (Slurm 24.11+): TopologyPlugin=topology/topoml loads in a
# real slurmctld beside plain cons_tres, wraps topology/tree for the
# topology.conf there, and its eval_nodes places whole-node jobs with the
# engine (fewest leaves, exactly `topoml place`'s answer); a request the
# engine does not model (--contiguous) gets the wrapped tree plugin's own
# evaluation, as does --switches it cannot meet (with Slurm's wait);
# --exclusive=topo is ignored as by stock topology/tree; slurmctld and
# Slurm's tools keep working, and scontrol show topology adds the engine's
# model and fragmentation to the wrapped plugin's switches.  Skips below
# 24.11 (no topology-plugin eval_nodes there).
#
# 16 emulated nodes c1..c16 on four leaves of 4 under one spine.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
topo_plugin_need 2411 "topology/topoml"

work=""
cluster_tmpdir work topo-plugin
{
	for l in 0 1 2 3; do
		echo "SwitchName=l$l Nodes=c[$((l * 4 + 1))-$((l * 4 + 4))]"
	done
	echo "SwitchName=spine Switches=l[0-3]"
} >"$work/topology.conf"
printf 'Debug=1\n' >"$work/topoml.conf"

CLUSTER_SLURMD=0 CLUSTER_CLOUD=16 CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="PartitionName=shared Nodes=c[1-16] MaxTime=INFINITE State=UP OverSubscribe=NO" \
	cluster_start topo-plugin || exit $?
log=$CLUSTER_DIR/log/slurmctld.log
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")

grep -q "topology/topoml: wraps topology/tree" "$log" ||
	cluster_fail "slurmctld did not load topology/topoml over topology/tree: $(grep -i topo "$log" | tail -5)"

# leaves: how many leaves a host list spans
leaves() {
	scontrol show hostnames "$1" | sed 's/^c//' |
		awk '{ print int(($1 - 1) / 4) }' | sort -u | wc -l
}

# place NAME N [SBATCH_ARGS]: submit, wait, check against `topoml place`
place() {
	local name=$1 n=$2 busy want id nodes
	shift 2
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/topology.conf" "$n" "$busy" allreduce \
		$(sel_owners)) || cluster_fail "$name: topoml place failed"
	id=$(cluster_submit -N "$n" -J "$name" "$@") ||
		cluster_fail "$name: sbatch"
	nodes=$(cluster_job_wait_start "$id") ||
		cluster_fail "$name did not start: $(cluster_job_reason "$id")"
	sel_same_nodes "$nodes" "$want" ||
		cluster_fail "$name: slurmctld gave $nodes, topoml place says $want (busy: ${busy:-none})"
	grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
		cluster_fail "$name: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
	cmt=$(cluster_job_comment "$id")
	case "$cmt" in
	*"placed=topoml"*"order="*) ;;
	*) cluster_fail "$name: SystemComment '$cmt'" ;;
	esac
	echo "$name $n -> $nodes ($(leaves "$nodes") leaves) ${cmt#*topoml: }"
	printf -v "${name}_id" %s "$id"
	printf -v "${name}_nodes" %s "$nodes"
}

a_id="" b_nodes="" c_nodes="" d_nodes=""
place a 1
place b 3
[ "$(leaves "$b_nodes")" = 1 ] ||
	cluster_fail "b: 3 nodes on $(leaves "$b_nodes") leaves, one leaf had room"
place c 6
[ "$(leaves "$c_nodes")" = 2 ] ||
	cluster_fail "c: 6 nodes on $(leaves "$c_nodes") leaves, two suffice"
scancel "$a_id"
cluster_job_wait_gone "$a_id" || cluster_fail "a not cancelled"
place d 4
[ "$(leaves "$d_nodes")" = 1 ] ||
	cluster_fail "d: 4 nodes on $(leaves "$d_nodes") leaves"

# Not modelled: --contiguous goes to topology/tree's own eval_nodes.
id=$(cluster_submit -N 2 --contiguous -J e) || cluster_fail "e: sbatch"
e_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "e (--contiguous) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=-1 .*fallback: --contiguous" \
	"$log" || cluster_fail "e: no fallback logged: $(grep "JobId=$id" "$log" | tail -3)"
read -r i1 i2 rest < <(scontrol show hostnames "$e_nodes" | sed 's/^c//' |
	paste -sd' ')
if [ -n "${rest:-}" ] || [ -z "${i2:-}" ] || [ $((i2 - i1)) != 1 ]; then
	cluster_fail "e: --contiguous job on $e_nodes"
fi
cmt=$(cluster_job_comment "$id")
case "$cmt" in
*"placed=cons_tres"*) ;;
*) cluster_fail "e: SystemComment '$cmt'" ;;
esac
echo "e 2 --contiguous -> $e_nodes (Slurm's own evaluation)"

# Node-sharing jobs (partition shared, by CPUs) and --switches: the
# engine too, on one leaf.
cluster_cancel_all
id=$(cluster_submit -p shared -n 6 -J g) || cluster_fail "g: sbatch"
g_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "g (-n 6, shared) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
	cluster_fail "g: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
[ "$(leaves "$g_nodes")" = 1 ] ||
	cluster_fail "g: -n 6 on $g_nodes, one leaf holds it"
echo "g -n 6 (shared) -> $g_nodes"
id=$(cluster_submit -N 3 --switches=1 -J h) || cluster_fail "h: sbatch"
h_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "h (--switches=1) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
	cluster_fail "h: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
[ "$(leaves "$h_nodes")" = 1 ] || cluster_fail "h: --switches=1 on $h_nodes"
echo "h -N 3 --switches=1 -> $h_nodes"
id=$(cluster_submit -N 3 -w c12 -x c11 -J i) || cluster_fail "i: sbatch"
i_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "i (-w c12 -x c11) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
	cluster_fail "i: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
scontrol show hostnames "$i_nodes" | grep -qx c12 ||
	cluster_fail "i: -w c12 not on c12: $i_nodes"
scontrol show hostnames "$i_nodes" | grep -qx c11 &&
	cluster_fail "i: -x c11 on c11: $i_nodes"
echo "i -N 3 -w c12 -x c11 -> $i_nodes"

# --exclusive=topo: topology/tree does not support it (26.05:
# supports_exclusive_topo false, 24.11: TOPO_DATA_EXCLUSIVE_TOPO 0), so
# cons_tres keeps no job off its leaf, as without topoml: the next job
# takes what the engine alone takes, on that leaf.
cluster_cancel_all
cluster_settle
id=$(cluster_submit -N 2 --exclusive=topo -J x) || cluster_fail "x: sbatch"
x_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "x (--exclusive=topo) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=0 " "$log" ||
	cluster_fail "x: not placed by the engine: $(grep "JobId=$id" "$log" | tail -3)"
busy=$(cluster_nodes_allocated)
# shellcheck disable=SC2046
want=$(sel_expected "$work/topology.conf" 2 "$busy" allreduce \
	$(sel_owners)) || cluster_fail "y: topoml place failed"
[ "$(leaves "$x_nodes,$want")" = 1 ] ||
	cluster_fail "y: no test, the engine alone takes $want beside $x_nodes"
id=$(cluster_submit -N 2 -J y) || cluster_fail "y: sbatch"
y_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "y did not start: $(cluster_job_reason "$id")"
sel_same_nodes "$y_nodes" "$want" ||
	cluster_fail "y: on $y_nodes, the engine alone $want (x --exclusive=topo on $x_nodes)"
echo "x -N 2 --exclusive=topo -> $x_nodes; y -N 2 -> $y_nodes (its leaf, as stock tree)"

# --switches the engine cannot meet (5 nodes on one leaf of 4): Slurm's
# own evaluation and its wait (here 3 s), then the job runs on 2 leaves.
id=$(cluster_submit -N 5 --switches=1@0:03 -J k) || cluster_fail "k: sbatch"
k_nodes=$(cluster_job_wait_start "$id") ||
	cluster_fail "k (--switches=1@0:03) did not start: $(cluster_job_reason "$id")"
grep -q "eval_nodes JobId=$id rc=0 attempt=-1 .*fallback: .*--switches allows 1" \
	"$log" || cluster_fail "k: no fallback: $(grep "JobId=$id" "$log" | tail -3)"
[ "$(leaves "$k_nodes")" = 2 ] || cluster_fail "k: on $k_nodes"
waited=$(scontrol show job "$id" | tr ' ' '\n' |
	sed -n 's/^\(Submit\|Start\)Time=//p' | xargs -n1 date +%s -d |
	paste -sd' ' | awk '{ print $2 - $1 }')
[ "$waited" -ge 2 ] || cluster_fail "k: started after $waited s, not the --switches wait"
echo "k -N 5 --switches=1@0:03 -> $k_nodes after $waited s (Slurm's own evaluation)"

# A request no node can hold: pending, never a crash.
id=$(cluster_submit -N 17 -J f 2>/dev/null) && {
	sleep 1
	cluster_job_reason "$id" | grep -q PENDING ||
		cluster_fail "f: 17 nodes: $(cluster_job_reason "$id")"
}

# Slurm's own tools through the wrapped plugin.
topo=$(scontrol show topology 2>&1)
echo "$topo" | grep -q "SwitchName=l0 .*Nodes=c\[1-4\]" ||
	cluster_fail "scontrol show topology: $(echo "$topo" | head -3)"
echo "$topo" | grep -q "^topoml model: fat-tree: 16 nodes, 5 switches (4 leaves)" ||
	cluster_fail "scontrol show topology shows no model: $topo"
echo "$topo" | grep topoml
# The engine's fragmentation of the idle nodes: the nodes the largest job
# on its fewest leaves cannot have (the largest F(k), the k leaves with
# most idle nodes, above S(k-1), the k-1 largest leaves), from
# topology.conf's leaves.
idle=$(sinfo -h -N -t idle -o %N | sort -u | paste -sd, -)
want=$(while read -r sw; do
	l=$(echo "$sw" | sed -n 's/.* Nodes=\([^ ]*\).*/\1/p')
	[ -n "$l" ] || continue
	echo "$(scontrol show hostnames "$l" | wc -l)" \
		"$(scontrol show hostnames "$l" |
			grep -cxF -f <(scontrol show hostnames "$idle"))"
done <"$work/topology.conf" | awk '
	{ s[NR] = $1; f[NR] = $2; n += $1 }
	END {
		m = NR
		for (i = 1; i <= m; i++)	# both decreasing
			for (j = i + 1; j <= m; j++) {
				if (f[j] > f[i]) { t = f[i]; f[i] = f[j]; f[j] = t }
				if (s[j] > s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
			}
		for (k = 1; k <= m && f[k] > 0; k++) {
			F += f[k]; idle += f[k]
			if (F > S && F > best) best = F
			S += s[k]
		}
		for (; k <= m; k++) idle += f[k]
		printf "topoml fragmentation: %d (%d nodes, %d idle, the largest job on its fewest leaves: %d)\n", n - best, n, idle, best
	}')
got=$(echo "$topo" | grep "^topoml fragmentation")
[ "$got" = "$want" ] ||
	cluster_fail "idle ${idle:-none}: '$got', want '$want'"
# A node list narrows to topology/tree's switches above it, the model
# line and the fragmentation left out (25.11+: nodes=).
if [ "$CLUSTER_SLURM_VERSION" -ge 2511 ]; then
	one=$(scontrol show topology nodes=c5 2>&1)
else
	one=$(scontrol show topology c5 2>&1)
fi
if [ "$(echo "$one" | grep -o '^SwitchName=[a-z0-9]*' | paste -sd' ')" != \
     "SwitchName=l1 SwitchName=spine" ] || echo "$one" | grep -q topoml; then
	cluster_fail "scontrol show topology c5: '$one'"
fi
echo "ok: $got; c5: $(echo "$one" | grep -o '^SwitchName=[a-z0-9]*' | paste -sd' ')"
_cluster_alive "$pid" || cluster_fail "slurmctld died"
scontrol ping | grep -q "is UP" || cluster_fail "slurmctld does not answer"
echo "PASS: topology/topoml places whole-node jobs with the engine, falls back to topology/tree"
