#!/bin/bash
# select/topoml in will-run mode (sbatch --test-only, backfill's plan) on a
# fat-tree of 64 emulated nodes: the nodes it answers are the engine's
# choice on the nodes free at that time (idle now, or free soonest when the
# job must wait), its start time is cons_tres's, and at least one answer
# differs from plain cons_tres's (partition plain, Placement=off), so the
# test fails when will-run is handed to cons_tres unnarrowed; a pending
# job's SchedNodes (backfill's real plan) are the engine's choice too.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-willrun.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
{	# 8 leaves of 8 nodes, two spines
	for l in $(seq 0 7); do
		echo "SwitchName=l$l Nodes=c[$((l * 8 + 1))-$((l * 8 + 8))]"
	done
	echo "SwitchName=s0 Switches=l[0-3]"
	echo "SwitchName=s1 Switches=l[4-7]"
	echo "SwitchName=root Switches=s[0-1]"
} >"$work/topology.conf"
cp "$work/topology.conf" "$work/net.conf"
printf 'TopologyFile=%s\nPartitionName=plain Placement=off\n' \
	"$work/net.conf" >"$work/topoml.conf"
CLUSTER_SLURMD=0 CLUSTER_CLOUD=64 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="PartitionName=plain Nodes=c[1-64] MaxTime=INFINITE State=UP" \
	cluster_start sel-willrun || exit $?

submit() {	# submit MINUTES NODES [HOSTLIST]: job id, started
	local id nl
	id=$(sbatch --parsable -o /dev/null -t "$1" -N "$2" ${3:+-w "$3"} \
		--wrap 'sleep 100000') || cluster_fail "sbatch -N $2"
	nl=$(sel_wait_start "$id") || cluster_fail "job $id did not start"
	echo "$id"
}

# test_only PARTITION NODES: "START NODES" of sbatch --test-only (26.05
# writes a word between the time and "using")
test_only() {
	sbatch --test-only -p "$1" -N "$2" -t 5 --wrap true 2>&1 |
		sed -n 's/.* to start at \([^ ]*\) .*using .* on nodes \([^ ]*\) in partition.*/\1 \2/p'
}

# ---- jobs start now: the engine's choice on the idle nodes ----
# holes of 3, 1, 5 and 4 nodes on leaves 0-3, one on leaf 4 (a state
# where topoml and cons_tres's tree best fit disagree on larger jobs)
for w in "c[1-5]" "c[9-10]" "c[12-17]" "c[19-20]" "c[25-28]" "c[33-39]"; do
	submit 30 "$(scontrol show hostnames "$w" | wc -l)" "$w" >/dev/null
done
differ=0
for k in 1 2 3 4 5 8 10 12 20; do
	busy=$(cluster_nodes_allocated)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/net.conf" "$k" "$busy" allreduce \
		$(sel_owners)) || cluster_fail "engine: no answer for $k nodes"
	read -r _ got < <(test_only main "$k")
	read -r _ plain < <(test_only plain "$k")
	[ -n "$got" ] && [ -n "$plain" ] ||
		cluster_fail "--test-only -N $k: no answer ($got/$plain): $(sbatch --test-only -p main -N "$k" -t 5 --wrap true 2>&1)"
	sel_same_nodes "$got" "$want" ||
		cluster_fail "--test-only -N $k: $got, the engine says $want"
	sel_same_nodes "$got" "$plain" || differ=$((differ + 1))
	echo "ok: --test-only -N $k now: $got (cons_tres alone: $plain)"
done
[ "$differ" -gt 0 ] ||
	cluster_fail "every --test-only answer equals plain cons_tres's: not narrowed?"

# ---- the job must wait: the nodes free soonest, cons_tres's start time ----
short=$(submit 10 "$(( $(sinfo -h -p main -t idle -o %D) ))")
free=$(sinfo -h -p main -t idle -o %D)
[ "${free:-0}" = 0 ] || cluster_fail "machine not full ($free idle)"
for k in 4 9; do
	read -r t_main got < <(test_only main "$k")
	read -r t_plain plain < <(test_only plain "$k")
	[ -n "$got" ] || cluster_fail "--test-only -N $k (later): no answer"
	[ "$t_main" = "$t_plain" ] ||
		cluster_fail "--test-only -N $k starts at $t_main, cons_tres alone at $t_plain"
	# the nodes of the 10-minute job are the ones free soonest
	snodes=$(squeue -h -j "$short" -o %N)
	busy=$(squeue -h -t R -o '%i %N' | awk -v s="$short" '$1 != s {print $2}' |
		paste -sd,)
	# shellcheck disable=SC2046
	want=$(sel_expected "$work/net.conf" "$k" "$busy" allreduce \
		$(sel_owners | grep -v "^$short=")) ||
		cluster_fail "engine: no answer for $k nodes on $snodes"
	sel_same_nodes "$got" "$want" ||
		cluster_fail "--test-only -N $k later: $got, the engine says $want (free soonest: $snodes)"
	echo "ok: --test-only -N $k at $t_main: $got (cons_tres alone: $plain)"
done
# ---- backfill's plan: a pending job's SchedNodes are the engine's ----
pend=$(sbatch --parsable -o /dev/null -t 5 -N 10 --wrap 'sleep 1') ||
	cluster_fail "sbatch -N 10"
plan=""
for _ in $(seq 1 100); do
	plan=$(squeue -h -j "$pend" -o %Y)
	[ -n "$plan" ] && [ "$plan" != "(null)" ] && break
	sleep 0.2
done
busy=$(squeue -h -t R -o '%i %N' | awk -v s="$short" '$1 != s {print $2}' |
	paste -sd,)
# shellcheck disable=SC2046
want=$(sel_expected "$work/net.conf" 10 "$busy" allreduce \
	$(sel_owners | grep -v "^$short=")) || cluster_fail "engine: 10 nodes"
sel_same_nodes "$plan" "$want" ||
	cluster_fail "backfill planned job $pend on '$plan', the engine says $want"
echo "ok: backfill plans the pending 10-node job on $plan"
echo "PASS: will-run narrows like run-now ($differ of 9 answers differ from cons_tres alone)"
cluster_stop
