#!/bin/bash
# LocalityWait's torus boxes (topoml.conf(5)) through a real slurmctld,
# and its deprecated names TorusBoxWait and TorusBoxWaitSpan (still read,
# said deprecated in the log): a 4x4x4 torus of
# 64 emulated CLOUD nodes, select/topoml.  Sixteen one-node jobs (-w) make
# a checkerboard of x = 2..3 (busy where y + z is even), a 32-node job
# takes the only 32-node box (x = 0..1): 16 nodes are free, no box of 8 is.
#  - TorusBoxWait=0: an 8-node job starts at once, outside a box.
#  - TorusBoxWait=600, TorusBoxWaitSpan = that placement's span / 8: it
#    starts at once too (the default 1 waits: below).
#  - TorusPlacement=curve (with TorusBoxWait=600, which it makes inert):
#    the 8-node job starts at once on `topoml place`'s curve placement.
#  - LocalityWait=W: a 7-node job (no box has 7 nodes) and an 8-node job
#    of a partition whose nodes hold no 8-node box start at once; an
#    8-node job pends (Resources) and starts outside a box after W s; the
#    next one pends until the 32-node job ends, then starts in a box.
#  - LocalityWait=600, four checkerboard jobs with a 1-minute limit: the
#    waiting 8-node job's backfill plan is the 2x2x2 box they free, a
#    1-node job of an hour keeps off it, and the job takes the box.
# The same hold on a fat-tree, through real slurmd: leaves n1,n2 | n3,n4
# and LocalityWait=FW (topology/policy/wait.c's fewest leaves).  With n1
# and n3 busy, a 2-node job (one leaf holds it) pends (Resources) while
# the only free nodes are one per leaf, and starts on leaf n1,n2 once the
# job on n1 ends; again with n1 busy until FW s have passed, it starts
# over both leaves.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

W=${BOXWAIT_SECONDS:-15}
work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-boxwait.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
printf '{ "family": "torus", "dims": [4, 4, 4], "wrap": [true, true, true],\n  "node_pattern": { "prefix": "c", "first": 1, "digits": 0, "order": "xyz" } }\n' \
	>"$work/torus.json"
TOPO=$work/torus.json

node() { echo "c$((1 + $1 + 4 * $2 + 16 * $3))"; }	# node X Y Z
busy_nodes="" holes=""
for z in 0 1 2 3; do
	for y in 0 1 2 3; do
		for x in 2 3; do
			if [ $(((y + z) % 2)) = 0 ]; then
				busy_nodes="$busy_nodes $(node $x $y $z)"
			else
				holes="$holes,$(node $x $y $z)"
			fi
		done
	done
done
holes=${holes#,}

# span (bounding box volume) of a job's nodes, as select/topoml scores it
span() {
	"$SEL_SCORE" "$TOPO" "$1" "$(cluster_nodes_allocated)" |
		tr ' ' '\n' | sed -n 's/^span=//p'
}

# start CONF_LINE [SHORT_NODES]: a cluster with the checkerboard and the
# 32-node box busy (the checkerboard's jobs on SHORT_NODES with a 1-minute
# limit: SHORT_IDS); sets BIG (the 32-node job).
start() {
	local id n lim
	printf 'TopologyFile=%s\n%s\nDebug=1\n' "$TOPO" "$1" \
		>"$work/topoml.conf"
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 CLUSTER_SELECT=topoml \
		CLUSTER_TOPOML_CONF=$work/topoml.conf \
		CLUSTER_CONF_EXTRA="PartitionName=holes Nodes=$holes MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" \
		cluster_start boxwait || exit $?
	# cluster_start's trap stops the cluster only: the files too
	trap 'cluster_stop; rm -rf "$work"' EXIT
	for n in $busy_nodes; do
		lim=
		case " ${2:-} " in *" $n "*) lim=--time=1 ;; esac
		id=$(topo_submit -N1 -w "$n" $lim) || cluster_fail "sbatch -w $n"
		[ -n "$lim" ] && SHORT_IDS="${SHORT_IDS:-} $id"
		sel_wait_start "$id" >/dev/null ||
			cluster_fail "one-node job on $n: $(topo_reason "$id")"
	done
	BIG=$(topo_submit -N32) || cluster_fail "sbatch -N32"
	n=$(sel_wait_start "$BIG") || cluster_fail "32-node job did not start"
	[ "$(span "$n")" = 32 ] ||
		cluster_fail "32-node job not in a box: $n (span $(span "$n"))"
}

topo_submit() {
	sbatch --parsable -o /dev/null "$@" --wrap 'sleep 100000'
}
topo_reason() {
	squeue -h -j "$1" -o '%T %r' 2>/dev/null
}

