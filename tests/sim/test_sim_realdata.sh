#!/bin/bash
# topoml sim --json on the real traces in $REALDATA/swf (ANL Mira and
# Theta excerpts, an SWF excerpt) over every policy that fits each of
# three generated 4096-node machines (fat-tree, dragonfly, torus): every
# key present and sane, the same jobs replayed by every policy, text and
# SVG output too.
set -u
swf=${REALDATA:-}/swf
if [ -z "${REALDATA:-}" ] || [ ! -d "$swf" ]; then
	echo "SKIP: REALDATA/swf not found"
	exit 77
fi
topoml=${TOP_BUILDDIR:-../..}/contrib/topoml
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# shellcheck source-path=SCRIPTDIR/..
. "${TESTS_DIR:-$(dirname "$0")/..}/sim/topologies.sh"
sim_topologies "$tmp"
topos="$tmp/fattree.conf $tmp/dragonfly.json $tmp/torus.json"

check_json() {	# FILE JOBS POLICIES...
	python3 - "$@" <<'PY' || exit 1
import json, sys
path, njobs, pols = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
d = json.load(open(path))
keys = ["jobs", "mean_wait_s", "p95_wait_s", "utilization", "makespan_s",
        "span_over_lower_bound", "ring_cost", "ring_cost_over_lower_bound",
        "sharing", "fragmentation"]
got = d["policies"]
if sorted(got) != sorted(pols):
    sys.exit("%s: policies %s, want %s" % (path, sorted(got), sorted(pols)))
for p, m in got.items():
    for k in keys:
        if k not in m:
            sys.exit("%s: %s: key %s missing" % (path, p, k))
    bad = []
    if m["jobs"] + m["unplaced"] != njobs or m["jobs"] < 0.9 * njobs:
        bad.append("jobs %d + unplaced %d != %d" % (m["jobs"], m["unplaced"], njobs))
    if not 0 <= m["mean_wait_s"] <= m["max_wait_s"] or \
       not 0 <= m["p95_wait_s"] <= m["max_wait_s"]:
        bad.append("waits")
    if not 0 < m["utilization"] <= 1:
        bad.append("utilization %g" % m["utilization"])
    if not m["makespan_s"] > 0:
        bad.append("makespan")
    if not m["span_over_lower_bound"] >= 1 - 1e-9:
        bad.append("span/lb %g" % m["span_over_lower_bound"])
    if not (m["ring_cost"] >= 0 and m["ring_cost_over_lower_bound"] >= 1 - 1e-9):
        bad.append("ring %g / lb %g" % (m["ring_cost"], m["ring_cost_over_lower_bound"]))
    # the bound on the free nodes lies between the bound and the cost
    if not (1 - 1e-9 <= m["ring_cost_over_free_lower_bound"] <=
            m["ring_cost_over_lower_bound"] + 1e-9):
        bad.append("ring / free lb %g" % m["ring_cost_over_free_lower_bound"])
    if not 0 <= m["sharing"] or not 0 <= m["sharing_fraction"] <= 1:
        bad.append("sharing %g" % m["sharing"])
    if not 0 <= m["fragmentation"] <= 1:
        bad.append("fragmentation %g" % m["fragmentation"])
    if bad:
        sys.exit("%s: %s: %s" % (path, p, ", ".join(bad)))
PY
}

n=0
for topo in $topos; do
	# Every placement on a torus scores the largest free box, which
	# costs milliseconds: replay the first 600 jobs there.
	cut=
	case $topo in
	*fattree*) pols="topoml slurm-tree linear" ;;
	*dragonfly*) pols="topoml slurm-dragonfly linear" ;;
	*torus*) pols="topoml slurm-hilbert linear" cut="--max-jobs 600" ;;
	esac
	for trace in "$swf"/*; do
		case $trace in
		*mira*) scale="--trace-nodes 49152" ;;
		*theta*) scale="" ;;
		*) scale="--scale fit" ;;
		esac
		out=$tmp/out$n.json
		n=$((n + 1))
		# shellcheck disable=SC2086
		"$topoml" sim --topology "$topo" --trace "$trace" $scale $cut \
			--policy "${pols// /,}" --json >"$out" 2>"$tmp/err" ||
			fail "sim $topo $trace: $(cat "$tmp/err")"
		jobs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["jobs"])' "$out")
		[ "$jobs" -gt 0 ] || fail "$trace: no jobs read"
		# shellcheck disable=SC2086
		check_json "$out" "$jobs" $pols
		echo "ok: $(basename "$topo") $(basename "$trace"): $jobs jobs"
	done
done

# Text table and SVG on one trace.
"$topoml" sim -t "$tmp/fattree.conf" -T "$swf/MTech-Thesis_JobLogs_theta.swf.txt" \
	--max-jobs 300 --svg "$tmp/c.svg" >"$tmp/table" ||
	fail "sim text/svg"
for p in topoml slurm-tree linear; do
	head -5 "$tmp/table" | grep -q "$p" || fail "table lacks $p"
done
grep -q '^ring cost / lower bound' "$tmp/table" || fail "table rows"
grep -q '^<svg' "$tmp/c.svg" || fail "no SVG"
grep -q '</svg>' "$tmp/c.svg" || fail "SVG not closed"
[ "$(grep -c '<rect x=.*<title>' "$tmp/c.svg")" -eq 24 ] ||
	fail "SVG: want 8 metrics x 3 policies bars"
# Bad input is reported with its file and line, exit 1.
printf 'submit,nodes,runtime\n0,x,5\n' >"$tmp/bad.csv"
"$topoml" sim -t "$tmp/fattree.conf" -T "$tmp/bad.csv" 2>"$tmp/err" &&
	fail "bad trace accepted"
grep -q "bad.csv:2: nodes: 'x' is not a number" "$tmp/err" ||
	fail "bad trace message: $(cat "$tmp/err")"
exit 0
