#!/bin/bash
# What every topoml command shares (issue 29 items 15, 17): --version/-V,
# help COMMAND, every message prefixed "topoml COMMAND:", the exit statuses
# of topoml(1) (0 done, 1 a finding, 2 usage or a file that cannot be read
# or written), "1 node" not "1 nodes", --svg checked before any output,
# check --site-conf --slurm-conf; and SVGs readable at the README's sizes:
# text inside the picture, the dragonfly total off its links, leaf names
# at 10 px or more once rendered 1400 px wide, node names drawn or tooltips.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TOPOML=${TOP_BUILDDIR:?run from make check}/contrib/topoml
SRC=${TOP_SRCDIR:?}
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
. "$(dirname "$0")/cli_lib.sh"
# every stderr line starts with "topoml" (and the command, when given)
expect_prefixed() {	# PREFIX LABEL
	if [ -s "$T/err" ] && ! grep -qv "^$1" "$T/err"; then ok "$2: prefixed"
	else fail "$2: stderr not all '$1...': $err"; fi
}

# --- version and help
run "$TOPOML" --version
expect_rc 0 "--version"
v=$out
run "$TOPOML" -V
expect_rc 0 "-V"
[ "$out" = "$v" ] && echo "$v" | grep -qE '^topoml [0-9]' &&
	ok "-V is --version: $v" || fail "-V: '$out', --version: '$v'"
for cmd in check show import-ib generate place sim; do
	run "$TOPOML" help "$cmd"
	h=$out
	run "$TOPOML" "$cmd" --help
	if [ -n "$h" ] && [ "$h" = "$out" ]; then ok "help $cmd is $cmd --help"
	else fail "help $cmd differs from $cmd --help"; fi
	# each command's help says what its exit statuses mean
	echo "$h" | grep -qi 'exit' || fail "$cmd --help: no exit status"
done
run "$TOPOML" help nosuch
expect_rc 2 "help of an unknown command"
grep -q "^topoml: help: unknown command 'nosuch'" "$T/err" ||
	fail "help nosuch: $err"

# --- every message prefixed, getopt's own ones too; usage errors exit 2
for cmd in check show import-ib place sim; do
	run "$TOPOML" "$cmd" --no-such-option x
	expect_rc 2 "$cmd --no-such-option"
	grep -q "^topoml $cmd: unrecognized option '--no-such-option'" \
		"$T/err" || fail "$cmd: getopt message: $err"
done
run "$TOPOML" generate fat-tree --no-such-option
expect_rc 2 "generate --no-such-option"
grep -q "^topoml generate: unrecognized option" "$T/err" ||
	fail "generate: getopt message: $err"
run "$TOPOML" check -f
grep -q "^topoml check: option requires an argument" "$T/err" ||
	fail "check -f: $err"
# a missing or extra argument says so first, then the usage
while IFS='|' read -r want args; do
	run $TOPOML $args
	expect_rc 2 "topoml $args"
	head -1 "$T/err" | grep -qF -- "$want" ||
		fail "topoml $args: first line not '$want': $err"
done <<'EOF'
topoml: no command given|
topoml check: no FILE and no --site-conf given|check
topoml show: no FILE given|show
topoml show: one FILE at a time|show a b
topoml import-ib: no IBNETDISCOVER_FILE given|import-ib
topoml import-ib: one IBNETDISCOVER_FILE at a time|import-ib a b
topoml generate: no family given|generate
topoml generate: unexpected argument 'x'|generate fat-tree x --nodes 3
topoml place: --topology and --nodes are required|place
topoml sim: --topology and --trace are required|sim
EOF
run "$TOPOML" nosuch
expect_rc 2 "unknown command"
grep -q "^topoml: unknown command 'nosuch'" "$T/err" || fail "nosuch: $err"

# --- a file that cannot be read (missing, or a directory): 2 everywhere
"$TOPOML" generate fat-tree --nodes 10 --per-leaf 4 --prefix c \
	-o "$T/topology.conf" >/dev/null || fail "generate"
