#!/bin/bash
# The --ml-ckpt timer's RPCs to slurmctld stay few (issue 28 defect 4),
# on a real local cluster, jobs of an unprivileged user, two at once:
#   A  3 nodes, the batch step and 4 steps of 3 nodes (13 slurmstepds),
#      lead=10m at and above its 3 min limit: once slurmstepd asked every
#      5 s for the whole job (~150 REQUEST_JOB_INFO_SINGLE a minute);
#      now the step's own load of the job is the only reading it needs.
#      Every slurmstepd still raises the warning (10 s into the run).
#   B  2 nodes, the batch step and 1 step (3 slurmstepds), --time=2,
#      lead=60: its limit is extended with scontrol update 5 s into the
#      run; no slurmstepd warns at the old moment (60 s in), and the
#      node's page holds the new end time (each slurmstepd asked once
#      before its warning, spank/ckpt/ckpt_timer.c).
# Counted with sdiag over 60 s after the steps started: the design's
# bound is one confirmation per slurmstepd plus a leader's reading a
# minute per job (plus one of slack for each): 16 + 2 + 2 = 20.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
cluster_need_root
so=$TOP_BUILDDIR/spank/.libs/topoml.so
cluster_need_files "$so"
U=topomlrpc
WINDOW=${RPC_WINDOW:-60}

cluster_tmpdir BASE rpc
cleanup() {
	[ -n "${id_a:-}" ] && scancel "$id_a" "${id_b:-}" 2>/dev/null
	cluster_stop
}
CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_SLURMD=5
cluster_start rpc-rate || exit $?
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM
cluster_user "$U"
fail() { cluster_fail "$*"; }

mkdir -p "$BASE/u"
printf '#!/bin/sh\nfor i in 1 2 3 4; do %s & done\nwait\n' \
	'srun --overlap -N3 -n3 sleep 200' >"$BASE/u/a.sh"
printf '#!/bin/sh\nsrun -N2 -n2 sleep 200\n' >"$BASE/u/b.sh"
chmod 755 "$BASE/u"/*.sh
chown -R "$U" "$BASE/u"
chmod 700 "$BASE/u"
# as_user CMD: run CMD as the unprivileged user in BASE/u.
as_user() {
	su -s /bin/sh "$U" -c "cd $BASE/u && SLURM_CONF=$SLURM_CONF $*"
}
id_a=$(as_user sbatch --parsable -N3 --time=3 -o a-%j.out \
	--ml-ckpt=$BASE/u/cka,lead=10m a.sh) || fail "sbatch A"
id_b=$(as_user sbatch --parsable -N2 --time=2 -o b-%j.out \
	--ml-ckpt=$BASE/u/ckb,lead=60 b.sh) || fail "sbatch B"

# Both running, A's 4 steps and B's step launched.
for _ in $(seq 1 120); do
	na=$(squeue -h -s -j "$id_a" -o %i 2>/dev/null |
		grep -c "^$id_a\.[0-9]")
	nb=$(squeue -h -s -j "$id_b" -o %i 2>/dev/null |
		grep -c "^$id_b\.[0-9]")
	[ "$na" = 4 ] && [ "$nb" = 1 ] && break
	sleep 0.5
done
[ "$na" = 4 ] && [ "$nb" = 1 ] ||
	fail "steps did not start: $(squeue -s)"
start_b=$(date -d "$(scontrol show job "$id_b" |
	sed -n 's/.*StartTime=\([^ ]*\).*/\1/p')" +%s)
# B's limit extended: the warning moves from start + 60 s to + 240 s.
sleep $((start_b + 5 - $(date +%s) > 0 ? start_b + 5 - $(date +%s) : 0))
scontrol update jobid="$id_b" TimeLimit=5 || fail "scontrol update B"
end_b=$(date -d "$(scontrol show job "$id_b" |
	sed -n 's/.*EndTime=\([^ ]*\).*/\1/p')" +%s)
[ "$end_b" -ge $((start_b + 290)) ] ||
	fail "B: EndTime $end_b after the update, start $start_b"
# The steps' own loads of the job (at their start) are done.
sleep 2
sdiag -r >/dev/null || fail "sdiag -r"
sleep "$WINDOW"
n=$(sdiag | awk '/REQUEST_JOB_INFO_SINGLE/ {
	for (i = 1; i <= NF; i++) if ($i ~ /^count:/) {
		sub("count:", "", $i); print $i; exit } }')
n=${n:-0}
echo "REQUEST_JOB_INFO_SINGLE in ${WINDOW}s: $n (2 jobs, 16 slurmstepds)"

logs=$CLUSTER_DIR/log
# A: every slurmstepd warned (the batch step and 4 steps x 3 nodes).
wa=$(cat "$logs"/slurmd-*.log |
	grep -c "job $id_a ends in [0-9]*s: checkpoint warning")
[ "$wa" -ge 13 ] || fail "A: $wa of 13 slurmstepds warned"
# B: no warning at the old moment; every page holds the new end time.
wb=$(cat "$logs"/slurmd-*.log | grep -c "job $id_b ends in")
[ "$wb" = 0 ] || fail "B: warned before its extended limit ($wb):" \
	"$(grep -h "job $id_b ends in" "$logs"/slurmd-*.log)"
# (one page per job and host: the slurmds here share one host)
pages=$(ls "$BASE"/cache/ckpt/*/job."$id_b".* 2>/dev/null)
[ -n "$pages" ] || fail "B: no page in $BASE/cache/ckpt"
for pg in $pages; do
	e=$(od -An -t d8 -j 88 -N 8 "$pg" | tr -d ' ')
	[ "$e" = "$end_b" ] || fail "B: $pg end_time $e, job's $end_b"
done
[ "$n" -le 20 ] ||
	fail "$n REQUEST_JOB_INFO_SINGLE in ${WINDOW}s from 2 jobs of 16" \
		"slurmstepds (bound 20)"
echo "PASS: $n job-info RPCs in ${WINDOW}s (bound 20); A warned on all" \
	"$wa slurmstepds; B's extension held on every node"
