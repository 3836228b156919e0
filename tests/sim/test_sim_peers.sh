#!/bin/bash
# Node-sharing jobs under Kueue TAS go through Kueue's own placement
# (below); contrib/peers-report.sh (doc/results.md, "Beside every peer,
# per fabric") on a prefix of the Theta excerpt in $REALDATA/swf: one table a
# fabric, every policy in every table, either with figures or "n/a
# (reason)"; the refusals the fabrics imply (no switch policy on a torus,
# no torus policy off one, slurm-block on the block topology only, the
# whole-node-only peers' shared column marked); figures in range; and on
# the fat-tree, topoml at or below every peer on span / bound (whole-node
# and shared) and ring cost / bound (shared), and on the torus at or below
# slurm-hilbert and linear on span / bound and ring cost / bound, whole-node
# and shared.  Skips
# without the real data, as the script does.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${TOP_BUILDDIR:-$src/build}
if [ -z "${REALDATA:-}" ] || [ ! -d "$REALDATA/swf" ]; then
	echo "SKIP: REALDATA/swf not found"
	exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/test_sim_peers.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
topoml=$bld/contrib/topoml

# Kueue places node-sharing jobs itself, as one-core pods (not linear's
# choice): on 8 leaves of 8 nodes of 4 cores, 150 Theta jobs in cores
# (a quarter of the load kept), every kueue-bestfit job of at most a
# leaf's 32 cores runs in one leaf (its required rack), its cores per
# node add up to its cores and none is above 4.  (linear spreads 13 such
# jobs over two leaves here.)
"$topoml" generate fat-tree --nodes 64 --per-leaf 8 --radix 8 --levels 2 \
	-q -o "$work/ft64.conf" || fail "generate"
bash "$src/tests/sim/theta_cores.sh" \
	"$REALDATA/swf/MTech-Thesis_JobLogs_theta.swf.txt" 1 150 \
	>"$work/t150.swf" || fail "theta_cores.sh"
"$topoml" sim -q -t "$work/ft64.conf" -T "$work/t150.swf" -c 4 --shared \
	-N 300 -p kueue-bestfit,linear --no-fragmentation \
	--jobs "$work/jobs" >/dev/null || fail "sim --shared"
awk '{ n[$1]++; if ($5 <= 32 && $8 > 1) over[$1]++ }
	$1 == "kueue-bestfit" { s = 0; k = split($7, u, ",")
		for (i = 1; i <= k; i++) { s += u[i]; if (u[i] > 4) bad++ }
		if (s != $5) bad++ }
	END { printf "kueue-bestfit %d jobs, %d leaf-sized over 2+ leaves," \
		" %d bad units; linear %d over 2+ leaves\n", n["kueue-bestfit"],
		over["kueue-bestfit"], bad, over["linear"]
		exit !(n["kueue-bestfit"] == 150 && !over["kueue-bestfit"] &&
		       !bad && over["linear"] > 0) }' "$work/jobs" ||
	fail "kueue-bestfit's shared jobs are not Kueue's"

start=$(date +%s)
(cd "$bld" && bash "$src/contrib/peers-report.sh" -n 150 \
	-r "$REALDATA" -t "$topoml") >"$work/report.md" 2>"$work/err"
rc=$?
[ $rc = 77 ] && { echo "SKIP: $(cat "$work/err")"; exit 77; }
[ $rc = 0 ] || fail "peers-report.sh exit $rc: $(cat "$work/err")"
echo "report: $(($(date +%s) - start)) s"

python3 - "$work/report.md" <<'PY' || exit 1
import re, sys
pols = ["topoml", "slurm-tree", "slurm-dragonfly", "slurm-block",
        "slurm-torus3d", "slurm-hilbert", "linear", "kueue-bestfit",
        "kueue-leastfree", "kueue-balanced", "volcano"]
