#!/bin/bash
# The example files an admin copies from contrib/: every example topology
# passes `topoml check`, the example topoml.conf passes `topoml check
# --site-conf` with every key shown (its commented LocalityWait= line too,
# once uncommented), a broken one is refused with FILE:LINE:COL, and the
# example plugstack.conf line, with the keys its comments show (rails=,
# max_spares=), is accepted by the SPANK plugin in a real cluster.
set -u
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${TOP_BUILDDIR:-$src/build}
topoml=$bld/contrib/topoml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for f in "$src"/contrib/topologies/*; do
	"$topoml" check "$f" >/dev/null || { echo "FAIL: topoml check $f"; exit 1; }
done
topo=$src/contrib/topologies/fat-tree.conf
sed "s|^TopologyFile=.*|TopologyFile=$topo|" \
	"$src/contrib/examples/topoml.conf" >"$work/topoml.conf"
out=$("$topoml" check --site-conf "$work/topoml.conf") ||
	{ echo "FAIL: example topoml.conf: $out"; exit 1; }
echo "$out" | grep -q "DefaultHint=allreduce Placement=topoml, 1 partition" ||
	{ echo "FAIL: unexpected summary: $out"; exit 1; }
# every other key with the value slurmctld uses (LocalityWait commented out:
# its default)
echo "$out" | grep -qx "$work/topoml.conf: TopologyFile=$topo TopologyFormat=auto Family=auto DragonflySpread=never TorusPlacement=boxes LocalityWait=0 LocalityWaitSpan=1 HybridWeights=tp=16,cp=4,ep=4,dp=1,pp=2 Debug=0" ||
	{ echo "FAIL: keys not shown: $out"; exit 1; }
echo "$out" | grep -qx "$work/topoml.conf: PartitionName=moe Hint=alltoall" ||
	{ echo "FAIL: partition override not shown: $out"; exit 1; }
# the commented LocalityWait= lines are valid and shown once uncommented
sed 's/^#\(LocalityWait\|LocalityWaitSpan\)=/\1=/' "$work/topoml.conf" \
	>"$work/box.conf"
wait_s=$(sed -n 's/^LocalityWait=\([0-9]\+\)$/\1/p' "$work/box.conf")
span=$(sed -n 's/^LocalityWaitSpan=\([0-9.]\+\)$/\1/p' "$work/box.conf")
[ -n "$wait_s" ] && [ "$wait_s" != 0 ] && [ -n "$span" ] ||
	{ echo "FAIL: no #LocalityWait(Span)= lines in the example"; exit 1; }
out=$("$topoml" check --site-conf "$work/box.conf") ||
	{ echo "FAIL: example LocalityWait= lines: $out"; exit 1; }
echo "$out" | grep -q " LocalityWait=$wait_s LocalityWaitSpan=$span HybridWeights=[^ ]* Debug=0$" ||
	{ echo "FAIL: LocalityWait=$wait_s LocalityWaitSpan=$span not shown: $out"; exit 1; }
echo "Hint=ring" >>"$work/topoml.conf"
line=$(wc -l <"$work/topoml.conf")
err=$("$topoml" check --site-conf "$work/topoml.conf" 2>&1) &&
	{ echo "FAIL: broken topoml.conf accepted"; exit 1; }
echo "$err" | grep -q "topoml.conf:$line:1: " ||
	{ echo "FAIL: no FILE:LINE:COL (line $line): $err"; exit 1; }
echo "ok: example topologies and topoml.conf"

# the keys the plugstack.conf comments show with a value
extra=$(sed -n 's/^#   \([a-z_]\+=[^ ]\+\) .*/\1/p' \
	"$src/contrib/examples/plugstack.conf" | tr '\n' ' ')
max=$(echo "$extra" | sed -n 's/.*max_spares=\([0-9]\+\).*/\1/p')
case $extra in
*rails=yes*) ;;
*) echo "FAIL: plugstack.conf example shows no rails=yes: $extra"; exit 1 ;;
esac
[ -n "$max" ] ||
	{ echo "FAIL: plugstack.conf example shows no max_spares=K: $extra"; exit 1; }

[ "$(id -u)" = 0 ] || { echo "SKIP: cluster part needs root"; exit 77; }
. "${TESTS_DIR:-$src/tests}/lib/cluster.sh"
args=$(sed -n 's|^required [^ ]*topoml.so ||p' \
	"$src/contrib/examples/plugstack.conf")
args=${args//\/etc\/slurm\/topology.conf/$topo}
CLUSTER_SLURMD=2 CLUSTER_SPANK=1 \
	CLUSTER_SPANK_ARGS="$args $extra cache_dir=$work" \
	cluster_start examples
trap 'cluster_stop; rm -rf "$work"' EXIT
out=$(timeout 60 srun -N2 bash -c 'echo $MASTER_PORT $CUDA_VISIBLE_DEVICES' \
	2>&1) || cluster_fail "srun with the example plugstack.conf: $out"
echo "$out" | grep -q '^29[5-9][0-9][0-9]\|^30[0-4][0-9][0-9]' ||
	cluster_fail "MASTER_PORT not from master_port=29500-30499: $out"
# max_spares= from the example is the limit srun enforces
out=$(timeout 60 srun -N1 --ml-spares=$((max + 1)) true 2>&1) &&
	cluster_fail "--ml-spares=$((max + 1)) accepted with max_spares=$max"
echo "$out" | grep -q "at most $max on this cluster (max_spares in plugstack.conf)" ||
	cluster_fail "--ml-spares=$((max + 1)): not refused by max_spares=$max: $out"
echo "PASS: examples"
