#!/bin/bash
# What a user's job shape costs slurmctld (issue 28): on 1024 emulated
# nodes (a fat tree of 32 leaves of 32, 128 CPUs each), an unprivileged
# user submits the dearest shapes of every option select/topoml reads
# (--ml-parallel with the most ranks, expert groups over every node,
# tensor groups over nodes, a stage per node, --ml-spares, --ml-comm,
# --switches, a required node list, tasks per node beyond the priced
# bound), each as a will-run (sbatch --test-only) and as a job that pends
# behind the others (job_test, then backfill's will-run every second).
# Asserted, from the line select/topoml logs for every call (Debug=1 in
# topoml.conf: DebugFlags=SelectType's, without cons_tres's own tracing,
# which alone makes a 1024-node job_test take 0.8 s): topoml's own share
# of the call's thread CPU time (cpu_us - cons_tres_cpu_us: its work,
# not the host's other load) stays within COST_BOUND_US (10 ms);
# and another user's squeue answers within 1 s all along.  Before the
# closed-form pricing one ep=65536 job held slurmctld's locks for 34 s.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

A=topomlcosta	# submits the shapes
B=topomlcostb	# asks squeue meanwhile
BOUND=${COST_BOUND_US:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-cost.XXXXXX")
chmod 755 "$work"
{	# 32 leaves of 32 nodes, 4 spines of 8 leaves, one core
	for l in $(seq 0 31); do
		echo "SwitchName=l$l Nodes=c[$((l * 32 + 1))-$((l * 32 + 32))]"
	done
	for s in 0 1 2 3; do
		echo "SwitchName=s$s Switches=l[$((s * 8))-$((s * 8 + 7))]"
	done
	echo "SwitchName=core Switches=s[0-3]"
} >"$work/topology.conf"
cp "$work/topology.conf" "$work/net.conf"
printf 'TopologyFile=%s\nHybridWait=600\nDebug=1\n' "$work/net.conf" \
	>"$work/topoml.conf"
chmod 644 "$work"/*
CLUSTER_SLURMD=0 CLUSTER_CLOUD=1024 CLUSTER_CPUS=128 CLUSTER_SELECT=topoml \
	CLUSTER_SPANK=1 CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="MaxTasksPerNode=512" \
	cluster_start sel-cost || exit $?
watch=
trap 'touch "$work/squeue_ms.stop"; [ -n "$watch" ] && wait $watch
	cluster_stop; rm -rf "$work"' EXIT
cluster_user $A
cluster_user $B
log=$CLUSTER_DIR/log/slurmctld.log
cd "$CLUSTER_DIR" || exit 1

as() {	# as USER CMD...: with the cluster's slurm.conf
	local u=$1
	shift
	runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@"
}

# B's squeue, timed, every 0.2 s: each answer's ms.  It stops by itself
# when the stop file appears (or after 300 answers, or with the cluster).
as $B squeue -h >/dev/null || cluster_fail "squeue as $B"
: >"$work/squeue_ms"
chmod 666 "$work/squeue_ms"
as $B bash -c 'for i in $(seq 1 300); do
	[ -e "$1.stop" ] || [ ! -e "$1" ] && exit 0
	t0=$(date +%s%N)
	squeue -h >/dev/null 2>&1 || echo 99999 >>"$1"
	echo $((($(date +%s%N) - t0) / 1000000)) >>"$1"
	sleep 0.2
done' squeue-watch "$work/squeue_ms" &
watch=$!

N=1024
shapes=(
	"--ntasks-per-node=64 -N 256 --ml-parallel=tp=64,pp=1 -w c[1-256]"
	"--ntasks-per-node=64 --ml-parallel=tp=1,pp=1,ep=65536"
	"--ntasks-per-node=64 --ml-parallel=tp=128,pp=4,ep=8"
	"--ntasks-per-node=64 --ml-parallel=tp=1,pp=1024"
	"--ntasks-per-node=64 --ml-parallel=tp=1,pp=1,cp=1024"
	"--ntasks-per-node=64 --ml-parallel=tp=64,pp=2 --ml-spares=64"
	"--ntasks-per-node=8 -N 64 --ml-parallel=tp=8,pp=4 --ml-comm=alltoall --switches=2"
	"--ntasks-per-node=128 --ml-parallel=tp=2,pp=1,ep=65536"
)
ids=()
for s in "${shapes[@]}"; do
	# shellcheck disable=SC2086
	out=$(as $A sbatch --test-only -N $N -t 10 $s --wrap true 2>&1) ||
		cluster_fail "sbatch --test-only $s: $out"
	# shellcheck disable=SC2086
	id=$(as $A sbatch --parsable -o /dev/null -N $N -t 10 $s \
		--wrap 'sleep 1000') || cluster_fail "sbatch $s"
	ids+=("$id")
	echo "ok: submitted $id: -N $N $s"
done
# the first two hold every node; the others pend and backfill plans each
sleep 8
touch "$work/squeue_ms.stop"
wait $watch 2>/dev/null
for id in "${ids[@]}"; do scancel "$id"; done

calls=$(sed -n 's/.*select\/topoml: \(job_test\|will_run\) \(JobId=[0-9]*\).* total_us=\([0-9]*\) cons_tres_us=\([0-9]*\) cpu_us=\([0-9]*\) cons_tres_cpu_us=\([0-9]*\).*/\5 \6 \3 \4 \1 \2/p' "$log" |
	awk '{ print $1 - $2, $1, $3 - $4, $5, $6 }' | sort -n)
lines=$(echo "$calls" | grep -c .)
[ "$lines" -ge $((2 * ${#shapes[@]})) ] ||
	cluster_fail "only $lines job_test/will_run lines in $log"
echo "dearest calls (topoml_cpu_us cpu_us topoml_wall_us call job):"
echo "$calls" | tail -n 3
worst=$(echo "$calls" | tail -n 1)
echo "ok: $lines calls; topoml's dearest CPU share: ${worst%% *} us"
[ "${worst%% *}" -le "$BOUND" ] ||
	cluster_fail "topoml's share of a call ${worst%% *} us > $BOUND us ($worst)"
sq=$(sort -n "$work/squeue_ms" | tail -n 1)
n=$(grep -c . "$work/squeue_ms")
[ "$n" -ge 5 ] || cluster_fail "only $n squeue answers"
[ "${sq:-99999}" -lt 1000 ] ||
	cluster_fail "$B's squeue took $sq ms (of $n: $(sort -n "$work/squeue_ms" | tail -n 5 | tr '\n' ' '))"
echo "ok: $B's slowest squeue of $n meanwhile: $sq ms"
grep -q "Socket timed out" "$log" && cluster_fail "a client timed out"
echo "PASS: select/topoml's cost per call bounded on 1024 nodes"
