#!/bin/bash
# The topology.conf files topoml writes are accepted by Slurm's own
# topology/tree: a generated fat-tree and a dragonfly (TopologyParam=
# dragonfly) load in a real slurmctld, Slurm computes the same switch levels
# as topoml, and --switches=1 keeps a job on one of our leaves.
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
. "${TESTS_DIR:-$(dirname "$0")/..}/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v slurmctld >/dev/null || { echo "SKIP: slurmctld not installed"; exit 77; }
TOPOML=${TOP_BUILDDIR:?run from make check}/contrib/topoml
T=$(mktemp -d /tmp/slurm_topology.XXXXXX)
trap 'cluster_stop; rm -rf "$T"' EXIT

# Every switch: Slurm's Level= must be the level in our name (s<L>-<i>).
check_levels() {	# TOPOLOGY_OUTPUT NSWITCHES
	local bad n
	bad=$(echo "$1" | awk '/SwitchName=s[0-9]+-/ {
		split($1, a, "="); split(a[2], b, "-"); want = substr(b[1], 2)
		split($2, l, "="); if (l[2] != want) print $1, $2 }')
	[ -z "$bad" ] || cluster_fail "levels differ from topoml's: $bad"
	n=$(echo "$1" | grep -c '^SwitchName=s[0-9]*-[0-9]* Level=[0-9]')
	[ "$n" = "$2" ] || cluster_fail "compared $n levels, want $2"
}

"$TOPOML" generate fat-tree --nodes 1024 --per-leaf 32 --radix 8 --prefix c \
	-o "$T/ft.conf" || cluster_fail "generate fat-tree"
CLUSTER_SLURMD=1 CLUSTER_CLOUD=1024 CLUSTER_TOPOLOGY=$T/ft.conf cluster_start topo_ft
topo=$(scontrol show topology) || cluster_fail "scontrol show topology"
[ "$(echo "$topo" | grep -c '^SwitchName=')" = 37 ] ||
	cluster_fail "Slurm sees $(echo "$topo" | grep -c '^SwitchName=') switches, want 37"
echo "$topo" | grep -q '^SwitchName=s2-0 Level=2 .*Switches=s1-\[0-3\]' ||
	cluster_fail "root s2-0 missing: $topo"
echo "$topo" | grep -q '^SwitchName=s0-5 Level=0 .*Nodes=c\[161-192\]' ||
	cluster_fail "leaf s0-5 missing"
check_levels "$topo" 37
# --switches=1: Slurm keeps the job on one leaf of ours
msg=$(sbatch --test-only -N32 --switches=1 -x n1 --wrap true 2>&1) ||
	cluster_fail "sbatch --test-only: $msg"
list=$(echo "$msg" | sed -n 's/.* on nodes \([^ ]*\) .*/\1/p')
leaves=$(for h in $(scontrol show hostnames "$list"); do
	n=${h#c}; echo $(( (n - 1) / 32 ))
done | sort -u | wc -l)
[ "$leaves" = 1 ] || cluster_fail "32-node --switches=1 job on $leaves leaves: $list"
echo "ok: fat-tree topology.conf accepted, levels agree, job on one leaf ($list)"
cluster_stop

"$TOPOML" generate dragonfly --groups 4 --routers 4 --per-router 8 --prefix c \
	--format conf -o "$T/df.conf" || cluster_fail "generate dragonfly"
CLUSTER_SLURMD=1 CLUSTER_CLOUD=128 CLUSTER_TOPOLOGY=$T/df.conf \
	CLUSTER_TOPOLOGY_PARAM=dragonfly cluster_start topo_df
topo=$(scontrol show topology) || cluster_fail "scontrol show topology"
echo "$topo" | grep -q '^SwitchName=g2r1 Level=0 .*Nodes=c\[73-80\]' ||
	cluster_fail "router g2r1 missing: $topo"
echo "$topo" | grep -q '^SwitchName=g3 Level=1 .*Switches=g3r\[0-3\]' ||
	cluster_fail "group switch g3 missing"
echo "$topo" | grep -q '^SwitchName=top Level=2 .*Switches=g\[0-3\]' ||
	cluster_fail "top switch missing"
msg=$(sbatch --test-only -N64 -x n1 --wrap true 2>&1) ||
	cluster_fail "sbatch --test-only on the dragonfly: $msg"
echo "ok: dragonfly topology.conf accepted with TopologyParam=dragonfly"
echo "PASS"
