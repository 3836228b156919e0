#!/bin/bash
# Hot spares (contrib/topoml-run) on a real local cluster with real
# PyTorch DDP (gloo, CPU), as an unprivileged user; four jobs at once,
# --no-kill, --ml-ckpt every 10 steps, W worker nodes (3) of TPN ranks (2:
# every path with 2+ tasks per node, as on GPU servers):
#   ref      4 nodes (3 workers + 1 spare: sbatch --ml-spares=1, the
#            plugin tells topoml-run which), no failure
#   fail     4 nodes (3 + 1): once step 20 is checkpointed, the second
#            worker's slurmd, slurmstepd and tasks are killed and the node
#            marked DOWN with scontrol (Slurm alone takes SlurmdTimeout + a
#            ping cycle); topoml-run relaunches the step in the same job
#            on the spare, in the failed node's ring position
#   requeue  3 nodes, no spare, --requeue, the same failure: topoml-run
#            requeues the job (cred_expire=5), the next run resumes
#   shrink   3 nodes, no spare, topoml-run --shrink, the same failure: the
#            step goes on with 2 nodes in the same job (elastic resume:
#            resume_world_size 6, the global batch kept)
# The failed jobs resume from the last checkpoint and end with ref's
# parameters (within fp tolerance).  Prints the steps trained again, the
# time from the kill to training again and each job's time to solution
# (its first start to its final parameters) against ref's.
# As a benchmark (issue 13 item 5: one node in 10 fails): bench_spares.sh
#   SPARES_WORKERS=9 SPARES_STEPS=800 SPARES_SHRINK=0 spares.sh
# (W workers + 1 spare; SPARES_SHRINK=0 leaves the shrink job out).
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
PY=/usr/bin/python3
SP_USER=topomlspare
so=$TOP_BUILDDIR/spank/.libs/topoml.so
[ -e "$so" ] || { echo "SKIP: $so missing"; exit 77; }
$PY -c 'import torch.distributed as d; assert d.is_gloo_available()' \
	2>/dev/null || { echo "SKIP: no python3-torch with gloo"; exit 77; }
STEPS=${SPARES_STEPS:-60}
MS=${SPARES_MS:-100}		# sleep per step: the step's compute
W=${SPARES_WORKERS:-3}		# worker nodes; >= 3
TPN=${SPARES_TPN:-2}		# ranks per node: 2+ on every path
SHRINK=${SPARES_SHRINK:-1}	# 0: no shrink job
# Limits that grow with the run: seconds to wait for a job, its minutes.
LIM=$((180 + STEPS * MS * 3 / 1000))
TLIM=$((5 + STEPS * MS / 20000))

BASE=$(mktemp -d /tmp/topoml-spares.XXXXXX)
chmod 755 "$BASE"
mkdir -p "$BASE/bin"
cp "$TOP_SRCDIR/contrib/topoml-run" "$TOP_SRCDIR/tests/ckpt/train_ddp.py" \
	"$BASE/bin/"
cp -r "$TOP_SRCDIR/contrib/ckpt/topoml_ckpt" "$BASE/bin/"
chmod -R a+rX "$BASE/bin"

cleanup() {
	cluster_stop
	if [ -n "${CLUSTER_KEEP:-}" ]; then
		echo "kept $BASE"
	else
		rm -rf "$BASE"
	fi
}
CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_SLURMD=$(((3 + SHRINK) * W + 2))
cluster_start spares
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM
cluster_user "$SP_USER"
# A requeued job waits cred_expire (default 1200 s) before it starts again.
# A killed node stays DOWN: with ReturnToService=2 slurmctld returns a DOWN
# node to service when an RPC to it fails after it stopped responding
# (agent.c: DSH_DONE, node_did_resp), and a requeued job lands on it again.
cat >>"$SLURM_CONF" <<EOF
AuthInfo=socket=$CLUSTER_DIR/munge/munge.socket,cred_expire=5
SlurmdTimeout=5
ReturnToService=1
DebugFlags=NO_CONF_HASH
EOF
cluster_restart_ctld
fail() { cluster_fail "$*"; }

# submit NAME NODES "LAUNCHER OPTIONS" [sbatch args]: the job id.  The
# batch script runs topoml-run.
submit() {
	local name=$1 nodes=$2 lopts=$3 d=$BASE/$1
	shift 3
	mkdir -p "$d"
	printf '#!/bin/sh\nexport OMP_NUM_THREADS=1\n' >"$d/job.sh"
	# a job to be killed holds before step 25 until kill_worker says go
	[ "$name" = ref ] ||
		printf 'export TRAIN_HOLD=25:%s/go\n' "$d" >>"$d/job.sh"
	printf 'exec %s %s -- %s %s %s %s %s\n' \
		"$BASE/bin/topoml-run" "$lopts" "$PY" \
		"$BASE/bin/train_ddp.py" "$STEPS" "$MS" "$d" >>"$d/job.sh"
	chmod 755 "$d/job.sh"
	chown -R "$SP_USER" "$d"
	su -s /bin/sh "$SP_USER" -c "cd $d && SLURM_CONF=$SLURM_CONF \
		sbatch --parsable -N$nodes --ntasks-per-node=$TPN \
		--no-kill --time=$TLIM \
		--open-mode=append -o $d/slurm-%j.out --ml-ckpt=$d/ck,every=10 $* $d/job.sh"
}

