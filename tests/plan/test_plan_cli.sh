#!/bin/bash
# topoml plan from the command line (issue 34): layouts and their sbatch
# lines, fixed dimensions, the fabric's levels, --json, exit statuses.
set -u
bld=${TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
topoml=$bld/contrib/topoml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

gpt175=(--layers 96 --hidden 12288 --heads 96 --seq 2048 --batch 1536)

# 128 DGX H100 of a generated fat tree: 3 layouts, best first, each with
# the sbatch line that asks for it
out=$("$topoml" plan --nodes 128 "${gpt175[@]}" --top 3) || fail "plan: $out"
[ "$(echo "$out" | grep -c '^#[0-9] tp=')" = 3 ] || fail "3 layouts: $out"
sb='^  sbatch -N 128 --gpus-per-node=8 --ntasks-per-node=8'
echo "$out" | grep -q "$sb --ml-parallel=tp=[0-9]*,pp=[0-9]*,dp=[0-9]*" ||
	fail "sbatch line: $out"
steps=$(echo "$out" | sed -n 's/^  step *\([0-9.]*\) s:.*/\1/p')
[ "$(echo "$steps" | sort -n)" = "$steps" ] || fail "not best first: $steps"
# the product of the sizes (ep within dp * cp) is the job's 1024 GPUs
for spec in $(echo "$out" | sed -n 's/.*--ml-parallel=\([^ ]*\).*/\1/p'); do
	prod=1
	for kv in ${spec//,/ }; do
		case $kv in ep=*) ;; *) prod=$((prod * ${kv#*=})) ;; esac
	done
	[ "$prod" = 1024 ] || fail "$spec is not 1024 GPUs"
done

# fixed dimensions are honoured; a tensor group of 16 leaves the node
out=$("$topoml" plan --nodes 128 "${gpt175[@]}" --tp 16 --pp 8 \
	--recompute on --top 1) || fail "--tp 16: $out"
echo "$out" | grep -q '^#1 tp=16 pp=8 dp=8 .*recompute=on' ||
	fail "fixed: $out"
echo "$out" | grep -q 'tp [0-9.]* (leaf)' ||
	fail "tp=16 not over the leaf: $out"

# a site file: the dragonfly sample, its global links for the widest groups
"$topoml" plan -t "$TOP_SRCDIR/contrib/topologies/dragonfly.json" \
	--node-model dgx-a100 --layers 32 --hidden 4096 --heads 32 \
	--seq 4096 --batch 512 --experts 8 --top-k 2 --top 1 --json \
	>"$work/p.json" || fail "dragonfly plan"
python3 - "$work/p.json" <<'PY' || fail "--json: $(cat "$work/p.json")"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["plans"][0]
assert d["machine"]["gpu"] == "a100", d["machine"]
assert p["tp"] * p["pp"] * p["dp"] * p["cp"] == d["machine"]["nodes"] * 8
assert p["mem_gib"] <= 80 * 0.9
s = p["seconds"]
parts = sum(s[k] for k in ("compute", "bubble", "tp", "cp", "ep", "pp",
			    "dp"))
assert abs(parts - s["step"]) < 1e-9 * s["step"], s
assert set(p["levels"]) == {"tp", "cp", "ep", "dp", "pp"}
assert p["sbatch"].startswith("sbatch -N %d " % d["machine"]["nodes"])
PY

# nothing fits: exit 1 with the reason; usage errors: exit 2
err=$("$topoml" plan --nodes 1 "${gpt175[@]}" 2>&1)
[ $? = 1 ] || fail "no fit: exit status"
echo "$err" | grep -q 'no layout fits' || fail "no fit: $err"
"$topoml" plan --nodes 8 --layers 2 2>/dev/null
[ $? = 2 ] || fail "missing model"
"$topoml" plan --nodes 8 "${gpt175[@]}" --node-model nope 2>/dev/null
[ $? = 2 ] || fail "unknown node model"
"$topoml" plan --nodes 8 "${gpt175[@]}" --bw spine=x 2>/dev/null
[ $? = 2 ] || fail "bad --bw"
"$topoml" plan -t "$work/none.json" "${gpt175[@]}" 2>/dev/null
[ $? = 2 ] || fail "unreadable topology"

# --model FILE: the same layouts as the options, options win over the
# file wherever they stand, a mistake names the file and line (exit 2)
printf '# GPT-3 175B\nlayers = 96\nhidden = 12288\nheads = 96\nseq = 2048\nbatch = 1536\n' \
	>"$work/m.txt"
a=$("$topoml" plan --nodes 128 "${gpt175[@]}" --top 2) || fail "options"
b=$("$topoml" plan --nodes 128 --model "$work/m.txt" --top 2) ||
	fail "--model: $b"
[ "$a" = "$b" ] || fail "--model differs from the options: $b"
c=$("$topoml" plan --tp 4 --nodes 128 --model "$work/m.txt" --top 1) ||
	fail "--model --tp: $c"
echo "$c" | grep -q '^#1 tp=4 ' || fail "--tp before --model lost: $c"
printf 'layers = 96\nhidden = big\n' >"$work/bad.txt"
err=$("$topoml" plan --nodes 8 --model "$work/bad.txt" 2>&1)
[ $? = 2 ] || fail "bad model file: exit status"
echo "$err" | grep -q "bad.txt:2: hidden: 'big' is not a number" ||
	fail "bad model file: $err"
echo "PASS: topoml plan"
