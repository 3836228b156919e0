#!/bin/bash
# topoml sim --torus-placement curve (TorusPlacement=curve), issue 16: on a
# machine that is always full, every job along Slurm's Hilbert curve,
# power-of-two sizes in the smallest all-free aligned window of the curve
# (buddy best fit in one dimension), keeps bounding boxes and pair hops at
# or below Slurm's own curve, where exact boxes placed anywhere fall behind
# it.  The issue's protocol: 200 jobs of 4-512 nodes of ANL Theta (skips
# without ../shared), all queued at once, first come first served, on a
# 10x10x10 torus; two windows of the trace.  There the site's wait
# (--box-wait 36000, TorusBoxWait) gives every job torus3d's exact box
# and ring and finishes before torus3d.  Bad values and --box-wait with
# curve are usage errors.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
bld=${TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
src=${TESTS_DIR:-$(dirname "$0")/..}
trace=${REALDATA:-$src/../../shared/realdata}/swf/MTech-Thesis_JobLogs_theta.swf.txt
fail() { echo "FAIL: $*"; exit 1; }
usage() {	# EXPECTED-MESSAGE ARGS...: exit 2 naming the problem
	local want=$1 err rc
	shift
	err=$("$bld/contrib/topoml" sim -t none -T none "$@" 2>&1)
	rc=$?
	[ $rc = 2 ] && case $err in *"$want"*) ;; *) false ;; esac ||
		fail "sim $*: rc $rc, $err"
}
usage "--torus-placement: 'hilbert' is not boxes or curve" \
	--torus-placement hilbert
usage "--box-wait has no effect with --torus-placement curve" \
	--torus-placement curve --box-wait 60
[ -r "$trace" ] || { echo "SKIP: no $trace"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bld/contrib/topoml" generate torus --dims 10x10x10 >"$work/t10.json" ||
	fail "generate torus"
for off in 0 1000; do
	# the header line, then 200 jobs of 4-512 nodes, all submitted at
	# the first one's second
	{ head -1 "$trace"
	  tail -n +2 "$trace" | awk '$4 >= 4 && $4 <= 512' |
		tail -n +$((off + 1)) | head -200 |
		awk 'NR == 1 { t = $2 } { $2 = t; print }'
	} >"$work/w$off.txt"
	for tp in boxes curve; do
		"$bld/contrib/topoml" sim -q --no-backfill --no-fragmentation \
			--json -t "$work/t10.json" -T "$work/w$off.txt" \
			-p topoml,slurm-hilbert --torus-placement $tp \
			>"$work/$tp$off.json" 2>"$work/err" ||
			fail "sim: $(cat "$work/err")"
	done
	"$bld/contrib/topoml" sim -q --no-backfill --no-fragmentation --json \
		-t "$work/t10.json" -T "$work/w$off.txt" \
		-p topoml,slurm-torus3d --box-wait 36000 \
		>"$work/wait$off.json" 2>"$work/err" ||
		fail "sim: $(cat "$work/err")"
	python3 - "$work/boxes$off.json" "$work/curve$off.json" "$off" \
		"$work/wait$off.json" <<'PY' || exit 1
import json, sys
b = json.load(open(sys.argv[1]))["policies"]
c = json.load(open(sys.argv[2]))["policies"]
w = json.load(open(sys.argv[4]))["policies"]
h, bx, cv = c["slurm-hilbert"], b["topoml"], c["topoml"]
bw, t3 = w["topoml"], w["slurm-torus3d"]
print("window %s: bbox/N, pair hops: curve %.3f %.3f, boxes %.3f %.3f,"
      " slurm-hilbert %.3f %.3f" % (sys.argv[3],
      cv["span_over_lower_bound"], cv["mean_pair_hops"],
      bx["span_over_lower_bound"], bx["mean_pair_hops"],
      h["span_over_lower_bound"], h["mean_pair_hops"]))
bad = []
if cv["unplaced"] or cv["jobs"] != 200:
    bad.append("not every job placed")
if cv["span_over_lower_bound"] > h["span_over_lower_bound"]:
    bad.append("curve's bounding boxes above Slurm's curve")
if cv["mean_pair_hops"] > h["mean_pair_hops"]:
    bad.append("curve's pair hops above Slurm's curve")
if cv["span_over_lower_bound"] >= bx["span_over_lower_bound"]:
    bad.append("curve not tighter than boxes on a full machine")
if cv["mean_wait_s"] != bx["mean_wait_s"]:
    bad.append("the placement changed the waits (FCFS, counts only)")
# TorusBoxWait on the same machine: torus3d's boxes and rings, sooner
print("window %s: box-wait 36000: exact %.3f bbox/N %.3f ring %.4f"
      " makespan %d s; torus3d %.3f %.3f %.4f %d s" % (sys.argv[3],
      bw["contiguous_isolated"], bw["span_over_lower_bound"],
      bw["ring_cost_over_lower_bound"], bw["makespan_s"],
      t3["contiguous_isolated"], t3["span_over_lower_bound"],
      t3["ring_cost_over_lower_bound"], t3["makespan_s"]))
if bw["unplaced"] or bw["jobs"] != 200:
    bad.append("box-wait: not every job placed")
if bw["contiguous_isolated"] < t3["contiguous_isolated"] - 1e-9:
    bad.append("box-wait: fewer exact boxes than torus3d")
if bw["span_over_lower_bound"] > 1.02:
    bad.append("box-wait: bounding box / N above 1.02")
if bw["ring_cost_over_lower_bound"] > t3["ring_cost_over_lower_bound"] + 1e-9:
    bad.append("box-wait: ring cost above torus3d's")
if not bw["makespan_s"] < t3["makespan_s"]:
    bad.append("box-wait: not done before torus3d")
for m in bad:
    print("FAIL:", m)
sys.exit(1 if bad else 0)
PY
done
echo "PASS"
