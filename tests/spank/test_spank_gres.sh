#!/bin/bash
# Issue 15 item 7 on a real local cluster with Slurm's GRES: Slurm sets
# CUDA_VISIBLE_DEVICES itself (every task of a step the same list), so
# LOCAL_RANK is not a task's device when tasks have several GPUs;
# TOPOML_DEVICE is, in every case (Slurm's global or the plugin's list).
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

dev=$(mktemp -d "${TMPDIR:-/tmp}/topoml-gres-dev.XXXXXX")
chmod 755 "$dev"
# Slurm wants character devices: /dev/null's numbers stand in for GPUs.
for g in 0 1 2 3; do
	mknod "$dev/gpu$g" c 1 3 || ln -s /dev/null "$dev/gpu$g"
done
# One node, the 4-GPU fixture; gres.conf without Flags: Slurm's default
# GPU environment (CUDA_VISIBLE_DEVICES among others).
CLUSTER_SLURMD=1 CLUSTER_PARTITION_EXTRA="" CLUSTER_NODE_EXTRA="Gres=gpu:4" \
	CLUSTER_GRES_CONF="NodeName=n1 Name=gpu File=$dev/gpu[0-3]" \
	CLUSTER_CONF_EXTRA="GresTypes=gpu" spank_start spank-gres
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$dev"' EXIT
out=$CLUSTER_DIR/out
cd "$CLUSTER_DIR" || exit 1

# want OUT TASK VAR VALUE
want() {
	local v
	v=$(spank_var "$1" "$2" "$3")
	[ "$v" = "$4" ] || cluster_fail "$5: task $2: want $3=$4, got '$v'"
}

# 1. The issue's case: --gres=gpu:4 -n2.  Slurm gives both tasks
# CUDA_VISIBLE_DEVICES=0,1,2,3; task 1 owns GPUs 2,3 (socket 1, CPU 1):
# LOCAL_RANK=1 would be task 0's GPU, TOPOML_DEVICE=2 is its own.
timeout 60 srun -l -N1 -n2 --gres=gpu:4 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun --gres=gpu:4: $(cat "$out.err")"
grep '^ *[0-9]*: [A-Z_]*\(GPU\|VISIBLE\)' "$out"
for t in 0 1; do
	want "$out" $t CUDA_VISIBLE_DEVICES 0,1,2,3 "gres:4"
	want "$out" $t LOCAL_RANK $t "gres:4"
	want "$out" $t CPUS $t "gres:4"
done
want "$out" 0 TOPOML_LOCAL_GPUS 0,1 "gres:4"
want "$out" 0 TOPOML_DEVICE 0 "gres:4"
want "$out" 1 TOPOML_LOCAL_GPUS 2,3 "gres:4"
want "$out" 1 TOPOML_DEVICE 2 "gres:4"
echo "ok: --gres=gpu:4 -n2: TOPOML_DEVICE 0 and 2 in Slurm's 0,1,2,3"

# 2. Another job holds GPUs 0,1: this one gets 2,3, which Slurm lists by
# their global indices (no ConstrainDevices): each task's device by value.
hold=$(sbatch --parsable -N1 -n1 --gres=gpu:2 -o /dev/null \
	--wrap 'sleep 1000') || cluster_fail "sbatch holder"
for i in $(seq 1 300); do
	[ "$(squeue -h -j "$hold" -o %T)" = RUNNING ] && break
	sleep 0.1
done
timeout 60 srun -l -N1 -n2 --gres=gpu:2 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun --gres=gpu:2 beside a job: $(cat "$out.err")"
scancel "$hold"
for t in 0 1; do
	want "$out" $t CUDA_VISIBLE_DEVICES 2,3 "gres:2 on GPUs 2,3"
	want "$out" $t TOPOML_LOCAL_GPUS $t "gres:2 on GPUs 2,3"
	want "$out" $t TOPOML_DEVICE $t "gres:2 on GPUs 2,3"
	# GPUs 2 and 3 are both next to CPU 1.
	want "$out" $t CPUS 1 "gres:2 on GPUs 2,3"
done
echo "ok: --gres=gpu:2 on GPUs 2,3: TOPOML_DEVICE 0 and 1"

# 3. More tasks than GPUs under GRES: blocks, TOPOML_DEVICE per block.
timeout 60 srun -l -N1 -n4 --gres=gpu:2 --ml-gpu-bind=auto \
	bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun -n4 --gres=gpu:2: $(cat "$out.err")"
for w in 0:0 1:0 2:1 3:1; do
	want "$out" "${w%%:*}" CUDA_VISIBLE_DEVICES 0,1 "-n4 gres:2"
	want "$out" "${w%%:*}" TOPOML_DEVICE "${w#*:}" "-n4 gres:2"
done
echo "ok: -n4 --gres=gpu:2: blocks of two tasks per GPU"

# 4. Without GRES the plugin's own list: LOCAL_RANK and TOPOML_DEVICE agree
# with one GPU per task.
timeout 60 srun -l -N1 -n4 --ml-gpu-bind=auto bash -c "$SPANK_TASK" \
	>"$out" 2>"$out.err" || cluster_fail "srun -n4: $(cat "$out.err")"
for t in 0 1 2 3; do
	want "$out" $t CUDA_VISIBLE_DEVICES 0,1,2,3 "no GRES"
	want "$out" $t TOPOML_DEVICE $t "no GRES"
done
echo "PASS: TOPOML_DEVICE with and without Slurm's GRES"
