#!/bin/bash
# topoml check / show / generate: exit codes, summary lines, errors with
# FILE:LINE, valid SVG; every real topology file is handled without a crash.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TOPOML=${TOP_BUILDDIR:?run from make check}/contrib/topoml
SRC=${TOP_SRCDIR:?}
EX=$SRC/contrib/topologies
. "$(dirname "$0")/cli_lib.sh"
expect_out() {	# TEXT LABEL
	if grep -qF -- "$1" "$T/out"; then ok "$2"
	else fail "$2: stdout lacks '$1'"; echo "$out"; fi
}
expect_err() {	# TEXT LABEL
	if grep -qF -- "$1" "$T/err"; then ok "$2"
	else fail "$2: stderr lacks '$1'"; echo "$err"; fi
}
svg_valid() {	# FILE
	if command -v xmllint >/dev/null; then
		xmllint --noout "$1"
	else
		python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$1"
	fi
}

# --- check: the shipped examples, one line each, exit 0
run "$TOPOML" check "$EX/fat-tree.json" "$EX/dragonfly.json" "$EX/torus.json" \
	"$EX/mesh.json" "$EX/fat-tree.conf"
expect_rc 0 "check examples"
[ "$(wc -l <"$T/out")" -eq 5 ] && ok "one line per file" || fail "not 5 lines: $out"
expect_out "$EX/fat-tree.json: fat-tree: 128 nodes, 14 switches (8 leaves), 3 levels" "fat-tree.json summary"
expect_out "$EX/dragonfly.json: dragonfly: 64 nodes, 4 groups, 16 routers, explicit global links" "dragonfly.json summary"
expect_out "$EX/torus.json: torus: 512 nodes, 8x8x8, wrap xyz" "torus.json summary"
expect_out "$EX/mesh.json: mesh: 8 nodes, 2x2x2, no wrap" "mesh.json summary"
expect_out "$EX/fat-tree.conf: fat-tree: 64 nodes, 6 switches (4 leaves), 2 levels" "fat-tree.conf summary"

# --- check: a bad file among good ones: exit 1, every error, others still checked
printf '{"family": "fat-tree", "switches": [\n{"name": "a", "nodes": "n[1-2]"},\n{"name": "b", "nodes": "n2"},\n{"name": "top", "switches": "a,b,c"}]}\n' >"$T/bad.json"
run "$TOPOML" check "$T/bad.json" "$EX/mesh.json"
expect_rc 1 "check with a bad file"
expect_err "$T/bad.json:3: node n2 is on two leaf switches: a (line 2) and b (line 3)" "two leaves error"
expect_err "$T/bad.json:4: switch top: unknown switch c in \"switches\"" "unknown switch error"
expect_out "$EX/mesh.json: mesh" "good file still checked"
printf '{"family": "torus",\n  "dims": [2, 2, 2], ]\n' >"$T/syntax.json"
run "$TOPOML" check "$T/syntax.json"
expect_rc 1 "syntax error"
expect_err "$T/syntax.json:2:22: " "syntax error FILE:LINE:COL"
# A name from a file (perhaps another user's) and an argument reach the
# terminal escaped: no control sequence, no line of their own.
printf 'SwitchName=s1 Nodes=n1\nSwitchName=top Switches=s1,ev\033il\377\n' \
	>"$T/esc.conf"
run "$TOPOML" check "$T/esc.conf"
expect_rc 1 "a control byte in a file"
expect_err "child switch 'ev\\x1bil\\xff' is not defined" "a file's bytes escaped"
run "$TOPOML" "$(printf 'x\ntopoml: forged\033[2J')"
expect_err "topoml: unknown command 'x\\x0atopoml: forged\\x1b[2J'" \
	"an argument escaped"
if LC_ALL=C grep -q -P '\x1b|^topoml: forged' "$T/err"; then
	fail "a control byte or forged line on stderr"
