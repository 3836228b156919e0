#!/bin/bash
# Hot spares (contrib/topoml-run) on a real local cluster with real
# PyTorch DDP (gloo, CPU), as an unprivileged user: two jobs of 5 nodes
# (4 workers + 1 spare, --no-kill, --ml-ckpt every 10 steps) at once:
#   ref    no failure: trains on its 4 workers, the spare never used
#   fail   once a checkpoint exists, one worker's slurmd and its tasks
#          are killed (and the node marked DOWN with scontrol: Slurm alone
#          takes SlurmdTimeout + a ping cycle); topoml-run relaunches the
#          step on the spare in the failed node's ring position, the
#          training resumes from the last checkpoint
# Both end with the same parameters (within fp tolerance); the relaunch
# starts at the last checkpoint's step, with the same world size.
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
CLUSTER_SLURMD=10
cluster_start spares
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM
cluster_user "$SP_USER"
cat >>"$SLURM_CONF" <<EOF
SlurmdTimeout=5
DebugFlags=NO_CONF_HASH
EOF
cluster_restart_ctld
fail() { cluster_fail "$*"; }

# submit NAME: the job id.  The batch script is one line: topoml-run.
submit() {
	local d=$BASE/$1
	mkdir -p "$d"
	printf '#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec %s --spares 1 -- %s %s %s 100 %s\n' \
		"$BASE/bin/topoml-run" "$PY" "$BASE/bin/train_ddp.py" \
		"$STEPS" "$d" >"$d/job.sh"
	chmod 755 "$d/job.sh"
	chown -R "$SP_USER" "$d"
	su -s /bin/sh "$SP_USER" -c "cd $d && SLURM_CONF=$SLURM_CONF \
		sbatch --parsable -N5 --no-kill --time=5 -o $d/slurm-%j.out \
		--ml-ckpt=$d/ck,every=10 $d/job.sh"
}

wait_gone() {
	local i
	for i in $(seq 1 "$2"); do
		[ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0
		sleep 1
	done
	return 1
}

id_ref=$(submit ref) || fail "sbatch ref"
id_f=$(submit fail) || fail "sbatch fail"
t0=$(date +%s)

# Kill one worker of the fail job once it checkpointed step 20.
ck=$BASE/fail/ck/$id_f
for i in $(seq 1 240); do
	l=$(readlink "$ck/latest" 2>/dev/null)
	[ -n "$l" ] && [ "${l#step-}" -ge 20 ] 2>/dev/null && break
	sleep 0.5
done
[ -n "$l" ] || fail "fail: no checkpoint: $(cat "$BASE"/fail/slurm-*.out)"
workers=$(sed -n '1s/.* nodes //p' "$BASE/fail/runs")
victim=$(echo "$workers" | cut -d, -f2)
[ -n "$victim" ] || fail "fail: no worker list in $(cat "$BASE/fail/runs")"
tk=$(date +%s)
cluster_slurmd_stop "$victim"
pids=""
for p in $(pgrep -x slurmstepd); do
	ls -l "/proc/$p/fd" 2>/dev/null |
		grep -q " -> $CLUSTER_DIR/log/slurmd-$victim.log" &&
		pids="$pids $p"
done
[ -n "$pids" ] || fail "fail: no slurmstepd of $victim"
# shellcheck disable=SC2086
kill -KILL $pids $(_cluster_descendants $pids) 2>/dev/null
scontrol update nodename="$victim" state=down reason=spares-test ||
	fail "scontrol update $victim down"
echo "fail: killed $victim (slurmd, slurmstepd, tasks) after $l"

wait_gone "$id_ref" 180 || fail "ref did not finish: $(squeue)"
wait_gone "$id_f" 180 || fail "fail did not finish: $(squeue)"
t1=$(date +%s)

for j in ref fail; do
	[ -s "$BASE/$j/final" ] || fail "$j: no final parameters:" \
		"$(cat "$BASE/$j"/slurm-*.out)"
done
out=$(cat "$BASE"/fail/slurm-*.out)
echo "$out" | grep -q "node $victim failed: .* takes ring position 1" ||
	fail "fail: topoml-run did not replace $victim: $out"
grep -q ' nodes ' "$BASE/ref/runs" && [ "$(wc -l <"$BASE/ref/runs")" = 1 ] ||
	fail "ref: not one run: $(cat "$BASE/ref/runs")"
# Second run: from the last checkpoint, same world size, the spare in
# the failed node's place.
[ "$(wc -l <"$BASE/fail/runs")" = 2 ] ||
	fail "fail: want 2 runs: $(cat "$BASE/fail/runs")"
r2=$(sed -n 2p "$BASE/fail/runs")
from=$(echo "$r2" | awk '{ print $4 }')
last=$(awk 'END { print $1 }' "$BASE"/fail/steps.0.0)
[ "$from" -ge 20 ] && [ "$from" = $((last / 10 * 10)) ] ||
	fail "fail: resumed from $from, first run reached $last"
echo "$r2" | grep -q "world 4 resume_world 4 " ||
	fail "fail: world sizes: $r2"
spare=$(sed -n '1s/.* nodes //p' "$BASE/ref/runs")
new=$(echo "$r2" | sed 's/.* nodes //')
[ "$(echo "$new" | cut -d, -f2)" != "$victim" ] &&
	[ "$(echo "$new" | cut -d, -f1,3,4)" = \
	  "$(echo "$workers" | cut -d, -f1,3,4)" ] ||
	fail "fail: workers $workers -> $new"
# Steps lost: those trained after the last checkpoint, trained again.
lost=$((last - from))
$PY - "$BASE/ref/final" "$BASE/fail/final" <<'EOF' || fail "final parameters differ"
import sys
a = [float(v) for v in open(sys.argv[1]).read().split()]
b = [float(v) for v in open(sys.argv[2]).read().split()]
d = max(abs(x - y) for x, y in zip(a, b))
print("max |ref - fail| over %d parameters: %.3g" % (len(a), d))
sys.exit(0 if len(a) == len(b) and d < 1e-5 else 1)
EOF
echo "PASS: $victim killed at step $last (checkpoint $from), relaunched on" \
	"$new (was $workers; ref ran $spare), $lost steps trained again," \
	"job done $((t1 - tk)) s after the kill, both jobs $((t1 - t0)) s"
