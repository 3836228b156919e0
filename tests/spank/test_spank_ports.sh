#!/bin/bash
# MASTER_PORT per step: two concurrent steps of one job, and two concurrent
# jobs on one master node, each really rendezvous on its own port (PyTorch
# gloo when python3-torch is installed, else a TCP rendezvous on
# MASTER_PORT, tests/spank/rdv.py), as an unprivileged user.
#  A. without reserved ports: the site range formula (step 0 as before,
#     other steps elsewhere);
#  B. with MpiParams=ports= in slurm.conf and a one-port master_port range:
#     only Slurm's reserved ports (SLURM_STEP_RESV_PORTS) can keep the
#     rendezvous apart, and they do.
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

U=topomlports
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: no $PY"; exit 77; }
# RDV_MODE=socket forces the TCP rendezvous.
mode=socket
[ "${RDV_MODE:-}" != socket ] &&
	$PY -c 'import torch.distributed as d; assert d.is_gloo_available()' \
	2>/dev/null && mode=torch
CLUSTER_PARTITION_EXTRA="" spank_start spank-ports
cluster_user $U
cd "$CLUSTER_DIR" || exit 1
cp "${TESTS_DIR:-$(dirname "$0")/..}/spank/rdv.py" "$CLUSTER_DIR/rdv.py"
chmod 755 "$CLUSTER_DIR/rdv.py"
echo "rendezvous: $mode"

as_user() {
	runuser -u $U -- env SLURM_CONF="$SLURM_CONF" GLOO_SOCKET_IFNAME=lo \
		"$@"
}

# A sync directory the user's tasks share.
new_sync() {
	sync=$(mktemp -d "$CLUSTER_DIR/sync.XXXXXX")
	chmod 777 "$sync"
}

# steps TAG: one job on n1, two concurrent 2-task steps.
steps() {
	new_sync
	as_user timeout 300 salloc -Q -w n1 -N1 -n4 bash -c "
		srun -n2 --exact --ml-nccl=auto $PY rdv.py $sync 4 $mode &
		srun -n2 --exact --ml-nccl=auto $PY rdv.py $sync 4 $mode &
		wait" >"$CLUSTER_DIR/$1" 2>&1 ||
		cluster_fail "$1: two steps of one job: $(cat "$CLUSTER_DIR/$1")"
}

# jobs TAG: two concurrent jobs sharing n1 (their master node).
jobs2() {
	local p1 p2
	new_sync
	as_user timeout 300 salloc -Q -w n1 -N1 -n2 \
		srun --ml-nccl=auto $PY rdv.py "$sync" 4 $mode \
		>"$CLUSTER_DIR/$1.a" 2>&1 &
	p1=$!
	as_user timeout 300 salloc -Q -w n1 -N1 -n2 \
		srun --ml-nccl=auto $PY rdv.py "$sync" 4 $mode \
		>"$CLUSTER_DIR/$1.b" 2>&1 &
	p2=$!
	wait $p1 || cluster_fail "$1: first job: $(cat "$CLUSTER_DIR/$1.a")"
	wait $p2 || cluster_fail "$1: second job: $(cat "$CLUSTER_DIR/$1.b")"
	cat "$CLUSTER_DIR/$1.a" "$CLUSTER_DIR/$1.b" >"$CLUSTER_DIR/$1"
}

# check TAG: 4 ranks up in 2 rendezvous (2 ranks each, one port each),
# the two ports differ.  Writes "STEP PORT RESV" per rendezvous to
# $CLUSTER_DIR/TAG.groups.
check() {
	local f=$CLUSTER_DIR/$1 n
	n=$(grep -c '^RDV .* ok ' "$f")
	[ "$n" = 4 ] || cluster_fail "$1: $n of 4 ranks rendezvoused: $(cat "$f")"
	awk '/^RDV .* ok /{print $2, $4, $6}' "$f" | sort -u >"$f.groups"
	[ "$(wc -l <"$f.groups")" = 2 ] ||
		cluster_fail "$1: ranks of a step disagree: $(cat "$f.groups")"
	[ "$(cut -d' ' -f2 "$f.groups" | sort -u | wc -l)" = 2 ] ||
		cluster_fail "$1: both rendezvous on one port: $(cat "$f.groups")"
}

# A. The formula: LO + (job + step * 61) mod 100 for master_port=29500-29599.
steps a_steps
check a_steps
while read -r id port resv; do
	job=${id%.*} step=${id#*.}
	want=$((29500 + (job % 100 + step * 61) % 100))
	[ "$port" = $want ] && [ "$resv" = - ] ||
		cluster_fail "A: step $id: port $port (reserved $resv), want $want"
done <"$CLUSTER_DIR/a_steps.groups"
echo "ok: two concurrent steps of one job, own ports ($mode)"
jobs2 a_jobs
check a_jobs
while read -r id port resv; do
	[ "$port" = $((29500 + ${id%.*} % 100)) ] ||
		cluster_fail "A: job step $id: port $port"
done <"$CLUSTER_DIR/a_jobs.groups"
echo "ok: two concurrent jobs on one master node, own ports"

# B. Slurm's reserved ports, from a range only this cluster uses (its port
# slot), and a master_port range of one port.
lo=$((CLUSTER_PORT + 32))
hi=$((CLUSTER_PORT + 63))
echo "MpiParams=ports=$lo-$hi" >>"$SLURM_CONF"
sed -i 's/master_port=[0-9-]*/master_port=29500-29500/' \
	"$CLUSTER_DIR/plugstack.conf"
cluster_restart_ctld
for n in n1 n2; do
	cluster_slurmd_stop $n
	cluster_slurmd_start $n
done
cluster_wait_idle
for t in b_steps b_jobs; do
	if [ $t = b_steps ]; then steps $t; else jobs2 $t; fi
	check $t
	while read -r id port resv; do
		[ "$resv" != - ] && [ "$port" = "$(echo "$resv" |
			sed 's/[^0-9].*//')" ] &&
			[ "$port" -ge $lo ] && [ "$port" -le $hi ] ||
			cluster_fail "B $t: step $id: port $port, reserved $resv"
	done <"$CLUSTER_DIR/$t.groups"
done
echo "ok: with MpiParams=ports, the first reserved port of each step"
echo "PASS: MASTER_PORT per step"
