#!/bin/bash
# Slurm 26.05's topology/torus3d is the baseline slurm-torus3d: a real
# 26.05 slurmctld (select/cons_tres, topology.yaml with a torus3d section)
# places a sequence of exclusive jobs on a 4x4x4 torus of 64 emulated
# CLOUD nodes, with cancellations making holes, and after every
# submission the job's node list must equal the engine's
# (tests/place/torus3d_place, --policy slurm-torus3d) on the same free
# and powered-down nodes; when the engine finds no box the job must stay
# pending although enough nodes are free (torus3d's waiting), and a size
# with no listed placement must be refused at submission.  Every fifth
# job names one node it must get (sbatch -w).  Then, side by side on the
# same daemons (when select_topoml.so is built for them), one fixed job
# sequence under torus3d and under select/topoml on the same torus: jobs
# started at once, exact boxes, bounding box / N, and jobs torus3d keeps
# pending with enough nodes free.  Needs Slurm 26.05 daemons:
#   contrib/test-release.sh 26.05.3 select/test_select_torus3d.sh
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v slurmctld >/dev/null || { echo "SKIP: no slurmctld"; exit 77; }
[ "$CLUSTER_SLURM_VERSION" -ge 2605 ] &&
	[ -f "$CLUSTER_SLURM_PLUGINDIR/topology_torus3d.so" ] || {
	echo "SKIP: needs Slurm 26.05's topology/torus3d (this is" \
		"$CLUSTER_SLURM_VERSION); run contrib/test-release.sh 26.05.3" \
		"select/test_select_torus3d.sh"
	exit 77
}
PLACE=$TOP_BUILDDIR/tests/place/torus3d_place
if [ ! -x "$PLACE" ] && [ -f "$TOP_BUILDDIR/tests/Makefile" ]; then
	make -s -C "$TOP_BUILDDIR/tests" place/torus3d_place >/dev/null 2>&1
fi
[ -x "$PLACE" ] || { echo "FAIL: $PLACE not built"; exit 1; }

STEPS=${TORUS3D_STEPS:-80}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/topoml-torus3d.XXXXXX")
FAILS=0 CHECKED=0 WAITED=0 REFUSED=0 NREQ=0

# The admin's shapes: sizes 2, 4, 8, 16, 32; 4 twice (a second placement
# of the same size with a shifted grid), 2 on a dense grid (spacing 1),
# 16 with its grid shifted by anchor_seed.  3 has none.
cat >"$WORK/topology.yaml" <<'YAML'
---
- topology: torus
  cluster_default: true
  torus3d:
    toruses:
      - name: t4
        dims: {x: 4, y: 4, z: 4}
        nodes: c[1-64]
        placements:
          - dims: {x: 2, y: 1, z: 1}
            anchor_spacing: {x: 1, y: 1, z: 1}
          - dims: {x: 2, y: 2, z: 1}
          - dims: {x: 2, y: 2, z: 1}     # the same size, another grid
            anchor_seed: {x: 1, y: 1, z: 0}
          - dims: {x: 2, y: 2, z: 2}
          - dims: {x: 4, y: 2, z: 2}
            anchor_seed: {x: 0, y: 1, z: 1}
          - dims: {x: 4, y: 4, z: 2}
YAML

# cluster.sh writes slurm.conf; topology.yaml beside it wins over
# TopologyPlugin= (26.05 topology_g_init reads it first).
eval "_t3d_orig_write_conf() $(declare -f cluster_write_conf | tail -n +2)"
T3D_YAML=1
cluster_write_conf() {
	_t3d_orig_write_conf
	[ "$T3D_YAML" = 1 ] || return 0
	cp -f "$WORK/topology.yaml" "$CLUSTER_DIR/topology.yaml"
	chmod 644 "$CLUSTER_DIR/topology.yaml"
}

expand() { scontrol show hostnames "$1" 2>/dev/null | sort -V | paste -sd,; }

state() {
	sinfo -h -N -o '%N %t' >"$WORK/sinfo"
	BUSY=$(awk '$2 !~ /^idle[~#]?$/ {print $1}' "$WORK/sinfo" |
		sort -uV | paste -sd,)
	DOWN=$(awk '$2 == "idle~" {print $1}' "$WORK/sinfo" | sort -uV |
		paste -sd,)
	NFREE=$(awk '$2 ~ /^idle[~#]?$/' "$WORK/sinfo" | sort -u | wc -l)
}

CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 cluster_start torus3d
grep -q "Torus3d\|torus3d" "$CLUSTER_DIR/log/slurmctld.log" 2>/dev/null ||
	true
scontrol show topology >"$WORK/topo.txt" 2>&1
grep -qi "t4" "$WORK/topo.txt" ||
	cluster_fail "slurmctld did not load the torus3d topology: $(head -3 "$WORK/topo.txt")"

