#!/bin/bash
# topoml.so through sbatch (#SBATCH --ml-... and the options inherited by
# srun inside the job), bad values refused by sbatch, the --ml-comm hint in
# the job's SPANK environment under Slurm's name, and --ml-rank-order=
# topology on a 4-node cluster with a two-switch topology.conf.
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

topo=$(mktemp "${TMPDIR:-/tmp}/topoml-spank-topo.XXXXXX")
cat >"$topo" <<'TOPO'
# n1 and n3 share a leaf, n2 and n4 the other one
SwitchName=leaf1 Nodes=n1,n3
SwitchName=leaf2 Nodes=n2,n4
SwitchName=spine Switches=leaf[1-2]
TOPO
chmod 644 "$topo"
CLUSTER_SLURMD=4
spank_start spank-sbatch "topology=$topo"
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$topo"' EXIT
cd "$CLUSTER_DIR" || exit 1
out=$CLUSTER_DIR/job.out

# 1. The options in #SBATCH lines reach the job's steps.
cat >job.sh <<EOF2
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=4 -w n[1-2]
#SBATCH --ml-gpu-bind=auto --ml-nccl=auto
srun -l bash -c '$SPANK_TASK'
EOF2
id=$(sbatch --parsable -o "$out" job.sh) || cluster_fail "sbatch job.sh"
spank_wait_job "$id"
spank_check "$out" 2 4

# 2. sbatch refuses bad values, on the command line and in the script.
if sbatch --ml-nccl=on --wrap true >"$out" 2>&1; then
	cluster_fail "sbatch accepted --ml-nccl=on"
fi
grep -qF "topoml: --ml-nccl: invalid value 'on' (expected auto or off)" \
	"$out" || cluster_fail "sbatch --ml-nccl=on: $(cat "$out")"
printf '#!/bin/bash\n#SBATCH --ml-gpu-bind=fast\ntrue\n' >bad.sh
if sbatch bad.sh >"$out" 2>&1; then
	cluster_fail "sbatch accepted #SBATCH --ml-gpu-bind=fast"
fi
grep -qF "topoml: --ml-gpu-bind: invalid value 'fast'" "$out" ||
	cluster_fail "#SBATCH --ml-gpu-bind=fast: $(cat "$out")"
if timeout 30 salloc -N1 --ml-rank-order=ring true >"$out" 2>&1; then
	cluster_fail "salloc accepted --ml-rank-order=ring"
fi
grep -qF "topoml: --ml-rank-order: invalid value 'ring' (expected topology or slurm)" \
	"$out" || cluster_fail "salloc --ml-rank-order=ring: $(cat "$out")"
echo "ok: sbatch and salloc refuse bad values"

# salloc's options reach the steps run inside the allocation.
timeout 60 salloc -N1 -w n1 --ml-gpu-bind=auto --ml-nccl=auto \
	srun -l -n4 bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "salloc ... srun: $(cat "$out.err")"
for t in 0 3; do
	[ "$(spank_var "$out" $t TOPOML_LOCAL_GPUS)" = $t ] &&
	[ "$(spank_var "$out" $t RANK)" = $t ] ||
		cluster_fail "salloc step, task $t: $(grep "^ *$t: \(TOPOML\|RANK\)" "$out")"
done
echo "ok: salloc options reach its steps"

# 3. --ml-comm travels in the job's SPANK environment as
# _SLURM_SPANK_OPTION_topoml_ml_comm (the batch step sees it with Slurm's
# SLURM_SPANK_ prefix), from the option and from its TOPOML_COMM twin.
for how in opt env; do
	if [ $how = opt ]; then
		id=$(sbatch --parsable -o "$out" --ml-comm=alltoall \
			--wrap env) || cluster_fail "sbatch --ml-comm"
		want=alltoall
	else
		id=$(TOPOML_COMM=isolate sbatch --parsable -o "$out" \
			--wrap env) || cluster_fail "TOPOML_COMM sbatch"
		want=isolate
	fi
	spank_wait_job "$id"
	grep -qx "SLURM_SPANK__SLURM_SPANK_OPTION_topoml_ml_comm=$want" "$out" ||
		cluster_fail "--ml-comm ($how) not in the job's SPANK env: $(grep SPANK "$out")"
done
echo "ok: --ml-comm reaches the job's SPANK environment"

# 4. --ml-rank-order=topology: ranks follow the switches.  Slurm's order
# n1 n2 n3 n4 crosses the spine at every step of the ring; the engine's
# ring keeps n1,n3 and n2,n4 together (2 crossings).
timeout 60 srun -l -N4 --ntasks-per-node=2 --ml-nccl=auto \
	--ml-rank-order=topology bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun --ml-rank-order=topology: $(cat "$out.err")"
ring=()
for t in 0 2 4 6; do
	node=$(spank_var "$out" $t SLURMD_NODENAME)
	nr=$(spank_var "$out" $t NODE_RANK)
	[ -n "$nr" ] || cluster_fail "task $t: no NODE_RANK"
	ring[$nr]=$node
	for l in 0 1; do
		r=$(spank_var "$out" $((t + l)) RANK)
		[ "$r" = $((nr * 2 + l)) ] ||
			cluster_fail "task $((t + l)) on $node: RANK=$r, want $((nr * 2 + l))"
	done
done
[ "${#ring[@]}" = 4 ] || cluster_fail "node ranks: ${ring[*]}"
leaf() { case $1 in n1|n3) echo 1 ;; *) echo 2 ;; esac; }
cross=0
for i in 0 1 2 3; do
	[ "$(leaf "${ring[$i]}")" = "$(leaf "${ring[$(((i + 1) % 4))]}")" ] ||
		cross=$((cross + 1))
done
[ "$cross" = 2 ] || cluster_fail "ring ${ring[*]} crosses the spine $cross times"
# Node nI has NodeAddr 127.0.0.I (tests/lib/cluster.sh).
[ "$(spank_var "$out" 0 MASTER_ADDR)" = "127.0.0.${ring[0]#n}" ] ||
	cluster_fail "MASTER_ADDR is not the first node of the ring ${ring[*]}"
echo "ok: topology rank order ${ring[*]}"
echo "PASS: sbatch and rank order with topoml.so"