fi
run "$TOPOML" check /nonexistent.json
expect_rc 2 "missing file"
expect_err "topoml check: /nonexistent.json: No such file or directory" "missing file message"
run "$TOPOML" check /nonexistent.json "$T/bad.json"
expect_rc 2 "unreadable outranks invalid"
expect_err "topoml check: $T/bad.json:3: node n2" "errors prefixed with the command"
run "$TOPOML" check
expect_rc 2 "check without files"
run "$TOPOML" check --format xml "$EX/mesh.json"
expect_rc 2 "unknown format"
run "$TOPOML" check --format json "$EX/fat-tree.conf"
expect_rc 1 "forced format that does not fit"

# --- check --json: one object per file, fields not prose
run "$TOPOML" check --json "$EX/torus.json" "$T/bad.json"
expect_rc 1 "check --json with a bad file"
if python3 - "$T/out" "$EX/torus.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
good, bad = d
t = good["topology"]
assert good["file"] == sys.argv[2] and good["valid"] is True, good
assert t["family"] == "torus" and t["nodes"] == 512, t
assert t["dims"] == [8, 8, 8] and t["wrap"] == [True, True, True], t
assert bad["valid"] is False and "topology" not in bad, bad
assert any("node n2 is on two leaf switches" in e for e in bad["errors"]), bad
PY
then ok "check --json fields"; else fail "check --json: $out"; fi
[ -s "$T/err" ] && fail "check --json also wrote to stderr: $err" || ok "check --json: errors only in JSON"
sed "s|^TopologyFile=.*|TopologyFile=$EX/fat-tree.conf|" \
	"$SRC/contrib/examples/topoml.conf" >"$T/topoml.conf"
run "$TOPOML" check --json --site-conf "$T/topoml.conf"
expect_rc 0 "check --json --site-conf"
python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))[0]; sys.exit(not (o["kind"] == "topoml.conf" and o["placement"] == "topoml" and o["topology"]["leaves"] == 4))' "$T/out" &&
	ok "site-conf JSON" || fail "site-conf JSON: $out"
# every key of topoml.conf is shown, with the value set or its default
{ sed 's/^#\(LocalityWait\|LocalityWaitSpan\|HybridWeights\)=/\1=/' \
	"$T/topoml.conf"
  printf 'Debug=2\nDragonflySpread=alltoall\nTopologyFormat=conf\n'
  printf 'HealthPolicy=avoid\nHealthAvoidTime=600\n'
  printf 'PartitionName=dbg Placement=off\n'
  printf 'PartitionName=gpu LocalityWait=60\n'; } >"$T/keys.conf"
run "$TOPOML" check --json --site-conf "$T/keys.conf"
expect_rc 0 "check --json --site-conf, every key"
python3 - "$T/out" "$(sed -n 's/^LocalityWait=//p' "$T/keys.conf")" \
	<<'PY' &&
import json, sys
o = json.load(open(sys.argv[1]))[0]
assert o["locality_wait"] == int(sys.argv[2]) > 0, o
assert o["torus_box_wait"] == o["hybrid_wait"] == int(sys.argv[2]), o
assert o["locality_wait_span"] == o["torus_box_wait_span"] == 1.5, o
assert o["hybrid_weights"] == "tp=16,cp=4,ep=4,dp=2,pp=4", o
assert o["debug"] == 2 and o["dragonfly_spread"] == "alltoall", o
assert o["torus_placement"] == "boxes", o
assert o["health_policy"] == "avoid" and o["health_avoid_time"] == 600, o
assert o["topology_format"] == "conf" and o["family"] == "auto", o
assert o["partitions"] == [{"name": "moe", "hint": "alltoall"},
                           {"name": "dbg", "placement": "off"},
                           {"name": "gpu", "locality_wait": 60}], o
PY
	ok "site-conf JSON: every key" || fail "site-conf JSON, every key: $out"
