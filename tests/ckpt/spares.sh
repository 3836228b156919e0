#!/bin/bash
# Hot spares and relaunches (contrib/topoml-run) on a real local cluster
# with real PyTorch DDP (gloo, CPU), as an unprivileged user; five jobs
# at once, --no-kill, --ml-ckpt every 10 steps, W worker nodes (3) of
# TPN ranks (2: every path with 2+ tasks per node, as on GPU servers),
# ReturnToService=2: a node marked DOWN whose slurmd lives (or comes back)
# is in service again within milliseconds, so topoml-run must tell a
# failure from what the step saw, not from the node's state.
#   ref      4 nodes (3 workers + 1 spare: sbatch --ml-spares=1, the
#            plugin tells topoml-run which), no failure
#   fail     4 nodes (3 + 1): once step 20 is checkpointed a rank is
#            killed (kill -9): relaunched on the same nodes; once step 40
#            is checkpointed, the second worker's slurmd, slurmstepd and
#            tasks are killed, the node marked DOWN with scontrol (Slurm
#            alone takes SlurmdTimeout + a ping cycle) and its slurmd
#            started again at once: the spare takes the failed node's
#            ring position, in the same job
#   requeue  3 nodes, no spare, --requeue: scancel --signal=KILL of the
#            step after step 20 (relaunched on the same nodes), then the
#            second worker's slurmstepd and tasks killed and the node
#            marked DOWN (slurmd alive) after step 40: no spare or
#            relaunch left, topoml-run requeues the job (cred_expire=5)
#   shrink   3 nodes, no spare, topoml-run --shrink: `scontrol update
#            state=down` alone of the second worker after step 20: the
#            step goes on with 2 nodes in the same job (elastic resume:
#            resume_world_size 6, the global batch kept)
#   once     2 nodes, no checkpoint: a program that exits 3 is not
#            relaunched; one whose tasks all die of SIGKILL is relaunched
#            once, then not again without a new checkpoint
# The failed jobs resume each time from the last checkpoint and end with
# ref's parameters (within fp tolerance).  Prints the steps trained again,
# the time from each failure to training again and each job's time to
# solution (its first start to its final parameters) against ref's.
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
# 0: one failure per job (a node), as the benchmark measures: no killed
# rank, no scancel, no job "once"
TASKFAIL=${SPARES_TASKFAIL:-1}
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
CLUSTER_SLURMD=$(((3 + SHRINK) * W + 2 + 2 * TASKFAIL))
cluster_start spares
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM
cluster_user "$SP_USER"
# A requeued job waits cred_expire (default 1200 s) before it starts again.
# ReturnToService=2: a node DOWN with a live slurmd is back at once, and a
# requeued job may land on it again.  The benchmark's nodes die for good
# (slurmd killed, not started again): there ReturnToService=1 keeps them
# DOWN, as slurmctld returns a DOWN node to service under 2 when an RPC
# to it fails after it stopped responding (agent.c: DSH_DONE,
# node_did_resp), and a requeued job would land on the dead node.
RTS=2
[ "$TASKFAIL" = 0 ] && RTS=1
cat >>"$SLURM_CONF" <<EOF
AuthInfo=socket=$CLUSTER_DIR/munge/munge.socket,cred_expire=5
SlurmdTimeout=5
ReturnToService=$RTS
DebugFlags=NO_CONF_HASH
EOF
cluster_restart_ctld
fail() { cluster_fail "$*"; }

# submit NAME "SBATCH OPTIONS" "LAUNCHER OPTIONS" HOLDS: the job id.  The
# batch script is the user guide's hot-spares recipe (its #SBATCH lines, sizes
# and paths of this test), topoml-run the step; HOLDS: the steps before
# which the job waits for BASE/NAME/go.STEP (see hold_kill).
submit() {
	local name=$1 sopts=$2 lopts=$3 holds=$4 d=$BASE/$1 h t=""
	mkdir -p "$d"
	cat >"$d/job.sh" <<EOF
#!/bin/sh
#SBATCH $sopts
#SBATCH --ml-nccl=auto --ml-ckpt=$d/ck/%j,every=10
export OMP_NUM_THREADS=1
EOF
	for h in $holds; do t="$t${t:+,}$h:$d/go.$h"; done
	[ -z "$t" ] || printf 'export TRAIN_HOLD=%s\n' "$t" >>"$d/job.sh"
	printf 'exec %s %s-- %s %s %s %s %s\n' \
		"$BASE/bin/topoml-run" "${lopts:+$lopts }" "$PY" \
		"$BASE/bin/train_ddp.py" "$STEPS" "$MS" "$d" >>"$d/job.sh"
	chmod 755 "$d/job.sh"
	chown -R "$SP_USER" "$d"
	su -s /bin/sh "$SP_USER" -c "cd $d && SLURM_CONF=$SLURM_CONF \
		sbatch --parsable --time=$TLIM --open-mode=append \
		-o $d/slurm-%j.out $d/job.sh"
}

