#!/bin/bash
# srun --help and sbatch --help on a real local cluster: every --ml-*
# option with its values and its TOPOML_* twin, all built from the one
# option table (spank/node/conf.c); the texts are those of the table
# written out by hand before, so a change here is a change users see.
# SPDX-License-Identifier: GPL-2.0-or-later
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

spank_start spankhelp

want=(
"--ml-gpu-bind=auto|nvlink|none [topoml] GPUs, CPUs and NIC per task: auto (nearest), nvlink (keep each task's GPUs in one NVLink island), none (env: TOPOML_GPU_BIND)"
"--ml-nccl=auto|off [topoml] NCCL and torch.distributed environment (NCCL_IB_HCA, MASTER_ADDR, RANK, ...) (env: TOPOML_NCCL)"
"--ml-rank-order=topology|slurm [topoml] RANK follows the network ring (topology) or Slurm's task ids (env: TOPOML_RANK_ORDER)"
"--ml-comm=allreduce|alltoall|isolate [topoml] communication pattern, a placement hint for select/topoml (env: TOPOML_COMM)"
"--ml-ckpt=DIR[,every=STEPS][,interval=SECONDS][,keep=K][,lead=SECONDS] [topoml] checkpoint directory and policy (env: TOPOML_CKPT)"
"--ml-parallel=auto|tp=T,pp=P[,ep=E][,cp=C][,model=FILE] [topoml] hybrid-parallel group sizes (data parallel is the rest), or auto: the fastest that fits the model FILE (topoml plan); RANK in Megatron-LM's order on the placement (env: TOPOML_PARALLEL)"
"--ml-spares=K [topoml] the last K nodes of the job (ring order) are hot spares: no rank until topoml-run puts one in a failed node's place (env: TOPOML_SPARES)"
"--ml-preflight=quick|full|off [topoml] before the first task each node checks itself: its GPUs seen by NVML, no uncorrectable ECC error or pending page retirement, no thermal or power clock slowdown, NVLink links and HCA ports up at their speed; full adds a compute probe and a ring stream over the step's nodes against the job's median; a failing node fails the step, named in its output (env: TOPOML_PREFLIGHT)"
)
fail=0
for cmd in srun sbatch; do
	# Slurm wraps the text: one line, single spaces.
	text=$("$cmd" --help 2>&1 | tr '\n' ' ' | tr -s ' ')
	for w in "${want[@]}"; do
		if [[ $text != *"$w"* ]]; then
			echo "FAIL: $cmd --help lacks: $w"
			fail=1
		fi
	done
	n=$(grep -o -- '--ml-[a-z-]*=' <<<"$text" | sort -u | wc -l)
	[ "$n" = "${#want[@]}" ] ||
		{ echo "FAIL: $cmd --help lists $n --ml-* options"; fail=1; }
done
[ $fail = 0 ] || exit 1
echo "PASS: srun and sbatch --help list the ${#want[@]} --ml-* options"
