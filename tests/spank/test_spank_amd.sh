#!/bin/bash
# AMD GPUs and Slingshot on a real local cluster (issue 17): the node is
# the MI250X-like fixture (8 GCDs, 4 Slingshot NICs hsn0-3), gres.conf
# says Flags=amd_gpu_env as an AMD site does, so Slurm sets
# ROCR_VISIBLE_DEVICES only.  Tasks get their GCD's position in it
# (TOPOML_DEVICE), RCCL's libfabric settings for the NIC next to their
# GCD, and no CUDA_/HIP_VISIBLE_DEVICES.
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

dev=$(mktemp -d "${TMPDIR:-/tmp}/topoml-amd-dev.XXXXXX")
chmod 755 "$dev"
# Slurm wants character devices: /dev/null's numbers stand in for GCDs.
for g in 0 1 2 3 4 5 6 7; do
	mknod "$dev/renderD$((128 + g))" c 1 3 ||
		ln -s /dev/null "$dev/renderD$((128 + g))"
done
CLUSTER_SLURMD=1 CLUSTER_CPUS=8 CLUSTER_PARTITION_EXTRA="" \
	CLUSTER_NODE_EXTRA="Gres=gpu:8" \
	CLUSTER_GRES_CONF="NodeName=n1 Name=gpu Flags=amd_gpu_env File=$dev/renderD[128-135]" \
	CLUSTER_CONF_EXTRA="GresTypes=gpu" \
	spank_start spank-amd "hwloc_xml=$SPANK_FIX/hwloc/synth-mi250x.xml \
rsmi_lib=/nonexistent/librocm_smi64.so"
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$dev"' EXIT
out=$CLUSTER_DIR/out
cd "$CLUSTER_DIR" || exit 1

grep -q '^gpu 0000:12:00.0 0 0-15 amd$' "$SPANK_CACHE/n1.model" &&
	grep -q '^nic cxi0 hsn0 .* cxi$' "$SPANK_CACHE/n1.model" ||
	cluster_fail "slurmd's model has no AMD GPUs / Slingshot NICs: $(cat "$SPANK_CACHE/n1.model")"
grep -q 'no xGMI islands from ROCm SMI' "$CLUSTER_DIR/log/slurmd-n1.log" ||
	cluster_fail "slurmd did not say ROCm SMI is absent"

want() {
	local v
	v=$(spank_var "$1" "$2" "$3")
	[ "$v" = "$4" ] || cluster_fail "$5: task $2: want $3=$4, got '$v'"
}
absent() {
	! grep -q "^ *$2: $3=" "$1" ||
		cluster_fail "$4: task $2: $3 set: $(grep "^ *$2: $3=" "$1")"
}

# 1. --gres=gpu:8 -n4: Slurm's ROCR_VISIBLE_DEVICES=0-7 for every task;
# task t owns GCDs 2t, 2t+1 (one MI250X, one NUMA domain, one NIC).
timeout 60 srun -l -N1 -n4 --gres=gpu:8 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun --gres=gpu:8: $(cat "$out.err")"
for t in 0 1 2 3; do
	want "$out" $t ROCR_VISIBLE_DEVICES 0,1,2,3,4,5,6,7 "gres:8"
	want "$out" $t TOPOML_LOCAL_GPUS "$((2 * t)),$((2 * t + 1))" "gres:8"
	want "$out" $t TOPOML_DEVICE $((2 * t)) "gres:8"
	want "$out" $t FI_PROVIDER cxi "gres:8"
	want "$out" $t FI_CXI_DEVICE_NAME cxi$t "gres:8"
	want "$out" $t NCCL_SOCKET_IFNAME "=hsn$t" "gres:8"
	want "$out" $t NCCL_NET_GDR_LEVEL PIX "gres:8"
	absent "$out" $t CUDA_VISIBLE_DEVICES "gres:8 amd_gpu_env"
	absent "$out" $t HIP_VISIBLE_DEVICES "gres:8"
	absent "$out" $t NCCL_IB_HCA "gres:8"
done
# Task 0's GCDs are next to CPUs 0-15 (0 and 1 here); the others' CPUs
# are outside this machine: left unbound, never failed.
want "$out" 0 CPUS 0-1 "gres:8"
# ... and the job's output says so, once per such task (not slurmd's log).
for t in 1 2 3; do
	[ "$(grep -c "task $t: the CPUs near its GPU are outside" \
		"$out.err")" = 1 ] || cluster_fail "gres:8: no 'left as Slurm" \
		"set it' warning of task $t in the output: $(cat "$out.err")"
done
! grep -q "task 0: the CPUs near" "$out.err" ||
	cluster_fail "gres:8: task 0 is bound, yet warned"
echo "ok: --gres=gpu:8 -n4 on the MI250X-like node"

# 2. Without GRES: the plugin sets ROCR_VISIBLE_DEVICES itself; one GCD per
# task, so LOCAL_RANK and TOPOML_DEVICE agree; a variable the user set
# stays.
FI_PROVIDER=verbs timeout 60 srun -l -N1 -n8 --ml-gpu-bind=auto \
	--ml-nccl=auto bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun -n8: $(cat "$out.err")"
for t in 0 1 2 3 4 5 6 7; do
	want "$out" $t ROCR_VISIBLE_DEVICES 0,1,2,3,4,5,6,7 "no GRES"
	want "$out" $t TOPOML_DEVICE $t "no GRES"
	want "$out" $t LOCAL_RANK $t "no GRES"
	want "$out" $t FI_PROVIDER verbs "no GRES, user's FI_PROVIDER"
	want "$out" $t FI_CXI_DEVICE_NAME cxi$((t / 2)) "no GRES"
	absent "$out" $t CUDA_VISIBLE_DEVICES "no GRES"
	absent "$out" $t CUDA_DEVICE_ORDER "no GRES"
done
want "$out" 0 CPUS 0-1 "no GRES"
echo "PASS: AMD GPUs and Slingshot NICs through srun"