# ---- TorusBoxWait=0 (the default): never waits ----
# (TorusBoxWaitSpan alone does nothing: slurmctld says so)
start "TorusBoxWait=0
TorusBoxWaitSpan=1.25"
grep -q "TorusBoxWaitSpan has no effect while TorusBoxWait is 0" \
	"$CLUSTER_DIR/log/slurmctld.log" ||
	cluster_fail "no log line for TorusBoxWaitSpan without TorusBoxWait"
for k in "TorusBoxWait is deprecated: use LocalityWait" \
	"TorusBoxWaitSpan is deprecated: use LocalityWaitSpan"; do
	grep -q "$k" "$CLUSTER_DIR/log/slurmctld.log" ||
		cluster_fail "no log line '$k'"
done
t0=$(date +%s)
x=$(topo_submit -N8) || cluster_fail "sbatch -N8"
nx=$(sel_wait_start "$x" 50) ||
	cluster_fail "TorusBoxWait=0: 8-node job did not start at once: $(topo_reason "$x")"
s=$(span "$nx")
[ "$s" -gt 8 ] || cluster_fail "TorusBoxWait=0: 8 nodes in a box? $nx (span $s)"
echo "ok: TorusBoxWait=0: 8 nodes at once in $(($(date +%s) - t0)) s, outside a box ($nx, span $s)"
cluster_stop

# ---- TorusBoxWaitSpan: a placement that tight starts at once ----
# The same state: the same placement, of span s0; with TorusBoxWait=600
# and TorusBoxWaitSpan=s0/8 it is within the bound and does not wait.
s0=$s
L=$(awk -v s="$s0" 'BEGIN { printf "%g", s / 8 }')
start "TorusBoxWait=600
TorusBoxWaitSpan=$L"
x=$(topo_submit -N8) || cluster_fail "sbatch -N8"
nx=$(sel_wait_start "$x" 50) ||
	cluster_fail "TorusBoxWaitSpan=$L: 8-node job of span $s0 waited: $(topo_reason "$x")"
s=$(span "$nx")
[ "$s" -gt 8 ] && [ "$s" -le "$s0" ] ||
	cluster_fail "TorusBoxWaitSpan=$L: 8 nodes on $nx (span $s, want 9-$s0)"
grep -q "JobId=$x waits up to" "$CLUSTER_DIR/log/slurmctld.log" &&
	cluster_fail "TorusBoxWaitSpan=$L: job $x logged a wait"
echo "ok: TorusBoxWait=600 TorusBoxWaitSpan=$L: 8 nodes at once, span $s"
cluster_stop

# ---- TorusPlacement=curve: every job along the curve, no box waits ----
# The same state: TorusBoxWait does nothing (slurmctld says so), the
# 8-node job starts at once on the nodes `topoml place --torus-placement
# curve` gives for the same busy nodes.
start "TorusPlacement=curve
TorusBoxWait=600"
grep -q "TorusBoxWait has no effect with TorusPlacement=curve" \
	"$CLUSTER_DIR/log/slurmctld.log" ||
	cluster_fail "no log line for TorusBoxWait with TorusPlacement=curve"
want=$("$SEL_TOPOML" place -q -t "$TOPO" --nodes 8 \
	--busy "$(cluster_nodes_allocated)" --torus-placement curve |
	sed -n 's/^nodes: //p')
[ -n "$want" ] || cluster_fail "topoml place --torus-placement curve"
x=$(topo_submit -N8) || cluster_fail "sbatch -N8"
nx=$(sel_wait_start "$x" 50) ||
	cluster_fail "TorusPlacement=curve: 8-node job waited: $(topo_reason "$x")"
[ "$(scontrol show hostnames "$nx" | sort)" = \
  "$(scontrol show hostnames "$want" | sort)" ] ||
	cluster_fail "TorusPlacement=curve: 8 nodes on $nx, topoml place: $want"
grep -q "JobId=$x waits up to" "$CLUSTER_DIR/log/slurmctld.log" &&
	cluster_fail "TorusPlacement=curve: job $x logged a wait"
echo "ok: TorusPlacement=curve: 8 nodes at once on the curve's $nx (span $(span "$nx"))"
cluster_stop

# ---- LocalityWait=W ----
start "LocalityWait=$W"
log=$CLUSTER_DIR/log/slurmctld.log
# No box has 7 nodes: never waits.
x=$(topo_submit -N7) || cluster_fail "sbatch -N7"
nx=$(sel_wait_start "$x" 50) ||
	cluster_fail "7-node job waited: $(topo_reason "$x")"
