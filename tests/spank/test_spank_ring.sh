#!/bin/bash
# --ml-rank-order=topology has one source: the ring order select/topoml
# wrote in the job's SystemComment (order=).  Here topoml.conf and
# plugstack.conf's topology= DISAGREE (n1,n3 | n2,n4 for select/topoml,
# n1,n2 | n3,n4 for topoml.so): the tasks' ranks follow SystemComment, for
# the whole job and for a step on part of it (the job's order restricted to
# the step's nodes).  On a stock cons_tres cluster (no topoml: part in
# SystemComment) topoml.so's own topology still orders the ranks.
# torchrun in a batch job, one task per node (topoml-worker(1)): its
# workers' ranks follow the ring, each bound as a task of its own would be
# (skipped without python3-torch).
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

# What tasks of --ntasks-per-node=2 and =4 get on every node: the per-worker
# bindings under torchrun (section 4) must be the same.
step "$id" "$out.tpn2" -N4 --ml-gpu-bind=auto
step "$id" "$out.tpn4" -N4 --ntasks-per-node=4 --ml-gpu-bind=auto
scancel "$id"
spank_wait_job "$id"

# 4. torchrun inside sbatch, one task per node (section 4 of the torchrun
# recipe, topoml-worker(1)), on two nodes that the ring puts in the other
# order than Slurm's: A before B in the ring, B before A in Slurm's list.
torchrun_ring() {
	local i j a b
	set -- $want
	for ((i = 1; i <= $#; i++)); do
		for ((j = i + 1; j <= $#; j++)); do
			a=${!i} b=${!j}
			[ "${a#n}" -gt "${b#n}" ] && { echo "$a $b"; return; }
		done
	done
}
PY=/usr/bin/python3
if ! [ -x $PY ] || ! $PY -c 'import torch.distributed as d
assert d.is_gloo_available()' 2>/dev/null; then
	echo "skip: torchrun (no python3-torch with gloo)"
else
	set -- $(torchrun_ring)
	a=$1 b=$2
	worker=$(cd "${TESTS_DIR:-$(dirname "$0")/..}/../contrib" && pwd)/topoml-worker
	[ -x "$worker" ] || cluster_fail "no $worker"
	mkdir -p "$work/tr"
	# Each worker: a gloo all_reduce over the whole job, then its view.
	cat >"$work/tr/worker.py" <<'PYW'
import datetime, os, sys
import torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
t = torch.tensor([dist.get_rank()])
dist.all_reduce(t)
w = dist.get_world_size()
assert t.item() == w * (w - 1) // 2, t.item()
cpus, runs = sorted(os.sched_getaffinity(0)), []
for c in cpus:
    if runs and c == runs[-1][1] + 1:
        runs[-1][1] = c
    else:
        runs.append([c, c])
env = dict(os.environ, CPUS=",".join(
    "%d" % lo if lo == hi else "%d-%d" % (lo, hi) for lo, hi in runs))
with open("%s.%s" % (sys.argv[1], env["RANK"]), "w") as f:
    for k in sorted(env):
        f.write("%s=%s\n" % (k, env[k]))
PYW
	# The short recipe (torchrun's PET_* defaults from topoml: 4 workers,
	# one per GPU) and the spelled-out one, with TOPOML_WORKERS=2.
	# Debian 12's torch 1.13 under Python 3.11 fails with the default
	# --redirects 0 (Std.from_str("0") is None): PET_REDIRECTS, PET_TEE.
	# torchrun looks at its workers every PET_MONITOR_INTERVAL s (5).
	cat >"$work/tr/job.sh" <<JOB
#!/bin/bash
#SBATCH --ml-gpu-bind=auto --ml-nccl=auto --ml-rank-order=topology
export PET_REDIRECTS=2 PET_TEE=2 PET_MONITOR_INTERVAL=0.5
srun -N2 -w $a,$b --ntasks-per-node=1 $PY -m torch.distributed.run \
	--no_python $worker $PY $work/tr/worker.py $work/tr/short || exit 1
TOPOML_WORKERS=2 srun -N2 -w $a,$b --ntasks-per-node=1 bash -c 'exec \
	$PY -m torch.distributed.run --nnodes=\$SLURM_NNODES \
	--nproc_per_node=2 --node_rank=\$NODE_RANK \
	--master_addr=\$MASTER_ADDR --master_port=\$MASTER_PORT \
	--no_python $worker $PY $work/tr/worker.py $work/tr/long'
JOB
	# torch listens on MASTER_PORT: from this cluster's own port slot,
	# not the 29500-29599 that every test cluster's job 2 shares
	# (slurmstepd reads plugstack.conf at each step).
	sed -i "s/master_port=[0-9-]*/master_port=$((CLUSTER_PORT + 32))-$((CLUSTER_PORT + 63))/" \
		"$CLUSTER_DIR/plugstack.conf"
	t0=$(date +%s)
	jid=$(sbatch --parsable -N4 -o "$work/tr/job.out" "$work/tr/job.sh") ||
		cluster_fail "sbatch torchrun job"
	spank_wait_job "$jid"
	scontrol show job "$jid" | grep -q 'JobState=COMPLETED' ||
		cluster_fail "torchrun job: $(cat "$work/tr/job.out")"
	o=$(scontrol show job "$jid" | tr ' ' '\n' | sed -n 's/^order=//p')
	[ "$(scontrol show hostnames "$o" | paste -sd' ')" = "$want" ] ||
		cluster_fail "torchrun job's order '$o', the first job's '$want'"
	grep -q "topoml-worker: warning" "$work/tr/job.out" &&
		cluster_fail "torchrun job warned: $(cat "$work/tr/job.out")"
	# tr_check NAME PER TASKS: every worker of run NAME (PER per node)
	# against task LOCAL_RANK of its node in the srun -l output TASKS.
	tr_check() {
		local name=$1 per=$2 tasks=$3 r f v node gr l t k want_v
		for r in $(seq 0 $((2 * per - 1))); do
			f=$work/tr/$name.$r
			[ -s "$f" ] || cluster_fail "$name: no worker $r: $(cat "$work/tr/job.out")"
			v() { sed -n "s/^$1=//p" "$f"; }
			node=$(v SLURMD_NODENAME) gr=$(v GROUP_RANK) l=$(v LOCAL_RANK)
			# The ring: A is node 0, though Slurm's task 1.
			want_v=$([ "$node" = "$a" ] && echo 0 || echo 1)
			[ "$gr" = "$want_v" ] && [ "$(v PET_NODE_RANK)" = "$gr" ] &&
			[ "$(v NODE_RANK)" = "$gr" ] ||
				cluster_fail "$name worker $r on $node: GROUP_RANK=$gr NODE_RANK=$(v NODE_RANK) PET_NODE_RANK=$(v PET_NODE_RANK), want $want_v"
			[ "$r" = $((gr * per + l)) ] && [ "$(v WORLD_SIZE)" = $((2 * per)) ] ||
				cluster_fail "$name worker $r on $node: GROUP_RANK=$gr LOCAL_RANK=$l WORLD_SIZE=$(v WORLD_SIZE), want RANK = GROUP_RANK * $per + LOCAL_RANK of $((2 * per))"
			[ "$(v SLURM_PROCID)" = $((1 - want_v)) ] ||
				cluster_fail "$name worker $r: SLURM_PROCID=$(v SLURM_PROCID), Slurm's order"
			# Task l of that node under --ntasks-per-node=per.
			for t in $(sed -n "s/^ *\([0-9]*\): SLURMD_NODENAME=$node\$/\1/p" "$tasks"); do
				[ "$(spank_var "$tasks" "$t" LOCAL_RANK)" = "$l" ] && break
			done
			[ "$(spank_var "$tasks" "$t" SLURMD_NODENAME)" = "$node" ] ||
				cluster_fail "no task $l of $node in $tasks"
			# The same GPUs (the device numbers the positions name),
			# CPUs and HCAs as that task.
			for k in GPUS NCCL_IB_HCA CPUS; do
				local wv tv
				if [ $k = GPUS ]; then
					wv=$(tr_phys "$(v CUDA_VISIBLE_DEVICES)" "$(v TOPOML_LOCAL_GPUS)")
					tv=$(tr_phys "$(spank_var "$tasks" "$t" CUDA_VISIBLE_DEVICES)" \
						"$(spank_var "$tasks" "$t" TOPOML_LOCAL_GPUS)")
				else
					wv=$(v $k) tv=$(spank_var "$tasks" "$t" $k)
				fi
				[ -n "$wv" ] && [ "$wv" = "$tv" ] ||
					cluster_fail "$name worker $r ($node, local $l): $k '$wv', task $t got '$tv'"
			done
			[ "$(v TOPOML_DEVICE)" = "$(v TOPOML_LOCAL_GPUS | cut -d, -f1)" ] ||
				cluster_fail "$name worker $r: TOPOML_DEVICE=$(v TOPOML_DEVICE)"
			echo "$node $(tr_phys "$(v CUDA_VISIBLE_DEVICES)" "$(v TOPOML_LOCAL_GPUS)")" \
				>>"$work/tr/$name.gpus"
		done
		# No two workers of a node on the same GPU.
		[ -z "$(sort "$work/tr/$name.gpus" | uniq -d)" ] ||
			cluster_fail "$name: workers share GPUs: $(cat "$work/tr/$name.gpus")"
	}
	# tr_phys LIST POSITIONS: the devices of LIST at POSITIONS.
	tr_phys() {
		local IFS=, l p out=()
		read -r -a l <<<"$1"
		for p in $2; do out+=("${l[$p]}"); done
		echo "${out[*]}"
	}
	tr_check short 4 "$out.tpn4"
	tr_check long 2 "$out.tpn2"
	echo "ok: torchrun in sbatch: ranks in ring order ($a before $b), each" \
		"worker bound as a task ($(($(date +%s) - t0)) s)"

	# A count torchrun and topoml disagree on fails the worker, with
	# the reason; a GROUP_RANK off the ring warns.
	timeout 60 srun -N1 -w "$a" --ntasks-per-node=1 --ml-gpu-bind=auto \
		bash -c "LOCAL_RANK=0 LOCAL_WORLD_SIZE=3 $worker true" \
		>"$out" 2>&1 && cluster_fail "3 workers for 4 GPUs accepted"
	grep -q 'torchrun started 3 workers on this node, topoml bound 4' \
		"$out" || cluster_fail "3 workers: $(cat "$out")"
	v=$(GROUP_RANK=1 NODE_RANK=0 LOCAL_RANK=0 "$worker" \
		printenv NODE_RANK 2>"$out")
	[ "$v" = 1 ] && grep -q 'GROUP_RANK=1 is not this node.s ring' "$out" ||
		cluster_fail "GROUP_RANK off the ring: NODE_RANK=$v, $(cat "$out")"
	echo "ok: topoml-worker refuses another worker count, warns off the ring"
fi
cluster_stop
rm -rf "$SPANK_CACHE"

# 5. Stock cons_tres: no topoml: part, topoml.so's own file orders the
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
