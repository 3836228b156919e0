#!/bin/bash
# topoml beside every peer, per fabric (doc/results.md, "Beside every
# peer, per fabric"): `topoml sim` with every policy of libtopoml_sim in
# one run per fabric, trace and kind of job, one Markdown table per fabric
# and trace on stdout.
#
# Fabrics (sized at ANL Theta's 4392 nodes where generated):
#   fat-tree    topoml generate fat-tree, 4392 nodes, 24 a leaf, radix 48,
#               3 levels
#   ib          the fat-tree `topoml import-ib` makes of a real
#               ibnetdiscover dump of REALDATA/ibnetdiscover
#   nvl-blocks  tests/fixtures/block/nvl72x18.conf: 72 NVL72 racks of 18
#               nodes, a block topology.conf
#   dragonfly   Theta's Aries geometry: 12 groups x 96 routers x 4 nodes
#   torus       16x16x18 3D torus, wrap-around
# Traces: the MTech JobLogs excerpts of REALDATA/swf (Theta, Mira), the
# first JOBS jobs, sizes scaled to each machine keeping the offered load
# (--trace-nodes; --scale fit on the small ib fabric).  Whole-node jobs as
# traced, then node-sharing ones: the same jobs written as SWF of
# ceil(nodes / 4) processors, replayed with --shared on nodes of 4 cores:
# each job a 16th of its size (a 16th of the load), the smallest sharing a
# node.  Data-parallel traffic through the top: a third
# run with --hybrid 4 (every job an --ml-parallel job of 4 tasks a node,
# tp=4, pp by size, dp the rest).
#
# A policy that refuses a fabric (its reason from `topoml place`) is shown
# "n/a (reason)"; in the node-sharing columns, so are the policies whose
# shared jobs go to linear's placement (topoml-sim(1), "JOBS THAT SHARE
# NODES").  The derived traces are written to a temporary directory, never
# kept.
#
# With -S K, each fabric's table is followed by one of communication time
# under contention: topoml-netsim (beside TOPOML; built with SimGrid)
# on the same trace, policies and scaling, K snapshots, whole-node jobs
# and --hybrid 4 jobs (doc/results.md, "Communication time under
# contention"); on full-size fabrics this takes long: minutes a snapshot.
#
# usage: contrib/peers-report.sh [-n JOBS] [-T theta,mira] [-f FABRICS]
#                                [-r REALDATA] [-t TOPOML] [-S K]
#   -n JOBS     replay the first JOBS jobs of each trace (default 600:
#               about 3.5 minutes of CPU for the whole report; 1000
#               jobs took 5 min 41 s)
#   -T TRACES   theta, mira or both (default theta)
#   -f FABRICS  some of fat-tree,ib,nvl-blocks,dragonfly,torus (default all)
#   -r REALDATA the realdata folder (default ../shared/realdata beside the
#               source tree)
#   -t TOPOML   the topoml binary (default ./contrib/topoml: run it from a
#               build tree)
#   -S K        also the SimGrid table, K snapshots (default: none)
# Exit 0, 77 when REALDATA or a trace is missing (nothing to report), 1 on
# a failed run, 2 on a usage error.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=600 traces=theta fabrics=fat-tree,ib,nvl-blocks,dragonfly,torus
realdata=$src/../shared/realdata topoml=./contrib/topoml snaps=
args="$*"
usage() { sed -n '/^# usage:/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2; }
while getopts n:T:f:r:t:S:h o; do
	case $o in
	n) jobs=$OPTARG ;;
	T) traces=$OPTARG ;;
	f) fabrics=$OPTARG ;;
	r) realdata=$OPTARG ;;
	t) topoml=$OPTARG ;;
	S) snaps=$OPTARG ;;
	*) usage ;;
	esac
done
case $jobs in ''|*[!0-9]*|0) echo "peers-report: -n wants a count" >&2
	exit 2 ;; esac
[ -x "$topoml" ] || { echo "peers-report: no $topoml (run it from a" \
	"build tree, or give -t)" >&2; exit 2; }
topoml=$(cd "$(dirname "$topoml")" && pwd)/$(basename "$topoml")
netsim=$(dirname "$topoml")/topoml-netsim
case $snaps in ''|*[!0-9]*|0) [ -z "$snaps" ] ||
	{ echo "peers-report: -S wants a count" >&2; exit 2; } ;; esac
[ -z "$snaps" ] || [ -x "$netsim" ] || { echo "peers-report: -S: no" \
	"$netsim (configure found no SimGrid)" >&2; exit 2; }
command -v python3 >/dev/null ||
	{ echo "peers-report: needs python3" >&2; exit 2; }
if [ ! -d "$realdata/swf" ]; then
	echo "peers-report: skipped: no $realdata/swf (the real traces are" \
		"not part of topoml)" >&2
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/peers-report.XXXXXX")
trap 'rm -rf "$work"' EXIT

