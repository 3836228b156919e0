#!/bin/bash
# --ml-ckpt on a real local Slurm cluster, all scenarios at once (one node
# each):
#   limit_c, limit_py  time limit 1 min, lead=50: warned, checkpointed,
#                      requeued by the plugin, resumed; >= 3 interruptions,
#                      the same final state as an uninterrupted run
#   requeue            scontrol requeue twice mid-run (SIGTERM route)
#   nodefail           the job's slurmd killed: slurmctld requeues the job,
#                      the new run resumes, the stale run is fenced and killed
#   user               an unprivileged user's job: files and page are the
#                      user's, warning and requeue work the same
#   baddir             a DIR the user cannot write: sbatch fails, saying why
#   shared             a DIR the user's jobs share (%u): a new job does not
#                      resume another job's run unless resume=any|JOBID
#   preempt            preempted (PreemptMode=REQUEUE) by a higher tier job
#   interval           interval=2 through the TOPOML_CKPT environment twin
#   ranks              2 nodes x 2 ranks in lockstep: all ranks checkpoint
#                      the same steps, warning and requeue included
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
cluster_need_root
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}

PY=/usr/bin/python3
CK_USER=topomlckpt
so=$TOP_BUILDDIR/spank/.libs/topoml.so
cluster_need_files "$so" "$TOP_BUILDDIR/tests/ckpt/.libs/train_c" \
	"$TOP_BUILDDIR/contrib/ckpt/.libs/libtopoml-ckpt.so.0" "$PY"

# Everything the jobs run lives in a directory every user can read.
cluster_tmpdir BASE ckpt
mkdir -p "$BASE/bin"
cp "$TOP_BUILDDIR/tests/ckpt/.libs/train_c" \
	"$TOP_BUILDDIR/contrib/ckpt/.libs/libtopoml-ckpt.so.0" \
	"$TOP_SRCDIR/tests/ckpt/train_py.py" \
	"$TOP_SRCDIR/contrib/ckpt/topoml_ckpt.py" \
	"$TOP_SRCDIR/tests/ckpt/train_ring.py" "$BASE/bin/"
# The ranks scenario borrows the demo's ring all-reduce.
RING=$TOP_SRCDIR/contrib/demo/ring.py
[ -f "$RING" ] && cp "$RING" "$BASE/bin/"
chmod -R a+rX "$BASE/bin"
cluster_user "$CK_USER"
CK_UID=$(id -u "$CK_USER")

CLUSTER_SPANK=1
# Pages go to CACHE/ckpt/<uid>/: inside BASE, removed with it.
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_SLURMD=10
cluster_start ckpt
# A requeued job waits cred_expire (default 1200 s) before it starts again;
# a node is declared down after SlurmdTimeout.
# Preemption: jobs of partition "high" requeue those of "main".
cat >>"$SLURM_CONF" <<EOF
AuthInfo=socket=$CLUSTER_DIR/munge/munge.socket,cred_expire=5
SlurmdTimeout=5
DebugFlags=NO_CONF_HASH
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=high Nodes=n[1-$CLUSTER_SLURMD] PriorityTier=10 State=UP OverSubscribe=EXCLUSIVE
EOF
cluster_restart_ctld

fail() { cluster_fail "$*"; }

# reference PROG STEPS: the final line of an uninterrupted run.
reference() {
	if [ "$1" = c ]; then
		env -u TOPOML_CKPT_DIR LD_LIBRARY_PATH="$BASE/bin" \
			"$BASE/bin/train_c" "$2" 0
	else
		env -u TOPOML_CKPT_DIR "$PY" "$BASE/bin/train_py.py" "$2" 0
	fi | grep '^final'
}

# submit NAME AS_USER PROG STEPS MS CKPT_OPTS [sbatch args]: prints job id.
submit() {
	local name=$1 who=$2 prog=$3 steps=$4 ms=$5 opts=$6 cmd
	shift 6
	local d=$BASE/$name
	mkdir -p "$d"
	if [ "$prog" = c ]; then
		cmd="LD_LIBRARY_PATH=$BASE/bin exec $BASE/bin/train_c"
	else
		cmd="exec $PY $BASE/bin/train_py.py"
	fi
	printf '#!/bin/sh\n%s %s %s %s\n' "$cmd" "$steps" "$ms" "$d" \
		>"$d/job.sh"
	chmod 755 "$d/job.sh"
	if [ "$who" = user ]; then
		chown -R "$CK_USER" "$d"
		su -s /bin/sh "$CK_USER" -c "cd $d && SLURM_CONF=$SLURM_CONF \
			sbatch --parsable -N1 -o $d/slurm-%j.out \
			--ml-ckpt=$d/ck,$opts $* $d/job.sh"
	else
		(cd "$d" && sbatch --parsable -N1 -o "$d/slurm-%j.out" \
			--ml-ckpt="$d/ck,$opts" "$@" "$d/job.sh")
	fi
}

