#!/bin/bash
# topology/topoml's get_rank (Slurm 26.05+): SLURM_PROCID follows the
# engine's ring, for every program srun starts (no topoml option).
#
# 8 slurmd nodes, leaves of 2 in two pods whose leaves interleave in
# topology.conf (pod a: l0, l2; pod b: l1, l3).  Slurm's own ranks (tree:
# leaves in file order) give n1..n8, crossing between pods three times;
# the ring crosses once and keeps each leaf together.  Real PyTorch (gloo)
# and a real MPI program (MPICH, srun --mpi=pmi2) take their ranks from it;
# -m cyclic (Slurm's node order) is the MPI control.  2. With the topoml
# SPANK plugin's --ml-parallel and --ml-spares at allocation, SLURM_PROCID
# follows order= (pipeline stages, spares last) where the ring differs.
# On 24.11 (no per-job rank hook: generate_node_ranking is cluster-wide),
# only the first cluster: SLURM_PROCID and MPI ranks keep Slurm's order,
# and topoml-run's layout (--distribution=arbitrary) puts them on order=.
set -u
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$TESTS_DIR/.." && pwd)}
. "$TESTS_DIR/lib/cluster.sh"
cluster_need_root
cluster_need_release 2411 "topology/topoml"
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

# changes NODE->GROUP: how often consecutive ranks change group
changes() {
	echo "$order" | tr ' ' '\n' | sed 's/^n//' | awk -v f="$1" '
		{ g = (f == "pod") ? ((int(($1 - 1) / 2) % 2) ? "b" : "a") \
				   : int(($1 - 1) / 2)
		  if (NR > 1 && g != last) c++; last = g }
		END { print c + 0 }'
}
# The MPI program: rank 0 prints "mpi size N:" and each rank's
# SLURM_PROCID:node in MPI rank order (Debian's MPICH; without mpicc the
# MPI checks do not run).
mpi_prog=""
if command -v mpicc >/dev/null; then
	cat >"$work/mpi_ranks.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *id = getenv("SLURM_PROCID"), *node = getenv("SLURMD_NODENAME");
	char me[64], *all = NULL;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(me, sizeof(me), "%s:%s", id ? id : "-", node ? node : "-");
	if (!rank && !(all = malloc(sizeof(me) * size)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Gather(me, sizeof(me), MPI_CHAR, all, sizeof(me), MPI_CHAR, 0,
		   MPI_COMM_WORLD);
	if (!rank) {
		printf("mpi size %d:", size);
		for (int r = 0; r < size; r++)
			printf(" %s", all + r * sizeof(me));
		printf("\n");
	}
	free(all);
	MPI_Finalize();
	return 0;
}
C
	mpicc -O1 -o "$work/mpi_ranks" "$work/mpi_ranks.c" 2>&1 ||
		cluster_fail "mpicc failed"
	mpi_prog=$work/mpi_ranks
fi
# mpi_check WORLD WANT: in WORLD ("PROCID:NODE" of MPI ranks 0..7) rank r
# has SLURM_PROCID r, and the nodes are WANT's
mpi_check() {
	local r=0 x
	[ "$(echo "$1" | wc -w)" = 8 ] || cluster_fail "MPI: no world of 8: $1"
	for x in $1; do
		[ "${x%%:*}" = $r ] || cluster_fail "MPI rank $r has" \
			"SLURM_PROCID ${x%%:*}: $1"
		r=$((r + 1))
	done
	[ "$(echo "$1" | sed 's/[0-9]*://g')" = "$2" ] ||
		cluster_fail "MPI ranks on '$1', want '$2'"
}
slurm_order="n1 n2 n3 n4 n5 n6 n7 n8"

# 24.11: order= is the ring, but srun's task ids (and so MPI's ranks) keep
# Slurm's order; topoml-run lays its step out on order=, and they follow.
if [ "$CLUSTER_SLURM_VERSION" -lt 2605 ]; then
	cat >"$work/job.sh" <<'JOB'
#!/bin/bash
echo "ORDER $(squeue -h -j "$SLURM_JOB_ID" -O system_comment:0 |
	tr ' ' '\n' | sed -n 's/^order=//p')"
