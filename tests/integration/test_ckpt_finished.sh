#!/bin/bash
# A time-limit warning that lands on the training loop's last step: the
# checkpoint of that step answers the warning, and the job must end there
# (COMPLETED, no restart) instead of being requeued to run no step.  The
# loop waits at step N-2 for the warning, so the agreed step (N-2 + 2) is
# the last one whatever the timing; Checkpointer(last_step=N) marks the
# page finished and the SPANK timer leaves the job alone.  A second job
# stopping before its last step is still requeued (the check does not
# disable requeues).  Root only: a local cluster with the built topoml.so.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
cluster_need_root
[ -f "$TOP_BUILDDIR/spank/.libs/topoml.so" ] ||
	{ echo "SKIP: topoml.so not built"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: no $PY"; exit 77; }

cluster_tmpdir BASE ckfin
cp "$TOP_SRCDIR/contrib/ckpt/topoml_ckpt/__init__.py" "$BASE/topoml_ckpt.py"
# train.py N STOP_AT: N steps; at step STOP_AT it waits (up to 40 s) for
# the warning, so that the checkpoint answering it is step STOP_AT + 2.
cat >"$BASE/train.py" <<'EOF'
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topoml_ckpt
n, stop_at = int(sys.argv[1]), int(sys.argv[2])
ck = topoml_ckpt.Checkpointer(last_step=n)
start = ck.resume_step + 1 if ck.resume_path else 1
print("start restart %s at %d" % (os.environ.get("TOPOML_RESTART_COUNT"),
                                   start), flush=True)
for step in range(start, n + 1):
    if step == stop_at:
        for _ in range(400):
            if ck.pending():
                break
            time.sleep(0.1)
    if ck.should_checkpoint(step):
        with ck.save(step) as d:
            open(os.path.join(d, "state"), "w").write("%d\n" % step)
        print("ckpt %d" % step, flush=True)
# Work after the loop (evaluation, export): the plugin's timer sees the
# commit that answered the warning meanwhile, and must not requeue.
time.sleep(3)
print("done %d" % n, flush=True)
EOF
chmod -R a+rX "$BASE"

CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_SLURMD=2
cluster_start ckfin || exit $?
# The requeued job's restart count is all this test needs: it does not
# wait for that job to run again (cred_expire, 1200 s by default).
cd "$CLUSTER_DIR" || exit 1
fail() { cluster_fail "$*"; }

# submit NAME N STOP_AT: job id.  --time=1 with lead=50: the warning comes
# 10 s after the start (the plugin's minimum run), 50 s before the limit.
submit() {
	sbatch --parsable -N1 --time=1 -o "$BASE/$1.out" \
		--ml-ckpt="$BASE/$1,lead=50" \
		--wrap "exec $PY $BASE/train.py $2 $3" || fail "sbatch $1"
}
restarts() {
	scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*' |
		cut -d= -f2
}

last=$(submit last 12 10)	# warning answered by step 12 = the last
early=$(submit early 40 10)	# warning answered by step 12 of 40
for _ in $(seq 1 900); do
	s1=$(cluster_job_state "$last")
	r2=$(restarts "$early")
	case $s1 in COMPLETED | FAILED | CANCELLED | TIMEOUT) ;; *) s1= ;; esac
	[ -n "$s1" ] && [ "${r2:-0}" -ge 1 ] && break
	sleep 0.1
done
out=$(cat "$BASE/last.out" 2>/dev/null)
s=$(cluster_job_state "$last")
[ "$s" = COMPLETED ] || fail "job $last (warning on its last step): $s: $out"
[ "$(restarts "$last")" = 0 ] ||
	fail "job $last was requeued $(restarts "$last") times: $out"
echo "$out" | grep -qx 'ckpt 12' || fail "job $last: no checkpoint 12: $out"
echo "$out" | grep -qx 'done 12' || fail "job $last did not finish: $out"
[ "$(readlink "$BASE/last/$last/latest")" = step-000000000012 ] ||
	fail "job $last: latest is not step 12"
grep -q "job $last finished its loop: not requeued" \
	"$CLUSTER_DIR"/log/slurmd-n*.log ||
	fail "no 'finished its loop' in slurmd's log"
[ "$(restarts "$early")" -ge 1 ] ||
	fail "job $early (stopped at step 12 of 40) was not requeued:" \
		"$(cat "$BASE/early.out")"
scancel "$early"
echo "PASS: a warning answered by the last step ends job $last" \
	"(COMPLETED, 0 restarts); job $early stopped earlier was requeued"
