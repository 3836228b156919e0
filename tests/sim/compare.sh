#!/bin/bash
# The family comparisons of doc/results.md: replays the ANL Theta and
# Mira traces on the three 4096-node machines of the issue's targets
# (tests/sim/topologies.sh) with topoml and Slurm's baselines, saves each
# run's JSON in OUTDIR and prints the Markdown tables and target checks.
#
# usage: tests/sim/compare.sh TOPOML REALDATA OUTDIR
#   e.g. tests/sim/compare.sh /tmp/build-sim/contrib/topoml \
#          /work/shared/realdata /tmp/sim-results
set -eu
[ $# = 3 ] || { echo "usage: $0 TOPOML REALDATA OUTDIR" >&2; exit 2; }
topoml=$1 swf=$2/swf out=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=topologies.sh
. "$here/topologies.sh"
mkdir -p "$out"
sim_topologies "$out"

theta=$swf/MTech-Thesis_JobLogs_theta.swf.txt
mira=$swf/MTech-Thesis_JobLogs_mira.swf.txt
run() {	# NAME TOPOLOGY POLICIES TRACE [OPTIONS]
	local name=$1 topo=$2 pols=$3 trace=$4
	shift 4
	echo "\$ topoml sim --topology $(basename "$topo") --trace" \
		"$(basename "$trace") --policy $pols $* --json" >"$out/$name.cmd"
	"$topoml" sim --topology "$topo" --trace "$trace" --policy "$pols" \
		"$@" --json >"$out/$name.json"
}
# Theta (4392-node Cray XC40): sizes as they are (1-512 nodes, powers of
# two), offered load 0.46 on 4096 nodes.  Mira (49152-node Blue Gene/Q,
# jobs of 512-16384 nodes): sizes / 16 (a 512-node midplane becomes one
# 32-node leaf; sizes stay powers of two), load 0.57; and sizes x
# 4096/49152, which keeps Mira's load (0.76) but makes sizes like 43 and
# 85 nodes that no leaf or box holds exactly.
for fam in fattree dragonfly torus; do
	case $fam in
	fattree) topo=$out/fattree.conf pols=topoml,slurm-tree,linear ;;
	dragonfly) topo=$out/dragonfly.json pols=topoml,slurm-dragonfly,linear ;;
	torus) topo=$out/torus.json pols=topoml,slurm-hilbert,linear ;;
	esac
	run "$fam-theta" "$topo" "$pols" "$theta"
	run "$fam-mira16" "$topo" "$pols" "$mira" --trace-nodes 65536
	run "$fam-mira12" "$topo" "$pols" "$mira" --trace-nodes 49152
done

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = [("jobs", "jobs", "%d"), ("mean_wait_s", "mean wait (s)", "%.0f"),
        ("p95_wait_s", "p95 wait (s)", "%.0f"),
        ("utilization", "utilization", "%.4f"),
        ("makespan_s", "makespan (s)", "%.0f"),
        ("mean_span", "mean span", "%.3f"),
        ("span_over_lower_bound", "span / lower bound", "%.4f"),
        ("span_over_free_lower_bound", "span / bound on the free nodes", "%.4f"),
        ("ring_cost", "ring cost (hop.s)", "%.4g"),
        ("ring_cost_over_lower_bound", "ring cost / lower bound", "%.4f"),
        ("ring_cost_over_free_lower_bound", "ring cost / bound on the free nodes", "%.4f"),
        ("global_ring_hops", "global ring hops (hop.s)", "%.4g"),
        ("mean_pair_hops", "mean pair hops", "%.3f"),
        ("sharing", "sharing (node.h)", "%.1f"),
        ("sharing_fraction", "sharing / busy node.h", "%.4f"),
        ("contiguous_isolated", "isolated exact boxes", "%.4f"),
        ("box_possible", "jobs with an exact box free", "%d"),
        ("contiguous_isolated_when_possible", "isolated exact boxes when one was free", "%.4f"),
        ("fragmentation", "fragmentation", "%.4f")]
tor = {"contiguous_isolated", "box_possible",
       "contiguous_isolated_when_possible"}
skip = {"fattree": {"global_ring_hops"} | tor,
        "dragonfly": tor,
        "torus": {"global_ring_hops"}}
def ratio(a, b):
    return a / b if b else float("inf") if a else 1.0
checks = []
titles = {"theta": "Theta trace (sizes as they are)",
          "mira16": "Mira trace, sizes / 16",
          "mira12": "Mira trace, sizes x 4096/49152 (load kept)"}