srun -l printenv SLURMD_NODENAME | sed 's/^/SRUN /'
"$RUN" -- bash -c 'echo "RUN $SLURM_PROCID: $SLURMD_NODENAME"'
if [ -n "$MPI" ]; then
	srun --mpi=pmi2 "$MPI" | sed 's/^/SRUN /'
	"$RUN" --mpi=pmi2 -- "$MPI" | sed 's/^/RUN /'
fi
JOB
	chmod 755 "$work/job.sh"
	out=$(RUN=$TOP_SRCDIR/contrib/topoml-run MPI=$mpi_prog timeout 120 \
		salloc -Q -N8 "$work/job.sh" 2>&1) || cluster_fail "job: $out"
	ring=$(scontrol show hostnames "$(echo "$out" |
		sed -n 's/^ORDER //p')" | paste -sd' ')
	# ids TAG: the nodes of task ids 0..7 of the TAG lines
	ids() {
		echo "$out" | sed -n "s/^$1 *\([0-9]*: \)/\1/p" | sort -n |
			awk '{ print $2 }' | paste -sd' '
	}
	order=$ring
	[ "$(changes pod)" = 1 ] && [ "$(changes leaf)" = 3 ] ||
		cluster_fail "order= $ring is not the ring: $out"
	[ "$(ids SRUN)" = "$slurm_order" ] ||
		cluster_fail "24.11: srun's SLURM_PROCID on $(ids SRUN)"
	[ "$(ids RUN)" = "$ring" ] ||
		cluster_fail "topoml-run's SLURM_PROCID on $(ids RUN), order= $ring"
	echo "ok: 24.11: srun's SLURM_PROCID on Slurm's order, topoml-run's" \
		"on order= $ring"
	if [ -n "$mpi_prog" ]; then
		mpi_check "$(echo "$out" | sed -n 's/^SRUN mpi size 8: //p')" \
			"$slurm_order"
		mpi_check "$(echo "$out" | sed -n 's/^RUN mpi size 8: //p')" \
			"$ring"
		echo "ok: 24.11: MPI ranks on Slurm's order with srun, on" \
			"order= with topoml-run"
	else
		echo "note: no mpicc (mpich, libmpich-dev); the MPI check did" \
			"not run"
	fi
	echo "PASS: 24.11: SLURM_PROCID keeps Slurm's order; topoml-run's" \
		"follows order="
	exit 0
fi

out=$(timeout 60 srun -N8 -n8 -l printenv SLURMD_NODENAME 2>&1) ||
	cluster_fail "srun: $out"
order=$(echo "$out" | sort -n | awk '{ print $2 }' | paste -sd' ')
echo "SLURM_PROCID 0..7 on: $order"
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
# MPI (Debian's MPICH, its simple PMI client, on Slurm's own PMI server:
# srun --mpi=pmi2, no mpiexec): MPI_COMM_WORLD rank r is the task of
# SLURM_PROCID r and on the ring's r-th node.  The control, -m cyclic
# (Slurm's node order; task layouts other than block ignore the ranks),
# gives the same program n1..n8, so the check can fail.
if [ -n "$mpi_prog" ]; then
	# mpi [SRUN-ARGS]: "PROCID:NODE" of MPI ranks 0..7, in rank order
	mpi() {
		local o
		o=$(timeout 60 srun -N8 -n8 --mpi=pmi2 "$@" "$mpi_prog" \
			2>&1) || cluster_fail "MPI job ($*): $o"
		echo "$o" | sed -n 's/^mpi size 8: //p'
	}
	world=$(mpi) || exit 1
	mpi_check "$world" "$order"
	echo "ok: MPI rank r = SLURM_PROCID r, on the ring's r-th node: $world"
	world=$(mpi -m cyclic) || exit 1
	mpi_check "$world" "$slurm_order"
	[ "$order" != "$slurm_order" ] ||
		cluster_fail "the ring is Slurm's node order: no proof"
	echo "ok: the control (-m cyclic, Slurm's order): $world"