echo "ok: 7 nodes (no box of that size) at once: $nx (span $(span "$nx"))"
scancel "$x"
sel_wait_gone "$x"
# Its partition's nodes hold no 8-node box: never waits.
x=$(topo_submit -p holes -N8) || cluster_fail "sbatch -p holes -N8"
nx=$(sel_wait_start "$x" 50) ||
	cluster_fail "8 nodes in partition holes waited: $(topo_reason "$x")"
echo "ok: 8 nodes of a partition without an 8-node box at once: $nx"
scancel "$x"
sel_wait_gone "$x"

# An 8-node box may come: it waits W s, then starts outside a box.
t0=$(date +%s)
x=$(topo_submit -N8) || cluster_fail "sbatch -N8"
sleep $((W / 2))
r=$(topo_reason "$x")
[ "$r" = "PENDING Resources" ] ||
	cluster_fail "8-node job after $((W / 2)) s of LocalityWait=$W: '$r'"
nx=$(sel_wait_start "$x" $((W * 10 + 100))) ||
	cluster_fail "8-node job still waits after $((W + 10)) s: $(topo_reason "$x")"
t=$(($(date +%s) - t0))
s=$(span "$nx")
[ "$t" -ge "$W" ] || cluster_fail "8-node job started after $t s < $W s"
[ "$s" -gt 8 ] || cluster_fail "8-node job: a box appeared? $nx (span $s)"
grep -q "JobId=$x: no torus box of 8 nodes after LocalityWait=$W s" "$log" ||
	cluster_fail "no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: LocalityWait=$W: pending ($r), started after $t s outside a box ($nx, span $s)"
scancel "$x"
sel_wait_gone "$x"

# Again, but a box frees while it waits: it takes the box.
t0=$(date +%s)
x=$(topo_submit -N8) || cluster_fail "sbatch -N8"
sleep 3
r=$(topo_reason "$x")
[ "$r" = "PENDING Resources" ] ||
	cluster_fail "second 8-node job after 3 s: '$r'"
scancel "$BIG"
sel_wait_gone "$BIG" || cluster_fail "32-node job not cancelled"
nx=$(sel_wait_start "$x" $((W * 10))) ||
	cluster_fail "8-node job did not start when a box freed: $(topo_reason "$x")"
t=$(($(date +%s) - t0))
s=$(span "$nx")
[ "$s" = 8 ] || cluster_fail "8-node job not in a box: $nx (span $s)"
[ "$t" -lt "$W" ] || cluster_fail "8-node job took the box only after $t s"
grep -q "JobId=$x: found torus box of 8 nodes after waiting" "$log" ||
	cluster_fail "no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: LocalityWait=$W: pending, then a box when one freed, after $t s ($nx)"
scontrol ping | grep -q UP || cluster_fail "slurmctld down"
cluster_stop

# ---- backfill's plan for a job that waits: the box that frees first ----
# The checkerboard's jobs in x 2-3, y 0-1, z 0-1 end within a minute (their
# limit): that 2x2x2 box, four of its nodes free now, is the only one that
# frees.  The waiting 8-node job's plan must be that box, so that a 1-node
# job that would outlast it keeps off its free nodes and the box frees
# (CLOUD nodes never boot, so limits end no job here: they are cancelled).
box="$(node 2 0 0) $(node 3 0 0) $(node 2 1 0) $(node 3 1 0)"
box="$box $(node 2 0 1) $(node 3 0 1) $(node 2 1 1) $(node 3 1 1)"
short="$(node 2 0 0) $(node 3 0 0) $(node 2 1 1) $(node 3 1 1)"
start "LocalityWait=600" "$short"
log=$CLUSTER_DIR/log/slurmctld.log
x=$(topo_submit -N8) || cluster_fail "sbatch -N8"
got=$(sel_plan "$x")
want=$(echo $box | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$got" = "$want" ] ||
	cluster_fail "waiting 8-node job: backfill plans '$got', not the box that frees first ($box)"
echo "ok: a job waiting for a box is planned on the box that frees first ($got)"
l=$(topo_submit -N1 --time=60) || cluster_fail "sbatch -N1 --time=60"
nl=$(sel_wait_start "$l" 100) ||
	cluster_fail "1-node job did not start: $(topo_reason "$l")"
case " $box " in *" $nl "*)
	cluster_fail "1-node job of 60 minutes took $nl, in the planned box" ;;
esac
echo "ok: a 1-node job that would outlast the plan keeps off the box ($nl)"
# Its clock runs from its first run-now test (backfill's will-run only
# reads it): only then can it log that it found the box after waiting.
for _ in $(seq 1 300); do
	grep -q "JobId=$x waits up to 600 s for torus box" "$log" && break
	sleep 0.1
done
grep -q "JobId=$x waits up to 600 s for torus box" "$log" ||
	cluster_fail "8-node job never declined a start to wait: $(grep "JobId=$x" "$log" | tail -3)"
