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
#
# Then a backfill cycle (will-run mode, issue 11 item 10): BENCH_BF_JOBS
# (1000) jobs pending behind running jobs that fill the machine, backfill
# planning every one of them (bf_max_job_test above the count, no time
# limit on the cycle); sdiag's backfill cycle times under stock cons_tres
# (SelectType=select/cons_tres, topology/tree) and under select/topoml, in
# the same run.  BENCH_BF=0 skips this part.
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

# ---- backfill cycle with BF_JOBS pending jobs ----
[ "${BENCH_BF:-1}" = 0 ] && { rm -rf "$work"; exit 0; }
BF_JOBS=${BENCH_BF_JOBS:-1000}
BF_CYCLES=${BENCH_BF_CYCLES:-3}
# Running jobs of 64 nodes with time limits 10..640 min fill the machine;
# pending ones of 1-256 nodes with 5..60 min each get a planned start.
awk -v n="$BF_JOBS" 'BEGIN {
	split("1 2 4 8 16 32 64 128 256 3 12 24 48 96", sz, " "); s = 5
	for (i = 1; i <= n; i++) {
		s = (s * 1103515245 + 12345) % 2147483648
		print sz[int(s / 11) % 14 + 1], 5 + int(s / 7) % 56
	}
}' >"$work/bf_sizes"

bf_half() {	# bf_half SELECT OUT: backfill cycle times (us), one a line
	local select=$1 out=$2 n t i cycles=0
	printf 'TopologyFile=%s\nPlacement=topoml\n' "$work/net.conf" \
		>"$work/topoml.conf"
	cp "$work/net.conf" "$work/topology.conf"
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=$NODES CLUSTER_SELECT=$select \
		CLUSTER_TOPOLOGY=$work/topology.conf \
		CLUSTER_TOPOML_CONF=$work/topoml.conf \
		CLUSTER_CONF_EXTRA="SchedulerParameters=default_queue_depth=100,sched_interval=3600,bf_interval=2,bf_max_job_test=$((BF_JOBS * 2)),bf_max_time=3600,bf_window=1440,bf_resolution=600" \
		cluster_start bench-bf || exit 1
	for i in $(seq 0 $((NODES / 64 - 1))); do
		sbatch -N 64 -t $((10 + i * 10)) -o /dev/null \
			--wrap 'sleep 100000' >/dev/null
	done
	for _ in $(seq 1 600); do
		[ "$(squeue -h -t PD | wc -l)" = 0 ] && break
		sleep 0.1
	done
	while read -r n t; do
		sbatch -N "$n" -t "$t" -o /dev/null --wrap 'sleep 1' >/dev/null
	done <"$work/bf_sizes"
	sdiag --reset >/dev/null 2>&1
	: >"$out"
	# each new cycle (sdiag's count) adds its time
	for _ in $(seq 1 3000); do
		n=$(sdiag | awk '/Backfilling stats/ {b = 1}
			b && /Total cycles:/ {print $3; exit}')
		if [ "${n:-0}" -gt "$cycles" ]; then
			cycles=$n
			sdiag | awk '/Backfilling stats/ {b = 1}
				b && /Last cycle:/ {c = $3}
				b && /Last depth cycle:/ {d = $4}
				END {print c, d}' >>"$out"
			[ "$cycles" -ge "$BF_CYCLES" ] && break
		fi
		sleep 0.2
	done
	cluster_stop
}

bf_half cons_tres "$work/bf_stock"
bf_half topoml "$work/bf_topoml"
bs=$(median 1 "$work/bf_stock")
bt=$(median 1 "$work/bf_topoml")
echo "backfill cycle, $NODES-node fat-tree full, $BF_JOBS jobs pending (sdiag, median of $BF_CYCLES cycles):"
echo "  stock cons_tres: ${bs} us (depth $(median 2 "$work/bf_stock"))"
echo "  select/topoml:   ${bt} us (depth $(median 2 "$work/bf_topoml"))"
awk -v t="$bt" -v b="$bs" 'BEGIN {
	if (b > 0) printf "  ratio: %.2fx stock (target <= 1.2x)\n", t / b
}'
rm -rf "$work"