wait_gone() {
	local i
	for i in $(seq 1 "$2"); do
		[ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0
		sleep 1
	done
	return 1
}

# kill_worker NAME ID: once job ID checkpointed step 20 (it holds before
# step 25 until then), kill its second worker's slurmd, slurmstepd and
# tasks, mark the node DOWN, let the job's next run go on.  Sets
# victim, workers (the first run's), killed_at (epoch seconds).
kill_worker() {
	local name=$1 id=$2 ck=$BASE/$1/ck/$2 l="" p pids=""
	for _ in $(seq 1 240); do
		l=$(readlink "$ck/latest" 2>/dev/null)
		[ -n "$l" ] && [ "${l#step-}" -ge 20 ] 2>/dev/null && break
		sleep 0.5
	done
	[ -n "$l" ] || fail "$name: no checkpoint:" \
		"$(cat "$BASE/$name"/slurm-*.out)"
	workers=$(sed -n '1s/.* nodes //p' "$BASE/$name/runs")
	victim=$(echo "$workers" | cut -d, -f2)
	[ -n "$victim" ] ||
		fail "$name: no worker list in $(cat "$BASE/$name/runs")"
	killed_at=$(date +%s.%N)
	cluster_slurmd_stop "$victim"
	for p in $(pgrep -x slurmstepd); do
		ls -l "/proc/$p/fd" 2>/dev/null |
			grep -q " -> $CLUSTER_DIR/log/slurmd-$victim.log" &&
			pids="$pids $p"
	done
	[ -n "$pids" ] || fail "$name: no slurmstepd of $victim"
	# shellcheck disable=SC2086
	kill -KILL $pids $(_cluster_descendants $pids) 2>/dev/null
	scontrol update nodename="$victim" state=down reason=spares-test ||
		fail "scontrol update $victim down"
	touch "$BASE/$name/go"
	echo "$name: killed $victim (slurmd, slurmstepd, tasks) after $l"
}

# check_resumed NAME KILLED_AT WORLD: the second run started at the last
# checkpoint of the first, with WORLD ranks.  Prints the steps
# trained again and the seconds from the kill to the second run's start.
check_resumed() {
	local name=$1 r2 from last t2 runs
	runs=$(cat "$BASE/$name/runs")
	[ "$(wc -l <<<"$runs")" = 2 ] || fail "$name: want 2 runs: $runs"
	r2=$(sed -n 2p <<<"$runs")
	from=$(awk '{ print $4 }' <<<"$r2")
	last=$(awk 'END { print $1 }' "$BASE/$name/steps.0.0")
	# The last complete checkpoint: that of step LAST rounded down, or
	# the one before when the kill came between logging step LAST (a
	# multiple of 10) and committing its checkpoint.
	[ "$from" -ge 20 ] && { [ "$from" = $((last / 10 * 10)) ] ||
		{ [ $((last % 10)) = 0 ] && [ "$from" = $((last - 10)) ]; }; } ||
		fail "$name: resumed from $from, first run reached $last"
	grep -q "world $3 resume_world $((W * TPN)) " <<<"$r2" ||
		fail "$name: world sizes: $r2"
	t2=$(sed 's/.* t \([0-9.]*\) .*/\1/' <<<"$r2")
	echo "$((last - from)) $(awk -v a="$t2" -v b="$2" \
		'BEGIN { printf "%.1f", a - b }')"
}

final_same() {
	$PY - "$BASE/ref/final" "$BASE/$1/final" "$1" <<'EOF' ||
import sys
a = [float(v) for v in open(sys.argv[1]).read().split()]
b = [float(v) for v in open(sys.argv[2]).read().split()]
d = max(abs(x - y) for x, y in zip(a, b))
print("max |ref - %s| over %d parameters: %.3g" % (sys.argv[3], len(a), d))
sys.exit(0 if len(a) == len(b) and d < 1e-5 else 1)
EOF
		fail "$1: final parameters differ from ref"
}

# tts NAME: seconds from the job's first start to its final parameters.
tts() {
	local t
	t=$(sed -n '1s/.* t \([0-9.]*\) .*/\1/p' "$BASE/$1/runs")
	awk -v a="$(stat -c %.Y "$BASE/$1/final")" -v b="$t" \
		'BEGIN { printf "%.1f", a - b }'
}

id_ref=$(submit ref $((W + 1)) "" --ml-spares=1) || fail "sbatch ref"
id_f=$(submit fail $((W + 1)) "" --ml-spares=1) || fail "sbatch fail"
id_rq=$(submit requeue "$W" "--spares 0" --requeue) ||
	fail "sbatch requeue"
[ "$SHRINK" = 1 ] && { id_sh=$(submit shrink "$W" "--spares 0 --shrink") ||
	fail "sbatch shrink"; }
t0=$(date +%s)

kill_worker fail "$id_f"
f_victim=$victim f_workers=$workers f_killed=$killed_at
kill_worker requeue "$id_rq"
rq_killed=$killed_at
if [ "$SHRINK" = 1 ]; then
	kill_worker shrink "$id_sh"
	sh_victim=$victim sh_killed=$killed_at
fi

# What runs when a job does not end: the tasks and their state.
stuck() { squeue; ps -eo pid,stat,wchan:30,args | grep '[t]rain_ddp'; }
wait_gone "$id_ref" "$LIM" || fail "ref did not finish: $(stuck)"
wait_gone "$id_f" "$LIM" || fail "fail did not finish: $(stuck)"
[ "$SHRINK" = 0 ] || wait_gone "$id_sh" "$LIM" ||
	fail "shrink did not finish: $(stuck)"
wait_gone "$id_rq" "$LIM" || fail "requeue did not finish: $(stuck)" \
	"$(scontrol show job "$id_rq" | grep -E "Reason|Nodes|Requeue")"
t1=$(date +%s)

jobs="ref fail requeue"
[ "$SHRINK" = 1 ] && jobs="$jobs shrink"
for j in $jobs; do
	[ -s "$BASE/$j/final" ] || fail "$j: no final parameters:" \
		"$(cat "$BASE/$j"/slurm-*.out)"
done
grep -q ' nodes ' "$BASE/ref/runs" && [ "$(wc -l <"$BASE/ref/runs")" = 1 ] ||
	fail "ref: not one run: $(cat "$BASE/ref/runs")"

# The spare path: relaunched in the same job, the spare in the failed
# worker's place, the others where they were.
out=$(cat "$BASE"/fail/slurm-*.out)
grep -q "node $f_victim failed: .* takes ring position 1" <<<"$out" ||
	fail "fail: topoml-run did not replace $f_victim: $out"
res=$(check_resumed fail "$f_killed" $((W * TPN))) || exit 1
read -r f_lost f_rec <<<"$res"
new=$(sed -n '2s/.* nodes //p' "$BASE/fail/runs")
[ "$(cut -d, -f2 <<<"$new")" != "$f_victim" ] &&
	[ "$(cut -d, -f1,3- <<<"$new")" = \
	  "$(cut -d, -f1,3- <<<"$f_workers")" ] ||
	fail "fail: workers $f_workers -> $new"
[ -e "$BASE/fail/steps.1.0" ] && fail "fail: the job was requeued"
final_same fail

# The requeue path: no spare, topoml-run requeued the job.
grep -q "no spare or relaunch left: scontrol requeue" \
	"$BASE"/requeue/slurm-*.out ||
	fail "requeue: topoml-run did not requeue:" \
		"$(cat "$BASE"/requeue/slurm-*.out)"
[ -e "$BASE/requeue/steps.1.0" ] || fail "requeue: no second run of the job"
res=$(check_resumed requeue "$rq_killed" $((W * TPN))) || exit 1
read -r rq_lost rq_rec <<<"$res"
final_same requeue

# Elastic: the same job goes on with W-1 ranks, the global batch kept.
if [ "$SHRINK" = 1 ]; then
	msg="node $sh_victim failed, no spare left: the step goes on with"
	grep -qF "$msg $((W - 1))" "$BASE"/shrink/slurm-*.out ||
		fail "shrink: topoml-run did not shrink:" \
			"$(cat "$BASE"/shrink/slurm-*.out)"
	res=$(check_resumed shrink "$sh_killed" $(((W - 1) * TPN))) || exit 1
	read -r sh_lost sh_rec <<<"$res"
	final_same shrink
fi
tref=$(tts ref)
ratio() { awk -v a="$(tts "$1")" -v b="$tref" \
	'BEGIN { printf "%.1f s = %.2fx", a, a / b }'; }
sh_tts= sh_msg=
if [ "$SHRINK" = 1 ]; then
	sh_tts=", shrink $(ratio shrink)"
	sh_msg="shrink to $((W - 1)) nodes: $sh_lost steps again, $sh_rec s; "
fi
echo "time to solution ($W x $TPN ranks, $STEPS steps of $MS ms): ref $tref s," \
	"spare $(ratio fail), requeue $(ratio requeue)$sh_tts"
echo "PASS: spare: $f_victim killed, relaunched on $new (was $f_workers)," \
	"$f_lost steps trained again, training again $f_rec s after the" \
	"kill; requeue path (cred_expire=5): $rq_lost steps again, $rq_rec s;" \
	"$sh_msg$(wc -w <<<"$jobs") jobs in $((t1 - t0)) s"
