#!/bin/bash
# Where stock Slurm and select/topoml put the same jobs, on a fat-tree, a
# dragonfly and a torus of 1024 nodes each: the quick-start's job sequence
# (12 jobs, 4 of them cancelled, then a 64-node job) replayed through the
# placement engine with each policy.  The stock policies are Slurm 22.05's
# own node choice (cons_tres with topology/tree, with
# TopologyParam=dragonfly, and without topology on the torus), which
# tests/sim/test_baseline_slurm.sh checks against a real slurmctld.
# Prints a table and writes OUTDIR/placement.svg (and one SVG per network
# and policy).
#
# usage: compare-placement.sh TOPOML OUTDIR
# SPDX-License-Identifier: GPL-2.0-or-later
set -euo pipefail
topoml=$1
out=$2
mkdir -p "$out"
sizes=(48 16 100 24 8 64 40 12 30 96 20 6)
cancel=" 1 4 7 10 "	# indexes into sizes, freed before the last job
last=64

"$topoml" generate fat-tree --nodes 1024 --per-leaf 32 --radix 8 \
	--prefix c -o "$out/fat-tree.conf" >/dev/null
"$topoml" generate dragonfly --groups 8 --routers 8 --per-router 16 \
	--prefix c -o "$out/dragonfly.json" >/dev/null
"$topoml" generate torus --dims 16x8x8 --prefix c \
	-o "$out/torus.json" >/dev/null

# replay TOPOLOGY POLICY NAME: sets span, slb, ring, rlb (the last job)
# and span_sum, ring_sum (every job); writes $out/NAME-POLICY.svg
replay() {
	local topo=$1 pol=$2 name=$3 i n res jobs=() keep=()
	span_sum=0
	ring_sum=0
	for i in "${!sizes[@]}" last; do
		if [ "$i" = last ]; then
			n=$last
			# the cancelled jobs leave holes
			keep=()
			for j in "${!jobs[@]}"; do
				[[ $cancel == *" $j "* ]] || keep+=(--job "${jobs[$j]}")
			done
			set -- "${keep[@]}" --svg "$out/$name-$pol.svg"
		else
			n=${sizes[$i]}
			set -- $(for j in "${jobs[@]}"; do echo --job "$j"; done)
		fi
		res=$("$topoml" place -q --topology "$topo" --policy "$pol" \
			--nodes "$n" "$@")
		jobs+=("$((i == last ? 99 : i + 1))=$(sed -n 's/^nodes: //p' <<<"$res")")
		read -r ring rlb span slb <<<"$(sed -n \
's/^score: ring_cost=\([0-9.e+]*\) (lower bound \([0-9.e+]*\),.* span=\([0-9]*\) (lower bound \([0-9]*\),.*/\1 \2 \3 \4/p' \
			<<<"$res")"
		span_sum=$((span_sum + span))
		ring_sum=$(awk -v a="$ring_sum" -v b="$ring" 'BEGIN { print a + b }')
	done
}

row() {	# LABEL UNIT TOPOLOGY STOCK_POLICY
	local label=$1 unit=$2 topo=$3 stock=$4 s t
	replay "$topo" "$stock" "${label%% *}"
	s=$(printf '%s %d (best %d), ring %g' "$unit" "$span" "$slb" "$ring")
	local sall="$span_sum/$ring_sum"
	replay "$topo" topoml "${label%% *}"
	t=$(printf '%s %d (best %d), ring %g' "$unit" "$span" "$slb" "$ring")
	printf '%-26s %-27s %-27s\n' "$label" "$s" "$t"
	printf '%-26s %-27s %-27s\n' "  all 13 jobs: span/ring" "$sall" \
		"$span_sum/$ring_sum"
}
echo "the 64-node job (span: leaf switches, groups or box volume; best: its"
echo "lower bound on the free nodes), and the sums over all 13 jobs:"
printf '%-26s %-27s %-27s\n' "1024 nodes, same jobs" "stock Slurm" \
	"select/topoml"
row "fat-tree (32 per leaf)" leaves "$out/fat-tree.conf" slurm-tree
row "dragonfly (8 groups)" groups "$out/dragonfly.json" slurm-dragonfly
row "torus 16x8x8" box "$out/torus.json" linear

# One picture: a row per network, stock on the left, topoml on the right.
python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
rows = [("fat-tree", "slurm-tree"), ("dragonfly", "slurm-dragonfly"),
        ("torus", "linear")]
panel_w, y, parts = 900, 40, []
for net, stock in rows:
    h = 0
    for col, pol in enumerate((stock, "topoml")):
        svg = open("%s/%s-%s.svg" % (out, net, pol)).read()
        svg = re.sub(r"<\?xml[^>]*>\s*", "", svg)
        m = re.search(r'width="([\d.]+)" height="([\d.]+)"', svg)
        w, hh = float(m.group(1)), float(m.group(2))
        ph = hh * panel_w / w
        svg = svg.replace("<svg ", '<svg x="%d" y="%d" ' % (
            10 + col * (panel_w + 20), y), 1)
        svg = re.sub(r'width="[\d.]+" height="[\d.]+"',
                     'width="%d" height="%d"' % (panel_w, ph), svg, 1)
        parts.append(svg)
        h = max(h, ph)
    y += h + 20
head = ('<?xml version="1.0" encoding="UTF-8"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">\n'
        '<rect width="100%%" height="100%%" fill="white"/>\n'
        '<text x="10" y="26" font-size="20" font-family="sans-serif" '
        'font-weight="bold">The same jobs through stock Slurm (left) and '
        'select/topoml (right): the 64-node job in red</text>\n'
        % (2 * panel_w + 30, y))
open(out + "/placement.svg", "w").write(head + "".join(parts) + "</svg>\n")
PY
echo "picture: $out/placement.svg"
