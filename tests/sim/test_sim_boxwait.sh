#!/bin/bash
# topoml sim --box-wait (TorusBoxWait=) on the ANL Theta trace (skips
# without ../shared) and a 16x16x16 torus, issue 16: with the site's wait
# of 36000 s, select/topoml's boxes are as compact as Slurm 26.05's
# torus3d (shapes for every size) in the same run: exact isolated boxes,
# mean pair hops and ring cost at least as good, bounding box / N <= 1.02,
# every job placed; and the price in wait stays small because a job held
# for a box reserves the box that frees first (backfill keeps longer jobs
# off it):
# mean wait below torus3d's and at most 1.15 x never waiting's (1.55 x
# before that reservation), utilisation as never waiting's.  With
# --box-wait-span 1.5 (TorusBoxWaitSpan=) placements within 1.5 x N start
# at once: some jobs take no exact box, bounding box / N stays <= 1.02,
# and the mean wait falls below that of waiting for every box.  On a
# dragonfly the same seconds hold a job one group holds for one group, on
# a fat-tree a job for as few leaves as it needs.
# Without the trace: a head job torus3d refuses although enough nodes are
# free reserves where its box frees by the running jobs' limits (Slurm's
# will-run), so that jobs behind it that would outlast it start beside
# that box, not in it (with a count-only reservation they took its nodes
# and it started 4100 s later).
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
bld=${TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
src=${TESTS_DIR:-$(dirname "$0")/..}
trace=${REALDATA:-$src/../../shared/realdata}/swf/MTech-Thesis_JobLogs_theta.swf.txt
fail() { echo "FAIL: $*"; exit 1; }
# a bound outside 1-64 is a usage error naming the option
for l in 0.5 65 nan 1.5x; do
	err=$("$bld/contrib/topoml" sim -t none -T none --box-wait 60 \
		--box-wait-span "$l" 2>&1)
	rc=$?
	[ $rc = 2 ] && case $err in
		*"--box-wait-span: '$l' is not a number from 1 to 64"*) ;;
		*) false ;; esac ||
		fail "--box-wait-span $l: rc $rc, $err"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 4^3 torus: eight 2x2x2 jobs, the two at opposite corners end at 1000,
# the rest at 100, so that from 100 on 48 nodes are free and no box of
# 32 is; then 32 nodes (refused until 1000) and four 4-node jobs of 5000 s
"$bld/contrib/topoml" generate torus --dims 4x4x4 >"$work/t4.json" ||
	fail "generate torus 4x4x4"
{
	echo submit,nodes,runtime,walltime
	echo 0,8,1000,1000
	for i in 1 2 3 4 5 6; do echo 0,8,100,100; done
	echo 0,8,1000,1000
	echo 1,32,500,500
	for i in 2 3 4 5; do echo $i,4,5000,5000; done
} >"$work/refused.csv"
"$bld/contrib/topoml" sim -q -t "$work/t4.json" -T "$work/refused.csv" \
	-p slurm-torus3d --no-fragmentation --jobs "$work/refused.jobs" \
	>/dev/null 2>"$work/err" || fail "sim refused: $(cat "$work/err")"