else
	echo "note: no mpicc (mpich, libmpich-dev); the MPI check did not run"
fi
cluster_stop

# 2. --ml-parallel and --ml-spares at allocation (the topoml SPANK plugin's
# options, in the job's SPANK environment): get_rank gives the nodes in
# the order the engine publishes in order= (pipeline stages, spares last),
# so SLURM_PROCID follows it.  Spines of 2, 4 and 2 nodes (n1,n8 |
# n2,n6,n3,n7 | n4,n5); tp=2,pp=2 at 2 tasks a node makes stages of 4
# nodes: the ring puts each over two spines, the stage order one in spine2
# (spank/test_spank_parallel.sh part 3 has it with select/topoml).
. "$TESTS_DIR/spank/spank_lib.sh"
cluster_tmpdir work topo-rank-stages
cat >"$work/topology.conf" <<'TOPO'
SwitchName=leaf1 Nodes=n1,n8
SwitchName=leaf2 Nodes=n2,n6
SwitchName=leaf3 Nodes=n3,n7
SwitchName=leaf4 Nodes=n4,n5
SwitchName=spine1 Switches=leaf1
SwitchName=spine2 Switches=leaf[2-3]
SwitchName=spine3 Switches=leaf4
SwitchName=core Switches=spine[1-3]
TOPO
: >"$work/topoml.conf"
CLUSTER_SLURMD=8 CLUSTER_TOPOLOGY=$work/topology.conf \
	CLUSTER_TOPOLOGY_PLUGIN=topology/topoml \
	CLUSTER_TOPOML_CONF=$work/topoml.conf spank_start topo-rank-stages
cd "$work" || exit 1
sp() { case $1 in n1|n8) echo 1 ;; n4|n5) echo 3 ;; *) echo 2 ;; esac; }
lf() { case $1 in n1|n8) echo 1 ;; n2|n6) echo 2 ;; n3|n7) echo 3 ;;
	*) echo 4 ;; esac; }
