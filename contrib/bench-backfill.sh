#!/bin/bash
# Slurm's backfill cycle with topology/topoml against stock, measured in
# one run on a real slurmctld of one release: BF_NODES (4096) emulated
# nodes of a fat-tree (leaves of 32, spines of 8 leaves), filled by
# running jobs of 64 nodes (time limits 10..640 min), BF_JOBS (1000) jobs
# of 1-256 nodes (5..60 min) pending behind them, backfill planning every
# one each cycle (bf_max_job_test above the count, no time limit on the
# cycle).  sdiag's backfill cycle times (the first cycle after the jobs
# are in is dropped: it may have started with part of them) and
# slurmctld's CPU time per cycle (which other load on the machine does not
# inflate as it does wall time), per configuration:
#
#   stock   SelectType=select/cons_tres, TopologyPlugin=topology/tree
#   topo    the same slurm.conf with TopologyPlugin=topology/topoml
#           (wrapping topology/tree for the same topology.conf)
#   select  SelectType=select/topoml beside topology/tree (BF_CONFIGS)
#
# usage: contrib/bench-backfill.sh [VERSION]   (default 26.05.3; root)
# env:   BF_NODES (4096), BF_JOBS (1000), BF_CYCLES (3 counted cycles),
#        BF_CONFIGS ("stock topo"; add "select" for select/topoml),
#        BF_DEBUG=1: topology/topoml with Debug=1, and per cycle its
#        eval_nodes calls and the time inside them (the log lines cost
#        a little)
# Builds Slurm VERSION and topoml against it as contrib/test-release.sh
# does (cached; TOPOML_RELEASE_BUILDDIR as there).  Prints one line per
# configuration and the ratios to stock.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
ver=${1:-26.05.3}
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench-backfill: needs root" >&2; exit 77; }
prefix=$(bash "$top/contrib/slurm-release.sh" "$ver" | tail -1) || exit $?
build=${TOPOML_RELEASE_BUILDDIR:-$top/build-$ver}
if [ ! -f "$build/select_plugin/.libs/topology_topoml.so" ]; then
	bash "$top/contrib/test-release.sh" --compile "$ver" >&2 || exit 1
fi
[ -f "$build/select_plugin/.libs/topology_topoml.so" ] || {
	echo "bench-backfill: no topology_topoml.so for Slurm $ver" >&2
	exit 77
}
export CLUSTER_SLURM_PREFIX=$prefix TOP_BUILDDIR=$build
. "$top/tests/lib/cluster.sh"
[ "$CLUSTER_SLURM_VERSION" -ge 2411 ] || {
	echo "bench-backfill: topology/topoml needs Slurm 24.11+" >&2
	exit 77
}

NODES=${BF_NODES:-4096}
JOBS=${BF_JOBS:-1000}
CYCLES=${BF_CYCLES:-3}
CONFIGS=${BF_CONFIGS:-stock topo}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-bench-bf.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
leaves=$((NODES / 32))
{
	for l in $(seq 0 $((leaves - 1))); do
		echo "SwitchName=l$l Nodes=c[$((l * 32 + 1))-$((l * 32 + 32))]"
	done
	for s in $(seq 0 $(((leaves + 7) / 8 - 1))); do
		last=$((s * 8 + 7))
		[ $last -ge $leaves ] && last=$((leaves - 1))
		echo "SwitchName=s$s Switches=l[$((s * 8))-$last]"
	done
	echo "SwitchName=root Switches=s[0-$(((leaves + 7) / 8 - 1))]"
} >"$work/topology.conf"
: >"$work/topoml.conf"
printf 'TopologyFile=%s\n' "$work/topology.conf" >"$work/topoml-select.conf"
# The same pending jobs (size, minutes) for every configuration.
awk -v n="$JOBS" 'BEGIN {
	split("1 2 4 8 16 32 64 128 256 3 12 24 48 96", sz, " "); s = 5
	for (i = 1; i <= n; i++) {
		s = (s * 1103515245 + 12345) % 2147483648
		print sz[int(s / 11) % 14 + 1], 5 + int(s / 7) % 56
	}
}' >"$work/pending"

# bf_stat: "cycles last_us depth" of sdiag's backfill section
bf_stat() {
	sdiag 2>/dev/null | awk '/Backfilling stats/ { b = 1 }
		b && /Total cycles:/ { n = $3 }
		b && /Last cycle:/ { c = $3 }
		b && /Last depth cycle:/ { d = $4 }
		END { print n + 0, c + 0, d + 0 }'
}