# policy id submit start nodes ...
got=$(awk '$5 == 32 { print "head", $4 } $5 == 4 { print "small", $4 }' \
	"$work/refused.jobs" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$got" = " 1 head 1000; 4 small 100;" ] ||
	fail "refused head: want it at 1000 and 4 small jobs at 100, got $got"
echo "refused head: starts at 1000, the jobs behind it at 100 beside it"

[ -r "$trace" ] || { echo "SKIP: no $trace"; exit 77; }

"$bld/contrib/topoml" generate torus --dims 16x16x16 >"$work/torus.json" ||
	fail "generate torus"
"$bld/contrib/topoml" sim -q -t "$work/torus.json" -T "$trace" \
	-p topoml,slurm-torus3d --box-wait 36000 --no-fragmentation --json \
	>"$work/wait.json" 2>"$work/err" || fail "sim: $(cat "$work/err")"
"$bld/contrib/topoml" sim -q -t "$work/torus.json" -T "$trace" -p topoml \
	--no-fragmentation --json >"$work/now.json" 2>"$work/err" ||
	fail "sim: $(cat "$work/err")"
"$bld/contrib/topoml" sim -q -t "$work/torus.json" -T "$trace" -p topoml \
	--box-wait 36000 --box-wait-span 1.5 --no-fragmentation --json \
	>"$work/span.json" 2>"$work/err" || fail "sim: $(cat "$work/err")"
python3 - "$work/wait.json" "$work/now.json" "$work/span.json" <<'PY' || exit 1
import json, sys
w = json.load(open(sys.argv[1]))
now = json.load(open(sys.argv[2]))["policies"]["topoml"]
sp = json.load(open(sys.argv[3]))["policies"]["topoml"]
jobs = w["trace"]["jobs"]
t, s = w["policies"]["topoml"], w["policies"]["slurm-torus3d"]
print("box-wait 36000: exact %.4f bbox/N %.4f pair hops %.3f wait %.1f s;"
      " torus3d %.4f %.4f %.3f %.1f s; never waiting: %.4f %.4f %.3f %.1f s"
      % (t["contiguous_isolated"], t["span_over_lower_bound"],
         t["mean_pair_hops"], t["mean_wait_s"],
         s["contiguous_isolated"], s["span_over_lower_bound"],
         s["mean_pair_hops"], s["mean_wait_s"],
         now["contiguous_isolated"], now["span_over_lower_bound"],
         now["mean_pair_hops"], now["mean_wait_s"]))
bad = []
if t["jobs"] != jobs or t["unplaced"]:
    bad.append("placed %d of %d" % (t["jobs"], jobs))
if t["contiguous_isolated"] < s["contiguous_isolated"] - 1e-9:
    bad.append("fewer exact boxes than torus3d")
if t["span_over_lower_bound"] > 1.02:
    bad.append("bounding box / N above 1.02")
if t["mean_pair_hops"] > s["mean_pair_hops"] + 1e-9:
    bad.append("pair hops above torus3d's")
if t["ring_cost_over_lower_bound"] > s["ring_cost_over_lower_bound"] + 1e-9:
    bad.append("ring cost above torus3d's")
if not t["mean_wait_s"] < s["mean_wait_s"]:
    bad.append("waits as long as torus3d")
if t["mean_wait_s"] > 1.15 * now["mean_wait_s"]:
    bad.append("mean wait above 1.15 x never waiting's")
if t["utilization"] < now["utilization"] - 1e-9:
    bad.append("utilisation below never waiting's")
print("box-wait-span 1.5: exact %.4f bbox/N %.4f wait %.1f s"
      % (sp["contiguous_isolated"], sp["span_over_lower_bound"],
         sp["mean_wait_s"]))
if sp["jobs"] != jobs or sp["unplaced"]:
    bad.append("span 1.5: placed %d of %d" % (sp["jobs"], jobs))
if not sp["contiguous_isolated"] < t["contiguous_isolated"]:
    bad.append("span 1.5: every job still waited for an exact box")
if sp["span_over_lower_bound"] > 1.02:
    bad.append("span 1.5: bounding box / N above 1.02")
if not sp["mean_wait_s"] < t["mean_wait_s"]:
    bad.append("span 1.5: waits as long as waiting for every box")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
# A dragonfly (Theta's: 12 groups of 96 routers of 4 nodes): a job one
# group holds that the engine spreads over more waits for one group
# (LocalityWait=), as Kueue's topology-aware scheduling holds a job for
# one domain; long enough, at most kueue-bestfit's mean wait, span/bound
# below its; at 8000 s (a job on two groups waits 4000 s) at most
# volcano's mean wait, span/bound and ring/bound at or below its.
"$bld/contrib/topoml" generate dragonfly --groups 12 --routers 96 \
	--per-router 4 --format json -q -o "$work/df.json" ||
	fail "generate dragonfly"
# a plain fat-tree (Theta's nodes, 24 a leaf): a job on more leaves than
# its size needs waits for as few; at 1200 s the mean wait stays below
# volcano's and kueue-bestfit's, span/bound and ring/bound below theirs
"$bld/contrib/topoml" generate fat-tree --nodes 4392 --per-leaf 24 \
	--radix 48 --levels 3 -q -o "$work/ft.json" || fail "generate fat-tree"
run() {	# NAME TOPO POLICIES WAIT
	"$bld/contrib/topoml" sim -q -t "$2" -T "$trace" -p "$3" -n 1000 \
		-N 4392 --box-wait "$4" --no-fragmentation --json \
		>"$work/$1.json" 2>"$work/err" || fail "sim: $(cat "$work/err")"
}
run df0 "$work/df.json" topoml 0
run df3600 "$work/df.json" topoml 3600
run df36000 "$work/df.json" topoml,kueue-bestfit 36000
run df8000 "$work/df.json" topoml,volcano 8000
run ft0 "$work/ft.json" topoml,kueue-bestfit,volcano 0
run ft1200 "$work/ft.json" topoml 1200
python3 - "$work" <<'PY' || exit 1
import json, sys
def pol(f, p="topoml"):
    return json.load(open("%s/%s.json" % (sys.argv[1], f)))["policies"][p]
r = [pol(f) for f in ("df0", "df3600", "df36000")]
kb = pol("df36000", "kueue-bestfit")
print("dragonfly box-wait 0 / 3600 / 36000: span/bound %s, mean wait %s s;"
      " kueue-bestfit %.4f, %.1f s"
      % (" / ".join("%.4f" % x["span_over_lower_bound"] for x in r),
         " / ".join("%.1f" % x["mean_wait_s"] for x in r),
         kb["span_over_lower_bound"], kb["mean_wait_s"]))
bad = []
if not r[1]["span_over_lower_bound"] < r[0]["span_over_lower_bound"]:
    bad.append("3600 s: span/bound not below never waiting's")
if not r[1]["mean_wait_s"] > r[0]["mean_wait_s"]:
    bad.append("3600 s: nobody waited")
if not r[2]["span_over_lower_bound"] < kb["span_over_lower_bound"]:
    bad.append("36000 s: span/bound not below kueue-bestfit's")
if r[2]["mean_wait_s"] > kb["mean_wait_s"]:
    bad.append("36000 s: mean wait above kueue-bestfit's")
t, vo = pol("df8000"), pol("df8000", "volcano")
print("dragonfly box-wait 8000: span/bound %.4f, ring/bound %.6f, mean "
      "wait %.1f s; volcano %.4f, %.6f, %.1f s"
      % (t["span_over_lower_bound"], t["ring_cost_over_lower_bound"],
         t["mean_wait_s"], vo["span_over_lower_bound"],
         vo["ring_cost_over_lower_bound"], vo["mean_wait_s"]))
for k in ("mean_wait_s", "span_over_lower_bound",
          "ring_cost_over_lower_bound"):
    if t[k] > vo[k]:
        bad.append("8000 s: %s above volcano's" % k)
f0, f = pol("ft0"), pol("ft1200")
print("fat-tree box-wait 0 / 1200: span/bound %.4f / %.4f, ring/bound "
      "%.6f / %.6f, mean wait %.1f / %.1f s"
      % (f0["span_over_lower_bound"], f["span_over_lower_bound"],
         f0["ring_cost_over_lower_bound"], f["ring_cost_over_lower_bound"],
         f0["mean_wait_s"], f["mean_wait_s"]))
for p in ("kueue-bestfit", "volcano"):
    k = pol("ft0", p)
    print("  %s: %.4f, %.6f, %.1f s" % (p, k["span_over_lower_bound"],
          k["ring_cost_over_lower_bound"], k["mean_wait_s"]))
    for m in ("span_over_lower_bound", "ring_cost_over_lower_bound",
              "mean_wait_s"):
        if f[m] > k[m]:
            bad.append("fat-tree 1200 s: %s above %s's" % (m, p))
if not f["span_over_lower_bound"] < f0["span_over_lower_bound"]:
    bad.append("fat-tree 1200 s: span/bound not below never waiting's")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
echo "PASS: box-wait on Theta"