run "$TOPOML" check --site-conf "$T/keys.conf"
expect_out "TopologyFormat=conf Family=auto DragonflySpread=alltoall TorusPlacement=boxes LocalityWait=$(sed -n 's/^LocalityWait=//p' "$T/keys.conf") LocalityWaitSpan=1.5 HybridWeights=tp=16,cp=4,ep=4,dp=2,pp=4 Debug=2" "site-conf text: every key"
expect_out "HealthPolicy=avoid HealthAvoidTime=600" "site-conf text: health"
expect_out "PartitionName=dbg Placement=off" "site-conf text: partitions"
expect_out "PartitionName=gpu LocalityWait=60" "site-conf text: a partition's LocalityWait"
# every key set with effect: no warning; LocalityWaitSpan alone has none
grep -q 'warning' "$T/err" && fail "site-conf, every key: warned: $err"
sed '/^LocalityWait=/d; /^PartitionName=gpu/d' "$T/keys.conf" >"$T/span.conf"
run "$TOPOML" check --site-conf "$T/span.conf"
expect_rc 0 "site-conf: LocalityWaitSpan without LocalityWait"
expect_err "$T/span.conf: warning: LocalityWaitSpan has no effect while LocalityWait is 0" "site-conf: inert LocalityWaitSpan warned"
run "$TOPOML" check -q --site-conf "$T/span.conf"
[ -s "$T/err" ] && fail "site-conf -q: warned: $err" || ok "site-conf -q: quiet"
# TorusPlacement=curve shown; LocalityWait then waits for no box: said
sed 's/^TorusPlacement=boxes$/TorusPlacement=curve/' "$T/keys.conf" \
	>"$T/curve.conf"
run "$TOPOML" check --site-conf "$T/curve.conf"
expect_rc 0 "site-conf: TorusPlacement=curve"
expect_out " DragonflySpread=alltoall TorusPlacement=curve LocalityWait=" "site-conf text: TorusPlacement=curve"
expect_err "$T/curve.conf: warning: LocalityWait waits for no torus box with TorusPlacement=curve" "site-conf: LocalityWait with curve warned"
# the old names still read, each its half, said deprecated
sed '/^LocalityWait/d' "$T/keys.conf" >"$T/old.conf"
printf 'TorusBoxWait=600\nHybridWait=3600\nTorusBoxWaitSpan=1.5\n' \
	>>"$T/old.conf"
run "$TOPOML" check --site-conf "$T/old.conf"
expect_rc 0 "site-conf: the deprecated wait names"
expect_out " TorusPlacement=boxes TorusBoxWait=600 HybridWait=3600 LocalityWaitSpan=1.5 " "site-conf text: the deprecated wait names"
expect_err "$T/old.conf: warning: TorusBoxWait is deprecated: use LocalityWait" "site-conf: TorusBoxWait deprecated"
expect_err "$T/old.conf: warning: HybridWait is deprecated: use LocalityWait" "site-conf: HybridWait deprecated"
expect_err "$T/old.conf: warning: TorusBoxWaitSpan is deprecated: use LocalityWaitSpan" "site-conf: TorusBoxWaitSpan deprecated"

# --- generate
run "$TOPOML" generate fat-tree --nodes 4096 --per-leaf 32 --prefix c -o "$T/ft.conf"
expect_rc 0 "generate fat-tree"
expect_out "$T/ft.conf: fat-tree: 4096 nodes, 133 switches (128 leaves), 3 levels" "generate summary"
grep -q '^SwitchName=s0-0 Nodes=c\[1-32\]$' "$T/ft.conf" && ok "conf leaf line" || fail "conf leaf line"
grep -q '^SwitchName=s2-0 Switches=s1-\[0-3\]$' "$T/ft.conf" && ok "conf root line" || fail "conf root line"
run "$TOPOML" check "$T/ft.conf"
expect_out "fat-tree: 4096 nodes, 133 switches (128 leaves), 3 levels" "generated conf checks"
run "$TOPOML" generate fat-tree --nodes 1000 --per-leaf 10 --radix 5 --levels 3 --format json
expect_rc 0 "generate fat-tree json to stdout"
cp "$T/out" "$T/ft.json"
run "$TOPOML" check "$T/ft.json"
expect_out "fat-tree: 1000 nodes, 121 switches (100 leaves), 3 levels" "levels honoured"
run "$TOPOML" generate dragonfly --groups 6 --routers 4 --per-router 8 --arrangement absolute -o "$T/df.json"
expect_out "dragonfly: 192 nodes, 6 groups, 24 routers, absolute global links" "generate dragonfly"
run "$TOPOML" generate dragonfly --groups 6 --routers 4 --per-router 8 --format conf -o "$T/df.conf"
run "$TOPOML" check "$T/df.conf"
expect_out "fat-tree: 192 nodes, 31 switches (24 leaves), 3 levels" "dragonfly as topology.conf"
run "$TOPOML" generate torus --dims 4x4x4 --no-wrap -o "$T/mesh.json"
expect_out "mesh: 64 nodes, 4x4x4, no wrap" "generate mesh"
run "$TOPOML" generate torus --dims 4x4x4 --format conf
expect_rc 2 "torus as conf refused"
expect_err "use --format json" "torus conf message"
run "$TOPOML" generate fat-tree --nodes 10
expect_rc 2 "missing --per-leaf"
run "$TOPOML" generate fat-tree --nodes -3 --per-leaf 2
expect_rc 2 "negative nodes"
run "$TOPOML" generate torus --dims 4x4
expect_rc 2 "bad dims"
run "$TOPOML" generate ring --nodes 3
expect_rc 2 "unknown family"
expect_err "topoml generate: unknown family 'ring'" "generate messages prefixed"
run "$TOPOML" generate fat-tree --nodes 64 --per-leaf 8 -o /nonexistent/dir/x.conf
expect_rc 2 "generate into an unwritable file"