printf 'submit,nodes,runtime\n0,2,10\n5,1,10\n' >"$T/trace.csv"
mkdir "$T/dir"
for bad in "$T/none" "$T/dir"; do
	run "$TOPOML" check "$bad"
	expect_rc 2 "check $bad"
	expect_prefixed "topoml check: $bad: " "check $bad"
	run "$TOPOML" check --site-conf "$bad"
	expect_rc 2 "check --site-conf $bad"
	expect_prefixed "topoml check: $bad: " "check --site-conf $bad"
	run "$TOPOML" check --json --site-conf "$bad"
	expect_rc 2 "check --json --site-conf $bad"
	echo "$out" | python3 -c 'import json, sys
o = json.load(sys.stdin)[0]
assert o["valid"] is False and o["errors"], o' ||
		fail "check --json --site-conf $bad: $out"
	run "$TOPOML" show "$bad"
	expect_rc 2 "show $bad"
	run "$TOPOML" place --topology "$bad" --nodes 1
	expect_rc 2 "place $bad"
	run "$TOPOML" sim --topology "$T/topology.conf" --trace "$bad"
	expect_rc 2 "sim --trace $bad"
	run "$TOPOML" sim --topology "$T/topology.conf" --trace "$T/trace.csv" \
		--torus3d "$bad"
	expect_rc 2 "sim --torus3d $bad"
	run "$TOPOML" import-ib "$bad"
	expect_rc 2 "import-ib $bad"
	expect_prefixed "topoml import-ib: $bad: " "import-ib $bad"
done
# the topology file topoml.conf names cannot be read: 2, as any file
printf 'TopologyFile=%s\n' "$T/dir" >"$T/dirtopo.conf"
run "$TOPOML" check --site-conf "$T/dirtopo.conf"
expect_rc 2 "check --site-conf, TopologyFile a directory"
grep -q "^topoml check: $T/dir: not a regular file" "$T/err" ||
	fail "TopologyFile a directory: $err"
# a finding is 1
printf 'DefaultHint=ring\n' >"$T/bad.conf"
run "$TOPOML" check --site-conf "$T/bad.conf"
expect_rc 1 "check --site-conf, an invalid key"
expect_prefixed "topoml check: $T/bad.conf:1:1: " "invalid topoml.conf"
# an inert key's warning is prefixed too
printf 'TorusBoxWaitSpan=2\n' >"$T/inert.conf"
cp "$T/topology.conf" "$T/inert-topology.conf"
printf 'TopologyFile=topology.conf\nTorusBoxWaitSpan=2\n' >"$T/inert.conf"
run "$TOPOML" check --site-conf "$T/inert.conf"
expect_rc 0 "check --site-conf, an inert key"
expect_prefixed "topoml check: $T/inert.conf: warning: " "inert-key warning"

# --- check --site-conf --slurm-conf: what slurm.conf lacks, with FILE:LINE
cat >"$T/topoml.conf" <<'EOF'
# partitions of the site
PartitionName=gpu Hint=alltoall
PartitionName=Debug Placement=off
PartitionName=typo Hint=isolate
EOF
cat >"$T/slurm.conf" <<'EOF'
ClusterName=test
NodeName=DEFAULT CPUs=4
nodename=c[1-8] CPUs=4	# c9, c10 left out
PartitionName=DEFAULT MaxTime=10
PartitionName=gpu Nodes=c[1-8] Default=YES
  PartitionName=debug Nodes=ALL
EOF
run "$TOPOML" check --site-conf "$T/topoml.conf" --slurm-conf "$T/slurm.conf"
expect_rc 1 "--slurm-conf with findings"
expect_prefixed "topoml check: " "--slurm-conf findings"
tl=$(grep -n 'c\[9-10\]\|c9\|c10' "$T/topology.conf" | head -1 | cut -d: -f1)
for want in \
	"$T/topoml.conf:3: PartitionName=Debug: no such partition in $T/slurm.conf (partition names are case-sensitive: debug)" \
	"$T/topoml.conf:4: PartitionName=typo: no such partition in $T/slurm.conf" \
	"$T/topology.conf:$tl: node c9: not a NodeName of $T/slurm.conf" \
	"$T/topology.conf:$tl: node c10: not a NodeName of $T/slurm.conf"; do
	grep -qF -- "$want" "$T/err" && ok "finding: ${want#$T/}" ||
		fail "--slurm-conf: no '$want': $err"