wait_gone() {
	local i
	for i in $(seq 1 "$2"); do
		[ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0
		sleep 1
	done
	return 1
}

# The slurmstepd of NODE (this cluster's: they keep its slurmd log open).
stepds_of() {
	local p
	for p in $(pgrep -x slurmstepd); do
		ls -l "/proc/$p/fd" 2>/dev/null |
			grep -q " -> $CLUSTER_DIR/log/slurmd-$1.log" && echo "$p"
	done
}

# The training process of rank RANK of job ID.
rank_pid() {
	local p
	for p in $(pgrep -f "$BASE/bin/train_ddp.py"); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
			grep -qx "SLURM_JOB_ID=$1" &&
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
			grep -qx "SLURM_PROCID=$2" && echo "$p"
	done
}

# back_at_once NODE: the node is in service again (ReturnToService=2)
# within 5 s; prints the seconds it took.
back_at_once() {
	local t0=$1 st
	for _ in $(seq 1 100); do
		st=$(sinfo -h -N -n "$2" -o '%t' 2>/dev/null | head -1)
		case $st in idle|mix|alloc)
			awk -v a="$(date +%s.%N)" -v b="$t0" \
				'BEGIN { printf "%.2f", a - b }'
			return 0 ;;
		esac
		sleep 0.05
	done
	fail "$2 not back in service 5 s after its failure: $st"
}

# hold_kill NAME ID STEP HOW: once job ID checkpointed STEP - 5 (it holds
# before STEP until then), fail it HOW, then let it go on.  HOW:
#   rank     kill -9 of the last rank (a task on the last worker)
#   scancel  scancel --signal=KILL JOBID.STEP of the training step
#   dead     the second worker's slurmd, slurmstepd and tasks killed, the
#            node marked DOWN, its slurmd started again
#   tasks    the second worker's slurmstepd and tasks killed, the node
#            marked DOWN (slurmd alive)
#   down     the second worker marked DOWN (scontrol), nothing killed
#   gone     as dead, its slurmd not started again (the benchmark's)
# Sets victim (the node, for dead/tasks/down), workers (the workers of
# the run that failed), failed_at (epoch seconds), back (seconds until
# the victim was in service again).
hold_kill() {
	local name=$1 id=$2 want=$(($3 - 5)) how=$4 ck=$BASE/$1/ck/$2 l="" p
	local pids="" step
	for _ in $(seq 1 "$((LIM * 2))"); do
		l=$(readlink "$ck/latest" 2>/dev/null)
		[ -n "$l" ] && [ "${l#step-}" -ge "$want" ] 2>/dev/null && break
		sleep 0.5
	done
	[ -n "$l" ] && [ "${l#step-}" -ge "$want" ] 2>/dev/null ||
		fail "$name: no checkpoint $want: $(cat "$BASE/$name"/slurm-*.out)"
	workers=$(sed -n '$s/.* nodes //p' "$BASE/$name/runs")
	victim=$(echo "$workers" | cut -d, -f2)
	[ -n "$victim" ] ||
		fail "$name: no worker list in $(cat "$BASE/$name/runs")"
	back=
	failed_at=$(date +%s.%N)
	case $how in
	rank)
		p=$(rank_pid "$id" $((W * TPN - 1)))
		[ -n "$p" ] || fail "$name: no rank $((W * TPN - 1))"
		kill -KILL $p ;;
	scancel)
		step=$(squeue -h -s -j "$id" -o %i | grep -E '\.[0-9]+$')
		[ -n "$step" ] || fail "$name: no step: $(squeue -s)"
		scancel --signal=KILL "$step" || fail "scancel $step" ;;
	dead|tasks|down|gone)
		case $how in dead|gone) cluster_slurmd_stop "$victim" ;; esac
		if [ "$how" != down ]; then
			pids=$(stepds_of "$victim")
			[ -n "$pids" ] || fail "$name: no slurmstepd of $victim"
			# shellcheck disable=SC2086
			kill -KILL $pids $(_cluster_descendants $pids) \
				2>/dev/null
		fi
		scontrol update nodename="$victim" state=down \
			reason=spares-test || fail "scontrol update $victim down"
		[ "$how" = dead ] && cluster_slurmd_start "$victim"
		if [ "$how" != gone ]; then
			back=$(back_at_once "$failed_at" "$victim") || exit 1
		fi ;;
	esac
	touch "$BASE/$name/go.$3"
	echo "$name: $how${back:+ $victim (in service again after $back s)}" \
		"after $l"
}