# --- progress: on stderr with --progress (stderr is no terminal here),
# never with --quiet, never by default when stderr is not a terminal
run "$TOPOML" generate fat-tree --nodes 4096 --per-leaf 32 --progress -o "$T/p.conf"
expect_rc 0 "generate --progress"
expect_err "topoml generate: building the fat-tree" "progress: building"
expect_err "topoml generate: writing $T/p.conf" "progress: writing"
run "$TOPOML" generate fat-tree --nodes 4096 --per-leaf 32 -o "$T/p.conf"
[ -s "$T/err" ] && fail "progress without a terminal: $err" || ok "no progress by default off a terminal"
run "$TOPOML" show --progress --quiet "$T/p.conf" --svg "$T/p.svg"
[ -s "$T/err" ] && fail "--quiet after --progress still talks: $err" || ok "--quiet silences progress"
run "$TOPOML" show --progress "$T/p.conf" --svg "$T/p.svg"
expect_err "topoml show: loading $T/p.conf" "show progress: loading"
expect_err "topoml show: drawing $T/p.svg" "show progress: drawing"
if command -v script >/dev/null; then
	# a terminal on stderr: progress by default, erased at the end
	script -qec "$TOPOML show $T/p.conf --svg $T/p.svg >/dev/null" /dev/null >"$T/tty" 2>&1
	grep -q 'topoml show: drawing' "$T/tty" && ok "progress on a terminal" ||
		fail "no progress on a terminal: $(cat -v "$T/tty")"
fi


# --- show
for f in "$EX/fat-tree.json" "$EX/dragonfly.json" "$EX/torus.json" "$T/ft.conf" "$T/mesh.json"; do
	run "$TOPOML" show "$f" --svg "$T/pic.svg"
	expect_rc 0 "show $(basename "$f")"
	if svg_valid "$T/pic.svg" && grep -q '<svg' "$T/pic.svg"; then
		ok "valid SVG for $(basename "$f")"
	else
		fail "invalid SVG for $f"
	fi
done
run "$TOPOML" show "$EX/fat-tree.json"
expect_out "level 2: 2 switches, 128 nodes below each: core[1-2]" "show levels"
expect_out "    leaf1 (level 0, 16 nodes, link speed 400): gpu[001-016] [also under agg2]" "show tree"
run "$TOPOML" show "$EX/dragonfly.json"
expect_out "group g2: 4 routers, 16 nodes, 6 global links to 3 groups: nid[0033-0048]" "show groups"
run "$TOPOML" show "$T/ft.conf"
expect_out "level 2: 1 switch, 4096 nodes below each: s2-0" "show one root"
[ "$(grep -c 'level 0,' "$T/out")" -eq 128 ] && ok "every leaf shown" || fail "leaves shown"
run "$TOPOML" generate fat-tree --nodes 8192 --per-leaf 32 -o "$T/big.conf"
run "$TOPOML" show "$T/big.conf"
expect_out "(265 switches: --all prints the whole tree)" "large tree summarised"
[ "$(grep -c 'level 0,' "$T/out")" -eq 0 ] && ok "no leaf lines" || fail "leaf lines printed"
run "$TOPOML" show "$T/big.conf" --all
[ "$(grep -c 'level 0,' "$T/out")" -eq 256 ] && ok "--all prints every leaf" || fail "--all"
run "$TOPOML" show "$EX/mesh.json" --svg /nonexistent/dir/x.svg
expect_rc 2 "unwritable SVG"
expect_err "topoml show: /nonexistent/dir/x.svg: No such file or directory" "unwritable SVG message"
run "$TOPOML" show /nonexistent.json
expect_rc 2 "show a missing file"
run "$TOPOML" show "$T/bad.json"
expect_rc 1 "show an invalid file"