done
grep -q 'PartitionName=gpu:' "$T/err" && fail "gpu reported: $err"
grep -q 'node c[1-8]:' "$T/err" && fail "a node of slurm.conf reported: $err"
grep -q "PartitionName=typo Hint=isolate" "$T/out" ||
	fail "--slurm-conf: the settings no longer printed: $out"
run "$TOPOML" check --json --site-conf "$T/topoml.conf" --slurm-conf "$T/slurm.conf"
expect_rc 1 "--json --slurm-conf with findings"
[ -s "$T/err" ] && fail "--json: findings on stderr: $err"
echo "$out" | python3 -c 'import json, sys
o = json.load(sys.stdin)[0]
assert o["valid"] is False, o
assert o["slurm_conf"].endswith("slurm.conf"), o
assert len(o["errors"]) == 4, o["errors"]
assert o["partitions"][0]["name"] == "gpu", o' ||
	fail "--json --slurm-conf: $out"
# all there: 0
printf 'NodeName=c[9-10] CPUs=4\nPartitionName=typo\nPartitionName=Debug\n' \
	>>"$T/slurm.conf"
run "$TOPOML" check --site-conf "$T/topoml.conf" -S "$T/slurm.conf"
expect_rc 0 "--slurm-conf, nothing lacking"
[ -s "$T/err" ] && fail "--slurm-conf, nothing lacking: $err"
# --- the integration slurm.conf chooses, and what stops topology/topoml
I=$T/integ
mkdir "$I"
cp "$T/topology.conf" "$I/topology.conf"
printf 'TopologyFile=topology.conf\n' >"$I/topoml.conf"
# integ SELECTTYPE TOPOLOGYPLUGIN [MORE]: slurm.conf with those lines
integ() {
	{ echo "ClusterName=test"; echo "SelectType=$1"
	  [ -n "$2" ] && echo "TopologyPlugin=$2"; printf '%b' "${3:-}"
	  sed -n 's/.*Nodes=\([^ ]*\).*/NodeName=\1 CPUs=4/p' "$I/topology.conf"
	} >"$I/slurm.conf"
	run "$TOPOML" check --site-conf "$I/topoml.conf" --slurm-conf \
		"$I/slurm.conf"
}
integ select/cons_tres topology/topoml \
	'SelectTypeParameters=CR_Core_Memory\n'
expect_rc 0 "topology/topoml beside cons_tres"
grep -qF "$I/slurm.conf: integration: topology/topoml wrapping topology/tree (SwitchName= lines in topology.conf)" \
	"$T/out" && ok "topology/topoml: wraps tree" || fail "integration: $out"
sed -i 's/^SwitchName=\([^ ]*\) Nodes=/BlockName=\1 Nodes=/;/Switches=/d' \
	"$I/topology.conf"
integ select/cons_tres topology/topoml
grep -qF "integration: topology/topoml wrapping topology/block" "$T/out" &&
	ok "topology/topoml: wraps block" || fail "block: $out $err"
cp "$T/topology.conf" "$I/topology.conf"
integ select/topoml topology/topoml
expect_rc 1 "select/topoml and topology/topoml together"
grep -qF "$I/slurm.conf:2: SelectType=select/topoml with TopologyPlugin=topology/topoml (line 3): both integrations at once" \
	"$T/err" && ok "both integrations: FILE:LINE" || fail "both: $err"
integ select/linear topology/topoml
expect_rc 1 "topology/topoml beside select/linear"
grep -qF "$I/slurm.conf:2: SelectType=select/linear: topology/topoml places inside select/cons_tres only" \
	"$T/err" && ok "select/linear refused" || fail "linear: $err"
