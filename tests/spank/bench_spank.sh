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

run || cluster_fail "plain srun"
run "${ml[@]}" || cluster_fail "srun ${ml[*]}"
: >plain.t
: >ml.t
for i in $(seq 1 "$N"); do
	# Alternate which kind goes first: no bias from the previous step.
	if [ $((i % 2)) = 0 ]; then order="plain ml"; else order="ml plain"; fi
	for kind in $order; do
		t0=$(ms)
		if [ $kind = plain ]; then run; else run "${ml[@]}"; fi ||
			cluster_fail "srun ($kind) failed"
		echo $((($(ms) - t0) / 1000)) >>$kind.t	# microseconds
	done
done
echo "raw microseconds: plain $(sort -n plain.t | paste -sd' ')" >&2
echo "raw microseconds: ml    $(sort -n ml.t | paste -sd' ')" >&2
p=$(median <plain.t)
m=$(median <ml.t)
ratio=$(awk -v a="$m" -v b="$p" 'BEGIN {printf "%.3f", a / b}')
echo "srun -N2 --ntasks-per-node=4 true, median of $N each:"
echo "  plain srun:            $(awk -v x="$p" 'BEGIN {printf "%.1f", x/1000}') ms"
echo "  with all --ml-* opts:  $(awk -v x="$m" 'BEGIN {printf "%.1f", x/1000}') ms"
echo "  ratio: $ratio (target <= 1.05)"
echo "launch path of topoml.so on the cached node model (n1, 4 tasks):"
"$TOP_BUILDDIR/tests/spank/spank_dump" -b 2000 "$SPANK_CACHE/n1.model" 4 auto |
	sed 's/^/  /'
awk -v r="$ratio" 'BEGIN {exit !(r <= 1.05)}' ||
	echo "  NOTE: ratio above target"
exit 0