# --- show --json
run "$TOPOML" show --json "$EX/fat-tree.json"
expect_rc 0 "show --json fat-tree"
python3 - "$T/out" <<'PY' && ok "show --json switches" || fail "show --json: $out"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["topology"]["family"] == "fat-tree" and d["topology"]["leaves"] == 8
sw = {s["name"]: s for s in d["switches"]}
assert sw["leaf1"]["nodes"] == 16 and sw["leaf1"]["nodelist"] == "gpu[001-016]"
assert "agg2" in sw["leaf1"]["parents"] and sw["leaf1"]["level"] == 0
PY
run "$TOPOML" show --json "$EX/dragonfly.json"
python3 - "$T/out" <<'PY' && ok "show --json groups" || fail "show --json dragonfly: $out"
import json, sys
d = json.load(open(sys.argv[1]))
g = {x["name"]: x for x in d["groups"]}["g2"]
assert g["nodes"] == 16 and len(g["routers"]) == 4
assert sum(g["global_links"].values()) == 6 and len(g["global_links"]) == 3
PY
run "$TOPOML" show --json "$EX/torus.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (len(d["planes"]) == 8 and d["planes"][0]["nodes"] == 64))' "$T/out" &&
	ok "show --json planes" || fail "show --json torus: $out"

# --- bash completion: installed file, and it completes
comp=$SRC/contrib/bash-completion/topoml
bash -n "$comp" && ok "completion parses" || fail "completion syntax"
got=$(bash -c '_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
_filedir() { :; }
. "$1"
COMP_WORDS=(topoml place --pol); COMP_CWORD=2; _topoml; echo "${COMPREPLY[*]}"
COMP_WORDS=(topoml place --policy sl); COMP_CWORD=3; _topoml; echo "${COMPREPLY[*]}"
COMP_WORDS=(topoml s); COMP_CWORD=1; _topoml; echo "${COMPREPLY[*]}"' _ "$comp")
[ "$got" = "--policy
slurm-tree slurm-dragonfly slurm-hilbert slurm-torus3d slurm-block
show sim" ] && ok "completion of commands, options and values" || fail "completion: $got"
# every option each parser takes, and only those, against --help too
if got=$(bash "$SRC/tests/cli/completion.sh" 2>&1); then
	ok "completion offers every parser option: $(echo "$got" |
		sed -n 's/^# \([a-z-]*\): \([0-9]*\) options offered.*/\1 \2/p' |
		tr '\n' ' ')"
else
	fail "completion and parsers differ:"; echo "$got"
fi

# --- real site files: each is loaded or rejected, never a crash
if [ -d "${REALDATA:-/nonexistent}/topology_conf" ]; then
	for f in "$REALDATA"/topology_conf/*.conf "$REALDATA"/test_suites/*/*topology.conf \
		"$REALDATA"/test_suites/*/*/topology.conf; do
		[ -f "$f" ] || continue
		run "$TOPOML" check "$f"
		if [ "$rc" -le 1 ] && { [ -n "$out" ] || [ -n "$err" ]; }; then
			ok "real file $(basename "$(dirname "$f")")/$(basename "$f"): exit $rc"
		else
			fail "real file $f: exit $rc"
		fi
		run "$TOPOML" show "$f" --svg "$T/real.svg"
		if [ "$rc" -eq 0 ]; then
			svg_valid "$T/real.svg" && ok "SVG of $(basename "$f")" || fail "SVG of $f"
		fi
	done
else
	echo "SKIP: real data not found (REALDATA=${REALDATA:-unset}): real files not checked"
fi

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
