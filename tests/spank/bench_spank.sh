#!/bin/bash
# bench_spank: srun launch time with every --ml-* option vs plain srun on
# the same local cluster (interleaved runs, medians of the same run), and
# the time topoml.so's launch path takes per step and per task.
#   BENCH_N  runs of each kind (default 40)
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/spank/spank_lib.sh"
N=${BENCH_N:-40}
spank_start bench-spank
cd "$CLUSTER_DIR" || exit 1
ckpt=$CLUSTER_DIR/ckpt
mkdir -p "$ckpt"
ml=(--ml-gpu-bind=auto --ml-nccl=auto --ml-rank-order=slurm
    --ml-comm=allreduce "--ml-ckpt=$ckpt")
run() { srun -N2 --ntasks-per-node=4 "$@" true >/dev/null 2>&1; }
ms() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m}'; }

# Three kinds, interleaved in rotating order: no plugin at all (empty
# plugstack.conf, which srun and slurmstepd read at every launch), the
# plugin loaded but not asked for, and every --ml-* option.
cp "$CLUSTER_DIR/plugstack.conf" plugstack.on
: >plugstack.off
launch() {
	case $1 in
	none) cp plugstack.off "$CLUSTER_DIR/plugstack.conf"; run ;;
	idle) cp plugstack.on "$CLUSTER_DIR/plugstack.conf"; run ;;
	ml) cp plugstack.on "$CLUSTER_DIR/plugstack.conf"; run "${ml[@]}" ;;
	esac
}
cp plugstack.off "$CLUSTER_DIR/plugstack.conf"
if srun -N1 --ml-gpu-bind=auto true >/dev/null 2>&1; then
	cluster_fail "srun still knows --ml-gpu-bind with an empty plugstack.conf"
fi
kinds=(none idle ml)
for k in "${kinds[@]}"; do
	launch "$k" || cluster_fail "srun ($k) failed"
	: >"$k.t"
done
for i in $(seq 1 "$N"); do
	for j in 0 1 2; do
		k=${kinds[$(((i + j) % 3))]}
		t0=$(ms)
		launch "$k" || cluster_fail "srun ($k) failed"
		echo $((($(ms) - t0) / 1000)) >>"$k.t"	# microseconds
	done
done
cp plugstack.on "$CLUSTER_DIR/plugstack.conf"
for k in "${kinds[@]}"; do
	echo "raw microseconds $k: $(sort -n "$k.t" | paste -sd' ')" >&2
done
p=$(median <none.t)
q=$(median <idle.t)
m=$(median <ml.t)
ratio=$(awk -v a="$m" -v b="$p" 'BEGIN {printf "%.3f", a / b}')
msf() { awk -v x="$1" 'BEGIN {printf "%.1f ms", x / 1000}'; }
echo "srun -N2 --ntasks-per-node=4 true, median of $N each, same run:"
echo "  plain srun (no plugin):      $(msf "$p")"
echo "  topoml.so loaded, no option: $(msf "$q")"
echo "  with every --ml-* option:    $(msf "$m")"
echo "  ratio options/plain: $ratio (target <= 1.05)"
echo "launch path of topoml.so on the cached node model (n1, 4 tasks):"
"$TOP_BUILDDIR/tests/spank/spank_dump" -b 2000 "$SPANK_CACHE/n1.model" 4 auto |
	sed 's/^/  /'
awk -v r="$ratio" 'BEGIN {exit !(r <= 1.05)}' ||
	echo "  NOTE: ratio above target"
exit 0
