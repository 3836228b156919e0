#!/bin/bash
# topoml sim on the hand-made fixtures (no real data needed): JSON keys and
# values for a trace whose schedule is known, usage errors (exit 2), bad
# files (exit 1, FILE:LINE messages), gzip traces, text output.
set -u
topoml=${TOP_BUILDDIR:-../..}/contrib/topoml
fix=${TESTS_DIR:-$(dirname "$0")/..}/fixtures/sim
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_sim_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 8 nodes, 2 leaves of 4.
printf 'SwitchName=l0 Nodes=c[1-4]\nSwitchName=l1 Nodes=c[5-8]\n' >"$tmp/t.conf"
printf 'SwitchName=top Switches=l[0-1]\n' >>"$tmp/t.conf"
# The backfill example of check_sim: C backfills, D must wait for B.
cat >"$tmp/bf.csv" <<'CSV'
submit,nodes,runtime,walltime
0,4,100,100
1,8,10,10
2,2,50,50
3,2,50,200
CSV

"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" --json >"$tmp/out.json" ||
	fail "sim --json"
python3 - "$tmp/out.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
pols = d["policies"]
if sorted(pols) != ["linear", "slurm-tree", "topoml"]:
    sys.exit("default fat-tree policies: %s" % sorted(pols))
for p, m in pols.items():
    want = {"jobs": 4, "backfilled": 1, "mean_wait_s": 206 / 4,
            "max_wait_s": 107, "makespan_s": 160,
            "utilization": (4 * 100 + 8 * 10 + 2 * 50 + 2 * 50) / (8 * 160)}
    for k, v in want.items():
        if abs(m[k] - v) > 1e-6:
            sys.exit("%s: %s = %s, want %s" % (p, k, m[k], v))
if d["trace"]["jobs"] != 4 or d["trace"]["format"] != "csv":
    sys.exit("trace: %s" % d["trace"])
PY

# --policy volcano (libtopoml_sim's baseline, policy 10) replays the same
# schedule: A on a leaf, B (8) waits for the whole tree, C backfills.
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" -p volcano --json \
	>"$tmp/vol.json" || fail "sim -p volcano"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["policies"]["volcano"]; sys.exit(m["jobs"] != 4 or m["backfilled"] != 1 or m["mean_wait_s"] != 206/4)' \
	"$tmp/vol.json" || fail "volcano: $(cat "$tmp/vol.json")"
# place: 3 nodes, c1 busy: l0 scores (1+3)/4 against l1's 3/4 (binpack)
"$topoml" place -t "$tmp/t.conf" -N 3 --busy c1 --policy volcano \
	>"$tmp/vol.txt" || fail "place --policy volcano"
grep -q '^nodes: c\[2-4\]$' "$tmp/vol.txt" ||
	fail "volcano: $(cat "$tmp/vol.txt")"

# --no-backfill: C waits behind B as well.
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" -p linear --no-backfill \
	--json >"$tmp/fcfs.json" || fail "sim --no-backfill"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["policies"]["linear"]; sys.exit(m["backfilled"] != 0 or m["mean_wait_s"] != (0+99+108+107)/4)' \
	"$tmp/fcfs.json" || fail "FCFS waits: $(cat "$tmp/fcfs.json")"

# gzip trace, --max-jobs, --cores-per-node on the SWF fixture.
gzip -c "$fix/small.swf" >"$tmp/small.swf.gz"
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/small.swf.gz" -c 4 -n 2 -p topoml \
	--json >"$tmp/gz.json" || fail "sim on gzip SWF"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["trace"]["jobs"] != 2 or d["trace"]["format"] != "swf" or d["policies"]["topoml"]["jobs"] != 2)' \
	"$tmp/gz.json" || fail "gzip SWF: $(cat "$tmp/gz.json")"

# Text table: one column per policy, in the order given.
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" -p linear,topoml \
	>"$tmp/table" || fail "sim table"
grep -Eq '^ +linear +topoml$' "$tmp/table" || fail "table header: $(cat "$tmp/table")"
grep -Eq '^backfilled +1 +1$' "$tmp/table" || fail "table rows"

# Usage errors exit 2 and say what is wrong.
usage() {	# MESSAGE ARGS...
	local msg=$1
	shift
	"$topoml" sim "$@" >/dev/null 2>"$tmp/err"
	[ $? = 2 ] || fail "sim $*: exit status not 2"
	grep -q -- "$msg" "$tmp/err" || fail "sim $*: $(cat "$tmp/err")"
}
usage "unknown policy 'best'" -t "$tmp/t.conf" -T "$tmp/bf.csv" -p best
usage "'-1' is not 'fit' or a positive number" -t "$tmp/t.conf" \
	-T "$tmp/bf.csv" --scale -1
usage "--max-jobs: 'x'" -t "$tmp/t.conf" -T "$tmp/bf.csv" -n x
usage "--topology and --trace are required" -T "$tmp/bf.csv"
usage "'xml' is not auto" -t "$tmp/t.conf" -T "$tmp/bf.csv" -f xml

# Bad files exit 1 with FILE:LINE.
"$topoml" sim -t "$tmp/t.conf" -T "$fix/bad.swf" 2>"$tmp/err" >/dev/null
[ $? = 1 ] || fail "bad trace: exit status not 1"
grep -q "bad.swf:3: expected 18 SWF fields, found 17" "$tmp/err" ||
	fail "bad trace: $(cat "$tmp/err")"
