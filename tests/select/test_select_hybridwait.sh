#!/bin/bash
# LocalityWait's --ml-parallel locality (topoml.conf(5)), first under its
# deprecated name HybridWait, through real slurmctld and slurmd, jobs
# submitted by an unprivileged user with topoml.so's --ml-parallel.  The
# network: n1,n5 | n2,n6 under spine1 and n3,n7 | n4,n8 under spine2.
# With n1 and n3 busy, 3 nodes of each spine are free, so a 4-node
# tp=2,pp=1 job at 2 tasks a node (dp=4) sends its DP rings through the
# core, where on a free spine it would not.
#  - a job without --ml-parallel starts at once;
#  - an --ml-parallel job pends (Resources) and starts over both spines
#    after W s, with the log line that says so;
#  - another pends until the job on n1 ends, then starts in spine1 alone;
#  - LocalityWait=600 (reconfigured), the job on n1 with a 1-minute
#    limit: the waiting job's backfill plan is spine1 when n1 frees, not
#    the placement over both spines it declines now; a 1-node job of an
#    hour keeps off spine1, and the job takes spine1 when n1 frees.
# Then the same 8 slurmd as a dragonfly of two groups (n1-n4, n5-n8),
# reconfigured, n1 and n5 busy: the 4-node job over both groups puts a
# node's load on their global link, so it starts at once; with a job
# that spans the two groups it waits for one group, and starts once
# that job ends.
# SPDX-License-Identifier: GPL-2.0-or-later
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"
. "${TESTS_DIR:-$(dirname "$0")/..}/select/lib.sh"
sel_require_tools

U=topomlhwait
W=${HYBRIDWAIT_SECONDS:-15}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-hybridwait.XXXXXX")
chmod 755 "$work"
cp "${TESTS_DIR:-$(dirname "$0")/..}/fixtures/hybrid/spines-n8.conf" \
	"$work/net.conf"
printf 'TopologyFile=%s\nHybridWait=%s\nDebug=1\n' "$work/net.conf" "$W" \
	>"$work/topoml.conf"