fabrics = ["fat-tree", "ib", "nvl-blocks", "dragonfly", "torus"]
whole_only = ["volcano", "slurm-block", "slurm-torus3d"]
tables, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"### (\S+), Theta \((\d+) jobs\)", line)
    if m:
        cur = tables.setdefault(m.group(1), {})
        continue
    if cur is not None and line.startswith("| ") and \
       not line.startswith("| policy"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in cur:
            sys.exit("%s twice" % cells[0])
        cur[cells[0]] = cells[1:]
bad = []
if sorted(tables) != sorted(fabrics):
    sys.exit("tables %s, want %s" % (sorted(tables), sorted(fabrics)))
def na(cell):
    m = re.match(r"n/a \((.+)\)$", cell)
    return m.group(1) if m else None
def num(x):
    return float(x.split()[0])
for f, rows in tables.items():
    if sorted(rows) != sorted(pols):
        bad.append("%s: policies %s" % (f, sorted(rows)))
        continue
    for p, c in rows.items():
        why = na(c[0])
        # which peers must refuse which fabric
        want = (f == "torus" and p in ("slurm-tree", "slurm-dragonfly",
                "slurm-block", "kueue-bestfit", "kueue-leastfree",
                "kueue-balanced", "volcano")) or \
               (f != "torus" and p in ("slurm-torus3d", "slurm-hilbert")) or \
               (f != "nvl-blocks" and p == "slurm-block")
        if want != (why is not None):
            bad.append("%s: %s: %s" % (f, p, c[0] if why else
                                       "placed, expected a refusal"))
            continue
        if why is not None:
            continue
        if len(c) != 11:
            bad.append("%s: %s: %d cells" % (f, p, len(c)))
            continue
        whole, shared = c[:6], c[6:]
        if p in whole_only:
            if not (na(shared[0]) or "").startswith("shared jobs go to"):
                bad.append("%s: %s: shared %s" % (f, p, shared[0]))
            shared = None
        for kind, v in (("whole", whole), ("shared", shared)):
            if v is None:
                continue
            sp, rg = num(v[0]), num(v[1])
            sh, wt, ut = num(v[-3]), num(v[-2]), num(v[-1])
            if not (sp >= 1 - 1e-9 and rg >= 1 - 1e-9 and sh >= 0 and
                    wt >= 0 and 0 < ut <= 1):
                bad.append("%s: %s %s: out of range %s" % (f, p, kind, v))
        if int(whole[2]) < 0:
            bad.append("%s: %s: DP top %s" % (f, p, whole[2]))
ft = tables["fat-tree"]
t = ft["topoml"]
for p, c in ft.items():
    if p == "topoml" or na(c[0]):
        continue
    # not ring / bound nor DP top whole-node: on 1000 jobs kueue-bestfit
    # beats topoml there (doc/results.md)
    for i, what in ((0, "span/bound"),):
        if num(t[i]) > num(c[i]) + 1e-9:
            bad.append("fat-tree: topoml %s %s > %s's %s" %
                       (what, t[i], p, c[i]))
    if p not in whole_only:
        for i, what in ((6, "shared span/bound"), (7, "shared ring/bound")):
            if num(t[i]) > num(c[i]) + 1e-9:
                bad.append("fat-tree: topoml %s %s > %s's %s" %
                           (what, t[i], p, c[i]))
# the torus: whole-node span/bound and ring/bound, and the node-sharing
# jobs' (a box), at or below every peer that places them there
tt = tables["torus"]
for p in ("slurm-hilbert", "linear"):
    for i, what in ((0, "span/bound"), (1, "ring/bound"),
                    (6, "shared span/bound"), (7, "shared ring/bound")):
        if num(tt["topoml"][i]) > num(tt[p][i]) + 1e-9:
            bad.append("torus: topoml %s %s > %s's %s" %
                       (what, tt["topoml"][i], p, tt[p][i]))
if bad:
    sys.exit("\n".join(bad))
print("%d tables, %d policies each" % (len(tables), len(pols)))
PY
echo "PASS"
