#!/bin/bash
# Straggler detection (issue 32 item 2) on a real local cluster with real
# PyTorch DDP (gloo, CPU), as an unprivileged user: topoml_ckpt times
# each rank's compute before the gradient all-reduce (its DDP
# communication hook), the ranks exchange their means every 20 steps and
# rank 0 names a node that stays >= 1.2x the job's median for 50 steps.
#   slow     4 nodes x 2 ranks, 200 steps of ~40 ms compute; from step
#            MARK (60) the test harness (not the product) stops and
#            continues both ranks of one node on a duty cycle, 40 ms of
#            every 100 ms (1.7x): that node, and only it, is named in the
#            job's output and in DIR/health.jsonl with its ranks, ratio
#            and the step the slowdown began, within 100 steps of MARK
#   healthy  STRAGGLER_HEALTHY (6) jobs of 4 nodes x 1 rank at the same
#            time on the same nodes, no fault: none names a node
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
cluster_need_root
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
PY=/usr/bin/python3
ST_USER=topomlstrag
so=$TOP_BUILDDIR/spank/.libs/topoml.so
cluster_need_files "$so" "$PY"
$PY -c 'import torch.distributed as d; assert d.is_gloo_available()' \
	2>/dev/null || { echo "SKIP: no python3-torch with gloo"; exit 77; }
HEALTHY=${STRAGGLER_HEALTHY:-6}
STEPS=200
SLICES=20			# x 2 ms: the compute of a step
MARK=60				# the fault starts after this step

cluster_tmpdir BASE strag
mkdir -p "$BASE/bin"
cp "$TOP_SRCDIR/tests/ckpt/train_straggler.py" "$BASE/bin/"
cp -r "$TOP_SRCDIR/contrib/ckpt/topoml_ckpt" "$BASE/bin/"
chmod -R a+rX "$BASE/bin"

CLUSTER_SPANK=1
CLUSTER_SPANK_ARGS="cache_dir=$BASE/cache"
CLUSTER_SLURMD=4
# All jobs at once on the same four nodes: the healthy ones share the
# slow job's nodes, whose slowness is the slow job's own.
CLUSTER_CPUS=16
CLUSTER_PARTITION_EXTRA=
cluster_start strag
cluster_user "$ST_USER"
fail() { cluster_fail "$*"; }

# submit NAME TASKS_PER_NODE MARK: prints the job id.
submit() {
	local d=$BASE/$1
	mkdir -p "$d"
	printf '#!/bin/sh\nexport TOPOML_CKPT_PY=%s\nexec srun %s %s %s %s %s %s\n' \
		"$BASE/bin" "$PY" "$BASE/bin/train_straggler.py" "$STEPS" \
		"$SLICES" "$3" "$d" >"$d/job.sh"
	chmod 755 "$d/job.sh"
	chown -R "$ST_USER" "$d"
	cluster_as "$ST_USER" sh -c "cd $d && sbatch --parsable -N4 \
		--ntasks-per-node=$2 --time=5 -o $d/out \
		--ml-ckpt=$d/ck,every=50 $d/job.sh"
}

t0=$(date +%s)
id_slow=$(submit slow 2 "$MARK") || fail "sbatch slow"
ids_ok=
for h in $(seq 1 "$HEALTHY"); do
	id=$(submit "ok$h" 1 0) || fail "sbatch ok$h"
	ids_ok="$ids_ok $id"
done

# The fault injector: the harness's, not the product's.  Once rank 0 is
# past MARK, SIGSTOP/SIGCONT both ranks of the node of rank 2 (the second
# node), 40 ms stopped of every 100 ms, until the job ends; it prints the
# node, its ranks and the fraction of time they were stopped.
$PY - "$BASE/slow" "$MARK" >"$BASE/inject.out" 2>&1 <<'PYEOF' &
import glob, os, signal, sys, time
d, mark = sys.argv[1], sys.argv[2]
until = time.monotonic() + 120
while not os.path.exists(os.path.join(d, "at." + mark)):
    if time.monotonic() > until:
        sys.exit("no step " + mark)
    time.sleep(0.005)