# spines NODE...: how many spines the nodes span (none: the nodes on stdin)
spines() {
	local n
	{ [ $# -gt 0 ] && printf '%s\n' "$@" || cat; } |
		while read -r n; do sp "$n"; done | sort -u | wc -l
}
# The job: its SystemComment, then a step (WORKERS=1: on the nodes before
# the last 2 of order=, as topoml-run launches workers; --ml-parallel
# refuses a step on a spare) whose tasks print node and spares.
cat >job.sh <<'JOB'
#!/bin/bash
c=$(scontrol show job "$SLURM_JOB_ID" | sed -n 's/^ *SystemComment=//p')
echo "COMMENT $c"
x=()
if [ "${WORKERS:-0}" = 1 ]; then
	o=$(echo "$c" | tr ' ' '\n' | sed -n 's/^order=//p')
	x=(-N6 -n12 -x "$(scontrol show hostnames "$o" | tail -2 | paste -sd,)")
fi
exec srun -l "${x[@]}" bash -c 'echo $SLURMD_NODENAME ${TOPOML_SPARE_NODES:--}'
JOB
chmod 755 job.sh
# ranks TAG SALLOC-ARGS...: a -N8 job of 2 tasks a node; $tag.ids: the
# node of SLURM_PROCID 0-1, 2-3 ... (one a line), $tag.order: order=,
# $tag.spare: TOPOML_SPARE_NODES of task 0
ranks() {
	local tag=$1 n=8
	shift
	[ "${WORKERS:-0}" = 1 ] && n=6
	timeout 120 salloc -Q -N8 --ntasks-per-node=2 "$@" ./job.sh \
		>"$tag.out" 2>&1 || cluster_fail "$tag: $(cat "$tag.out")"
	grep -E '^ *[0-9]+: ' "$tag.out" | sort -n | awk '{ print $2 }' |
		uniq >"$tag.ids"
	grep -E '^ *0: ' "$tag.out" | awk '{ print $3 }' >"$tag.spare"
	scontrol show hostnames "$(sed -n 's/^COMMENT //p' "$tag.out" |
		tr ' ' '\n' | sed -n 's/^order=//p')" >"$tag.order"
	[ "$(wc -l <"$tag.ids")" = $n ] && [ "$(wc -l <"$tag.order")" = 8 ] ||
		cluster_fail "$tag: $n nodes of 2 tasks each: $(cat "$tag.out")"
	head -n $n "$tag.order" | cmp -s "$tag.ids" - ||
		cluster_fail "$tag: SLURM_PROCID on $(paste -sd' ' "$tag.ids")," \
			"order= $(paste -sd' ' "$tag.order")"
	echo "$tag: SLURM_PROCID 0,2,.. on $(paste -sd' ' "$tag.ids"):" \
		"order= $(paste -sd' ' "$tag.order")"
}
# stages TAG: of the 2 stages of 4 nodes in $tag.ids, those over 2+ spines
stages() {
	echo $(( ($(sed -n 1,4p "$1.ids" | spines) > 1) +
		 ($(sed -n 5,8p "$1.ids" | spines) > 1) ))
}
ranks ring
ranks stages --ml-parallel=tp=2,pp=2
[ "$(stages ring)" = 2 ] ||
	cluster_fail "the ring keeps a stage in one spine: no proof"
[ "$(stages stages)" = 1 ] && [ "$(sed -n 1,4p stages.ids | spines)" = 1 ] ||
	cluster_fail "--ml-parallel: SLURM_PROCID's first stage is not spine2"
echo "ok: --ml-parallel=tp=2,pp=2: SLURM_PROCID in stage order, one stage" \
	"over spines (the ring: both)"
ranks spares --ml-spares=2
mapfile -t o <spares.ids
[ "${o[6]},${o[7]}" = "$(cat spares.spare)" ] &&
	[ "$(lf "${o[6]}")" = "$(lf "${o[7]}")" ] ||
	cluster_fail "--ml-spares=2: SLURM_PROCID ends on ${o[6]},${o[7]}," \
		"the spares are $(cat spares.spare)"
cmp -s spares.ids ring.ids &&
	cluster_fail "--ml-spares=2: the spares are the ring's last: no proof"
echo "ok: --ml-spares=2: SLURM_PROCID 12-15 on the spares ${o[6]},${o[7]}" \
	"(the ring's $(head -2 ring.ids | paste -sd,) first)"
# Both: the workers' step (tp=2,pp=3 on 6 nodes) in stage order, each
# stage in one spine, the spares the last 2 of order=, one leaf.
WORKERS=1 ranks both --ml-spares=2 --ml-parallel=tp=2,pp=3
mapfile -t o <both.order
[ "${o[6]},${o[7]}" = "$(cat both.spare)" ] &&
	[ "$(lf "${o[6]}")" = "$(lf "${o[7]}")" ] ||
	cluster_fail "both: order= ${o[*]}, the spares $(cat both.spare)"
for s in 0 2 4; do
	[ "$(spines "${o[s]}" "${o[s + 1]}")" = 1 ] ||
		cluster_fail "both: stage $((s / 2)) of ${o[*]} over spines"
done
echo "ok: --ml-spares=2 --ml-parallel=tp=2,pp=3: the workers' SLURM_PROCID" \
	"in 3 stages each in one spine, spares ${o[6]},${o[7]} last"
echo "PASS: SLURM_PROCID follows the ring, the stages and spares of order="