chmod 644 "$work"/*
spine() {
	case $1 in n1|n5|n2|n6) echo 1 ;; n3|n7|n4|n8) echo 2 ;; esac
}
# spines NODELIST: the distinct spines of a Slurm node list
spines() {
	local n
	for n in $(scontrol show hostnames "$1"); do spine "$n"; done |
		sort -u | wc -l
}

CLUSTER_SLURMD=8 CLUSTER_SELECT=topoml CLUSTER_TOPOML_CONF=$work/topoml.conf \
	spank_start hybridwait
trap 'cluster_stop; rm -rf "$SPANK_CACHE" "$work"' EXIT
cluster_user $U
log=$CLUSTER_DIR/log/slurmctld.log
cd "$CLUSTER_DIR" || exit 1

submit() {
	runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable \
		-o /dev/null "$@" --wrap 'sleep 100000'
}
reason() { squeue -h -j "$1" -o '%T %r' 2>/dev/null; }

b1=$(submit -N1 -w n1) || cluster_fail "sbatch -w n1"
b3=$(submit -N1 -w n3) || cluster_fail "sbatch -w n3"
sel_wait_start "$b1" >/dev/null && sel_wait_start "$b3" >/dev/null ||
	cluster_fail "one-node jobs did not start"

# Without --ml-parallel: never waits.
x=$(submit -N4 --ntasks-per-node=2) || cluster_fail "sbatch -N4"
nx=$(sel_wait_start "$x" 100) ||
	cluster_fail "plain 4-node job waited: $(reason "$x")"
echo "ok: without --ml-parallel, at once on $nx ($(spines "$nx") spines)"
scancel "$x"
sel_wait_gone "$x" || cluster_fail "job $x not cancelled"

# --ml-parallel: waits W s, then takes both spines.
t0=$(date +%s)
x=$(submit -N4 --ntasks-per-node=2 --ml-parallel=tp=2,pp=1) ||
	cluster_fail "sbatch --ml-parallel"
sleep $((W / 2))
r=$(reason "$x")
[ "$r" = "PENDING Resources" ] ||
	cluster_fail "--ml-parallel job after $((W / 2)) s of HybridWait=$W: '$r'"
nx=$(sel_wait_start "$x" $((W * 10 + 150))) ||
	cluster_fail "--ml-parallel job still waits after $((W + 15)) s: $(reason "$x")"
t=$(($(date +%s) - t0))
[ "$t" -ge "$W" ] || cluster_fail "--ml-parallel job started after $t s < $W s"
[ "$(spines "$nx")" = 2 ] || cluster_fail "one spine free? $nx"
grep -q "JobId=$x: no whole tensor groups and data-parallel rings below the top after HybridWait=$W s" "$log" ||
	cluster_fail "no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: HybridWait=$W: pending ($r), started after $t s over both spines ($nx)"
scancel "$x"
sel_wait_gone "$x" || cluster_fail "job $x not cancelled"

# Again, but spine1 frees while it waits: it takes spine1 alone.
t0=$(date +%s)
x=$(submit -N4 --ntasks-per-node=2 --ml-parallel=tp=2,pp=1) ||
	cluster_fail "sbatch --ml-parallel (2)"
sleep 3
r=$(reason "$x")
[ "$r" = "PENDING Resources" ] || cluster_fail "second job after 3 s: '$r'"
scancel "$b1"
sel_wait_gone "$b1" || cluster_fail "job $b1 not cancelled"
nx=$(sel_wait_start "$x" $((W * 10))) ||
	cluster_fail "job did not start when spine1 freed: $(reason "$x")"
t=$(($(date +%s) - t0))
[ "$(spines "$nx")" = 1 ] && [ "$(spine "$(scontrol show hostnames "$nx" |
	head -1)")" = 1 ] || cluster_fail "not in spine1: $nx"
[ "$t" -lt "$W" ] || cluster_fail "took spine1 only after $t s"
grep -q "JobId=$x: found whole tensor groups and data-parallel rings below the top after waiting" "$log" ||
	cluster_fail "no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: HybridWait=$W: pending, then spine1 when it freed, after $t s ($nx)"
scancel "$x"
sel_wait_gone "$x" || cluster_fail "job $x not cancelled"

# ---- backfill's plan for a job that waits: where its wait is met ----
# n1's job ends within a minute (its limit), before the wait does: the
# waiting job's plan must be spine1 then, so that a 1-node job that would
# outlast it keeps off n2, n5 and n6 and spine1 does free.  Planned over
# both spines now, where run-now declines it, the job would hold those
# nodes in the plan while other jobs fill spine1.
grep -q "HybridWait is deprecated: use LocalityWait" "$log" ||
	cluster_fail "no log line: HybridWait deprecated"
sed -i 's/^HybridWait=.*/LocalityWait=600/' "$(dirname "$SLURM_CONF")/topoml.conf"
scontrol reconfigure || cluster_fail "scontrol reconfigure"
b1=$(submit -N1 -w n1 --time=1) || cluster_fail "sbatch -w n1 --time=1"
sel_wait_start "$b1" >/dev/null || cluster_fail "job on n1 did not start"
x=$(submit -N4 --ntasks-per-node=2 --ml-parallel=tp=2,pp=1) ||
	cluster_fail "sbatch --ml-parallel (3)"
got=$(sel_plan "$x")
[ "$got" = "n1 n2 n5 n6 " ] ||
	cluster_fail "waiting job planned on '$got', not spine1 when n1 frees"
st=$(date -d "$(squeue -h -j "$x" -o '%S')" +%s 2>/dev/null) ||
	cluster_fail "no planned start: $(squeue -h -j "$x" -o '%S')"
[ "$st" -gt "$(($(date +%s) + 20))" ] ||
	cluster_fail "waiting job planned to start at once ($got)"
