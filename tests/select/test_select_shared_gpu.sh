#!/bin/bash
# Jobs that share 8-GPU nodes (issue 18 item 3): one-GPU and few-GPU jobs
# pack onto partly used nodes (best fit by free GPUs), a multi-node GPU job
# gets its GPUs on the fewest leaves, partly used ones first, and a
# whole-node job still finds a whole idle leaf.
#
# 8 real slurmd with 16 CPUs and 8 GPUs each (gres.conf File= on plain
# files: slurmd only counts them), two leaves n[1-4] and n[5-8], a
# partition without OverSubscribe=EXCLUSIVE.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
. "$TESTS_DIR/select/lib.sh"
sel_require_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/topoml-sel-gpu.XXXXXX")
chmod 755 "$work"
mkdir "$work/dev"
for g in 0 1 2 3 4 5 6 7; do
	: >"$work/dev/gpu$g"
done
printf 'SwitchName=r0 Nodes=n[1-4]\nSwitchName=r1 Nodes=n[5-8]\nSwitchName=top Switches=r[0-1]\n' \
	>"$work/net.conf"
printf 'TopologyFile=%s\nDebug=1\n' "$work/net.conf" >"$work/topoml.conf"

CLUSTER_SLURMD=8 CLUSTER_CLOUD=0 CLUSTER_SELECT=topoml CLUSTER_CPUS=16 \
	CLUSTER_PARTITION_EXTRA="" \
	CLUSTER_NODE_EXTRA="Gres=gpu:8" \
	CLUSTER_GRES_CONF="NodeName=n[1-8] Name=gpu File=$work/dev/gpu[0-7]" \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	CLUSTER_CONF_EXTRA="GresTypes=gpu" \
	cluster_start sel-gpu || exit $?

# run_job LABEL ARGS...: submit, wait until it runs; sets job and nodes.
run_job() {
	local label=$1 cmt
	shift
	job=$(sbatch --parsable "$@" -o /dev/null --wrap 'sleep 100000') ||
		cluster_fail "$label: sbatch $*"
	nodes=$(sel_wait_start "$job" 600) ||
		cluster_fail "$label: not running: $(squeue -h -j "$job" -o '%T %r')"
	cmt=$(sel_comment "$job")
	case "$cmt" in
	"topoml: placed=topoml "*) ;;
	*) cluster_fail "$label: SystemComment '$cmt'" ;;
	esac
}

# GPUs a job holds per node, e.g. "n1:2 n2:8" (scontrol show job -d).
job_gpus() {
	scontrol show job -d "$1" |
		sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=gpu[^(]*:\([0-9]*\)(.*/\1:\2/p' |
		paste -sd' '
}

for i in 1 2 3; do
	run_job "1 GPU #$i" -n1 --gpus=1
	[ "$nodes" = n1 ] ||
		cluster_fail "1 GPU #$i on $nodes: not packed onto n1"
done
echo "ok: three one-GPU jobs share n1"
# n1 has 5 GPUs left: a 6-GPU job takes an idle node of the used leaf.
run_job "6 GPUs" -n1 --gpus=6
[ "$nodes" = n2 ] || cluster_fail "6 GPUs on $nodes, want n2"
run_job "2 GPUs" -n1 --gpus=2
[ "$nodes" = n2 ] || cluster_fail "2 GPUs on $nodes, want n2 (best fit)"
echo "ok: few-GPU jobs: best fit by free GPUs (n2 twice)"
# 16 GPUs over several nodes: leaf r0 still holds 5 + 8 + 8 free.
run_job "16 GPUs" -n2 --gpus=16
for h in $(scontrol show hostnames "$nodes"); do
	case "$h" in
	n[1-4]) ;;
	*) cluster_fail "16 GPUs on $nodes: breaks the idle leaf n[5-8]" ;;
	esac
done
echo "ok: --gpus=16 on one leaf, the partly used one: $nodes ($(job_gpus "$job"))"
run_job "whole leaf" -N4 --exclusive
sel_same_nodes "$nodes" "n[5-8]" ||
	cluster_fail "-N4 --exclusive on $nodes, want n[5-8]"
echo "ok: sbatch -N4 --exclusive RUNNING on $nodes"

cluster_stop
rm -rf "$work"
echo "PASS: GPU jobs pack; a multi-node GPU job stays on one leaf"
