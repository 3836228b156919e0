#!/bin/bash
# --ml-rank-order=topology has one source: the ring order select/topoml
# wrote in the job's SystemComment (order=).  Here topoml.conf and
# plugstack.conf's topology= DISAGREE (n1,n3 | n2,n4 for select/topoml,
# n1,n2 | n3,n4 for topoml.so): the tasks' ranks follow SystemComment, for
# the whole job and for a step on part of it (the job's order restricted to
# the step's nodes).  On a stock cons_tres cluster (no topoml: part in
# SystemComment) topoml.so's own topology still orders the ranks.
#
# SPDX-License-Identifier: GPL-2.0-or-later
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-spank-ring.XXXXXX")
chmod 755 "$work"
cat >"$work/select.conf" <<'TOPO'
# select/topoml's network: n1 and n3 share a leaf, n2 and n4 the other
SwitchName=leaf1 Nodes=n1,n3
SwitchName=leaf2 Nodes=n2,n4
SwitchName=spine Switches=leaf[1-2]
TOPO
cat >"$work/spank.conf" <<'TOPO'
# a stale copy for topoml.so: n1 and n2 share a leaf, n3 and n4 the other
SwitchName=leaf1 Nodes=n1,n2
SwitchName=leaf2 Nodes=n3,n4
SwitchName=spine Switches=leaf[1-2]
TOPO
printf 'TopologyFile=%s\n' "$work/select.conf" >"$work/topoml.conf"
chmod 644 "$work"/*

# ring OUT PER: node names by NODE_RANK of `srun -l` task output, with
# every task's RANK checked against NODE_RANK * PER + LOCAL_RANK.
ring() {
	local out=$1 per=$2 t nr l r node names=()
	for t in $(sed -n 's/^ *\([0-9]*\): SLURMD_NODENAME=.*/\1/p' "$out"); do
		node=$(spank_var "$out" "$t" SLURMD_NODENAME)
		nr=$(spank_var "$out" "$t" NODE_RANK)
		l=$(spank_var "$out" "$t" LOCAL_RANK)
		r=$(spank_var "$out" "$t" RANK)
		[ -n "$nr" ] && [ -n "$l" ] ||
			cluster_fail "task $t: no NODE_RANK/LOCAL_RANK"
		[ "$r" = $((nr * per + l)) ] ||
			cluster_fail "task $t on $node: RANK=$r, want $((nr * per + l))"
		names[nr]=$node
	done
	echo "${names[*]}"
}

# step ID OUT SRUN-ARGS...: a step of job ID printing every task's env.
step() {
	local id=$1 out=$2
	shift 2
	timeout 60 srun --jobid="$id" --overlap -l --ntasks-per-node=2 \
		--ml-nccl=auto --ml-rank-order=topology "$@" \
		bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
		cluster_fail "srun $*: $(cat "$out.err")"
}

# 1. select/topoml places the job and publishes its ring.
CLUSTER_SLURMD=4 CLUSTER_SELECT=topoml CLUSTER_TOPOML_CONF=$work/topoml.conf \
	spank_start spank-ring "topology=$work/spank.conf"
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work"' EXIT
out=$CLUSTER_DIR/step.out
id=$(sbatch --parsable -N4 -o /dev/null --wrap 'sleep 300') ||
	cluster_fail "sbatch"
for _ in $(seq 1 300); do
	[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
	sleep 0.1
done
comment=$(scontrol show job "$id" | sed -n 's/^ *SystemComment=//p')
order=$(echo "$comment" | tr ' ' '\n' | sed -n 's/^order=//p')
[ -n "$order" ] || cluster_fail "no order= in SystemComment '$comment'"
want=$(scontrol show hostnames "$order" | paste -sd' ')
# The two files must lead to different rings, or this proves nothing:
# select/topoml's keeps n1,n3 and n2,n4 side by side, which the stale
# file's ring (n1,n2 and n3,n4 side by side) never does.
case " $want $want " in
*" n1 n3 "*|*" n3 n1 "*) ;;
*) cluster_fail "SystemComment order $want does not keep n1,n3 together" ;;
esac
case "$want" in "n1 n2 n3 n4") cluster_fail "order is Slurm's" ;; esac