# A size no placement lists is refused at submission.
if out=$(sbatch -N 3 --exclusive -o /dev/null --wrap 'sleep 1' 2>&1); then
	echo "FAIL: sbatch -N 3 accepted: $out"; FAILS=$((FAILS + 1))
else
	echo "sbatch -N 3: $out"
	"$PLACE" "$WORK/topology.yaml" 3 >/dev/null
	[ $? = 4 ] || { echo "FAIL: engine did not refuse 3"; FAILS=$((FAILS + 1)); }
	REFUSED=1
fi

sizes=(2 4 8 16 32 4 2 8)
jobs=()
RANDOM=2605
for step in $(seq 1 "$STEPS"); do
	cluster_settle
	if [ ${#jobs[@]} -gt 0 ] && [ $((RANDOM % 10)) -lt 3 ]; then
		i=$((RANDOM % ${#jobs[@]}))
		scancel "${jobs[$i]}"
		jobs=("${jobs[@]:0:$i}" "${jobs[@]:$((i + 1))}")
		continue
	fi
	state
	k=${sizes[$((RANDOM % ${#sizes[@]}))]}
	if [ "$k" -gt "$NFREE" ]; then
		scancel "${jobs[0]}"
		jobs=("${jobs[@]:1}")
		continue
	fi
	REQ=
	if [ $((RANDOM % 5)) = 0 ]; then
		REQ=$(awk '$2 ~ /^idle[~#]?$/ {print $1}' "$WORK/sinfo" |
			sort -u | shuf -n 1 --random-source=<(yes $step))
	fi
	expect=$("$PLACE" "$WORK/topology.yaml" "$k" slurm-torus3d \
		"$BUSY" "$DOWN" "$REQ")
	erc=$?
	id=$(sbatch --parsable -N "$k" --exclusive -o /dev/null \
		${REQ:+-w "$REQ"} --wrap 'sleep 100000') ||
		cluster_fail "sbatch -N $k"
	[ -n "$REQ" ] && NREQ=$((NREQ + 1))
	nl=
	for i in $(seq 1 $([ $erc = 3 ] && echo 30 || echo 100)); do
		nl=$(squeue -h -j "$id" -t R,CF -o '%N')
		[ -n "$nl" ] && break
		sleep 0.1
	done
	CHECKED=$((CHECKED + 1))
	if [ $erc = 3 ]; then
		# no free box: torus3d keeps it pending with nodes free
		if [ -n "$nl" ]; then
			echo "MISMATCH step $step: -N $k started on $nl," \
				"engine: $expect (busy ${BUSY:-none}," \
				"-w ${REQ:-none})" >&2
			FAILS=$((FAILS + 1))
			jobs+=("$id")
		else
			echo "step $step: -N $k pending with $NFREE free," \
				"as the engine says ($(squeue -h -j "$id" -o %r))"
			WAITED=$((WAITED + 1))
			scancel "$id"
		fi
		continue
	fi
	[ $erc = 0 ] || cluster_fail "torus3d_place -N $k: $expect"
	[ -n "$nl" ] || {
		echo "MISMATCH step $step: -N $k pending ($(squeue -h -j "$id" -o %r)), engine: $expect" >&2
		FAILS=$((FAILS + 1)); scancel "$id"; continue; }
	jobs+=("$id")
	got=$(expand "$nl")
	if [ "$got" != "$(expand "${expect#nodes: }")" ]; then
		echo "MISMATCH step $step: -N $k" >&2
		echo "  busy:   ${BUSY:-none}" >&2
		echo "  -w:     ${REQ:-none}" >&2
		echo "  down:   ${DOWN:-none}" >&2
		echo "  slurm:  $nl" >&2
		echo "  topoml: ${expect#nodes: }" >&2
		FAILS=$((FAILS + 1))
	fi
done
scancel "${jobs[@]}" 2>/dev/null
cluster_stop

# ---- side by side: torus3d and select/topoml, one job sequence ----
# Steps: "s K" submits K nodes, "c J" cancels the J-th submission if it
# runs; the same list for both, whatever each placed.  A job not started
# within 3 s is cancelled (counted pending; with enough nodes free, a
# wait for a box).
SCORE=$TOP_BUILDDIR/tests/select_score
SIDE=""
if [ -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ] &&
   [ -x "$SCORE" ]; then
	SIDE=1
	printf '{ "family": "torus", "dims": [4, 4, 4], "wrap": [true, true, true],\n  "node_pattern": { "prefix": "c", "first": 1, "digits": 0, "order": "xyz" } }\n' \
		>"$WORK/torus.json"
	printf 'TopologyFile=%s\nDefaultHint=allreduce\n' "$WORK/torus.json" \
		>"$WORK/topoml.conf"
	RANDOM=4096
	ssizes=(2 4 8 16 4 2 8 32 6 12)
	: >"$WORK/steps"
	for step in $(seq 1 60); do
		if [ "$step" -gt 3 ] && [ $((RANDOM % 10)) -lt 4 ]; then
			echo "c $((RANDOM % (step - 1)))" >>"$WORK/steps"
		else
			echo "s ${ssizes[$((RANDOM % ${#ssizes[@]}))]}" >>"$WORK/steps"
		fi
	done
fi

# run_side NAME: the steps on the cluster up now; one line per job
# "K started|pending|refused NFREE NODES SPAN PAIR_HOPS"
run_side() {
	local out=$WORK/side-$1 k j id nl i busy st span ph
	local -a ids=()
	: >"$out"
	while read -r op arg; do
		if [ "$op" = c ]; then
			id=${ids[$arg]:-}
			[ -n "$id" ] && [ "$id" != - ] && scancel "$id" 2>/dev/null
			cluster_settle
			continue
		fi
		k=$arg
		cluster_settle
		state
		if [ "$k" -gt "$NFREE" ]; then
			ids+=(-)
			continue
		fi
		busy=$BUSY
		if ! id=$(sbatch --parsable -N "$k" --exclusive -o /dev/null \
			--wrap 'sleep 100000' 2>/dev/null); then
			ids+=(-)
			echo "$k refused $NFREE - 0 0" >>"$out"
			continue
		fi
		nl=
		for i in $(seq 1 30); do
			nl=$(squeue -h -j "$id" -t R,CF -o '%N')
			[ -n "$nl" ] && break
			sleep 0.1
		done
		if [ -z "$nl" ]; then
			scancel "$id"
			ids+=(-)
			echo "$k pending $NFREE - 0 0" >>"$out"
			continue
		fi
		ids+=("$id")
		st=$("$SCORE" "$WORK/torus.json" "$nl" "$busy")
		span=$(echo "$st" | sed -n 's/.*span=\([0-9]*\).*/\1/p')
		ph=$(echo "$st" | sed -n 's/.*pair_hops=\([0-9.]*\).*/\1/p')
		echo "$k started $NFREE $nl ${span:-0} ${ph:-0}" >>"$out"
	done <"$WORK/steps"
	scancel "${ids[@]/#-/}" 2>/dev/null
}

# totals of a side: submitted started refused pending pending_free exact
# bbox/N mean_pair_hops (multi-node jobs started)
side_totals() {
	awk '{ n++ }
	     $2 == "refused" { r++ }
	     $2 == "pending" { p++; if ($3 >= $1) pf++ }
	     $2 == "started" { s++; if ($1 > 1) { m++; if ($5 == $1) e++;
		b += $5 / $1; h += $6 } }
	     END { printf "%d %d %d %d %d %d %.3f %.3f\n", n, s, r + 0, p + 0,
		pf + 0, e + 0, m ? b / m : 0, m ? h / m : 0 }' "$1"
}

if [ -n "$SIDE" ]; then
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 cluster_start torus3d-side
	run_side torus3d
	cluster_stop
	T3D_YAML=0
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 CLUSTER_SELECT=topoml \
		CLUSTER_TOPOML_CONF=$WORK/topoml.conf cluster_start topoml-side
	run_side topoml
	cluster_stop
	echo "side by side, 60 steps (submitted started refused pending" \
		"pending-with-enough-free exact-boxes bbox/N pair-hops):"
	read -r an as ar ap apf ae ab ah <<<"$(side_totals "$WORK/side-torus3d")"
	read -r bn bs br bp bpf be bb bh <<<"$(side_totals "$WORK/side-topoml")"
	echo "  torus3d:       $an $as $ar $ap $apf $ae $ab $ah"
	echo "  select/topoml: $bn $bs $br $bp $bpf $be $bb $bh"
	# topoml refuses nothing and never leaves a job pending while
	# enough nodes are free; torus3d does both on this sequence
	[ "$br" = 0 ] && [ "$bpf" = 0 ] || {
		echo "FAIL: select/topoml refused $br, kept $bpf pending with nodes free"
		FAILS=$((FAILS + 1)); }
	[ "$ar" -gt 0 ] && [ "$apf" -gt 0 ] || {
		echo "FAIL: torus3d neither refused nor waited: the sequence proves nothing"
		FAILS=$((FAILS + 1)); }
else
	echo "side by side skipped: select_topoml.so or select_score not built" \
		"for this release"
fi
rm -rf "$WORK"

echo "slurm-torus3d: $CHECKED placements compared ($NREQ with -w," \
	"$WAITED pending with enough nodes free), refusal checked:" \
	"$REFUSED, $FAILS mismatches"
[ "$CHECKED" -ge 20 ] || { echo "FAIL: too few placements compared"; exit 1; }
[ "$WAITED" -ge 1 ] || { echo "FAIL: no waiting case seen"; exit 1; }
[ "$FAILS" = 0 ] || { echo "FAIL: $FAILS failures (see above)"; exit 1; }
echo "PASS: every node list equals Slurm 26.05 torus3d's${SIDE:+; side by side as expected}"
