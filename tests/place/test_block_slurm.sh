#!/bin/bash
# Blocks against a real Slurm 24.05+ (topology/block; built for 26.05.3):
#  1. every case of tests/fixtures/block/conf goes to slurmctld as its
#     topology.conf (TopologyPlugin=topology/block): slurmctld must start
#     where `topoml check` accepts the file and die (fatal) where topoml
#     refuses it, except in a file that says "# slurm: accepts" (topoml
#     refuses on purpose what Slurm runs with);
#  2. with select_topoml.so built for that release, select/topoml reads the
#     block topology.conf through the engine (no topoml.conf): slurmctld
#     logs "block: ..." and each job gets exactly the nodes `topoml place`
#     names for the same free nodes (SystemComment placed=topoml), and a
#     job the engine cannot place waits under topology/block too;
#  3. stock cons_tres + topology/block refuses what the slurm-block
#     baseline refuses on an idle machine, and places what it places.
# Run it on a release's daemons through contrib/test-release.sh VERSION
# place/test_block_slurm.sh, or with CLUSTER_SLURM_PREFIX and TOP_BUILDDIR
# set; on an older slurmctld (22.05, the default) it skips.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
# topoml reads block files as 26.05 does; 24.11's topology/block judges
# 3 of the 25 files otherwise (e.g. an empty block, a base size from
# BlockSizes), so the judge is 26.05+.
if [ "$CLUSTER_SLURM_VERSION" -lt 2605 ]; then
	echo "SKIP: judged against Slurm 26.05's topology/block (slurmctld" \
		"is $CLUSTER_SLURM_VERSION; contrib/test-release.sh 26.05.3" \
		"place/test_block_slurm.sh)"
	exit 77
fi
TOPOML=$TOP_BUILDDIR/contrib/topoml
[ -x "$TOPOML" ] || { echo "FAIL: $TOPOML not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-blocks.XXXXXX")
chmod 755 "$work"
trap 'cluster_stop; rm -rf "$work"' EXIT

# ---- 1. the reader: accepted and refused as slurmctld does ----
for b in 0 1; do echo "BlockName=b$b Nodes=c[$((b * 4 + 1))-$((b * 4 + 4))]"; done \
	>"$work/start.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 CLUSTER_TOPOLOGY=$work/start.conf \
	CLUSTER_TOPOLOGY_PLUGIN=topology/block cluster_start blocks ||
	cluster_fail "cluster with topology/block"

_verdict() {	# restart slurmctld on the topology.conf in place
	local log=$CLUSTER_DIR/log/slurmctld.log
	_cluster_kill_pidfile "$CLUSTER_DIR/run/slurmctld.pid"
	rm -rf "${CLUSTER_DIR:?}"/state/*
	: >"$log"
	slurmctld -f "$SLURM_CONF" -c >>"$CLUSTER_DIR/log/slurmctld.out" 2>&1
	for _ in $(seq 1 150); do
		grep -q "fatal" "$log" && { echo down; return; }
		scontrol ping 2>/dev/null | grep -q "is UP" &&
			{ echo up; return; }
		sleep 0.1
	done
	echo timeout
}

n=0 bad=0
for f in "$TESTS_DIR"/fixtures/block/conf/*.conf; do
	cp "$f" "$CLUSTER_DIR/topology.conf"
	chmod 644 "$CLUSTER_DIR/topology.conf"
	if "$TOPOML" check "$f" >/dev/null 2>&1; then want=up; else want=down; fi
	# a difference kept on purpose, said in the file
	grep -q '^# slurm: accepts' "$f" && want=up
	got=$(_verdict)
	why=$(grep -m1 -o "fatal: .*" "$CLUSTER_DIR/log/slurmctld.log")
	if [ "$got" != "$want" ]; then
		echo "FAIL: ${f##*/}: slurmctld $got, topoml says $want${why:+ ($why)}" >&2
		bad=$((bad + 1))
	else
		echo "ok: ${f##*/}: slurmctld $got${why:+ ($why)}"
	fi
	n=$((n + 1))
done
[ "$bad" = 0 ] || cluster_fail "$bad of $n block files judged unlike slurmctld"
echo "PASS: $n block topology.conf files judged as slurmctld $CLUSTER_SLURM_VERSION judges them"
cluster_stop

# ---- 2. select/topoml on the block topology.conf ----
if [ ! -f "$TOP_BUILDDIR/select_plugin/.libs/select_topoml.so" ]; then
	echo "SKIP: select/topoml not built for this release (part 2)"
	exit 0
fi
conf=$work/block8x8.conf
for b in $(seq 0 7); do
	echo "BlockName=b$b Nodes=c[$((b * 8 + 1))-$((b * 8 + 8))]"
done >"$conf"
echo "BlockSizes=8,16,32,64" >>"$conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$conf CLUSTER_TOPOLOGY_PLUGIN=topology/block \
	cluster_start blocksel || cluster_fail "cluster with select/topoml"
