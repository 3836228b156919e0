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
# job names one node it must get (sbatch -w).  Needs Slurm 26.05 daemons:
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
cluster_write_conf() {
	_t3d_orig_write_conf
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

settle() {
	local i want have
	for i in $(seq 1 100); do
		want=$(squeue -h -t R,CF -o '%D' | awk '{s += $1} END {print s + 0}')
		have=$(sinfo -h -N -o '%N %t' | sort -u |
			awk '$2 !~ /^idle[~#]?$/' | wc -l)
		[ "$want" = "$have" ] && return 0
		sleep 0.1
	done
	cluster_fail "nodes did not settle: $have busy, $want allocated"
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
	settle
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
rm -rf "$WORK"

echo "slurm-torus3d: $CHECKED placements compared ($NREQ with -w," \
	"$WAITED pending with enough nodes free), refusal checked:" \
	"$REFUSED, $FAILS mismatches"
[ "$CHECKED" -ge 20 ] || { echo "FAIL: too few placements compared"; exit 1; }
[ "$WAITED" -ge 1 ] || { echo "FAIL: no waiting case seen"; exit 1; }
[ "$FAILS" = 0 ] || { echo "FAIL: $FAILS placements differ from Slurm"; exit 1; }
echo "PASS: every node list equals Slurm 26.05 torus3d's"
