#!/bin/bash
# Slurm's own topology/tree accepts what `topoml import-ib` writes: for each
# ibnetdiscover sample, slurmctld comes up on the imported topology.conf
# (the hosts as CLOUD nodes of that name), `scontrol show topology` lists
# every switch with the level and nodes the file gives it, and a job over
# all hosts of the fabric can be placed (the virtual root import-ib adds
# where the cables join leaves that no switch joins).
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
TOPOML=$TOP_BUILDDIR/contrib/topoml
[ -x "$TOPOML" ] || { echo "FAIL: $TOPOML not built"; exit 1; }

# Slurm alone must judge: no topoml plugin in the cluster's PluginDir
# (select/topoml, loaded by slurmctld whatever SelectType says, reads
# topology.conf through the same loader).
noplugins=$(mktemp -d /tmp/noplugins.XXXXXX)
TOP_BUILDDIR=$noplugins

samples=("$TESTS_DIR/fixtures/loaders/ib/railopt.topo")
if [ -n "${REALDATA:-}" ] && [ -d "$REALDATA/ibnetdiscover" ]; then
	samples+=("$REALDATA"/ibnetdiscover/*.topo)
else
	echo "REALDATA absent: only the local rail-optimised fixture"
	skipped_realdata=1
fi

# cluster_start owns the EXIT trap: the work files go at the end.
work=$(mktemp -d /tmp/test_import_slurm.XXXXXX)

# "SwitchName=X ... Nodes=L" / "Switches=L" of a topology.conf, one per line:
# NAME NODES-OR-- SWITCHES-OR--
_switches() {
	sed -n 's/^SwitchName=\([^ ]*\)\(.*\)$/\1 \2/p' "$1" | while read -r name rest; do
		nodes=$(echo "$rest" | sed -n 's/.*Nodes=\([^ ]*\).*/\1/p')
		sws=$(echo "$rest" | sed -n 's/.*Switches=\([^ ]*\).*/\1/p')
		echo "$name ${nodes:--} ${sws:--}"
	done
}

n=0
for ib in "${samples[@]}"; do
	base=$(basename "$ib")
	conf=$work/$base.conf
	"$TOPOML" import-ib -q "$ib" -o "$conf" ||
		{ echo "FAIL: import-ib $base"; exit 1; }
	extra=""
	all=""
	while read -r name nodes sws; do
		[ "$nodes" = - ] && continue
		extra+="NodeName=$nodes NodeHostname=localhost NodeAddr=127.0.0.1"
		extra+=" Port=9 CPUs=4 State=CLOUD"$'\n'
		all+="${all:+,}$nodes"
	done < <(_switches "$conf")
	extra+="PartitionName=ib Nodes=$all MaxTime=INFINITE State=UP"
	CLUSTER_SLURMD=0 CLUSTER_CLOUD=1 CLUSTER_TOPOLOGY=$conf \
		CLUSTER_TOPOLOGY_PLUGIN=topology/tree CLUSTER_CONF_EXTRA=$extra \
		cluster_start import
	grep -q "fatal" "$CLUSTER_DIR/log/slurmctld.log" &&
		cluster_fail "$base: slurmctld logged a fatal error"
	show=$(scontrol show topology) || cluster_fail "$base: show topology"

	# Every switch, with Slurm's level and node set equal to the file's.
	while read -r name nodes sws; do
		line=$(echo "$show" | grep -F "SwitchName=$name ") ||
			cluster_fail "$base: Slurm does not list switch $name:
$show"
		if [ "$nodes" != - ]; then
			echo "$line" | grep -q " Level=0 " ||
				cluster_fail "$base: $name is no leaf: $line"
			got=$(echo "$line" | sed -n 's/.* Nodes=\([^ ]*\).*/\1/p')
			[ "$(scontrol show hostnames "$got" | sort)" = \
			  "$(scontrol show hostnames "$nodes" | sort)" ] ||
				cluster_fail "$base: $name has $got, file $nodes"
		else
			echo "$line" | grep -qF " Switches=$sws" ||
				cluster_fail "$base: $name children: $line"
		fi
	done < <(_switches "$conf")
	[ "$(echo "$show" | grep -c '^SwitchName=')" = \
	  "$(_switches "$conf" | wc -l)" ] ||
		cluster_fail "$base: switch count differs:
$show"

	# One job over every host: Slurm finds a switch above them all.
	count=$(scontrol show hostnames "$all" | wc -l)
	msg=$(sbatch --test-only -p ib -N "$count" --wrap true 2>&1)
	echo "$msg" | grep -q "to start at" ||
		cluster_fail "$base: $count-node job over the fabric: $msg"
	echo "ok: $base: $(echo "$show" | wc -l) switches," \
		"$count hosts, job over all hosts placed"
	cluster_stop
	n=$((n + 1))
done
rm -rf "$work"
rmdir "$noplugins"
echo "PASS: Slurm's topology/tree accepted $n imported topologies"
# The local files passed; without the real data the test is incomplete.
[ -n "${skipped_realdata:-}" ] && { echo "SKIP: REALDATA absent"; exit 77; }
exit 0
