#!/bin/bash
# --ml-ckpt's shared page is the user's own file and its lock a flock on
# it: a process of the user's that escaped the job (setsid, reparented to
# init: proctrack/linuxproc does not follow it, as here) holds LOCK_EX for
# ever.  On a real local cluster, as an unprivileged user:
#   - a step started while it is held fails with the reason in the job's
#     output (slurmstepd's user_init does not wait for ever);
#   - the batch step's timer thread (interval events) and exit hook do not
#     wait either: the job ends, no node is left completing or drained.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
cluster_need_root
command -v flock >/dev/null || { echo "SKIP: no flock(1)"; exit 77; }
so=$TOP_BUILDDIR/spank/.libs/topoml.so
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }

U=topomllk
cluster_tmpdir BASE ckptlock
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	cluster_stop
}
CLUSTER_SLURMD=1
CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_CONF_EXTRA="MinJobAge=600"
cluster_start ckptlock
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM
cluster_user "$U"
mkdir -p "$BASE/$U"
chown "$U" "$BASE/$U"

# The batch script: the holder escapes the job (setsid, its own session,
# reparented to init) and tells its pid; then a step on the same page.
cat >"$BASE/$U/job.sh" <<'EOF'
#!/bin/bash
setsid flock -x "$TOPOML_CKPT_PAGE" sh -c \
	'echo $$ >"$HOME_DIR/holder.pid"; exec sleep 600' </dev/null \
	>/dev/null 2>&1 &
for i in $(seq 1 50); do [ -s "$HOME_DIR/holder.pid" ] && break; sleep 0.1; done
sleep 3		# interval=1: the timer raises events meanwhile
srun -n1 echo STEP_RAN
echo "SRUN_RC=$?"
EOF
chmod 755 "$BASE/$U/job.sh"
id=$(cd "$BASE/$U" && runuser -u "$U" -- env SLURM_CONF="$SLURM_CONF" \
	HOME_DIR="$BASE/$U" sbatch --parsable -N1 -o "$BASE/$U/job.out" \
	--ml-ckpt="$BASE/$U/ck,interval=1" ./job.sh) ||
	cluster_fail "sbatch"
end=
for i in $(seq 1 120); do
	s=$(cluster_job_state "$id")
	case "$s" in
	COMPLETED | FAILED) end=$s; break ;;
	esac
	sleep 0.5
done
holder=$(cat "$BASE/$U/holder.pid" 2>/dev/null)
[ -n "$holder" ] && kill -0 "$holder" 2>/dev/null ||
	cluster_fail "the lock holder did not start or did not outlive the job: $(cat "$BASE/$U/job.out")"
[ "$(stat -c %U "/proc/$holder")" = "$U" ] ||
	cluster_fail "holder $holder is not $U's"
[ -n "$end" ] ||
	cluster_fail "job $id still ${s:-?} after 60 s with the page locked: $(cat "$BASE/$U/job.out")"
out=$(cat "$BASE/$U/job.out")
echo "$out" | grep -q "shared page .*locked (flock) by another process" ||
	cluster_fail "the step's failure does not give the reason: $out"
echo "$out" | grep -q STEP_RAN && cluster_fail "the step ran: $out"
echo "$out" | grep -q "SRUN_RC=[1-9]" ||
	cluster_fail "srun did not fail: $out"
bad=$(sinfo -h -N -o '%N %t %E' | awk '$2 ~ /drain|drng|down|comp/')
[ -z "$bad" ] || cluster_fail "node left: $bad"
echo "ok: job $id $end with the page locked by $holder: $(echo "$out" |
	grep -m1 'shared page')"
kill "$holder"
holder=
echo "PASS: a held page lock fails the step, not slurmstepd or the node"
