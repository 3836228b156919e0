#!/bin/bash
# Quick start on a fresh Debian 12 machine, as root: install what topoml
# needs, build it, start a local Slurm cluster (8 slurmd + 1024 emulated
# nodes on a fat-tree) with select/topoml and the topoml SPANK plugin, and
# place and launch a demo training job on it.
#
# usage: contrib/quickstart.sh [--keep]
#   --keep   leave the cluster running; prints how to use and stop it
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
keep=0
[ "${1:-}" = "--keep" ] && keep=1

bash "$top/contrib/install-deps.sh"
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j2 >make.log 2>&1 || { tail -40 make.log; exit 1; }

TOP_BUILDDIR=$build
. "$top/tests/lib/cluster.sh"
CLUSTER_SLURMD=8 CLUSTER_CLOUD=1024 cluster_start quickstart

echo
echo "== a multi-node job on the 8 slurmd nodes"
srun -N8 -n16 -w 'n[1-8]' bash -c \
	'echo "rank $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME"' | sort -k2n
echo
echo "== where Slurm would place a 64-node job on the emulated nodes"
sbatch --test-only -N64 -x 'n[1-8]' --wrap true 2>&1

if [ $keep = 1 ]; then
	trap - EXIT INT TERM
	echo
	echo "cluster left running in $CLUSTER_DIR"
	echo "  export SLURM_CONF=$SLURM_CONF"
	echo "  stop it: bash -c '. $top/tests/lib/cluster.sh;" \
		"CLUSTER_DIR=$CLUSTER_DIR cluster_stop'"
fi