# shellcheck disable=SC2086
scancel $SHORT_IDS
nx=$(sel_wait_start "$x" 300) ||
	cluster_fail "8-node job did not start: $(topo_reason "$x")"
s=$(span "$nx")
[ "$s" = 8 ] || cluster_fail "8-node job not in a box: $nx (span $s)"
grep -q "JobId=$x: found torus box of 8 nodes after waiting" "$log" ||
	cluster_fail "no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: the box freed and the job took it ($nx)"
cluster_stop

# ---- a fat-tree: the fewest leaves, real slurmd ----
FW=${FTWAIT_SECONDS:-10}
cat >"$work/tree.conf" <<EOF
SwitchName=leaf1 Nodes=n1,n2
SwitchName=leaf2 Nodes=n3,n4
SwitchName=top Switches=leaf[1-2]
EOF
printf 'TopologyFile=%s\nLocalityWait=%s\nDebug=1\n' "$work/tree.conf" \
	"$FW" >"$work/topoml.conf"
chmod 644 "$work"/*.conf
CLUSTER_SLURMD=4 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf cluster_start boxwait-ft ||
	exit $?
trap 'cluster_stop; rm -rf "$work"' EXIT
log=$CLUSTER_DIR/log/slurmctld.log
what="fewest fat-tree leaves for 2 nodes"
# leaves NODELIST: how many leaves the nodes are on
leaves() {
	scontrol show hostnames "$1" | sed 's/^n[12]$/1/; s/^n[34]$/2/' |
		sort -u | wc -l
}
# busy_one NODE: a job on NODE alone, running; prints its id (a
# subshell: the caller exits when it fails)
busy_one() {
	local id
	id=$(topo_submit -N1 -w "$1") || cluster_fail "sbatch -w $1"
	sel_wait_start "$id" >/dev/null ||
		cluster_fail "one-node job on $1: $(topo_reason "$id")"
	echo "$id"
}
b1=$(busy_one n1) || exit 1
b3=$(busy_one n3) || exit 1
# n2 and n4 free, one a leaf: it waits, then takes leaf 1 when n1 frees.
t0=$(date +%s)
x=$(topo_submit -N2) || cluster_fail "sbatch -N2"
sleep 3
r=$(topo_reason "$x")
[ "$r" = "PENDING Resources" ] ||
	cluster_fail "fat-tree: 2-node job with a free node a leaf, LocalityWait=$FW: '$r'"
grep -q "JobId=$x waits up to $FW s for $what" "$log" ||
	cluster_fail "fat-tree: no wait logged for job $x: $(grep "JobId=$x" "$log" | tail -3)"
scancel "$b1"
nx=$(sel_wait_start "$x" $((FW * 10))) ||
	cluster_fail "fat-tree: 2-node job did not start when leaf 1 freed: $(topo_reason "$x")"
t=$(($(date +%s) - t0))
[ "$(leaves "$nx")" = 1 ] ||
	cluster_fail "fat-tree: 2-node job not on one leaf: $nx"
grep -q "JobId=$x: found $what after waiting" "$log" ||
	cluster_fail "fat-tree: no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: fat-tree, LocalityWait=$FW: pending ($r), then one leaf when one freed, after $t s ($nx)"
scancel "$x"
sel_wait_gone "$x" || cluster_fail "job $x not cancelled"
# The same with n1 busy throughout: both leaves after FW s.
b1=$(busy_one n1) || exit 1
t0=$(date +%s)
x=$(topo_submit -N2) || cluster_fail "sbatch -N2"
sleep $((FW / 2))
r=$(topo_reason "$x")
[ "$r" = "PENDING Resources" ] ||
	cluster_fail "fat-tree: 2-node job after $((FW / 2)) s of LocalityWait=$FW: '$r'"
nx=$(sel_wait_start "$x" $((FW * 10 + 100))) ||
	cluster_fail "fat-tree: 2-node job still waits after $((FW + 10)) s: $(topo_reason "$x")"
t=$(($(date +%s) - t0))
[ "$t" -ge "$FW" ] || cluster_fail "fat-tree: 2-node job started after $t s < $FW s"
[ "$(leaves "$nx")" = 2 ] || cluster_fail "fat-tree: a leaf freed? $nx"
grep -q "JobId=$x: no $what after LocalityWait=$FW s" "$log" ||
	cluster_fail "fat-tree: no log line for job $x: $(grep "JobId=$x" "$log" | tail -3)"
echo "ok: fat-tree, LocalityWait=$FW: pending, started after $t s over both leaves ($nx)"
scancel "$x" "$b1" "$b3"
cluster_stop
rm -rf "$work"
echo "PASS: TorusBoxWait"
