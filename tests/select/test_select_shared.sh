#!/bin/bash
# Jobs that share nodes (issue 18): select/topoml packs them as tightly as
# cons_tres does, so a following large job finds whole leaves and runs.
#
# 8 real slurmd with 4 CPUs, two leaves n[1-4] and n[5-8], a partition
# without OverSubscribe=EXCLUSIVE:
#   1. the issue's case: six `sbatch -n1` go to n1 x4 and n2 x2 (cons_tres's
#      best fit), then `sbatch -N4 --exclusive` runs at once on n[5-8];
#   2. a multi-node job by tasks (`-n 8`, no --exclusive) goes to the partly
#      used leaf (the engine offers n5 first, cons_tres picks the CPUs
#      there), and `-N4 --exclusive` still runs
#      at once on the other leaf (plain cons_tres would take n[1-2]).
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-shared.XXXXXX")
chmod 755 "$work"
printf 'SwitchName=r0 Nodes=n[1-4]\nSwitchName=r1 Nodes=n[5-8]\nSwitchName=top Switches=r[0-1]\n' \
	>"$work/net.conf"
printf 'TopologyFile=%s\nDebug=1\n' "$work/net.conf" >"$work/topoml.conf"

CLUSTER_SLURMD=8 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml CLUSTER_CPUS=4 \
	CLUSTER_PARTITION_EXTRA="" \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	cluster_start sel-shared || exit $?
grep -q '^PartitionName=main .*OverSubscribe' "$SLURM_CONF" &&
	cluster_fail "partition main still has an OverSubscribe setting"

# start_big LABEL WANT: sbatch -N4 --exclusive; it must run, on WANT.  A
# blocked job stays PENDING (Resources) for as long as the small jobs run,
# so the generous wait only absorbs a loaded machine.
start_big() {
	local label=$1 want=$2 x nx
	x=$(sbatch --parsable -N4 --exclusive -o /dev/null \
		--wrap 'sleep 100000') || cluster_fail "$label: sbatch -N4"
	nx=$(sel_wait_start "$x" 600) ||
		cluster_fail "$label: -N4 --exclusive not running: $(squeue -h -j "$x" -o '%T %r')"
	sel_same_nodes "$nx" "$want" ||
		cluster_fail "$label: -N4 --exclusive on $nx, want $want"
	case "$(sel_comment "$x")" in
	"topoml: placed=topoml "*) ;;
	*) cluster_fail "$label: -N4: SystemComment '$(sel_comment "$x")'" ;;
	esac
	echo "ok: $label: sbatch -N4 --exclusive RUNNING on $nx"
	big=$x
}

# 1. The issue's case.
ids=""
for _ in 1 2 3 4 5 6; do
	id=$(sbatch --parsable -n1 -o /dev/null --wrap 'sleep 100000') ||
		cluster_fail "sbatch -n1"
	ids="$ids $id"
done
where=""
for id in $ids; do
	nl=$(sel_wait_start "$id" 600) ||
		cluster_fail "-n1 job $id: $(squeue -h -j "$id" -o '%T %r')"
	case "$(sel_comment "$id")" in
	"topoml: placed=topoml "*) ;;
	*) cluster_fail "-n1 job $id: SystemComment '$(sel_comment "$id")'" ;;
	esac
	where="$where $nl"
done
got=$(echo $where | tr ' ' '\n' | sort | uniq -c | awk '{print $2 "x" $1}' |
	paste -sd' ')
[ "$got" = "n1x4 n2x2" ] ||
	cluster_fail "six -n1 jobs on: $got (cons_tres: n1x4 n2x2)"
echo "ok: six sbatch -n1 packed like cons_tres: $got"
start_big "issue 18" "n[5-8]"
cluster_cancel_all

# 2. Multi-node by tasks: leaf r1 is partly used (two CPUs of n5).
ids=""
for _ in 1 2; do
	id=$(sbatch --parsable -w n5 -n1 -o /dev/null --wrap 'sleep 100000') ||
		cluster_fail "sbatch -w n5"
	sel_wait_start "$id" 600 >/dev/null || cluster_fail "filler on n5"
	ids="$ids $id"
done
x=$(sbatch --parsable -n8 -o /dev/null --wrap 'sleep 100000') ||
	cluster_fail "sbatch -n8"
nx=$(sel_wait_start "$x" 600) ||
	cluster_fail "-n8: $(squeue -h -j "$x" -o '%T %r')"
for h in $(scontrol show hostnames "$nx"); do
	case "$h" in
	n[5-8]) ;;
	*) cluster_fail "-n8 on $nx: breaks the idle leaf n[1-4]" ;;
	esac
done
cmt=$(sel_comment "$x")
case "$cmt" in
"topoml: placed=topoml "*) ;;
*) cluster_fail "-n8: SystemComment '$cmt'" ;;
esac
[ "$(sel_field leaves "$cmt")" = 1/1 ] || cluster_fail "-n8: $cmt"
echo "ok: sbatch -n8 on the partly used leaf: $nx"
start_big "-n8 then -N4" "n[1-4]"
cluster_cancel_all

cluster_stop
rm -rf "$work"
echo "PASS: shared jobs pack; whole-node jobs find whole leaves"