touch "$I/topology.yaml"
integ select/cons_tres topology/topoml
expect_rc 1 "topology/topoml beside a topology.yaml"
grep -qF "$I/topology.yaml: Slurm reads it instead of TopologyPlugin=topology/topoml ($I/slurm.conf:3)" \
	"$T/err" && ok "topology.yaml refused" || fail "yaml: $err"
rm "$I/topology.yaml"
integ select/cons_tres topology/topoml \
	'SelectTypeParameters=CR_Core,CR_NO_DIST_TOPO_BLOCK\nTopologyParam=dragonfly\n'
expect_rc 0 "topology/topoml, parameters that change its effect"
grep -qF "$I/slurm.conf:4: warning: CR_NO_DIST_TOPO_BLOCK" "$T/err" &&
	grep -qF "$I/slurm.conf:5: warning: TopologyParam=dragonfly" \
	"$T/err" && ok "warnings with FILE:LINE" || fail "warnings: $err"
integ select/topoml ""
expect_rc 0 "select/topoml alone"
grep -qF "integration: select/topoml" "$T/out" && ok "select/topoml named" ||
	fail "select/topoml: $out"
run "$TOPOML" check --site-conf "$T/topoml.conf" --slurm-conf "$T/none"
expect_rc 2 "--slurm-conf a missing file"
run "$TOPOML" check --slurm-conf "$T/slurm.conf" "$T/topology.conf"
expect_rc 2 "--slurm-conf without --site-conf"

# --- "1 node", never "1 nodes"
printf 'SwitchName=s1 Nodes=a\n' >"$T/one.conf"
"$TOPOML" generate dragonfly --groups 1 --routers 1 --per-router 1 \
	-o "$T/df1.json" >"$T/gen" || fail "generate a 1-node dragonfly"
"$TOPOML" generate torus --dims 1x1x1 -o "$T/t1.json" >>"$T/gen" ||
	fail "generate a 1-node torus"
printf 'PartitionName=p Hint=isolate\nTopologyFile=one.conf\n' >"$T/p1.conf"
{
	cat "$T/gen"
	for f in one.conf df1.json t1.json; do
		"$TOPOML" show "$T/$f" --svg "$T/$f.svg"
		cat "$T/$f.svg"
		"$TOPOML" show --json "$T/$f"
	done
	"$TOPOML" check --site-conf "$T/p1.conf"
	"$TOPOML" place --topology "$T/one.conf" --nodes 1 --svg "$T/p1.svg"
	cat "$T/p1.svg"
	"$TOPOML" place --topology "$T/one.conf" --nodes 1 --busy a
	"$TOPOML" sim -t "$T/one.conf" -T "$T/trace.csv" --svg "$T/s1.svg"
	cat "$T/s1.svg"
	printf 'submit,nodes,runtime\n0,1,10\n' >"$T/t1.csv"
	"$TOPOML" sim -t "$T/one.conf" -T "$T/t1.csv" --svg "$T/s2.svg"
	cat "$T/s2.svg"
} >"$T/all" 2>&1
if grep -E '(^|[^0-9.])1 (nodes|groups|routers|switches|leaves|jobs|hosts|links|global links|positions|partition overrides)\b' "$T/all"; then
	fail "a plural after 1 (above)"
else
	ok "1 node, 1 group, 1 router, 1 job: singular"
fi
grep -q '1 node' "$T/all" && grep -q '1 job' "$T/all" &&
	grep -q '1 partition override' "$T/all" ||
	fail "the singular lines are missing: $(head -c 2000 "$T/all")"

# --- an --svg that cannot be written fails before any output
for c in "show $T/topology.conf" \
	 "place --topology $T/topology.conf --nodes 2" \
	 "sim -t $T/topology.conf -T $T/trace.csv"; do
	run $TOPOML $c --svg "$T/none/x.svg"
	expect_rc 2 "${c%% *} --svg into a missing directory"
	[ -z "$out" ] && ok "${c%% *}: nothing printed before the failing --svg" ||
		fail "${c%% *}: printed before failing: $(echo "$out" | head -3)"
	grep -q "^topoml ${c%% *}: $T/none/x.svg: No such file" "$T/err" ||
		fail "${c%% *} --svg message: $err"