# check_resumed NAME K FAILED_AT WORLD: run K + 1 of the job started at
# the last checkpoint of run K, with WORLD ranks.  Prints the steps
# trained again and the seconds from the failure to run K + 1's start.
check_resumed() {
	local name=$1 k=$2 rk r2 from last t2 runs
	runs=$(cat "$BASE/$name/runs")
	rk=$(sed -n "${k}p" <<<"$runs")
	r2=$(sed -n "$((k + 1))p" <<<"$runs")
	[ -n "$r2" ] || fail "$name: want $((k + 1)) runs: $runs"
	from=$(awk '{ print $4 }' <<<"$r2")
	last=$(awk 'END { print $1 }' "$BASE/$name/steps.$(awk \
		'{ print $12 "." $2 }' <<<"$rk")")
	# The last complete checkpoint: that of step LAST rounded down, or
	# the one before when the failure came between logging step LAST (a
	# multiple of 10) and committing its checkpoint.
	[ "$from" -ge 20 ] && { [ "$from" = $((last / 10 * 10)) ] ||
		{ [ $((last % 10)) = 0 ] && [ "$from" = $((last - 10)) ]; }; } ||
		fail "$name: run $((k + 1)) resumed from $from, run $k" \
			"reached $last"
	grep -q "world $4 resume_world $((W * TPN)) " <<<"$r2" ||
		fail "$name: world sizes: $r2"
	t2=$(sed 's/.* t \([0-9.]*\) .*/\1/' <<<"$r2")
	echo "$((last - from)) $(awk -v a="$t2" -v b="$3" \
		'BEGIN { printf "%.1f", a - b }')"
}

# nodes_of NAME K: the workers of run K.
nodes_of() { sed -n "${2}s/.* nodes //p" "$BASE/$1/runs"; }

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

# has NAME TEXT: the job's output says TEXT (fixed string).
has() {
	grep -qF -- "$2" "$BASE/$1"/slurm-*.out ||
		fail "$1: no '$2' in: $(cat "$BASE/$1"/slurm-*.out)"
}

# The job "once": 2 nodes, no checkpoint, the launcher alone.
if [ "$TASKFAIL" = 1 ]; then
	mkdir -p "$BASE/once"
	cat >"$BASE/once/job.sh" <<EOF
