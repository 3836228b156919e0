#!/bin/bash
# topoml.so on a real local cluster, through srun: every task's GPU, CPU,
# HCA, NCCL and torch.distributed wiring; variables the user set stay;
# --ml-nccl=off --ml-gpu-bind=none change nothing; bad values stop srun;
# the env twins; a job of an unprivileged user.
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

spank_start spank-srun
out=$CLUSTER_DIR/out
cd "$CLUSTER_DIR" || exit 1

# 1. The issue's command line: 2 nodes x 4 tasks.
timeout 60 srun -l -N2 --ntasks-per-node=4 --ml-gpu-bind=auto \
	--ml-nccl=auto bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun failed: $(cat "$out.err")"
spank_check "$out" 2 4
[ -s "$SPANK_CACHE/n1.nccl_topo.xml" ] &&
	grep -q '<system version="1">' "$SPANK_CACHE/n1.nccl_topo.xml" ||
	cluster_fail "no NCCL topology file"

# 2. The environment twins do the same.
TOPOML_GPU_BIND=auto TOPOML_NCCL=auto timeout 60 srun -l -N2 \
	--ntasks-per-node=4 bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun with TOPOML_* failed: $(cat "$out.err")"
spank_check "$out" 2 4

# 3. Variables the user set are never overwritten.
NCCL_IB_HCA=mine MASTER_PORT=1234 CUDA_VISIBLE_DEVICES=3 timeout 60 \
	srun -l -N1 -n2 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "$SPANK_TASK" >"$out" 2>&1 || cluster_fail "srun: $(cat "$out")"
for t in 0 1; do
	[ "$(spank_var "$out" $t NCCL_IB_HCA)" = mine ] &&
	[ "$(spank_var "$out" $t MASTER_PORT)" = 1234 ] &&
	[ "$(spank_var "$out" $t CUDA_VISIBLE_DEVICES)" = 3 ] ||
		cluster_fail "task $t: user variables overwritten: $(grep "^ *$t: \(NCCL_IB_HCA\|MASTER_PORT\|CUDA_VISIBLE\)" "$out")"
	[ "$(spank_var "$out" $t RANK)" = $t ] ||
		cluster_fail "task $t: no RANK next to the user's variables"
	# The user's CUDA_VISIBLE_DEVICES=3 is the pool: both tasks use
	# GPU 3 (entry 0 of their list), on the CPU next to it.
	[ "$(spank_var "$out" $t TOPOML_LOCAL_GPUS)" = 0 ] &&
	[ "$(spank_var "$out" $t CPUS)" = 1 ] ||
		cluster_fail "task $t: binding ignores the user's GPU list: $(grep "^ *$t: \(TOPOML\|CPUS\)" "$out")"
	! grep -q "^ *$t: CUDA_DEVICE_ORDER=" "$out" ||
		cluster_fail "task $t: CUDA_DEVICE_ORDER set beside the user's list"
done
echo "ok: user variables kept"

# 4. off/none: the environment exactly as Slurm makes it (names and CPUs;
# values of per-job Slurm variables differ between two jobs).
names() {
	grep -v '^ *0: \(SLURM_\|_SLURM_SPANK\|SPANK_\)' "$1" |
		sed -n 's/^ *0: \([A-Za-z_0-9]*\)=.*/\1/p' | sort
}
# Both on one node: the node a job gets is not part of the comparison.
timeout 60 srun -l -N1 -n1 -w n1 bash -c "$SPANK_TASK" >"$out.plain" 2>&1 ||
	cluster_fail "plain srun: $(cat "$out.plain")"
timeout 60 srun -l -N1 -n1 -w n1 --ml-nccl=off --ml-gpu-bind=none \
	--ml-rank-order=slurm bash -c "$SPANK_TASK" >"$out" 2>&1 ||
	cluster_fail "srun off/none: $(cat "$out")"
diff <(names "$out.plain") <(names "$out") ||
	cluster_fail "--ml-nccl=off --ml-gpu-bind=none changed the environment"
grep -v '^ *0: \(SLURM_\|_SLURM_SPANK\|SPANK_\)' "$out.plain" |
	grep -v 'PWD=\|OLDPWD=' >"$out.a"
grep -v '^ *0: \(SLURM_\|_SLURM_SPANK\|SPANK_\)' "$out" |
	grep -v 'PWD=\|OLDPWD=' >"$out.b"
diff "$out.a" "$out.b" ||
	cluster_fail "--ml-nccl=off --ml-gpu-bind=none changed a value"
echo "ok: off/none leave the environment alone"

