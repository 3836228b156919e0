#!/bin/bash
# Backfill's plan for a job that shares nodes and must wait (issue 18),
# the case of the ANL Theta replay's window 1501 (doc/results.md) on
# 16 emulated nodes of 4 CPUs: Slurm's topology/tree with
# TopologyParam=dragonfly, routers c[1-4], c[5-8], c[9-12], c[13-16];
# topoml's file is the dragonfly: the first two and the last two in one
# group each.  A 32-CPU job holds c[1-8] for 3 minutes, two 8-CPU jobs hold
# c[9-10] and c[13-14] for an hour; c[11-12] and c[15-16] are idle.  A
# pending -n 32 job can start when c[1-8] free:
#  - cons_tres alone (a partition with Placement=off) spreads its plan
#    over every router, idle nodes too, so a 30-minute -n 4 job would
#    delay it and waits (22.05, 26.05; 24.11 plans c[1-8] itself);
#  - select/topoml plans it on c[1-8], the group that frees, and the
#    30-minute -n 4 job starts at once on an idle node.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-willrun-shared.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
printf '%s\n' 'SwitchName=r0 Nodes=c[1-4]' 'SwitchName=r1 Nodes=c[5-8]' \
	'SwitchName=r2 Nodes=c[9-12]' 'SwitchName=r3 Nodes=c[13-16]' \
	'SwitchName=root Switches=r[0-3]' >"$work/topology.conf"
cat >"$work/net.json" <<'EOF'
{ "family": "dragonfly", "global_links": "all-to-all", "groups": [
  { "name": "g0", "routers": [ { "name": "r0", "nodes": "c[1-4]" },
                               { "name": "r1", "nodes": "c[5-8]" } ] },
  { "name": "g1", "routers": [ { "name": "r2", "nodes": "c[9-12]" },
                               { "name": "r3", "nodes": "c[13-16]" } ] } ] }
EOF
printf 'TopologyFile=%s\nPartitionName=plain Placement=off\n' \
	"$work/net.json" >"$work/topoml.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=16 CLUSTER_CPUS=4 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/topology.conf CLUSTER_TOPOLOGY_PARAM=dragonfly \
	CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_PARTITION_EXTRA="" \
	CLUSTER_CONF_EXTRA="PartitionName=plain Nodes=c[1-16] MaxTime=INFINITE State=UP" \
	cluster_start willrun-shared || exit $?

run() {	# run MINUTES ARGS...: a started job's id
	local id
	id=$(sbatch --parsable -o /dev/null -t "$@" --wrap 'sleep 100000') ||
		cluster_fail "sbatch -t $*"
	sel_wait_start "$id" >/dev/null || cluster_fail "job $id ($*) did not start"
	echo "$id"
}
# plan ID: the pending job's SchedNodes, once backfill has planned it
plan() {
	local p=""
	for _ in $(seq 1 150); do
		p=$(squeue -h -j "$1" -o %Y)
		[ -n "$p" ] && [ "$p" != "(null)" ] && break
		sleep 0.2
	done
	echo "$p"
}
idle_in() {	# idle_in NODELIST: does it hold an idle node?
	scontrol show hostnames "$1" | grep -qx 'c1[1256]'
}

# Every node used once: CLOUD nodes never used weigh more (slurmctld
# counts them powered down) and cons_tres would avoid the idle ones.
w=$(run 1 -N 16 --exclusive)
scancel "$w"
sel_wait_gone "$w" || cluster_fail "job $w not cancelled"
for _ in $(seq 1 100); do
	[ "$(sinfo -h -t idle -o %D -p main)" = 16 ] && break
	sleep 0.2
done
run 3 -n 32 -w 'c[1-8]' >/dev/null
run 60 -n 8 -w 'c[9-10]' >/dev/null
run 60 -n 8 -w 'c[13-14]' >/dev/null
[ "$(sinfo -h -t idle -o %N -p main)" = "c[11-12,15-16]" ] ||
	cluster_fail "idle: $(sinfo -h -t idle -o %N -p main)"

# cons_tres alone: its plan spreads over the routers, idle nodes too
p=$(sbatch --parsable -o /dev/null -p plain -t 5 -n 32 --wrap 'sleep 1') ||
	cluster_fail "sbatch -p plain -n 32"
pp=$(plan "$p")
[ -n "$pp" ] || cluster_fail "no plan for the plain job $p"
echo "cons_tres alone plans -n 32 on $pp"
scancel "$p"
sel_wait_gone "$p"
# 22.05 and 26.05 spread it; 24.11's cons_tres plans c[1-8] itself, and
# select/topoml must still plan there.
idle_in "$pp" ||
	echo "note: cons_tres alone does not spread here ($pp)"

# select/topoml: the group that frees, so a small long job starts at once
p=$(sbatch --parsable -o /dev/null -t 5 -n 32 --wrap 'sleep 1') ||
	cluster_fail "sbatch -n 32"
tp=$(plan "$p")
[ -n "$tp" ] || cluster_fail "no plan for job $p: $(squeue -h -j "$p" -o '%T %r')"
sel_same_nodes "$tp" "c[1-8]" ||
	cluster_fail "select/topoml plans -n 32 on $tp, not c[1-8], which frees"
echo "ok: select/topoml plans the pending -n 32 on $tp"
s=$(sbatch --parsable -o /dev/null -t 30 -n 4 --wrap 'sleep 100000') ||
	cluster_fail "sbatch -n 4"
ns=$(sel_wait_start "$s" 150) ||
	cluster_fail "-n 4 for 30 min did not start on an idle node: $(squeue -h -j "$s" -o '%T %r'), plan of $p: $(squeue -h -j "$p" -o %Y)"
idle_in "$ns" || cluster_fail "-n 4 started on $ns, not an idle node"
echo "ok: a 30-minute -n 4 starts at once on $ns"
echo "PASS: will-run of a job that shares nodes plans it where nodes free (cons_tres alone: $pp)"
cluster_stop