policies=topoml,slurm-tree,slurm-dragonfly,slurm-block,slurm-torus3d
policies=$policies,slurm-hilbert,linear,kueue-bestfit,kueue-leastfree
policies=$policies,kueue-balanced,volcano
# reproduced for whole nodes only: shared jobs go to linear (sim.h)
shared_linear="volcano slurm-block slurm-torus3d"

# fabric NAME: writes $work/NAME.topo (or returns 1 with a reason)
fabric() {
	local f=$work/$1.topo ib
	case $1 in
	fat-tree) "$topoml" generate fat-tree --nodes 4392 --per-leaf 24 \
		--radix 48 --levels 3 -q -o "$f" ;;
	ib)	# the largest dump whose hosts are named (no fabric-manager
		# hosts): ibtopotool's test 1, 4 hosts on 2 leaves
		ib=$realdata/ibnetdiscover/ibtopotool_tests_1.topo
		[ -r "$ib" ] || { echo "no $ib"; return 1; }
		"$topoml" import-ib "$ib" -q -o "$f" 2>/dev/null ||
			"$topoml" import-ib "$ib" -o "$f" 2>/dev/null ;;
	nvl-blocks) cp "$src/tests/fixtures/block/nvl72x18.conf" "$f" ;;
	dragonfly) "$topoml" generate dragonfly --groups 12 --routers 96 \
		--per-router 4 --format json -q -o "$f" ;;
	torus)	"$topoml" generate torus --dims 16x16x18 -q -o "$f" ;;
	*)	echo "unknown fabric $1"; return 1 ;;
	esac
}

# what `topoml place` says when POLICY refuses the fabric (empty: it places)
refusal() {
	local out
	out=$("$topoml" place -t "$1" --nodes 2 --policy "$2" -q 2>&1) &&
		return 0
	printf '%s\n' "$out" | sed -n 's/.*cannot place [0-9]* nodes*: //p' |
		head -1
}

# the SWF of a JobLogs excerpt's first $jobs jobs, processors =
# ceil(nodes / 4), requested time = run time (the logs give none), as
# tests/sim/theta_cores.sh writes it: on nodes of 4 cores a job takes a
# 16th of its traced nodes, so that the smallest (8 nodes) share one
shared_swf() {
	awk -v n="$jobs" 'NR == 1 { next }
		NF == 6 && $4 > 0 && $3 > 0 {
			if (++i > n) exit
			p = int(($4 + 3) / 4)
			printf "%d %d -1 %d %d -1 -1 %d %d -1 1 -1 -1 -1 -1 -1 -1 -1\n",
				i, $2, $3, p, p, p, $3
		}' "$1"
}