# 5. Invalid values stop srun with the reason; nothing runs.
check_reject() {
	local msg=$1
	shift
	if "$@" >"$out" 2>&1; then
		cluster_fail "accepted: $*"
	fi
	grep -qF "$msg" "$out" || cluster_fail "'$*': want '$msg', got: $(cat "$out")"
}
check_reject "topoml: --ml-gpu-bind: invalid value 'fast' (expected auto, nvlink or none)" \
	timeout 30 srun -N1 --ml-gpu-bind=fast true
check_reject "topoml: --ml-nccl: invalid value 'on' (expected auto or off)" \
	timeout 30 srun -N1 --ml-nccl=on true
check_reject "topoml: --ml-rank-order: invalid value 'ring'" \
	timeout 30 srun -N1 --ml-rank-order=ring true
check_reject "topoml: --ml-comm: invalid value 'gossip' (expected allreduce, alltoall or isolate)" \
	timeout 30 srun -N1 --ml-comm=gossip true
check_reject "topoml: TOPOML_NCCL: invalid value 'maybe'" \
	env TOPOML_NCCL=maybe timeout 30 srun -N1 true
check_reject "topoml: --ml-ckpt:" timeout 30 srun -N1 --ml-ckpt= true
echo "ok: invalid values rejected"

# 6. A job of an unprivileged user.
id topomltest >/dev/null 2>&1 || useradd -M -s /bin/bash topomltest ||
	cluster_fail "useradd topomltest"
chmod 755 "$CLUSTER_DIR"
runuser -u topomltest -- env SLURM_CONF="$SLURM_CONF" timeout 60 \
	srun -l -N2 --ntasks-per-node=4 --ml-gpu-bind=auto --ml-nccl=auto \
	bash -c "id -un | sed s/^/USER=/; $SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun as topomltest: $(cat "$out.err")"
spank_check "$out" 2 4
for t in 0 7; do
	[ "$(spank_var "$out" $t USER)" = topomltest ] ||
		cluster_fail "task $t did not run as topomltest"
done

# 7. NVLink islands from NVML (the fake libnvidia-ml.so.1, through slurmd's
# TOPOML_NVML_LIB): pairs 0-2 and 1-3 cross the sockets, so nvlink gives
# each task one pair where auto gives it one socket's GPUs.
fake=$TOP_BUILDDIR/tests/spank/fakenvml.so
[ -f "$fake" ] || cluster_fail "$fake not built"
cluster_slurmd_stop n1
rm -f "$SPANK_CACHE/n1.model"
TOPOML_NVML_LIB=$fake FAKE_NVML=pairs4 cluster_slurmd_start n1
cluster_wait_idle
for i in $(seq 1 100); do
	[ -s "$SPANK_CACHE/n1.model" ] && break
	sleep 0.1
done
grep -qx "nvml 1" "$SPANK_CACHE/n1.model" ||
	cluster_fail "slurmd did not record NVLink islands: $(cat "$SPANK_CACHE/n1.model")"
for mode in nvlink auto; do
	timeout 60 srun -l -w n1 -N1 -n2 --ml-gpu-bind=$mode \
		bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
		cluster_fail "srun --ml-gpu-bind=$mode: $(cat "$out.err")"
	if [ $mode = nvlink ]; then
		want="0:0,2,1,3:0,1:0 1:1,3,0,2:0,1:1"
	else
		want="0:0,1,2,3:0,1:0 1:2,3,0,1:0,1:1"
	fi
	for w in $want; do
		IFS=: read -r t cvd lg cpus <<<"$w"
		got="$(spank_var "$out" "$t" CUDA_VISIBLE_DEVICES):$(spank_var "$out" "$t" TOPOML_LOCAL_GPUS):$(spank_var "$out" "$t" CPUS)"
		[ "$got" = "$cvd:$lg:$cpus" ] ||
			cluster_fail "--ml-gpu-bind=$mode task $t: want $cvd:$lg:$cpus, got $got"
	done
done
echo "ok: NVLink islands from NVML drive --ml-gpu-bind=nvlink"

# 8. plugstack.conf arguments (srun reads the file at every start): site
# limits, and unknown keys refused.
cp "$CLUSTER_DIR/plugstack.conf" "$out.plugstack"
sed -i 's|$| allowed_gpu_bind=auto,none|' "$CLUSTER_DIR/plugstack.conf"
check_reject "topoml: --ml-gpu-bind: 'nvlink' is not allowed on this cluster (allowed: auto or none)" \
	timeout 30 srun -N1 --ml-gpu-bind=nvlink true
sed -i 's|$| frobnicate=1|' "$CLUSTER_DIR/plugstack.conf"
check_reject "topoml: plugstack.conf: unknown key 'frobnicate'" \
	timeout 30 srun -N1 true
cp "$out.plugstack" "$CLUSTER_DIR/plugstack.conf"
echo "ok: site limits and unknown plugstack.conf keys"
echo "PASS: srun with topoml.so"