# SystemComment is slurmctld's: not even root changes it from a client.
if scontrol update jobid="$id" SystemComment=forged >"$out" 2>&1; then
	cluster_fail "scontrol update SystemComment= accepted"
fi
scontrol show job "$id" | grep -q 'SystemComment=.*forged' &&
	cluster_fail "SystemComment forged"

# slurmctld's count of single-job loads (slurm_load_job), from sdiag.
loads() {
	sdiag | sed -n 's/^[[:space:]]*REQUEST_JOB_INFO_SINGLE *( *[0-9]*) count:\([0-9]*\).*/\1/p' |
		grep . || echo 0
}

# 2. The whole job: ranks in SystemComment's order, MASTER_ADDR its first;
# one load of the job per node (slurmstepd's init_post_opt).
n0=$(loads)
step "$id" "$out" -N4
n1=$(loads)
[ $((n1 - n0)) = 4 ] ||
	cluster_fail "4 nodes loaded the job $((n1 - n0)) times, want 4"
got=$(ring "$out" 2)
[ "$got" = "$want" ] ||
	cluster_fail "ranks in order '$got', SystemComment says '$want'"
first=${want%% *}
# Node nI has NodeAddr 127.0.0.I (tests/lib/cluster.sh).
[ "$(spank_var "$out" 0 MASTER_ADDR)" = "127.0.0.${first#n}" ] ||
	cluster_fail "MASTER_ADDR $(spank_var "$out" 0 MASTER_ADDR), want $first"
echo "ok: whole job in SystemComment's order ($want), not topology= file's"

# With --ml-ckpt the restart count comes from the same load: still one per
# node, and the same order.
mkdir -p "$work/ck"
n0=$(loads)
step "$id" "$out" -N4 --ml-ckpt="$work/ck"
n1=$(loads)
[ $((n1 - n0)) = 4 ] ||
	cluster_fail "--ml-ckpt: 4 nodes loaded the job $((n1 - n0)) times, want 4"
got=$(ring "$out" 2)
[ "$got" = "$want" ] || cluster_fail "--ml-ckpt: ranks in order '$got'"
echo "ok: one slurm_load_job per node and step for the order and --ml-ckpt"

# 3. A step on three of the job's nodes: the job's ring without n1.
step "$id" "$out" -N3 -w 'n[2-4]'
got=$(ring "$out" 2)
sub=$(echo "$want" | tr ' ' '\n' | grep -vx n1 | paste -sd' ')
[ "$got" = "$sub" ] ||
	cluster_fail "step on n[2-4]: ranks in order '$got', want '$sub'"
echo "ok: step on n[2-4] in the job's order restricted ($sub)"
scancel "$id"
cluster_stop
rm -rf "$SPANK_CACHE"

# 4. Stock cons_tres: no topoml: part, topoml.so's own file orders the
# ranks (select.conf this time: n1,n3 | n2,n4, two spine crossings).
CLUSTER_SLURMD=4 CLUSTER_SELECT=cons_tres \
	spank_start spank-ring-stock "topology=$work/select.conf"
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work"' EXIT
out=$CLUSTER_DIR/step.out
id=$(sbatch --parsable -N4 -o /dev/null --wrap 'sleep 300') ||
	cluster_fail "sbatch (stock)"
for _ in $(seq 1 300); do
	[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
	sleep 0.1
done
scontrol show job "$id" | grep -q 'SystemComment=topoml' &&
	cluster_fail "stock cons_tres job has a topoml SystemComment"
step "$id" "$out" -N4
got=$(ring "$out" 2)
leaf() { case $1 in n1|n3) echo 1 ;; *) echo 2 ;; esac; }
set -- $got
[ $# = 4 ] || cluster_fail "stock: ring '$got'"
cross=0
for i in 1 2 3 4; do
	j=$((i % 4 + 1))
	[ "$(leaf "${!i}")" = "$(leaf "${!j}")" ] || cross=$((cross + 1))
done
[ "$cross" = 2 ] ||
	cluster_fail "stock: ring $got crosses the spine $cross times"
echo "ok: stock cons_tres job in topoml.so's topology order ($got)"
scancel "$id"
echo "PASS: ring order from select/topoml's SystemComment"