#!/bin/sh
$BASE/bin/topoml-run -- sh -c 'exit 3'
echo "exit3 rc=\$?"
$BASE/bin/topoml-run --max-restarts 3 -- sh -c 'kill -9 \$\$'
echo "kill9 rc=\$?"
EOF
	chmod 755 "$BASE/once/job.sh"
	chown -R "$SP_USER" "$BASE/once"
	id_once=$(su -s /bin/sh "$SP_USER" -c "cd $BASE/once &&
		SLURM_CONF=$SLURM_CONF sbatch --parsable -N2 \
		--ntasks-per-node=$TPN --no-kill --time=2 \
		-o $BASE/once/slurm-%j.out $BASE/once/job.sh") ||
		fail "sbatch once"
fi
f_holds=25 rq_holds=25
[ "$TASKFAIL" = 1 ] && f_holds="25 45" rq_holds="25 45"
# User guide's recipe: -N workers+1 --ntasks-per-node --ml-spares=1 --no-kill
# --requeue (ref, fail); without the spare (requeue, shrink).
sp="-N $((W + 1)) --ntasks-per-node=$TPN --ml-spares=1 --no-kill --requeue"
id_ref=$(submit ref "$sp" "" "") || fail "sbatch ref"
id_f=$(submit fail "$sp" "" "$f_holds") || fail "sbatch fail"
id_rq=$(submit requeue "-N $W --ntasks-per-node=$TPN --no-kill --requeue" \
	"--spares 0" "$rq_holds") || fail "sbatch requeue"
[ "$SHRINK" = 1 ] && { id_sh=$(submit shrink \
	"-N $W --ntasks-per-node=$TPN --no-kill" "--spares 0 --shrink" 25) ||
	fail "sbatch shrink"; }
t0=$(date +%s)

# The first failure of each job at step 25, then the second ones at 45.
if [ "$TASKFAIL" = 1 ]; then
	hold_kill fail "$id_f" 25 rank
	f_t1=$failed_at f_w1=$workers
	hold_kill requeue "$id_rq" 25 scancel
	rq_t1=$failed_at rq_w1=$workers
fi
if [ "$SHRINK" = 1 ]; then
	hold_kill shrink "$id_sh" 25 down
	sh_victim=$victim sh_t=$failed_at sh_back=$back
fi
f_at=$((20 + 20 * TASKFAIL + 5)) f_how=gone rq_how=gone
[ "$TASKFAIL" = 1 ] && f_how=dead rq_how=tasks
hold_kill fail "$id_f" "$f_at" "$f_how"
f_victim=$victim f_w=$workers f_t=$failed_at f_back=$back
hold_kill requeue "$id_rq" "$f_at" "$rq_how"
rq_victim=$victim rq_t=$failed_at rq_back=$back

# What runs when a job does not end: the tasks and their state.
stuck() { squeue; ps -eo pid,stat,wchan:30,args | grep '[t]rain_ddp'; }
wait_gone "$id_ref" "$LIM" || fail "ref did not finish: $(stuck)"
wait_gone "$id_f" "$LIM" || fail "fail did not finish: $(stuck)"
[ "$SHRINK" = 0 ] || wait_gone "$id_sh" "$LIM" ||
	fail "shrink did not finish: $(stuck)"
wait_gone "$id_rq" "$LIM" || fail "requeue did not finish: $(stuck)" \
	"$(scontrol show job "$id_rq" | grep -E "Reason|Nodes|Requeue")"
[ "$TASKFAIL" = 0 ] || wait_gone "$id_once" 60 ||
	fail "once did not finish: $(stuck)"
t1=$(date +%s)

jobs="ref fail requeue"
[ "$SHRINK" = 1 ] && jobs="$jobs shrink"
for j in $jobs; do
	[ -s "$BASE/$j/final" ] || fail "$j: no final parameters:" \
		"$(cat "$BASE/$j"/slurm-*.out)"
done
grep -q ' nodes ' "$BASE/ref/runs" && [ "$(wc -l <"$BASE/ref/runs")" = 1 ] ||
	fail "ref: not one run: $(cat "$BASE/ref/runs")"
nf=$((1 + TASKFAIL))	# the run that the node failure ended
same="nodes healthy: the step runs again on the same nodes"

# A killed rank: the same nodes again, in the same job.
if [ "$TASKFAIL" = 1 ]; then
	has fail "task failure ($(cut -d, -f"$W" <<<"$f_w1"): task" \
		"$((W * TPN - 1)): Killed), $same (relaunch 1 of 2)"
	[ "$(nodes_of fail 2)" = "$f_w1" ] ||
		fail "fail: relaunch on $(nodes_of fail 2), not $f_w1"
	res=$(check_resumed fail 1 "$f_t1" $((W * TPN))) || exit 1
	read -r f_lost1 f_rec1 <<<"$res"
fi
# The spare path: a node that failed and was back at once; the spare in
# its place, the others where they were.
has fail "node $f_victim failed: left the job"
grep -q "node $f_victim failed: .* takes ring position 1 (relaunch $nf of 2)" \
	"$BASE"/fail/slurm-*.out ||
	fail "fail: topoml-run did not replace $f_victim:" \
		"$(cat "$BASE"/fail/slurm-*.out)"
res=$(check_resumed fail "$nf" "$f_t" $((W * TPN))) || exit 1
read -r f_lost f_rec <<<"$res"
new=$(nodes_of fail $((nf + 1)))
[ "$(cut -d, -f2 <<<"$new")" != "$f_victim" ] &&
	[ "$(cut -d, -f1,3- <<<"$new")" = "$(cut -d, -f1,3- <<<"$f_w")" ] ||
	fail "fail: workers $f_w -> $new"
[ "$(wc -l <"$BASE/fail/runs")" = $((nf + 1)) ] ||
	fail "fail: runs $(cat "$BASE/fail/runs")"
ls "$BASE"/fail/steps.1.* >/dev/null 2>&1 && fail "fail: the job was requeued"
final_same fail

# scancel --signal=KILL of the step: the same nodes again; then the node
# failure with no spare or relaunch left: requeued.
if [ "$TASKFAIL" = 1 ]; then
	grep -q "task failure (n[0-9]*: tasks* [0-9,-]*: Killed), $same" \
		"(relaunch 1 of 1)" \
		"$BASE"/requeue/slurm-*.out || fail "requeue: scancel:" \
		"$(cat "$BASE"/requeue/slurm-*.out)"
	[ "$(nodes_of requeue 2)" = "$rq_w1" ] ||
		fail "requeue: relaunch on $(nodes_of requeue 2), not $rq_w1"
	res=$(check_resumed requeue 1 "$rq_t1" $((W * TPN))) || exit 1
	read -r rq_lost1 rq_rec1 <<<"$res"
	has requeue "node $rq_victim failed, all 1 relaunches used"
fi
has requeue "node $rq_victim failed: left the job"
has requeue "node $rq_victim failed, no spare or relaunch left:" \
	"scontrol requeue"
[ -e "$BASE/requeue/steps.1.0" ] || fail "requeue: no second run of the job"
[ "$(wc -l <"$BASE/requeue/runs")" = $((nf + 1)) ] ||
	fail "requeue: runs $(cat "$BASE/requeue/runs")"
res=$(check_resumed requeue "$nf" "$rq_t" $((W * TPN))) || exit 1
read -r rq_lost rq_rec <<<"$res"
final_same requeue

# Elastic: the same job goes on with W-1 ranks, the global batch kept.
if [ "$SHRINK" = 1 ]; then
	has shrink "node $sh_victim failed: left the job"
	has shrink "node $sh_victim failed, no spare left: the step goes on" \
		"with $((W - 1))"
	res=$(check_resumed shrink 1 "$sh_t" $(((W - 1) * TPN))) || exit 1
	read -r sh_lost sh_rec <<<"$res"
	final_same shrink
fi

# The program's own exit is not relaunched; a repeated kill without a
# new checkpoint is relaunched once.
if [ "$TASKFAIL" = 1 ]; then
	has once "exit3 rc=3"
	has once "(the program's own exit: no task killed, no node lost):" \
		"not relaunched"
	has once "kill9 rc=137"
	has once "Killed), $same (relaunch 1 of 3)"
	has once "Killed) again before a new checkpoint (none): not relaunched"
	[ "$(grep -c "topoml-run: step on 2 workers" \
		"$BASE"/once/slurm-*.out)" = 3 ] ||
		fail "once: not 3 launches: $(cat "$BASE"/once/slurm-*.out)"
fi

tref=$(tts ref)
ratio() { awk -v a="$(tts "$1")" -v b="$tref" \
	'BEGIN { printf "%.1f s = %.2fx", a, a / b }'; }
sh_tts= sh_msg= t_msg=
if [ "$SHRINK" = 1 ]; then
	sh_tts=", shrink $(ratio shrink)"
	sh_msg="; shrink to $((W - 1)) nodes (node down alone, back after"
	sh_msg="$sh_msg $sh_back s): $sh_lost steps again, $sh_rec s"
fi
if [ "$TASKFAIL" = 1 ]; then
	t_msg="killed rank: $f_lost1 steps again, training again $f_rec1 s"
	t_msg="$t_msg after; scancel --signal=KILL: $rq_lost1 steps again,"
	t_msg="$t_msg $rq_rec1 s; "
fi
echo "time to solution ($W x $TPN ranks, $STEPS steps of $MS ms):" \
	"ref $tref s," \
	"spare $(ratio fail), requeue $(ratio requeue)$sh_tts"
fb= rqb=
[ -n "$f_back" ] && fb=" (back after $f_back s)"
[ -n "$rq_back" ] && rqb=", node back after $rq_back s"
echo "PASS: ${t_msg}spare: $f_victim killed$fb," \
	"relaunched on $new (was $f_w), $f_lost steps trained again, training" \
	"again $f_rec s after the kill; requeue path (cred_expire=5$rqb):" \
	"$rq_lost steps again, $rq_rec s$sh_msg;" \
	"$(($(wc -w <<<"$jobs") + TASKFAIL)) jobs in $((t1 - t0)) s"