ranks = {}
for f in glob.glob(os.path.join(d, "pid.*")):
    node, pid = open(f).read().split()
    ranks[int(f.rsplit(".", 1)[1])] = (node, int(pid))
node = ranks[2][0]
pids = [p for r, (n, p) in sorted(ranks.items()) if n == node]
t0, stopped = time.monotonic(), 0.0
try:
    while True:
        a = time.monotonic()
        for p in pids:
            os.kill(p, signal.SIGSTOP)
        time.sleep(0.040)
        for p in pids:
            os.kill(p, signal.SIGCONT)
        stopped += time.monotonic() - a
        time.sleep(0.060)
except ProcessLookupError:
    pass
for p in pids:
    try:
        os.kill(p, signal.SIGCONT)
    except ProcessLookupError:
        pass
print(node, ",".join(str(r) for r, (n, p) in sorted(ranks.items())
                     if n == node), "%.3f" % (stopped / (time.monotonic() - t0)))
PYEOF
inj=$!

for id in $id_slow $ids_ok; do
	s=$(cluster_job_wait_end "$id" 150) || fail "job $id: $s after 150 s"
	# Gone: ended and purged while the test waited for another.
	[ "$s" = COMPLETED ] || [ "$s" = gone ] || fail "job $id ended $s:" \
		"$(tail -n 20 "$BASE"/*/out)"
done
wait "$inj"
read -r node ranks duty <"$BASE/inject.out" ||
	fail "injector: $(cat "$BASE/inject.out")"
echo "slow: injector stopped node $node (ranks $ranks) $duty of the time" \
	"from step $MARK"

# The slow job: that node named once, with its evidence, within 100 steps.
out=$BASE/slow/out
lines=$(grep 'topoml: straggler' "$out")
[ "$(grep -c . <<<"$lines")" = 1 ] ||
	fail "slow: want one straggler line, got: '$lines' ($(tail -5 "$out"))"
grep -qE "^topoml: straggler: node $node \(ranks $ranks\) [0-9.]+x the \
job's median compute time since step [0-9]+$" <<<"$lines" ||
	fail "slow: wrong node or form: '$lines' (injected $node ranks $ranks)"
rep=$(find "$BASE/slow/ck" -name health.jsonl)
[ -n "$rep" ] && [ "$(wc -l <"$rep")" = 1 ] ||
	fail "slow: want one line in health.jsonl: $rep $(cat "$rep")"
[ "$(stat -c %U "$rep")" = "$ST_USER" ] || fail "slow: $rep not the user's"
$PY - "$rep" "$node" "$ranks" "$MARK" "$id_slow" <<'PYEOF' ||
import json, sys
f = json.loads(open(sys.argv[1]).read())
node, ranks, mark = sys.argv[2], sys.argv[3], int(sys.argv[4])
ok = (f["event"] == "straggler" and f["node"] == node and
      ",".join(map(str, f["ranks"])) == ranks and f["ratio"] >= 1.2 and
      f["job"] == sys.argv[5] and
      mark - 20 < f["since_step"] <= mark + 20 and
      f["step"] - mark <= 100 and
      f["node_compute_ms"] > f["job_compute_ms"])
print("slow: named at step %d (fault from step %d): %s" % (f["step"], mark,
      json.dumps(f, sort_keys=True)))
sys.exit(0 if ok else 1)
PYEOF
	fail "slow: evidence wrong: $(cat "$rep")"
cat "$BASE/slow/done.$id_slow" || fail "slow: did not finish"

# The healthy jobs: nothing named.
for h in $(seq 1 "$HEALTHY"); do
	grep 'topoml: straggler' "$BASE/ok$h/out" &&
		fail "healthy job ok$h named a straggler"
	[ -z "$(find "$BASE/ok$h/ck" -name health.jsonl)" ] ||
		fail "healthy job ok$h wrote a health report"
	[ -s "$BASE/ok$h"/done.* ] || fail "healthy job ok$h did not finish"
	echo "ok$h: $(cat "$BASE/ok$h"/done.*)"
done
echo "healthy: $HEALTHY runs of 4 nodes, $STEPS steps: no node named"
echo "PASS: slow node named with its evidence, healthy runs clean" \
	"($(($(date +%s) - t0)) s of jobs)"
