# shellcheck shell=bash
# What only the topoml SPANK cluster tests use (tests/lib/cluster.sh, which
# it sources, has the rest): a 2-node cluster whose nodes are described by a
# synthetic 4-GPU, 2-HCA, 2-CPU hwloc XML (CPUs 0 and 1 exist on every test
# machine), and a checker of every task's variables and CPUs.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
cluster_need_root
[ "$(nproc --all)" -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
SPANK_FIX=${TESTS_DIR:-$(dirname "$0")/..}/fixtures/spank
[ -f "$TOP_BUILDDIR/spank/.libs/topoml.so" ] ||
	{ echo "FAIL: $TOP_BUILDDIR/spank/.libs/topoml.so not built"; exit 1; }

# spank_start NAME [extra plugstack args]
spank_start() {
	cluster_tmpdir SPANK_CACHE spank-cache
	CLUSTER_SLURMD=${CLUSTER_SLURMD:-2}
	CLUSTER_SPANK=1 CLUSTER_SPANK_ARGS="hwloc_xml=$SPANK_FIX/hwloc/synth-2s4g2n.xml \
cache_dir=$SPANK_CACHE sysfs_root=$SPANK_FIX/sysfs master_port=29500-29599 \
nvml_lib=/nonexistent/libnvidia-ml.so.1 ${2:-}" cluster_start "$1" ||
		exit $?
	for n in $(seq -f 'n%g' 1 "${CLUSTER_SLURMD:-2}"); do
		[ -s "$SPANK_CACHE/$n.model" ] ||
			cluster_fail "slurmd $n wrote no $SPANK_CACHE/$n.model"
	done
}

# Wait for batch job ID to leave the queue.
spank_wait_job() {
	cluster_job_wait_gone "$1" 60 ||
		cluster_fail "job $1 still in the queue"
}

# Value of VAR for task T in `srun -l ... env` output ("T: VAR=value").
spank_var() {
	sed -n "s/^ *$2: $3=//p" "$1" | head -n 1
}

# spank_check OUT NNODES NTASKS_PER_NODE: every task's wiring.
spank_check() {
	local out=$1 nodes=$2 per=$3 t l n want v job port cpus hca
	job=$(spank_var "$out" 0 SLURM_JOB_ID)
	[ -n "$job" ] || cluster_fail "no task output in $out: $(head -5 "$out")"
	port=$((29500 + job % 100))
	for t in $(seq 0 $((nodes * per - 1))); do
		l=$((t % per))
		n=$((t / per))
		if [ "$l" -lt 2 ]; then cpus=0; hca="=mlx5_0:1"; else
			cpus=1; hca="=mlx5_1:2"; fi
		for want in \
			"CUDA_VISIBLE_DEVICES=0,1,2,3" \
			"CUDA_DEVICE_ORDER=PCI_BUS_ID" \
			"TOPOML_LOCAL_GPUS=$l" \
			"NCCL_IB_HCA=$hca" \
			"NCCL_NET_GDR_LEVEL=PIX" \
			"NCCL_IGNORE_CPU_AFFINITY=1" \
			"NCCL_TOPO_FILE=$SPANK_CACHE/n$((n + 1)).nccl_topo.xml" \
			"MASTER_ADDR=127.0.0.1" "MASTER_PORT=$port" \
			"WORLD_SIZE=$((nodes * per))" "RANK=$t" "LOCAL_RANK=$l" \
			"LOCAL_WORLD_SIZE=$per" "NODE_RANK=$n" "GROUP_RANK=$n" \
			"CPUS=$cpus"; do
			v=$(spank_var "$out" "$t" "${want%%=*}")
			[ "${want%%=*}=$v" = "$want" ] ||
				cluster_fail "task $t: want $want, got '${v}'"
		done
	done
	echo "ok: $((nodes * per)) tasks wired (job $job, port $port)"
}

# What each task prints: its environment and its CPU mask.
SPANK_TASK='env; echo "CPUS=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