restarts() {
	scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*' |
		cut -d= -f2
}

# check_resume NAME MIN_STOPS REF: every run started where the previous
# one stopped, at least MIN_STOPS interruptions, the final state is REF.
check_resume() {
	local name=$1 min=$2 ref=$3 d=$BASE/$1 stops final last
	[ -f "$d/runs" ] || fail "$name: no run recorded"
	stops=$(grep -c '^stop' "$d/runs")
	[ "$stops" -ge "$min" ] ||
		fail "$name: $stops interruptions, want >= $min: $(cat "$d/runs")"
	awk '
		/^stop/ { at = $4; r = $2; next }
		/^restart/ {
			if (NR > 1 && at != "" && $4 != at) {
				print "restart " $2 " from " $4 ", stopped at " at
				bad = 1
			}
			at = ""
		}
		END { exit bad }' "$d/runs" ||
		fail "$name: resumed at the wrong step: $(cat "$d/runs")"
	last=$(ls "$d"/result.* 2>/dev/null | sort -t. -k2 -n | tail -1)
	[ -n "$last" ] || fail "$name: no final result: $(cat "$d/runs")"
	final=$(cat "$last")
	[ "$final" = "$ref" ] ||
		fail "$name: final '$final', uninterrupted run '$ref'"
	echo "$name: $stops interruptions, runs: $(paste -sd' ' "$d/runs" |
		tr -s ' ')"
}

wait_latest() {
	local i
	for i in $(seq 1 "$2"); do
		[ -L "$1/latest" ] && return 0
		sleep 0.5
	done
	return 1
}

REF_C700=$(reference c 700)
REF_PY700=$(reference py 700)
[ "$REF_C700" = "$REF_PY700" ] ||
	fail "C and Python programs disagree: $REF_C700 / $REF_PY700"

# 1. A DIR the user cannot write: refused at submit.
mkdir -p "$BASE/rootonly"
chmod 755 "$BASE/rootonly"
out=$(su -s /bin/sh "$CK_USER" -c "cd /tmp && SLURM_CONF=$SLURM_CONF \
	sbatch --parsable -N1 --ml-ckpt=$BASE/rootonly/x/y,every=5 \
	--wrap true" 2>&1) && fail "sbatch accepted an unwritable DIR: $out"
echo "$out" | grep -q "rootonly.*not writable by uid $CK_UID" ||
	fail "unclear error for an unwritable DIR: $out"
echo "baddir: sbatch refused: $out"

# 1b. A DIR the jobs of a user share (%u, no %j): a new job resumes
# another job's run only when the user names it, and says which
# checkpoint it resumed and why (issue 29 item 5).
sd=$BASE/shared
mkdir -p "$sd"
chown "$CK_USER" "$sd"
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/bin exec %s/bin/train_c 40 5 %s\n' \
	"$BASE" "$BASE" "$sd" >"$sd/job.sh"
chmod 755 "$sd/job.sh"
# shared [OPTS]: run a job on DIR=$sd/%u/ck to its end; prints its id and
# its final state.
shared() {
	local id i s
	id=$(su -s /bin/sh "$CK_USER" -c "cd $sd && SLURM_CONF=$SLURM_CONF \
		sbatch --parsable -N1 -o $sd/%j.out \
		--ml-ckpt=$sd/%u/ck,every=10${1:-} $sd/job.sh") || return 1
	for i in $(seq 1 120); do
		s=$(scontrol show job "$id" 2>/dev/null |
			grep -o 'JobState=[A-Z]*' | cut -d= -f2)
		case "$s" in COMPLETED | FAILED) break ;; esac
		sleep 0.5
	done
	echo "$id $s"
}
ck=$sd/$CK_USER/ck
read -r j1 s <<<"$(shared)" || fail "shared: sbatch"
[ "$s" = COMPLETED ] && grep -q '^final steps=40' "$sd/$j1.out" ||
	fail "shared: first job $j1 $s: $(cat "$sd/$j1.out")"
# The same job again: refused, the reason once, nothing trained.
read -r j2 s <<<"$(shared)" || fail "shared: sbatch 2"
out=$(cat "$sd/$j2.out")
[ "$s" = FAILED ] || fail "shared: job $j2 resubmitted ended $s: $out"
[ "$(grep -c 'topoml:' <<<"$out")" = 1 ] && grep -qF "topoml: --ml-ckpt: \
$ck holds the run of job $j1 (latest checkpoint: step 40); a job resumes \
only its own run: add resume=$j1" <<<"$out" ||
	fail "shared: job $j2 did not say why once: $out"