done
# and a command that fails leaves no picture behind
run "$TOPOML" place --topology "$T/topology.conf" --nodes 99 --svg "$T/p99.svg"
expect_rc 1 "place, cannot place"
[ -e "$T/p99.svg" ] && fail "place left an SVG of a job it did not place"
# but removes only the empty file it made: not a link, not a device
ln -s "$T/target.svg" "$T/link.svg"
run "$TOPOML" place --topology "$T/topology.conf" --nodes 99 --svg "$T/link.svg"
[ -L "$T/link.svg" ] && ok "a symbolic link --svg kept" ||
	fail "place removed the symbolic link it was given"

# --- SVGs at the README's sizes
"$TOPOML" generate fat-tree --nodes 4096 --per-leaf 32 --radix 16 \
	--prefix c -o "$T/ft.conf" >/dev/null &&
"$TOPOML" generate dragonfly --groups 16 --routers 16 --per-router 16 \
	--prefix c -o "$T/df.json" >/dev/null &&
"$TOPOML" generate torus --dims 16x16x16 --prefix c -o "$T/t.json" \
	>/dev/null || fail "generate the README's machines"
"$TOPOML" show "$T/ft.conf" --svg "$T/ft.svg" >/dev/null &&
"$TOPOML" show "$T/df.json" --svg "$T/df.svg" >/dev/null &&
"$TOPOML" show "$T/t.json" --svg "$T/t.svg" >/dev/null &&
"$TOPOML" show "$SRC/contrib/topologies/fat-tree.conf" --svg "$T/small.svg" \
	>/dev/null &&
"$TOPOML" place --topology "$T/ft.conf" --nodes 64 --busy 'c[1-600]' \
	--svg "$T/job.svg" >/dev/null || fail "show/place --svg"
# a trace under a long path: the subtitle used to run off the picture
long=$T/a-rather-long-directory-name/of-the-kind/a-site-keeps-traces-in
mkdir -p "$long"
awk 'BEGIN { print "submit,nodes,runtime";
	for (i = 1; i <= 40; i++) print i * 10 "," i % 7 + 1 ",100" }' \
	>"$long/MTech-Thesis_JobLogs_theta.swf.csv"
"$TOPOML" sim -t "$T/ft.conf" -T "$long/MTech-Thesis_JobLogs_theta.swf.csv" \
	--policy topoml,slurm-tree,linear --svg "$T/sim.svg" >/dev/null ||
	fail "sim --svg"
python3 - "$T" <<'PY' && ok "SVGs: text inside, labels off links, readable, names" || fail "SVGs (above)"
import math, re, sys, xml.dom.minidom as m
d = sys.argv[1]
bad = []

def load(name):
    doc = m.parse("%s/%s" % (d, name))
    svg = doc.documentElement
    vb = [float(v) for v in svg.getAttribute("viewBox").split()] or \
        [0, 0, float(svg.getAttribute("width")),
         float(svg.getAttribute("height"))]
    return doc, vb

def size(e):
    while e is not None and e.nodeType == e.ELEMENT_NODE:
        if e.getAttribute("font-size"):
            return float(e.getAttribute("font-size"))
        e = e.parentNode
    return 16.0

def text(e):
    return "".join(c.data for c in e.childNodes if c.nodeType == c.TEXT_NODE)

def box(e):
    # DejaVu Sans, what rsvg-convert draws sans-serif with here, averages
    # under 0.6 em a character; bold a tenth wider
    s, t = size(e), text(e)
    w = len(t) * s * (0.66 if e.getAttribute("font-weight") == "bold"
                      else 0.6)
    x, y = float(e.getAttribute("x")), float(e.getAttribute("y"))
    a = e.getAttribute("text-anchor")
    x0 = x - w / 2 if a == "middle" else x - w if a == "end" else x
    return x0, y - s * 0.8, x0 + w, y + s * 0.2

