#!/bin/bash
# The simulator's side of issue 18 item 5 (doc/results.md, "Jobs that
# share nodes"): a real SWF trace replayed in cores (topoml sim --shared)
# on the machines of tests/select/replay_shared.sh (32 nodes of 4 cores; a
# fat-tree of 8 leaves of 4 under one root, and a dragonfly of 4 groups of
# 2 routers of 4, all-to-all), with topoml, the Slurm baseline of the
# family and linear, in one run per machine.  Times are scaled as the
# replay scales them (submit gaps / SUBMIT_SCALE, run and requested times /
# RUN_SCALE, the limit in whole minutes as sbatch --time gives it), so the
# figures can be set beside a real slurmctld's.  Prints a Markdown table:
# mean and max wait, utilisation (cores), and over the multi-node jobs the
# mean span (leaves or groups), the jobs above the span bound for their
# cores, and the summed ring cost (engine ring order); then the same over
# the jobs whose cores need more than one node (the same jobs under every
# policy: stock also spreads smaller jobs over nodes).
#
# usage: tests/sim/shared_compare.sh TOPOML TRACE [SUBMIT_SCALE RUN_SCALE]
#   e.g. tests/sim/shared_compare.sh build/contrib/topoml \
#          ../shared/realdata/swf/accasim_tests_data_workload.swf 100000 100
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -eu
[ $# -ge 2 ] || { echo "usage: $0 TOPOML TRACE [SUBMIT_SCALE RUN_SCALE]" >&2
	exit 2; }
topoml=$1 trace=$2 ss=${3:-1} rs=${4:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/shared_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

for l in 0 1 2 3 4 5 6 7; do
	echo "SwitchName=s$l Nodes=c[$((4 * l + 1))-$((4 * l + 4))]"
done >"$work/ft.conf"
echo "SwitchName=top Switches=s[0-7]" >>"$work/ft.conf"
{
	echo '{ "family": "dragonfly", "global_links": "all-to-all", "groups": ['
	for g in 0 1 2 3; do
		[ "$g" -gt 0 ] && echo ','
		a=$((8 * g + 1))
		printf '{ "name": "g%d", "routers": [' "$g"
		printf '{"name": "s%d", "nodes": "c[%d-%d]"},' $((2 * g)) \
			"$a" $((a + 3))
		printf '{"name": "s%d", "nodes": "c[%d-%d]"}] }' \
			$((2 * g + 1)) $((a + 4)) $((a + 7))
	done
	echo '] }'
} >"$work/df.json"

# the replay's transformation (tests/select/replay_shared.sh), as SWF
awk -v ss="$ss" -v rs="$rs" -v cores=128 '
	/^;/ || NF < 9 { next }
	{
		p = $8 > 0 ? $8 : $5; run = $4; wall = $9
		if (p <= 0 || run <= 0 || p > cores) next
		if (t0 == "") t0 = $2
		n++
		sub_t = int(($2 - t0) / ss)
		r = int(run / rs); if (r < 1) r = 1
		w = wall > 0 ? int(wall / rs) : r; if (w < r) w = r
		w = int((w + 59) / 60) * 60
		printf "%d %d -1 %d %d -1 -1 %d %d -1 1 -1 -1 -1 -1 -1 -1 -1\n",
			n, sub_t, r, p, p, w
	}' "$trace" >"$work/trace.swf"

echo "| machine | policy | mean wait (s) | max wait | utilisation | multi-node jobs | mean span | above span bound | ring | jobs over one node | their mean span | above bound | ring |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for fam in fat-tree dragonfly; do
	if [ $fam = fat-tree ]; then
		topo=$work/ft.conf pols=topoml,slurm-tree,linear unit=16
	else
		topo=$work/df.json pols=topoml,slurm-dragonfly,linear unit=32
	fi
	"$topoml" sim -q -t "$topo" -T "$work/trace.swf" -c 4 --shared \
		--cloud-power -p $pols --jobs "$work/$fam.jobs" --json \
		>"$work/$fam.json"
	python3 - "$work/$fam.json" "$work/$fam.jobs" $fam $unit <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["policies"]
fam, unit = sys.argv[3], int(sys.argv[4])
multi, over = {}, {}
for l in open(sys.argv[2]):
    f = l.split()
    pol, cores, units, span, ring = f[0], int(f[4]), f[6], int(f[7]), float(f[8])
    if units == "-" or len(units.split(",")) < 2:
        continue
    # every job on two nodes or more, and (the same jobs under every
    # policy) those whose cores need more than one node
    for tbl, take in ((multi, True), (over, cores > 4)):
        if not take:
            continue
        m = tbl.setdefault(pol, [0, 0, 0, 0.0])
        m[0] += 1
        m[1] += span
        m[2] += span > -(-cores // unit)
        m[3] += ring
stock = [p for p in d if p.startswith("slurm")][0]
for pol in d:
    m, x = d[pol], multi.get(pol, [0, 0, 0, 0.0])
    ratio = ""
    if pol == "topoml" and d[stock]["mean_wait_s"] > 0:
        ratio = " (%.2f×)" % (m["mean_wait_s"] / d[stock]["mean_wait_s"])
    o = over.get(pol, [0, 0, 0, 0.0])
    print("| %s | %s | %.1f%s | %.0f | %.3f | %d | %.2f | %d | %.0f | %d | %.2f | %d | %.0f |" %
          (fam, pol, m["mean_wait_s"], ratio, m["max_wait_s"],
           m["utilization"], x[0], x[1] / x[0] if x[0] else 0, x[2], x[3],
           o[0], o[1] / o[0] if o[0] else 0, o[2], o[3]))
PY
done