# Unreadable files exit 2 (the usage/file convention of every command).
"$topoml" sim -t "$tmp/none.conf" -T "$tmp/bf.csv" 2>"$tmp/err" >/dev/null
[ $? = 2 ] || fail "missing topology: exit status not 2"
grep -q "^topoml sim: $tmp/none.conf: No such file" "$tmp/err" ||
	fail "missing topology: $(cat "$tmp/err")"
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/none.csv" 2>"$tmp/err" >/dev/null
[ $? = 2 ] || fail "missing trace: exit status not 2"
printf 'SwitchName=s1 Switches=s9\n' >"$tmp/bad.conf"
"$topoml" sim -t "$tmp/bad.conf" -T "$tmp/bf.csv" 2>/dev/null >/dev/null
[ $? = 1 ] || fail "invalid topology: exit status not 1"

# JSON "topology": fields, not prose.
python3 - "$tmp/out.json" <<'PY' || exit 1
import json, sys
t = json.load(open(sys.argv[1]))["topology"]
want = {"family": "fat-tree", "nodes": 8, "switches": 3, "leaves": 2,
        "levels": 2}
for k, v in want.items():
    if t.get(k) != v:
        sys.exit("topology %s = %s, want %s: %s" % (k, t.get(k), v, t))
PY

# Progress: with --progress on stderr (one line per policy at least), none
# by default when stderr is not a terminal, none with --quiet.
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" --progress >/dev/null \
	2>"$tmp/err" || fail "sim --progress"
grep -q '^topoml sim: topoml (1/3): 4 jobs' "$tmp/err" &&
	grep -q '^topoml sim: linear (3/3)' "$tmp/err" ||
	fail "--progress: $(cat "$tmp/err")"
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" >/dev/null 2>"$tmp/err"
[ -s "$tmp/err" ] && fail "progress off a terminal: $(cat "$tmp/err")"
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" --progress -q >/dev/null \
	2>"$tmp/err"
[ -s "$tmp/err" ] && fail "--quiet: $(cat "$tmp/err")"

# The SVG: readable labels (not JSON keys), every value in full, no
# rotated text that could run into the title.
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" --svg "$tmp/m.svg" \
	>/dev/null || fail "sim --svg"
python3 - "$tmp/m.svg" <<'PY' || exit 1
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
texts = [t.firstChild.data for t in d.getElementsByTagName("text")
         if t.firstChild]
for want in ("mean wait (s)", "utilization", "51.5", "160", "topoml",
             "slurm-tree", "lower is better", "higher is better"):
    if want not in texts and not any(want in t for t in texts):
        sys.exit("SVG lacks %r: %s" % (want, texts))
if "mean_wait_s" in texts:
    sys.exit("raw JSON key as a label")
if any(t.getAttribute("transform") for t in d.getElementsByTagName("text")):
    sys.exit("rotated text in the SVG")
PY
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/bf.csv" --svg /nonexistent/m.svg \
	>/dev/null 2>&1
[ $? = 2 ] || fail "--svg into a missing directory: exit status not 2"

# --shared: jobs in cores share nodes.  Two 2-core jobs and a 1-core job on
# 4-core nodes: the second goes onto the first's node (best fit), the third
# elsewhere; without --shared each job takes a whole node.
cat >"$tmp/sh.swf" <<'SWF'
1 0 -1 100 2 -1 -1 2 100 -1 1 -1 -1 -1 -1 -1 -1 -1
2 1 -1 100 2 -1 -1 2 100 -1 1 -1 -1 -1 -1 -1 -1 -1
3 2 -1 100 1 -1 -1 1 100 -1 1 -1 -1 -1 -1 -1 -1 -1
SWF
"$topoml" sim -q -t "$tmp/t.conf" -T "$tmp/sh.swf" -c 4 --shared \
	--jobs "$tmp/sh.jobs" --json >"$tmp/sh.json" || fail "sim --shared"
for p in topoml slurm-tree linear; do
	n1=$(awk -v p=$p '$1 == p && $2 == 1 { print $6 }' "$tmp/sh.jobs")
	n2=$(awk -v p=$p '$1 == p && $2 == 2 { print $6 $7 }' "$tmp/sh.jobs")
	n3=$(awk -v p=$p '$1 == p && $2 == 3 { print $6 }' "$tmp/sh.jobs")
	[ -n "$n1" ] && [ "$n2" = "${n1}2" ] && [ "$n3" != "$n1" ] ||
		fail "--shared $p: jobs on '$n1' '$n2' '$n3'"
done
python3 - "$tmp/sh.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
if not d["trace"]["shared"] or d["trace"]["cores_per_node"] != 4:
    sys.exit("trace: %s" % d["trace"])
for p, m in d["policies"].items():
    # 500 core-seconds of 32 cores over 102 s
    if abs(m["utilization"] - 500 / (32 * 102)) > 1e-6:
        sys.exit("%s: utilization %s" % (p, m["utilization"]))
PY
"$topoml" sim -q -t "$tmp/t.conf" -T "$tmp/sh.swf" -c 4 \
	--jobs "$tmp/whole.jobs" >/dev/null || fail "sim --jobs"
awk '$1 == "topoml"' "$tmp/whole.jobs" | sort -u -k6,6 | wc -l | grep -qx 3 ||
	fail "without --shared: three jobs on three nodes"
"$topoml" sim -t "$tmp/t.conf" -T "$tmp/sh.swf" --shared >/dev/null 2>&1
[ $? = 2 ] || fail "--shared without --cores-per-node: exit status not 2"
exit 0
