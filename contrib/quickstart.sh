#!/bin/bash
# Quick start on a fresh Debian 12 machine, as root: install what topoml
# needs, build it, start a local Slurm cluster with select/topoml and the
# topoml SPANK plugin -- 8 real slurmd nodes standing in for GPU servers
# (an 8-GPU server's hwloc XML) and 1024 emulated nodes on a 3-level
# fat-tree -- then place jobs on the emulated nodes, compare with stock
# Slurm, and run a demo training job on the real nodes.
#
# usage: contrib/quickstart.sh [--keep]
#   --keep   leave the cluster running; prints how to use and stop it
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
keep=0
[ "${1:-}" = "--keep" ] && keep=1

BUILD_DIR=$build bash "$top/contrib/build.sh"
topoml=$build/contrib/topoml
work=$(mktemp -d /tmp/topoml-quickstart-work.XXXXXX)
pics=$build/quickstart	# the pictures stay after the run
chmod 755 "$work"

step() { printf '\n== %s\n' "$*"; }

step "site topology: 1024 emulated nodes (32 per leaf) + 2 GPU leaves"
"$topoml" generate fat-tree --nodes 1024 --per-leaf 32 --radix 8 \
	--prefix c -o "$work/cloud.conf"
root=$(sed -n 's/^SwitchName=\([^ ]*\).*/\1/p' "$work/cloud.conf" | tail -1)
{
	cat "$work/cloud.conf"
	echo "SwitchName=gpu-leaf1 Nodes=n[1,3,5,7]"
	echo "SwitchName=gpu-leaf2 Nodes=n[2,4,6,8]"
	echo "SwitchName=gpu-spine Switches=gpu-leaf[1-2]"
	echo "SwitchName=core Switches=gpu-spine,$root"
} >"$work/topology.conf"
"$topoml" check "$work/topology.conf"
echo "TopologyFile=$work/topology.conf" >"$work/topoml.conf"

TOP_BUILDDIR=$build
. "$top/tests/lib/cluster.sh"
fix=$top/tests/fixtures/spank
CLUSTER_SLURMD=8 CLUSTER_CLOUD=1024 CLUSTER_SELECT=topoml \
	CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOML_CONF=$work/topoml.conf CLUSTER_SPANK=1 \
	CLUSTER_SPANK_ARGS="topology=$work/topology.conf \
hwloc_xml=$fix/hwloc/synth-2s8g4n.xml sysfs_root=$fix/sysfs \
cache_dir=$work nvml_lib=/nonexistent/libnvidia-ml.so.1" \
	CLUSTER_CONF_EXTRA="PartitionName=gpu Nodes=n[1-8] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
PartitionName=cloud Nodes=c[1-1024] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" \
	cluster_start quickstart

step "filling the emulated machine, then freeing some jobs (holes)"
ids=()
for n in 48 16 100 24 8 64 40 12 30 96 20 6; do
	ids+=("$(sbatch --parsable -p cloud -N$n --wrap 'sleep 3600')")
done
sleep 2
scancel "${ids[1]}" "${ids[4]}" "${ids[7]}" "${ids[10]}"
sleep 1
busy=$(squeue -h -p cloud -t R,CF -o '%N' | paste -sd, -)
echo "busy: $busy"

step "a 64-node job placed by select/topoml (SystemComment)"
job=$(sbatch --parsable -p cloud -N64 --ml-comm=allreduce \
	--wrap 'sleep 3600')
for i in $(seq 1 50); do
	c=$(scontrol show job "$job" | sed -n 's/^ *SystemComment=//p')
	[ -n "$c" ] && break
	sleep 0.2
done
nodes=$(squeue -h -j "$job" -o '%N')
echo "job $job: $nodes"
echo "  $c"
echo "stock Slurm (cons_tres + topology/tree) would choose:"
"$topoml" place --topology "$work/topology.conf" --nodes 64 \
	--busy "$busy" --policy slurm-tree | sed 's/^/  /'
# the job where select/topoml put it, with the busy nodes (--required
# pins the picture to the cluster's answer)
mkdir -p "$pics"
"$topoml" place -q --topology "$work/topology.conf" --nodes 64 \
	--busy "$busy" --required "$nodes" --svg "$pics/cluster-job.svg" \
	>/dev/null && echo "picture: $pics/cluster-job.svg"

step "where it matters: the same jobs on a dragonfly and a torus"
# On this fat-tree both choose alike; on a dragonfly stock Slurm spreads
# the job over every group, on a torus it takes nodes in name order.
bash "$top/contrib/demo/compare-placement.sh" "$topoml" "$pics"

step "demo training job on the GPU partition (16 ranks, ring order = network)"
out=$work/train.out
tj=$(sbatch --parsable -p gpu -N8 --ntasks-per-node=2 -o "$out" \
	--ml-gpu-bind=auto --ml-nccl=auto --ml-rank-order=topology \
	--ml-ckpt="$work/ckpt,every=50,keep=2" --wrap "
srun --overlap -N1 -n1 bash -c 'env | grep -E \"^(CUDA_VISIBLE|NCCL_|MASTER_|WORLD_SIZE|RANK|LOCAL_RANK|TOPOML_CKPT_DIR)\" | sort'
srun --overlap /usr/bin/python3 $top/contrib/demo/train.py --steps 200")
for i in $(seq 1 600); do
	squeue -h -j "$tj" 2>/dev/null | grep -q . || break
	sleep 0.2
done
sort -s -k1,1 "$out" | awk '/^rank/ {r[$2]=$0; next} {print}
	END {for (i = 0; i < 16; i++) if (i in r) print r[i]}'
echo "checkpoints: $(ls "$work/ckpt/$tj" 2>/dev/null | tr '\n' ' ')"
scontrol show job "$tj" | grep -E 'JobState|SystemComment' | sed 's/^ */  /'

if [ $keep = 1 ]; then
	trap - EXIT INT TERM
	echo
	echo "cluster left running in $CLUSTER_DIR (work files in $work)"
	echo "  export SLURM_CONF=$SLURM_CONF"
	echo "  stop it: bash -c '. $top/tests/lib/cluster.sh;" \
		"CLUSTER_DIR=$CLUSTER_DIR cluster_stop'"
else
	cluster_stop
	rm -rf "$work"
fi
