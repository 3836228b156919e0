#!/bin/bash
# The local cluster harness itself: 8 real slurmd and 1024 emulated CLOUD
# nodes; a real multi-node step and a placement on the emulated nodes.
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

CLUSTER_SLURMD=8 CLUSTER_CLOUD=1024 cluster_start harness
# Batch jobs write slurm-%j.out into the working directory: the cluster's,
# never the build tree (make distcheck checks it is left clean).
cd "$CLUSTER_DIR" || exit 1

# A real step on all 8 slurmd: each node runs one task and names itself.
out=$(timeout 60 srun -N8 -n8 -p main -w 'n[1-8]' \
	bash -c 'echo "$SLURMD_NODENAME $SLURM_PROCID"') ||
	cluster_fail "srun -N8 failed"
nodes=$(echo "$out" | awk '{print $1}' | sort -u | wc -l)
ranks=$(echo "$out" | awk '{print $2}' | sort -n | paste -sd,)
[ "$nodes" = 8 ] || cluster_fail "srun ran on $nodes nodes, want 8: $out"
[ "$ranks" = "0,1,2,3,4,5,6,7" ] || cluster_fail "ranks $ranks"

# --test-only on the emulated nodes: Slurm names 64 CLOUD nodes.
msg=$(sbatch --test-only -N64 -x 'n[1-8]' --wrap true 2>&1) ||
	cluster_fail "sbatch --test-only: $msg"
list=$(echo "$msg" | sed -n 's/.* on nodes \([^ ]*\) .*/\1/p')
count=$(scontrol show hostnames "$list" | grep -c '^c[0-9]')
[ "$count" = 64 ] || cluster_fail "test-only placed $count CLOUD nodes: $msg"

# A real allocation of 64 emulated nodes shows in squeue and scontrol.
id=$(sbatch --parsable -N64 -x 'n[1-8]' --wrap 'sleep 300') ||
	cluster_fail "sbatch -N64"
for i in $(seq 1 100); do
	nl=$(squeue -h -j "$id" -o '%N')
	[ -n "$nl" ] && break
	sleep 0.1
done
[ "$(scontrol show hostnames "$nl" | wc -l)" = 64 ] ||
	cluster_fail "job $id got '$nl'"
scontrol show job "$id" | grep -q "NumNodes=64" ||
	cluster_fail "scontrol does not show NumNodes=64"
scancel "$id"

# cluster_stop leaves nothing running, not even a job's slurmstepd and
# tasks that slurmd detached: stop with a batch job still running.
run=$(sbatch --parsable -N1 -w n1 --wrap 'sleep 300') || cluster_fail "sbatch"
for i in $(seq 1 100); do
	[ "$(squeue -h -j "$run" -o %t)" = R ] && break
	sleep 0.1
done
dir=$CLUSTER_DIR
daemons="$(cat "$dir"/run/*.pid "$dir/munge/munged.pid")"
stepds=$(_cluster_stepds "$dir")
[ -n "$stepds" ] || cluster_fail "no slurmstepd found for job $run"
cluster_stop
sleep 0.5
for p in $daemons $stepds; do
	_cluster_alive "$p" && { echo "FAIL: pid $p still running"; exit 1; }
done
[ ! -d "$dir" ] || { echo "FAIL: $dir left behind"; exit 1; }
echo "PASS: srun -N8 on $nodes nodes, 64-node job on $nl, clean stop"
