#!/bin/bash
# make bench: time per run-now select_p_job_test on BENCH_NODES (4096)
# emulated nodes of a fat-tree, with and without select/topoml's placement,
# measured in one run.
#
# Both halves run select/topoml with Debug=1, which logs each run-now
# job_test's total time and the time spent inside cons_tres (clock_gettime
# around the calls; no DebugFlags, so cons_tres's own debug logging does not
# inflate the figures).  "Without" is Placement=off: the wrapper hands the
# job straight to cons_tres, so its cons_tres time is cons_tres's own cost.
# "With" is Placement=topoml: engine + cons_tres on the narrowed bitmap.
# The same job sequence (mixed sizes, all fit) is submitted to each.
# Added fraction = median(with total) / median(without cons_tres) - 1.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: bench_select needs root"; exit 0; }
[ -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ] ||
	{ echo "SKIP: select/topoml not built"; exit 0; }

NODES=${BENCH_NODES:-4096}
JOBS=${BENCH_JOBS:-300}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-bench-sel.XXXXXX")
chmod 755 "$work"
leaves=$((NODES / 32))
{
	for l in $(seq 0 $((leaves - 1))); do
		echo "SwitchName=l$l Nodes=c[$((l * 32 + 1))-$((l * 32 + 32))]"
	done
	for s in $(seq 0 $((leaves / 8 - 1))); do
		echo "SwitchName=s$s Switches=l[$((s * 8))-$((s * 8 + 7))]"
	done
	echo "SwitchName=root Switches=s[0-$((leaves / 8 - 1))]"
} >"$work/net.conf"
# Sizes 1..64 nodes, total under NODES so every job starts at once.
awk -v n="$JOBS" -v max="$NODES" 'BEGIN {
	split("1 2 4 8 16 32 3 6 12 24 5 64 1 2", sz, " "); s = 11; t = 0
	for (i = 1; i <= n; i++) {
		s = (s * 1103515245 + 12345) % 2147483648
		k = sz[int(s / 11) % 14 + 1]
		if (t + k > max * 0.95) k = 1
		t += k; print k
	}
}' >"$work/sizes"

run_half() {	# run_half PLACEMENT OUT: per-job "total cons_tres" lines
	local placement=$1 out=$2 n ids=""
	printf 'TopologyFile=%s\nPlacement=%s\nDebug=1\n' "$work/net.conf" \
		"$placement" >"$work/topoml.conf"
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=topoml \
		CLUSTER_TOPOML_CONF=$work/topoml.conf cluster_start bench-sel ||
		exit 1
	while read -r n; do
		ids="$ids $(sbatch --parsable -N "$n" -o /dev/null \
			--wrap 'sleep 100000')"
	done <"$work/sizes"
	for _ in $(seq 1 600); do
		[ "$(squeue -h -t PD | wc -l)" = 0 ] && break
		sleep 0.1
	done
	sed -n 's/.*select\/topoml: job_test .* rc=0 .*total_us=\([0-9]*\) cons_tres_us=\([0-9]*\).*/\1 \2/p' \
		"$CLUSTER_DIR/log/slurmctld.log" >"$out"
	cluster_stop
}

median() {	# median COLUMN FILE
	awk -v c="$1" '{print $c}' "$2" | sort -n |
		awk '{v[NR] = $1} END {
			if (NR == 0) { print 0; exit }
			if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

run_half off "$work/off"
run_half topoml "$work/on"
n_off=$(wc -l <"$work/off")
n_on=$(wc -l <"$work/on")
base=$(median 2 "$work/off")
with=$(median 1 "$work/on")
ct_on=$(median 2 "$work/on")
awk '{print $1 - $2}' "$work/on" >"$work/engine"
eng=$(median 1 "$work/engine")
echo "select_p_job_test (run-now), $NODES-node fat-tree, $JOBS jobs of 1-64 nodes:"
echo "  without placement (cons_tres alone): median ${base} us over $n_off calls"
echo "  with select/topoml:                  median ${with} us over $n_on calls" \
	"(engine and wrapper ${eng} us, cons_tres on the narrowed nodes ${ct_on} us)"
awk -v w="$with" -v b="$base" -v e="$eng" 'BEGIN {
	if (b > 0)
		printf "  added: %+.1f%% of cons_tres'"'"'s own time (engine alone: %.1f%%)\n",
			100 * (w / b - 1), 100 * e / b
}'
rm -rf "$work"