echo "ok: a job waiting for locality is planned on spine1 when n1 frees ($got)"
l=$(submit -N1 --time=60) || cluster_fail "sbatch -N1 --time=60"
nl=$(sel_wait_start "$l" 100) ||
	cluster_fail "1-node job did not start: $(reason "$l")"
[ "$(spine "$nl")" = 2 ] ||
	cluster_fail "1-node job of 60 minutes took $nl, in the planned spine1"
echo "ok: a 1-node job that would outlast the plan keeps off spine1 ($nl)"
scancel "$b1"
nx=$(sel_wait_start "$x" 300) ||
	cluster_fail "job did not start when n1 freed: $(reason "$x")"
got=$(scontrol show hostnames "$nx" | sort | tr '\n' ' ')
[ "$got" = "n1 n2 n5 n6 " ] || cluster_fail "not spine1: $nx"
echo "ok: spine1 freed and the job took it ($nx)"

# ---- a dragonfly: two groups no other job spans ----
scancel "$x" "$b3" "$l"
sel_wait_gone "$x" && sel_wait_gone "$b3" && sel_wait_gone "$l" ||
	cluster_fail "jobs not cancelled"
"$SEL_TOPOML" generate dragonfly --groups 2 --routers 2 --per-router 2 \
	--prefix n -q -o "$work/df.json" || cluster_fail "topoml generate"
chmod 644 "$work/df.json"
printf 'TopologyFile=%s\nLocalityWait=600\nDebug=1\n' "$work/df.json" \
	>"$(dirname "$SLURM_CONF")/topoml.conf"
scontrol reconfigure || cluster_fail "scontrol reconfigure (dragonfly)"
group() { case $1 in n[1-4]) echo 1 ;; *) echo 2 ;; esac; }
groups() {
	local n
	for n in $(scontrol show hostnames "$1"); do group "$n"; done |
		sort -u | wc -l
}
b1=$(submit -N1 -w n1) || cluster_fail "sbatch -w n1"
b5=$(submit -N1 -w n5) || cluster_fail "sbatch -w n5"
sel_wait_start "$b1" >/dev/null && sel_wait_start "$b5" >/dev/null ||
	cluster_fail "one-node jobs on n1, n5 did not start"
x=$(submit -N4 --ntasks-per-node=2 --ml-parallel=tp=2,pp=1) ||
	cluster_fail "sbatch --ml-parallel (dragonfly)"
nx=$(sel_wait_start "$x" 100) ||
	cluster_fail "dragonfly: --ml-parallel job of a node's load on the pair waits: $(reason "$x")"
[ "$(groups "$nx")" = 2 ] || cluster_fail "dragonfly: a group free? $nx"
echo "ok: dragonfly, LocalityWait=600: at once over two groups no job spans ($nx)"
scancel "$x"
sel_wait_gone "$x" || cluster_fail "job $x not cancelled"
y=$(submit -N2 -w n4,n8) || cluster_fail "sbatch -w n4,n8"
sel_wait_start "$y" >/dev/null || cluster_fail "job on n4,n8 did not start"
x=$(submit -N4 --ntasks-per-node=2 --ml-parallel=tp=2,pp=1) ||
	cluster_fail "sbatch --ml-parallel (dragonfly, 2)"
sleep 5
r=$(reason "$x")
[ "$r" = "PENDING Resources" ] ||
	cluster_fail "dragonfly: beside a job over both groups, '$r'"
grep -q "JobId=$x waits up to 600 s for one dragonfly group for 4 nodes" \
	"$log" || cluster_fail "dragonfly: no wait logged for job $x: $(grep "JobId=$x" "$log" | tail -3)"
scancel "$y"
nx=$(sel_wait_start "$x" 100) ||
	cluster_fail "dragonfly: job still waits when the spanning job ended: $(reason "$x")"
echo "ok: dragonfly: pending ($r) beside a job over both groups, then at once ($nx)"
scancel "$x" "$b1" "$b5"
scontrol ping | grep -q UP || cluster_fail "slurmctld down"
echo "PASS: LocalityWait (HybridWait)"