rc=0
for tr in ${traces//,/ }; do
	case $tr in
	theta) tnodes=4392 ;;
	mira) tnodes=49152 ;;
	*) echo "peers-report: unknown trace $tr" >&2; exit 2 ;;
	esac
	log=$realdata/swf/MTech-Thesis_JobLogs_$tr.swf.txt
	if [ ! -r "$log" ]; then
		echo "peers-report: skipped: no $log" >&2
		exit 77
	fi
	shared_swf "$log" >"$work/$tr.shared.swf"
	for fab in ${fabrics//,/ }; do
		if ! why=$(fabric "$fab" 2>&1); then
			echo "peers-report: $fab: $why" >&2
			rc=1
			continue
		fi
		topo=$work/$fab.topo
		scale="-N $tnodes"
		[ "$fab" = ib ] && scale="-s fit"
		: >"$work/na"
		for p in ${policies//,/ }; do
			r=$(refusal "$topo" "$p")
			[ -n "$r" ] && printf '%s\t%s\n' "$p" "$r" >>"$work/na"
		done
		base="sim -q -t $fab.topo -p $policies -n $jobs $scale"
		base="$base --no-fragmentation"
		c1="$base -T $(basename "$log") -j"
		c2="$base -T $(basename "$log") --hybrid 4"
		c3="$base -T $tr.shared.swf -c 4 --shared -j"
		# shellcheck disable=SC2086
		(cd "$work" && ln -sf "$log" . &&
		 "$topoml" $c1 >"$fab.$tr.whole.json" &&
		 "$topoml" $c2 >"$fab.$tr.hybrid.txt" &&
		 "$topoml" $c3 >"$fab.$tr.shared.json") 2>"$work/err" || {
			echo "peers-report: $fab, $tr: $(cat "$work/err")" >&2
			rc=1
			continue
		}
		python3 - "$work" "$fab" "$tr" "$policies" "$shared_linear" \
			"$0 $args" "$c1" "$c2" "$c3" <<'PY' || rc=1
import json, sys
work, fab, tr, pols, shlin, script, c1, c2, c3 = sys.argv[1:]
pols = pols.split(",")
shlin = shlin.split()
na = {}
for line in open("%s/na" % work):
    p, why = line.rstrip("\n").split("\t", 1)
    na[p] = why
whole = json.load(open("%s/%s.%s.whole.json" % (work, fab, tr)))
shared = json.load(open("%s/%s.%s.shared.json" % (work, fab, tr)))
dp = {}
names = None
for line in open("%s/%s.%s.hybrid.txt" % (work, fab, tr)):
    if line.strip() and line.split()[0] == "topoml" and names is None \
       and not line.startswith("topology"):
        names = line.split()
    if line.startswith("dp cross top/group"):
        vals = line[26:].split()
        dp = dict(zip(names, vals))
topo = whole["topology"]
desc = topo.get("summary") or topo.get("family", fab)
t = whole["trace"]
print("### %s, %s (%d jobs)" % (fab, tr.capitalize(), t["jobs"]))
print()
print("%s; trace %s, size scale %.4g." % (desc, t["file"], t["scale"]))
print()
print("| policy | span/bound | ring/bound | DP top | sharing | mean wait (s)"
      " | util | shared: span/bound | ring/bound | sharing | mean wait (s)"
      " | util |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
def cols(m):
    return ["%.4f" % m["span_over_lower_bound"],
            "%.4f" % m["ring_cost_over_lower_bound"],
            "%.3f" % m["sharing_fraction"], "%.0f" % m["mean_wait_s"],
            "%.3f" % m["utilization"]]
for p in pols:
    if p in na:
        print("| %s | n/a (%s) |||||||||||" % (p, na[p]))
        continue
    w = whole["policies"][p]
    s = shared["policies"][p]
    a = cols(w)
    a.insert(2, dp.get(p, "?"))
    if w["unplaced"]:
        a[-1] += " (%d unplaced)" % w["unplaced"]
    if p in shlin:
        b = ["n/a (shared jobs go to linear's placement)"] + [""] * 4
    else:
        b = cols(s)
        if s["unplaced"]:
            b[-1] += " (%d unplaced)" % s["unplaced"]
    print("| %s | %s |" % (p, " | ".join(a + b)))
print()
print("Reproduce: `%s` from a build tree; the runs, in its work folder"
      " (`%s.shared.swf`: the excerpt's first jobs as SWF of ceil(nodes"
      " / 4) processors):" % (script.strip(), tr))
print()
for c in (c1, c2, c3):
    print("    topoml %s" % c)
print()
PY
		[ -n "$snaps" ] || continue
		# the SimGrid step: communication time per step
		n1="-q -t $fab.topo -T $(basename "$log") -n $jobs $scale"
		n1="$n1 -p $policies --snapshots $snaps"
		# a GB200's NVLink within its NVL72 block
		[ "$fab" = nvl-blocks ] && n1="$n1 --nvlink 7200"
		n2="$n1 --hybrid 4"
		# shellcheck disable=SC2086
		(cd "$work" && "$netsim" $n1 >"$fab.$tr.net.txt" &&
		 "$netsim" $n2 >"$fab.$tr.nethyb.txt") 2>"$work/err" || {
			echo "peers-report: netsim $fab, $tr: $(cat \
				"$work/err")" >&2
			rc=1
			continue
		}
		python3 - "$work/$fab.$tr.net.txt" "$work/$fab.$tr.nethyb.txt" \
			"$fab" "$tr" "$n1" "$n2" <<'PY' || rc=1
import sys
plain, hyb, fab, tr, n1, n2 = sys.argv[1:]
def final(path):
    rows, on = {}, False
    for line in open(path):
        if line.startswith("policy ") and "mean_s" in line:
            on = True
        elif on and line.strip():
            f = line.split()
            rows[f[0]] = line.split(None, 1)[1].strip() if f[1] == "n/a" \
                else [float(x) for x in f[1:6]]
    return rows
a, b = final(plain), final(hyb)
print("#### %s, %s: communication time per step (SimGrid)" %
      (fab, tr.capitalize()))
print()
print("| policy | jobs | mean (ms) | p95 (ms) | mean / topoml | p95 / topoml"
      " | hybrid: jobs | mean (ms) | p95 (ms) | mean / topoml"
      " | p95 / topoml |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
def cols(r):
    if isinstance(r, str):
        return [r, "", "", "", ""]
    return ["%d" % r[0], "%.2f" % (r[1] * 1e3), "%.2f" % (r[2] * 1e3),
            "%.4f" % r[3], "%.4f" % r[4]]
for p in a:
    if isinstance(a[p], str):
        print("| %s | %s ||||||||||" % (p, a[p]))
        continue
    print("| %s | %s |" % (p, " | ".join(cols(a[p]) + cols(b.get(p, "?")))))
print()
print("Reproduce, in the work folder:")
print()
for c in (n1, n2):
    print("    topoml-netsim %s" % c)
print()
PY
	done
done
exit $rc