for name in ["%s-%s" % (f, t) for f in ("fattree", "dragonfly", "torus")
             for t in ("theta", "mira16", "mira12")]:
    d = json.load(open(os.path.join(out, name + ".json")))
    fam = name.split("-")[0]
    pols = list(d["policies"])
    # "topology" is an object of fields since issue 15; its summary line
    print("### %s; %s\n" % (d["topology"]["summary"], titles[name.split("-")[1]]))
    print("`%s`\n" % open(os.path.join(out, name + ".cmd")).read().strip())
    print("| metric | " + " | ".join(pols) + " |")
    print("|---|" + "---:|" * len(pols))
    for k, label, fmt in rows:
        if k in skip[fam]:
            continue
        print("| %s | " % label + " | ".join(
            fmt % d["policies"][p][k] for p in pols) + " |")
    print()
    t, base = d["policies"]["topoml"], d["policies"][pols[1]]
    lin = d["policies"]["linear"]
    tag = name
    def check(what, ok, detail):
        checks.append("| %s | %s | %s | %s |" % (tag, what, detail,
                                                  "met" if ok else "**not met**"))
    if fam == "fattree":
        r = t["ring_cost_over_lower_bound"]
        check("ring cost <= 1.01 x lower bound", r <= 1.01, "%.4f" % r)
        check("ring cost <= slurm-tree's", t["ring_cost"] <= base["ring_cost"],
              "%.4g vs %.4g" % (t["ring_cost"], base["ring_cost"]))
        s = ratio(t["sharing"], base["sharing"])
        check("sharing <= 0.5 x slurm-tree's",
              t["sharing"] <= 0.5 * base["sharing"],
              "%.1f vs %.1f node.h (x%.3f)" % (t["sharing"], base["sharing"], s))
        check("mean wait <= slurm-tree's", t["mean_wait_s"] <= base["mean_wait_s"],
              "%.0f vs %.0f s" % (t["mean_wait_s"], base["mean_wait_s"]))
        u = t["utilization"] / base["utilization"] - 1
        check("utilization within 1 %", abs(u) <= 0.01,
              "%.4f vs %.4f (%+.2f %%)" % (t["utilization"], base["utilization"], 100 * u))
    elif fam == "dragonfly":
        g = ratio(t["mean_span"], base["mean_span"])
        check("groups spanned <= 0.7 x slurm-dragonfly's",
              t["mean_span"] <= 0.7 * base["mean_span"],
              "%.3f vs %.3f (x%.3f)" % (t["mean_span"], base["mean_span"], g))
        h = ratio(t["global_ring_hops"], base["global_ring_hops"])
        check("global ring hops <= 0.5 x slurm-dragonfly's",
              t["global_ring_hops"] <= 0.5 * base["global_ring_hops"],
              "%.4g vs %.4g (x%.3f)" % (t["global_ring_hops"], base["global_ring_hops"], h))
    else:
        r = t["ring_cost_over_lower_bound"]
        check("ring hops <= 1.02 x N", r <= 1.02, "%.4f" % r)
        worst = min(base["ring_cost"], lin["ring_cost"])
        check("ring hops never above linear / Hilbert", t["ring_cost"] <= worst,
              "%.4g vs %.4g / %.4g" % (t["ring_cost"], lin["ring_cost"], base["ring_cost"]))
        p = ratio(t["mean_pair_hops"], lin["mean_pair_hops"])
        check("mean pair hops <= 0.85 x linear",
              t["mean_pair_hops"] <= 0.85 * lin["mean_pair_hops"],
              "%.3f vs %.3f (x%.3f)" % (t["mean_pair_hops"], lin["mean_pair_hops"], p))
        w = "contiguous_isolated_when_possible"
        check("isolated exact box for >= 90 % of jobs when one was free",
              t[w] >= 0.9,
              "%.1f %% of %d (linear %.1f %%, hilbert %.1f %%); of all jobs %.1f %%" % (
                  100 * t[w], t["box_possible"], 100 * lin[w], 100 * base[w],
                  100 * t["contiguous_isolated"]))
print("### Summary (Theta trace)\n")
print("| machine (4096 nodes) | metric | topoml | Slurm | linear |")
print("|---|---|---:|---:|---:|")
summary = [
    ("fattree", "fat-tree, 3 levels, 32/leaf", "slurm-tree", [
        ("ring_cost_over_lower_bound", "ring cost / lower bound", "%.4f"),
        ("span_over_lower_bound", "leaves / lower bound", "%.3f"),
        ("sharing", "inter-job sharing (node-h)", "%.0f"),
        ("mean_wait_s", "mean wait (s)", "%.0f"),
        ("utilization", "utilisation", "%.3f")]),
    ("dragonfly", "dragonfly, 16 groups", "slurm-dragonfly", [
        ("mean_span", "groups spanned (mean)", "%.2f"),
        ("global_ring_hops", "global-link ring hops (hop.s)", "%.3g"),
        ("ring_cost_over_lower_bound", "ring cost / lower bound", "%.3f")]),
    ("torus", "torus 16x16x16", "slurm-hilbert", [
        ("ring_cost_over_lower_bound", "ring hops / lower bound", "%.3f"),
        ("mean_pair_hops", "mean pair hops", "%.2f"),
        ("span_over_lower_bound", "bounding box / N", "%.2f"),
        ("contiguous_isolated_when_possible",
         "isolated exact box, when one was free", "%.2f")])]
for fam, label, base, mets in summary:
    d = json.load(open(os.path.join(out, fam + "-theta.json")))["policies"]
    for i, (k, l, f) in enumerate(mets):
        b = f % d[base][k] + (" (%s)" % base if not i else "")
        print("| %s | %s | %s | %s | %s |" % (label, l, f % d["topoml"][k], b,
                                            f % d["linear"][k]))
print()
print("### Targets\n")
print("| run | target | measured (topoml vs baseline) | |")
print("|---|---|---|---|")
print("\n".join(checks))
PY