case "$out" in *start*) fail "shared: job $j2 trained: $out" ;; esac
# resume=any: the user asks to continue it; the job says from where.
read -r j3 s <<<"$(shared ,resume=any)" || fail "shared: sbatch 3"
out=$(cat "$sd/$j3.out")
[ "$s" = COMPLETED ] && grep -qxF "topoml: --ml-ckpt: resuming from \
$ck/step-000000000040 (step 40): the run of job $j1, as resume=any asks" \
	<<<"$out" && grep -qx 'start restart 0 from 40' <<<"$out" ||
	fail "shared: resume=any job $j3 $s: $out"
# resume=JOBID: the run of that job only (job 3 took it over).
read -r j4 s <<<"$(shared ",resume=$j1")" || fail "shared: sbatch 4"
[ "$s" = FAILED ] && grep -qF "holds the run of job $j3" "$sd/$j4.out" ||
	fail "shared: resume=$j1 job $j4 $s: $(cat "$sd/$j4.out")"
read -r j5 s <<<"$(shared ",resume=$j3")" || fail "shared: sbatch 5"
[ "$s" = COMPLETED ] &&
	grep -qF "the run of job $j3, as resume=$j3 asks" "$sd/$j5.out" ||
	fail "shared: resume=$j3 job $j5 $s: $(cat "$sd/$j5.out")"
echo "shared: job $j2 refused, $j3 (resume=any) and $j5 (resume=$j3)" \
	"resumed step 40 of job $j1's run"

# 2. All the runs at once.
id_lc=$(submit limit_c root c 700 50 "every=10,lead=50" --time=1) ||
	fail "sbatch limit_c"
id_lp=$(submit limit_py root py 700 50 "every=10,lead=50" --time=1) ||
	fail "sbatch limit_py"
id_rq=$(submit requeue root c 1500 20 "every=20" --time=10) ||
	fail "sbatch requeue"
id_nf=$(submit nodefail root c 2500 20 "every=20" --time=10) ||
	fail "sbatch nodefail"
id_us=$(submit user user c 400 50 "every=10,lead=50" --time=1) ||
	fail "sbatch user"
id_pe=$(submit preempt root c 1500 20 "every=20" --time=10) ||
	fail "sbatch preempt"
# interval= through the TOPOML_CKPT twin of the option; keep=0 keeps all.
mkdir -p "$BASE/interval"
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/bin exec %s/bin/train_c 400 20 %s/interval\n' \
	"$BASE" "$BASE" "$BASE" >"$BASE/interval/job.sh"
id_iv=$(cd "$BASE/interval" && TOPOML_CKPT="$BASE/interval/ck,interval=2,keep=0" \
	sbatch --parsable -N1 --time=5 -o "$BASE/interval/slurm-%j.out" \
	"$BASE/interval/job.sh") || fail "sbatch interval"
# Two nodes, four ranks in lockstep (ring all-reduce per step).
id_rk=
if [ -f "$BASE/bin/ring.py" ]; then
	mkdir -p "$BASE/ranks"
	printf '#!/bin/sh\nexec srun %s %s/bin/train_ring.py 400 50 %s/ranks\n' \
		"$PY" "$BASE" "$BASE" >"$BASE/ranks/job.sh"
	id_rk=$(sbatch --parsable -N2 --ntasks-per-node=2 --time=1 \
		-o "$BASE/ranks/slurm-%j.out" \
		--ml-ckpt="$BASE/ranks/ck,every=5,lead=50" \
		"$BASE/ranks/job.sh") || fail "sbatch ranks"
else
	echo "ranks: skipped ($RING absent)"
fi
REF_C1500=$(reference c 1500)
REF_C2500=$(reference c 2500)
REF_C400=$(reference c 400)

# The user's job: its page (in the user's own directory of cache_dir) and
# its checkpoint directory are the user's.
for i in $(seq 1 60); do
	page=$(ls "$BASE/cache/ckpt/$CK_UID/job.$id_us".* 2>/dev/null |
		head -1)
	[ -n "$page" ] && break
	sleep 0.5
done
[ -n "$page" ] || fail "user: no shared page for job $id_us"
[ "$(stat -c %u "$page")" = "$CK_UID" ] || fail "user: page $page not the user's"
[ "$(stat -c %u:%a "$BASE/cache/ckpt/$CK_UID")" = "$CK_UID:700" ] ||
	fail "user: page directory not the user's alone"
wait_latest "$BASE/user/ck/$id_us" 60 || fail "user: no checkpoint"
[ "$(stat -c %U "$BASE/user/ck/$id_us")" = "$CK_USER" ] ||
	fail "user: checkpoint directory not the user's"
bad=$(find "$BASE/user/ck" ! -user "$CK_USER" | head -3)
[ -z "$bad" ] || fail "user: files not the user's: $bad"