# ctld_cpu PID: slurmctld's CPU time so far (clock ticks, user + system),
# which other load on the machine does not inflate as it does wall time
ctld_cpu() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# bf_run NAME: $work/NAME.out lines "cycle_us depth", CYCLES of them
# after the first; $work/NAME.queue "pending running" at the end.
bf_run() (
	local name=$1 n t i cycles=0 seen=0 c us d pid cpu0=0 line0=0
	export CLUSTER_SELECT=cons_tres CLUSTER_TOPOLOGY=$work/topology.conf \
		CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_SLURMD=0 \
		CLUSTER_CLOUD=$NODES \
		CLUSTER_CONF_EXTRA="SchedulerParameters=default_queue_depth=100,sched_interval=3600,bf_interval=2,bf_max_job_test=$((JOBS * 2)),bf_max_time=3600,bf_window=1440,bf_resolution=600"
	case $name in
	topo) export CLUSTER_TOPOLOGY_PLUGIN=topology/topoml
		[ "${BF_DEBUG:-0}" = 1 ] && echo Debug=1 >"$work/topoml.conf" ;;
	select) export CLUSTER_SELECT=topoml \
		CLUSTER_TOPOML_CONF=$work/topoml-select.conf ;;
	esac
	cluster_start "bench-bf-$name" >"$work/$name.log" 2>&1 ||
		{ echo "$name: cluster failed: $(tail -3 "$work/$name.log")" >&2
		  exit 1; }
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
	done <"$work/pending"
	sdiag --reset >/dev/null 2>&1
	: >"$work/$name.out"
	pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
	for _ in $(seq 1 6000); do
		read -r c us d <<<"$(bf_stat)"
		if [ "$c" -gt "$cycles" ]; then
			cycles=$c
			seen=$((seen + 1))
			# the first may have begun before the last submission
			[ $seen = 1 ] && cpu0=$(ctld_cpu "$pid") &&
				line0=$(wc -l <"$CLUSTER_DIR/log/slurmctld.log")
			[ $seen -gt 1 ] && echo "$us $d" >>"$work/$name.out"
			[ $seen -gt "$CYCLES" ] && break
		fi
		sleep 0.2
	done
	echo "$(squeue -h -t PD | wc -l) $(squeue -h -t R,CF | wc -l)" \
		"$(awk -v a="$cpu0" -v b="$(ctld_cpu "$pid")" -v n="$CYCLES" \
			-v hz="$(getconf CLK_TCK)" 'BEGIN { print (b - a) / hz / n }')" \
		>"$work/$name.queue"
	tail -n +$((line0 + 1)) "$CLUSTER_DIR/log/slurmctld.log" |
		sed -n 's/.*topology\/topoml: eval_nodes .* attempt=\([-0-9]*\) .*total_us=\([0-9]*\).*/\1 \2/p' |
		awk -v n="$CYCLES" '{ c++; us += $2; if ($1 < 0) f++ }
			END { if (c) printf "%d %.3f %d\n", c / n, us / 1e6 / n, f / n }' \
		>"$work/$name.eval"
	cluster_stop >/dev/null 2>&1
)

median() {	# median COLUMN FILE
	awk -v c="$1" '{ print $c }' "$2" | sort -n |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print 0; exit }
			if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "Slurm $(slurmctld -V | cut -d' ' -f2), $NODES emulated nodes (fat-tree, leaves of 32) full, $JOBS jobs pending; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in $CONFIGS; do
	bf_run "$name" || exit 1
done
base="" basecpu=0
for name in $CONFIGS; do
	case $name in
	stock) what="stock cons_tres + topology/tree" ;;
	topo) what="cons_tres + topology/topoml" ;;
	select) what="select/topoml + topology/tree" ;;
	*) what=$name ;;
	esac
	f=$work/$name.out
	m=$(median 1 "$f")
	[ "$name" = stock ] && base=$m
	read -r pd r cpu <"$work/$name.queue"
	[ "$name" = stock ] && basecpu=$cpu
	printf '%s:\n  backfill cycle (sdiag) median %.3f s of %s: %s; depth %s\n' \
		"$what" "$(awk -v u="$m" 'BEGIN { print u / 1e6 }')" \
		"$(wc -l <"$f") cycles" \
		"$(awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 / 1e6 }' "$f")" \
		"$(median 2 "$f")"
	printf '  slurmctld CPU per cycle %.3f s; %s pending, %s running' \
		"$cpu" "$pd" "$r"
	if [ -s "$work/$name.eval" ]; then
		read -r ec es ef <"$work/$name.eval"
		printf '\n  per cycle: %s eval_nodes calls (%s to Slurm'"'"'s own evaluation), %s s inside them' \
			"$ec" "$ef" "$es"
	fi
	if [ -n "$base" ] && [ "$name" != stock ]; then
		awk -v t="$m" -v b="$base" -v c="$cpu" -v bc="$basecpu" 'BEGIN {
			if (b > 0 && bc > 0)
				printf "\n  %.2f x stock'"'"'s cycle, %.2f x its CPU", t / b, c / bc }'
	fi
	echo
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
