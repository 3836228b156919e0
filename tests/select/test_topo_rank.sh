#!/bin/bash
# topology/topoml's get_rank (Slurm 26.05+): SLURM_PROCID follows the
# engine's ring, for every program srun starts (no topoml option).
#
# 8 slurmd nodes, leaves of 2 in two pods whose leaves interleave in
# topology.conf (pod a: l0, l2; pod b: l1, l3).  Slurm's own ranks (tree:
# leaves in file order) give n1..n8, crossing between pods three times;
# the ring crosses once and keeps each leaf together.  Skips below 26.05
# (24.11 has no per-job rank hook: generate_node_ranking is cluster-wide).
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
cluster_need_root
cluster_need_release 2605 "topology/topoml get_rank"
[ -f "$TOP_BUILDDIR/select_plugin/.libs/topology_topoml.so" ] ||
	{ echo "SKIP: topology/topoml not built"; exit 77; }

work=""
cluster_tmpdir work topo-rank
cat >"$work/topology.conf" <<'TOPO'
SwitchName=l0 Nodes=n[1-2]
SwitchName=l1 Nodes=n[3-4]
SwitchName=l2 Nodes=n[5-6]
SwitchName=l3 Nodes=n[7-8]
SwitchName=pa Switches=l[0,2]
SwitchName=pb Switches=l[1,3]
SwitchName=top Switches=pa,pb
TOPO
: >"$work/topoml.conf"

CLUSTER_SLURMD=8 CLUSTER_CLOUD=0 CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf \
	cluster_start topo-rank || exit $?

out=$(timeout 60 srun -N8 -n8 -l printenv SLURMD_NODENAME 2>&1) ||
	cluster_fail "srun: $out"
order=$(echo "$out" | sort -n | awk '{ print $2 }' | paste -sd' ')
echo "SLURM_PROCID 0..7 on: $order"
# changes NODE->GROUP: how often consecutive ranks change group
changes() {
	echo "$order" | tr ' ' '\n' | sed 's/^n//' | awk -v f="$1" '
		{ g = (f == "pod") ? ((int(($1 - 1) / 2) % 2) ? "b" : "a") \
				   : int(($1 - 1) / 2)
		  if (NR > 1 && g != last) c++; last = g }
		END { print c + 0 }'
}
[ "$(echo "$order" | wc -w)" = 8 ] || cluster_fail "8 ranks expected: $out"
[ "$(changes pod)" = 1 ] ||
	cluster_fail "ranks cross pods $(changes pod) times (ring: once): $order"
[ "$(changes leaf)" = 3 ] ||
	cluster_fail "ranks split a leaf ($(changes leaf) leaf changes): $order"
echo "ok: SLURM_PROCID follows the ring (pods crossed once, leaves whole)"

# PyTorch with no --ml-* option and no topoml plugin in the step: each task
# joins the process group as rank SLURM_PROCID, and rank 0's all-gather of
# the node names, in torch's rank order, is the ring.
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
	cat >"$work/ranks.py" <<'PY'
import os
import torch.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%s" %
			os.environ["RDV_PORT"],
			rank=int(os.environ["SLURM_PROCID"]),
			world_size=int(os.environ["SLURM_NTASKS"]))
names = [None] * dist.get_world_size()
dist.all_gather_object(names, os.environ["SLURMD_NODENAME"])
if dist.get_rank() == 0:
	print("torch ranks:", " ".join(names))
dist.destroy_process_group()
PY
	chmod 644 "$work/ranks.py"
	tout=$(RDV_PORT=$((CLUSTER_PORT + 40)) timeout 120 srun -N8 -n8 \
		--export=ALL /usr/bin/python3 "$work/ranks.py" 2>&1) ||
		cluster_fail "torch job: $tout"
	got=$(echo "$tout" | sed -n 's/^torch ranks: //p')
	[ "$got" = "$order" ] ||
		cluster_fail "torch's ranks on '$got', SLURM_PROCID's on '$order'"
	echo "ok: torch rank r (from SLURM_PROCID) on the ring's r-th node: $got"
else
	echo "note: no python3-torch; the torch check did not run"
fi
echo "PASS: SLURM_PROCID follows the ring (pods crossed once, leaves whole)"