# scontrol requeue, twice, each once the run checkpointed.
d=$BASE/requeue/ck/$id_rq
wait_latest "$d" 60 || fail "requeue: no checkpoint"
scontrol requeue "$id_rq" || fail "scontrol requeue $id_rq"
for i in $(seq 1 120); do
	grep -q '^restart 1' "$BASE/requeue/runs" 2>/dev/null && break
	sleep 0.5
done
grep -q '^restart 1' "$BASE/requeue/runs" || fail "requeue: no second run"
sleep 3
scontrol requeue "$id_rq" || fail "second scontrol requeue $id_rq"

# Preemption: a job of the higher tier takes the node.
d=$BASE/preempt/ck/$id_pe
wait_latest "$d" 60 || fail "preempt: no checkpoint"
pnode=$(squeue -h -j "$id_pe" -o %N)
id_hi=$(sbatch --parsable -p high -w "$pnode" -o /dev/null --wrap 'sleep 3') ||
	fail "sbatch -p high"

# Node failure: stop the slurmd of the node the job runs on.
d=$BASE/nodefail/ck/$id_nf
wait_latest "$d" 60 || fail "nodefail: no checkpoint"
node=$(squeue -h -j "$id_nf" -o %N)
[ -n "$node" ] || fail "nodefail: job $id_nf has no node"
cluster_slurmd_stop "$node"
for i in $(seq 1 120); do
	r=$(restarts "$id_nf")
	[ "${r:-0}" -ge 1 ] && [ "$(squeue -h -j "$id_nf" -o %T)" = RUNNING ] &&
		break
	sleep 1
done
[ "${r:-0}" -ge 1 ] || fail "nodefail: job $id_nf not requeued after $node died"
newnode=$(squeue -h -j "$id_nf" -o %N)
[ "$newnode" != "$node" ] || fail "nodefail: restarted on the dead $node"
echo "nodefail: $node down, job $id_nf runs again on $newnode"

for id in $id_lc $id_lp $id_rq $id_nf $id_us $id_rk $id_iv $id_pe $id_hi; do
	cluster_job_wait_gone "$id" 400 ||
		fail "job $id did not finish: $(squeue -j "$id")"
done
cluster_slurmd_start "$node"

check_resume limit_c 3 "$REF_C700"
check_resume limit_py 3 "$REF_PY700"
check_resume requeue 2 "$REF_C1500"
check_resume user 1 "$REF_C400"
check_resume interval 0 "$REF_C400"
check_resume preempt 1 "$REF_C1500"
# 400 steps of 20 ms: about 8 s, so 2 to 5 checkpoints 2 s apart.
n=$(ls -d "$BASE/interval/ck/$id_iv"/step-* 2>/dev/null | wc -l)
[ "$n" -ge 2 ] && [ "$n" -le 5 ] ||
	fail "interval: $n checkpoints in ~8 s with interval=2"
echo "interval: $n checkpoints: $(cd "$BASE/interval/ck/$id_iv" &&
	ls -d step-* | paste -sd' ')"
if [ -n "$id_rk" ]; then
	check_resume ranks 1 "$(reference py 400)"
	# All four ranks on two nodes checkpointed the same steps, every run.
	for f in "$BASE"/ranks/ckpts.*.0; do
		for r in 1 2 3; do
			cmp -s "$f" "${f%.0}.$r" ||
				fail "ranks: rank $r disagrees with rank 0 in" \
					"${f##*/}: $(paste -sd, "$f") /" \
					"$(paste -sd, "${f%.0}.$r")"
		done
	done
	echo "ranks: 4 ranks on 2 nodes agreed: $(for f in \
		"$BASE"/ranks/ckpts.*.0; do paste -sd, "$f"; done |
		paste -sd'|')"
fi
# The node failure killed the run without warning: it resumes from the
# last periodic checkpoint, and the stale run never finished.
[ -e "$BASE/nodefail/result.0" ] &&
	fail "nodefail: the stale run on $node finished: $(cat "$BASE/nodefail/runs")"
# The stale run was fenced: its commit refused (ESTALE) or its tasks
# killed by its slurmstepd's timer.
grep -q "Stale file handle" "$BASE"/nodefail/slurm-*.out ||
	grep -q "job $id_nf runs again elsewhere" \
		"$CLUSTER_DIR/log/slurmd-$node.log" ||
	fail "nodefail: the stale run was not fenced"
check_resume nodefail 0 "$REF_C2500"
grep -q '^restart 1 from [1-9]' "$BASE/nodefail/runs" ||
	fail "nodefail: not resumed from a checkpoint: $(cat "$BASE/nodefail/runs")"
echo "PASS: warning+requeue (C, Python, unprivileged user, 2x2 ranks)," \
	"scontrol requeue, preemption, node failure: same final state as" \
	"uninterrupted runs"
