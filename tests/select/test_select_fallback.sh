#!/bin/bash
# GRES and memory limits the engine does not see force select/topoml's
# fallback: when none of the engine's choices fits, the job gets plain
# cons_tres's choice (never a node without the GPUs or memory it needs).
#
# 8 real slurmd nodes, two leaves of 4, each with 2 "accel" GRES (a
# file-less GPU is dropped by slurmd) and 1000 MB.  Every
# node runs a one-core job; those on n1-3 and n5-7 hold both GPUs (or 900
# MB).  A 2-node job needing a GPU (or 500 MB) per node fits only on
# n4 + n8: every single-leaf pair the engine prefers contains a full node.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-fb.XXXXXX")
chmod 755 "$work"
printf 'SwitchName=r0 Nodes=n[1-4]\nSwitchName=r1 Nodes=n[5-8]\nSwitchName=top Switches=r[0-1]\n' \
	>"$work/net.conf"
printf 'TopologyFile=%s\nDebug=1\n' "$work/net.conf" >"$work/topoml.conf"

CLUSTER_SLURMD=8 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml \
	CLUSTER_SELECT_PARAMS=CR_Core_Memory \
	CLUSTER_NODE_EXTRA="RealMemory=1000 Gres=accel:2" \
	CLUSTER_GRES_CONF="NodeName=n[1-8] Name=accel Count=2" \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="GresTypes=accel
DefMemPerCPU=10
PartitionName=shared Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=NO" \
	cluster_start sel-fallback || exit $?
log=$CLUSTER_DIR/log/slurmctld.log

run_case() {	# run_case LABEL FILL_ARGS JOB_ARGS
	local label=$1 fill=$2 args=$3 ids="" n id x nx cmt
	for n in 1 2 3 5 6 7; do
		# shellcheck disable=SC2086
		id=$(sbatch --parsable -p shared -w "n$n" -n1 $fill \
			-o /dev/null --wrap 'sleep 100000') ||
			cluster_fail "$label: filler on n$n"
		ids="$ids $id"
	done
	for n in 4 8; do
		id=$(sbatch --parsable -p shared -w "n$n" -n1 -o /dev/null \
			--wrap 'sleep 100000') || cluster_fail "$label: n$n"
		ids="$ids $id"
	done
	for id in $ids; do
		sel_wait_start "$id" >/dev/null ||
			cluster_fail "$label: filler $id: $(squeue -h -j "$id" -o '%T %r')"
	done
	# shellcheck disable=SC2086
	x=$(sbatch --parsable -p shared -N2 -n2 $args -o /dev/null \
		--wrap 'sleep 100000') || cluster_fail "$label: sbatch"
	nx=$(sel_wait_start "$x" 100) ||
		cluster_fail "$label: job did not start: $(squeue -h -j "$x" -o '%T %r')"
	sel_same_nodes "$nx" "n[4,8]" ||
		cluster_fail "$label: job on $nx, only n[4,8] have room"
	cmt=$(sel_comment "$x")
	case "$cmt" in
	"topoml: placed=cons_tres "*) ;;
	*) cluster_fail "$label: SystemComment '$cmt'" ;;
	esac
	grep "JobId=$x .*fallback: cons_tres could not fit the job on the engine's [1-9] choice" \
		"$log" >/dev/null ||
		cluster_fail "$label: fallback not logged: $(grep "JobId=$x" "$log" | tail -3)"
	# shellcheck disable=SC2086
	scancel $ids "$x"
	for id in $ids $x; do
		sel_wait_gone "$id"
	done
	echo "ok: $label: fallback to cons_tres on $nx ($cmt)"
}

run_case GRES "--gres=accel:2" "--gres=accel:1"
run_case memory "--mem=900" "--mem=500"

# With room everywhere the same job is the engine's again: one leaf.
x=$(sbatch --parsable -p shared -N2 -n2 --gres=accel:1 -o /dev/null \
	--wrap 'sleep 100000')
nx=$(sel_wait_start "$x") || cluster_fail "job on an empty cluster"
case "$(sel_comment "$x")" in
"topoml: placed=topoml hint=allreduce leaves=1/1 "*) ;;
*) cluster_fail "empty cluster: $(sel_comment "$x")" ;;
esac
echo "ok: on an empty cluster the engine places it: $nx"

cluster_stop
rm -rf "$work"
echo "PASS: GRES and memory limits force the fallback"