grep -q "select/topoml: .*: block: 64 nodes, 8 blocks of 8 (BlockSizes=8,16,32,64)" \
	"$CLUSTER_DIR/log/slurmctld.log" ||
	cluster_fail "select/topoml did not load the block topology: $(grep -m3 'select/topoml' "$CLUSTER_DIR/log/slurmctld.log")"
echo "$(grep -m1 -o 'select/topoml: .*block: .*' "$CLUSTER_DIR/log/slurmctld.log")"

started() {	# JOBID: its nodes once allocated
	local st nl
	for _ in $(seq 1 200); do
		read -r st nl < <(squeue -h -j "$1" -o '%T %N' 2>/dev/null)
		case "$st" in RUNNING|CONFIGURING)
			[ -n "$nl" ] && { echo "$nl"; return 0; } ;;
		esac
		sleep 0.1
	done
	return 1
}
# Blockers on exact nodes, then jobs whose nodes the engine chooses.
for w in "c[1-3]" "c[9-10]" "c[17-21]" "c[41]"; do
	j=$(sbatch --parsable -N "$(scontrol show hostnames "$w" | wc -l)" \
		-w "$w" --wrap "sleep 600") || cluster_fail "sbatch -w $w"
	started "$j" >/dev/null || cluster_fail "blocker $w did not start"
done
for size in 10 8 4 16 3 12; do
	busy=$(cluster_nodes_allocated)
	want=$("$TOPOML" place --topology "$conf" --nodes "$size" \
		--block-aligned --busy "$busy" 2>/dev/null |
		sed -n 's/^nodes: //p')
	j=$(sbatch --parsable -N "$size" --wrap "sleep 600") ||
		cluster_fail "sbatch -N$size"
	if [ -z "$want" ]; then
		# the engine waits: so must Slurm's topology/block
		sleep 3
		[ "$(squeue -h -j "$j" -o %T)" = PENDING ] ||
			cluster_fail "job of $size started on $(squeue -h -j "$j" -o %N); topoml place says it waits"
		echo "ok: -N$size waits, as topoml place says ($(squeue -h -j "$j" -o %r))"
		continue
	fi
	got=$(started "$j") ||
		cluster_fail "job of $size did not start: $(squeue -h -j "$j" -o '%T %r')"
	sc=$(scontrol show job "$j" | grep -o 'SystemComment=.*')
	case "$sc" in *placed=topoml*) ;; *)
		cluster_fail "job of $size: not placed by topoml: $sc" ;; esac
	[ "$(scontrol show hostnames "$got")" = "$(scontrol show hostnames "$want")" ] ||
		cluster_fail "job of $size: slurmctld gave $got, topoml place says $want (busy $busy)"
	echo "ok: -N$size on $got as topoml place says (${sc#SystemComment=})"
done
echo "PASS: select/topoml places on the block topology.conf of Slurm $CLUSTER_SLURM_VERSION"
cluster_stop

# ---- 3. a quirk the slurm-block baseline reproduces ----
# 6 blocks of 4, levels of 1, 2, 4 blocks: a job of 20 takes the whole
# row, where eval_nodes_block() counts only the first bpb / bpll = 6 / 4 =
# 1 llblock (16 nodes): stock Slurm never runs it, even on an idle
# machine; 16 nodes run.
conf=$work/block6x4.conf
for b in $(seq 0 5); do
	echo "BlockName=b$b Nodes=c[$((b * 4 + 1))-$((b * 4 + 4))]"
done >"$conf"
echo "BlockSizes=4,8,16" >>"$conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=24 CLUSTER_TOPOLOGY=$conf \
	CLUSTER_TOPOLOGY_PLUGIN=topology/block cluster_start blockquirk ||
	cluster_fail "cluster with 6 blocks"
"$TOPOML" place --topology "$conf" --nodes 20 --policy slurm-block \
	>/dev/null 2>&1 && cluster_fail "slurm-block places 20 nodes on 6 blocks of 4"
# refused at submission ("Requested node configuration is not
# available"), or at least never started
if j=$(sbatch --parsable -N20 --wrap "sleep 600" 2>"$work/sbatch.err"); then
	sleep 3
	[ "$(squeue -h -j "$j" -o %T)" = PENDING ] ||
		cluster_fail "stock topology/block ran 20 nodes on 6 blocks of 4: $(squeue -h -j "$j" -o %N)"
	scancel "$j"
	why="pending"
else
	why="refused: $(sed 's/^sbatch: error: //' "$work/sbatch.err" | tail -1)"
fi
j=$(sbatch --parsable -N16 --wrap "sleep 600") || cluster_fail "sbatch -N16"
want=$("$TOPOML" place --topology "$conf" --nodes 16 --policy slurm-block |
	sed -n 's/^nodes: //p')
got=$(started "$j") || cluster_fail "16 nodes did not start"
[ "$got" = "$want" ] ||
	cluster_fail "16 nodes: stock Slurm $got, slurm-block says $want"
echo "ok: stock topology/block: -N20 on 6 idle blocks of 4 $why; -N16 on $got, as slurm-block says"
