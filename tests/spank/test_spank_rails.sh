#!/bin/bash
# Rail-optimised fabrics (issue 14 item 4) on a real local cluster: with
# rails=yes on topoml.so's plugstack.conf line, every task of an
# --ml-nccl=auto step on the 2-HCA test node gets NCCL_CROSS_NIC=0 beside
# its own rail's HCA; the user's value stays; --ml-nccl=off sets nothing.
# SPDX-License-Identifier: GPL-2.0-or-later
. "${TESTS_DIR:-$(dirname "$0")/..}/spank/spank_lib.sh"

spank_start spank-rails "rails=yes"
out=$CLUSTER_DIR/out
cd "$CLUSTER_DIR" || exit 1

# 1. 2 nodes x 4 tasks: the usual wiring, and one rail per task.
timeout 60 srun -l -N2 --ntasks-per-node=4 --ml-gpu-bind=auto \
	--ml-nccl=auto bash -c "$SPANK_TASK" >"$out" 2>"$out.err" ||
	cluster_fail "srun failed: $(cat "$out.err")"
spank_check "$out" 2 4
for t in $(seq 0 7); do
	[ "$(spank_var "$out" "$t" NCCL_CROSS_NIC)" = 0 ] ||
		cluster_fail "task $t: NCCL_CROSS_NIC '$(spank_var "$out" "$t" NCCL_CROSS_NIC)', want 0"
done
echo "ok: 8 tasks NCCL_CROSS_NIC=0 beside their rail's NCCL_IB_HCA"

# 2. The user's own value is kept.
NCCL_CROSS_NIC=2 timeout 60 srun -l -N1 -n2 --ml-gpu-bind=auto \
	--ml-nccl=auto bash -c "$SPANK_TASK" >"$out" 2>&1 ||
	cluster_fail "srun: $(cat "$out")"
for t in 0 1; do
	[ "$(spank_var "$out" "$t" NCCL_CROSS_NIC)" = 2 ] ||
		cluster_fail "task $t: the user's NCCL_CROSS_NIC=2 replaced"
done
echo "ok: the user's NCCL_CROSS_NIC kept"

# 3. --ml-nccl=off: no NCCL variable at all.
timeout 60 srun -l -N1 -n2 --ml-nccl=off bash -c "$SPANK_TASK" \
	>"$out" 2>&1 || cluster_fail "srun: $(cat "$out")"
! grep -q '^ *[0-9]*: NCCL_CROSS_NIC=' "$out" ||
	cluster_fail "--ml-nccl=off set NCCL_CROSS_NIC"
echo "ok: --ml-nccl=off sets no NCCL_CROSS_NIC"
echo "PASS: rails=yes"
