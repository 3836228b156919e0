#!/bin/bash
# The torus, Pareto against Slurm 26.05's topology/torus3d (doc/results.md):
# per trace, topoml with the site's LocalityWait against slurm-torus3d
# (exact boxes, bounding box / N, ring cost, mean wait), and topoml never
# waiting against the non-waiting peers (slurm-hilbert, linear; Kueue and
# Volcano refuse a torus).  Traces: ANL Theta and Mira / 16 on a 16^3
# torus (FCFS + EASY backfill), and the always-full protocol (six windows
# of 200 Theta jobs of 4-512 nodes queued at once on a 10^3 torus, FCFS,
# averaged); never waiting with both TorusPlacement= values.  Prints one
# markdown table.
#
#   contrib/torus-pareto.sh [BUILD_DIR] [REALDATA_SWF_DIR]
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -eu
bld=${1:-build}
swf=${2:-$(dirname "$0")/../../shared/realdata/swf}
topoml=$bld/contrib/topoml
theta=$swf/MTech-Thesis_JobLogs_theta.swf.txt
mira=$swf/MTech-Thesis_JobLogs_mira.swf.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$topoml" generate torus --dims 16x16x16 -o "$work/t16.json" >/dev/null
"$topoml" generate torus --dims 10x10x10 -o "$work/t10.json" >/dev/null
sim() {	# OUT ARGS...
	local out=$1
	shift
	"$topoml" sim -q --no-fragmentation --json "$@" >"$work/$out.json"
}
sim theta-w -t "$work/t16.json" -T "$theta" -p topoml,slurm-torus3d \
	--box-wait 36000 &
sim theta-n -t "$work/t16.json" -T "$theta" -p topoml,slurm-hilbert,linear &
wait
sim theta-c -t "$work/t16.json" -T "$theta" -p topoml --torus-placement curve

sim mira-w -t "$work/t16.json" -T "$mira" -N 65536 \
	-p topoml,slurm-torus3d --box-wait 100000 &
sim mira-n -t "$work/t16.json" -T "$mira" -N 65536 \
	-p topoml,slurm-hilbert,linear &
wait
sim mira-c -t "$work/t16.json" -T "$mira" -N 65536 -p topoml \
	--torus-placement curve
for off in 0 400 800 1200 1600 2000; do
	{ head -1 "$theta"
	  tail -n +2 "$theta" | awk '$4 >= 4 && $4 <= 512' |
		tail -n +$((off + 1)) | head -200 |
		awk 'NR == 1 { t = $2 } { $2 = t; print }'
	} >"$work/w$off.txt"
	sim full$off-w --no-backfill -t "$work/t10.json" -T "$work/w$off.txt" \
		-p topoml,slurm-torus3d --box-wait 36000
	sim full$off-n --no-backfill -t "$work/t10.json" -T "$work/w$off.txt" \
		-p topoml,slurm-hilbert,linear
	sim full$off-c --no-backfill -t "$work/t10.json" -T "$work/w$off.txt" \
		-p topoml --torus-placement curve
done
python3 - "$work" <<'PY'
import json, sys
d = sys.argv[1]
def load(n):
    return json.load(open("%s/%s.json" % (d, n)))["policies"]
def avg(names):
    runs = [load(n) for n in names]
    return {p: {k: sum(r[p][k] for r in runs) / len(runs)
                for k in runs[0][p] if isinstance(runs[0][p][k], (int, float))}
            for p in runs[0]}
traces = [("Theta (wait 36000)", load("theta-w"), load("theta-n"),
           load("theta-c")),
          ("Mira / 16 (wait 100000)", load("mira-w"), load("mira-n"),
           load("mira-c"))]
offs = [0, 400, 800, 1200, 1600, 2000]
traces.append(("always full (wait 36000)",
               avg(["full%d-w" % o for o in offs]),
               avg(["full%d-n" % o for o in offs]),
               avg(["full%d-c" % o for o in offs])))
print("| trace | policy | exact boxes | bbox/N | ring / bound"
      " | pair hops | mean wait (s) | max wait (s) |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
def row(t, name, m):
    print("| %s | %s | %.3f | %.3f | %.4f | %.3f | %.0f | %.0f |" % (
        t, name, m["contiguous_isolated"], m["span_over_lower_bound"],
        m["ring_cost_over_lower_bound"], m["mean_pair_hops"],
        m["mean_wait_s"], m["max_wait_s"]))
for t, w, n, c in traces:
    row(t, "topoml, LocalityWait", w["topoml"])
    row(t, "slurm-torus3d", w["slurm-torus3d"])
    print("| %s | wait / torus3d's | | | | | %.2fx | |" % (
        t, w["topoml"]["mean_wait_s"] / w["slurm-torus3d"]["mean_wait_s"]))
    row(t, "topoml, never waits", n["topoml"])
    row(t, "topoml, never waits, TorusPlacement=curve", c["topoml"])
    row(t, "slurm-hilbert", n["slurm-hilbert"])
    row(t, "linear", n["linear"])
    print("| %s | Kueue, Volcano | n/a (refuse a torus) |||||||" % t)
PY
