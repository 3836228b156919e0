#!/bin/bash
# The example files an admin copies from contrib/: every example topology
# passes `topoml check`, the example topoml.conf passes `topoml check
# --site-conf` (and a broken one is refused with FILE:LINE:COL), and the
# example plugstack.conf line is accepted by the SPANK plugin in a real
# cluster.
set -u
src=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${TOP_BUILDDIR:-$src/build}
topoml=$bld/contrib/topoml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for f in "$src"/contrib/topologies/*; do
	"$topoml" check "$f" >/dev/null || { echo "FAIL: topoml check $f"; exit 1; }
done
sed "s|^TopologyFile=.*|TopologyFile=$src/contrib/topologies/fat-tree.conf|" \
	"$src/contrib/examples/topoml.conf" >"$work/topoml.conf"
out=$("$topoml" check --site-conf "$work/topoml.conf") ||
	{ echo "FAIL: example topoml.conf: $out"; exit 1; }
echo "$out" | grep -q "DefaultHint=allreduce Placement=topoml, 1 partition" ||
	{ echo "FAIL: unexpected summary: $out"; exit 1; }
echo "Hint=ring" >>"$work/topoml.conf"
err=$("$topoml" check --site-conf "$work/topoml.conf" 2>&1) &&
	{ echo "FAIL: broken topoml.conf accepted"; exit 1; }
echo "$err" | grep -q "topoml.conf:8:1: " ||
	{ echo "FAIL: no FILE:LINE:COL: $err"; exit 1; }
echo "ok: example topologies and topoml.conf"

[ "$(id -u)" = 0 ] || { echo "SKIP: cluster part needs root"; exit 77; }
. "${TESTS_DIR:-$src/tests}/lib/cluster.sh"
args=$(sed -n 's|^required [^ ]*topoml.so ||p' \
	"$src/contrib/examples/plugstack.conf")
args=${args//\/etc\/slurm\/topology.conf/$src/contrib/topologies/fat-tree.conf}
CLUSTER_SLURMD=2 CLUSTER_SPANK=1 CLUSTER_SPANK_ARGS="$args cache_dir=$work" \
	cluster_start examples
trap 'cluster_stop; rm -rf "$work"' EXIT
out=$(timeout 60 srun -N2 bash -c 'echo $MASTER_PORT $CUDA_VISIBLE_DEVICES' \
	2>&1) || cluster_fail "srun with the example plugstack.conf: $out"
echo "$out" | grep -q '^29[5-9][0-9][0-9]\|^30[0-4][0-9][0-9]' ||
	cluster_fail "MASTER_PORT not from master_port=29500-30499: $out"
echo "PASS: examples"