# every text inside the picture
for name in ("ft.svg", "df.svg", "t.svg", "small.svg", "job.svg",
             "sim.svg", "one.conf.svg", "df1.json.svg", "t1.json.svg",
             "p1.svg", "s1.svg", "s2.svg"):
    doc, vb = load(name)
    for e in doc.getElementsByTagName("text"):
        x0, y0, x1, y1 = box(e)
        if x0 < vb[0] - 0.5 or y0 < vb[1] - 0.5 or \
           x1 > vb[0] + vb[2] + 0.5 or y1 > vb[1] + vb[3] + 0.5:
            bad.append("%s: %r outside the %gx%g picture (%.0f..%.0f)" %
                       (name, text(e), vb[2], vb[3], x0, x1))

# the sim subtitle: the trace by file name, its path a tooltip
doc, vb = load("sim.svg")
sub = [e for e in doc.getElementsByTagName("text")
       if text(e).startswith("trace ")]
if not sub or "a-rather-long-directory-name" in text(sub[0]) or \
   "MTech-Thesis_JobLogs_theta.swf.csv" not in text(sub[0]):
    bad.append("sim subtitle: %r" % [text(e) for e in sub])
elif not sub[0].getElementsByTagName("title"):
    bad.append("sim subtitle: no tooltip with the path")

# the dragonfly's total is off its links
doc, vb = load("df.svg")
lab = [e for e in doc.getElementsByTagName("text")
       if "global links" in text(e)]
if not lab:
    bad.append("dragonfly: no links total")
for e in lab:
    x0, y0, x1, y1 = box(e)
    for l in doc.getElementsByTagName("line"):
        a = [float(l.getAttribute(k)) for k in ("x1", "y1", "x2", "y2")]
        for i in range(101):
            px = a[0] + (a[2] - a[0]) * i / 100
            py = a[1] + (a[3] - a[1]) * i / 100
            if x0 <= px <= x1 and y0 <= py <= y1:
                bad.append("dragonfly: %r drawn over a link" % text(e))
                break
        else:
            continue
        break

# leaf names of the 4096-node fat-tree at 10 px or more at 1400 px wide
for name in ("ft.svg", "job.svg"):
    doc, vb = load(name)
    leaf = [e for e in doc.getElementsByTagName("text")
            if re.fullmatch(r"s0-\d+", text(e))]
    if len(leaf) != 128:
        bad.append("%s: %d leaf labels, not 128" % (name, len(leaf)))
    small = [text(e) for e in leaf if size(e) * 1400 / vb[2] < 9.5]
    if small:
        bad.append("%s: leaf labels under 9.5 px at 1400 px: %s" %
                   (name, small[:3]))
    # the leaves don't overlap each other's labels
    boxes = sorted(box(e) for e in leaf)
    for a, b in zip(boxes, boxes[1:]):
        if abs(a[1] - b[1]) < 1 and a[2] > b[0] + 0.5:
            bad.append("%s: leaf labels overlap" % name)
            break

# node names: every node a tooltip; host lists drawn where they fit
for name, want in (("ft.svg", "c[1-512]"), ("df.svg", "c[1-256]"),
                   ("t.svg", "c[1-256]"), ("small.svg", "node[01-16]")):
    doc, vb = load(name)
    tips = {text(t) for t in doc.getElementsByTagName("title")}
    drawn = {text(e) for e in doc.getElementsByTagName("text")}
    if want not in drawn:
        bad.append("%s: host list %s not drawn" % (name, want))
    if name != "small.svg":
        missing = [n for n in ("c1", "c2048", "c4096")
                   if not any(t == n or t.startswith(n + " ") for t in tips)]
        if missing:
            bad.append("%s: no tooltip for %s" % (name, missing))

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

if [ "$fails" -gt 0 ]; then echo "FAIL: $fails check(s)"; exit 1; fi
echo "PASS: topoml CLI: version, help, messages, exit status, SVGs"
