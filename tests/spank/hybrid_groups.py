#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hybrid-parallel groups as Megatron-LM builds them, on gloo (CPU).

hybrid_groups.py: run by srun with --ml-parallel on every task.  Reads
RANK, WORLD_SIZE, MASTER_ADDR/PORT and TOPOML_TP/PP/CP/DP from the
environment the SPANK plugin set, builds every tensor, data and pipeline
group with torch.distributed.new_group in Megatron-LM's default order
(tp-cp-ep-dp-pp: tensor parallel fastest, pipeline slowest), and finds
where each group landed with an all_reduce inside the group (each member
writes its node number at its rank).  The lowest rank of each group
prints one line:
    GROUP KIND RANKS NODES    e.g. "GROUP dp 0,2 n3,n3"
RANKS and NODES are in rank order.  Also checks that TOPOML_*_RANK agree
with the coordinates of RANK in that order.
"""
import datetime
import os
import re
import sys

import torch
import torch.distributed as dist

env = os.environ
RANK, WORLD = int(env["RANK"]), int(env["WORLD_SIZE"])
TP, PP = int(env["TOPOML_TP"]), int(env["TOPOML_PP"])
CP, DP = int(env["TOPOML_CP"]), int(env["TOPOML_DP"])
SIZES = {"tp": TP, "cp": CP, "dp": DP, "pp": PP}
ORDER = ["tp", "cp", "dp", "pp"]	# fastest first, as Megatron's default


def coords(rank):
    """Coordinates of rank, tensor parallel fastest."""
    out = {}
    for k in ORDER:
        out[k] = rank % SIZES[k]
        rank //= SIZES[k]
    return out


def rank_of(c):
    r, stride = 0, 1
    for k in ORDER:
        r += c[k] * stride
        stride *= SIZES[k]
    return r


def groups(kind):
    """Every group of one kind: ranks that differ only in that coordinate,
    in the order of that coordinate."""
    seen, out = set(), []
    for r in range(WORLD):
        c = coords(r)
        key = tuple(c[k] for k in ORDER if k != kind)
        if key in seen:
            continue
        seen.add(key)
        out.append([rank_of(dict(c, **{kind: i}))
                    for i in range(SIZES[kind])])
    return out


def fail(msg):
    print("HYBRID FAIL rank %d: %s" % (RANK, msg), flush=True)
    sys.exit(1)


if TP * CP * DP * PP != WORLD:
    fail("sizes %s do not multiply to WORLD_SIZE %d" % (SIZES, WORLD))
mine = coords(RANK)
for k in ORDER:
    got = int(env["TOPOML_%s_RANK" % k.upper()])
    if got != mine[k]:
        fail("TOPOML_%s_RANK=%d, Megatron's order gives %d"
             % (k.upper(), got, mine[k]))
node = int(re.sub(r"\D", "", env["SLURMD_NODENAME"]))

dist.init_process_group("gloo", rank=RANK, world_size=WORLD,
                        timeout=datetime.timedelta(seconds=120))
for kind in ("tp", "dp", "pp"):
    # Every rank creates every group, in the same order (new_group's rule).
    handles = [(g, dist.new_group(g)) for g in groups(kind)]
    for g, h in handles:
        if RANK not in g:
            continue
        v = torch.zeros(WORLD, dtype=torch.int64)
        v[RANK] = node
        dist.all_reduce(v, group=h)
        if RANK == g[0]:
            print("GROUP %s %s %s" % (kind, ",".join(map(str, g)),
                                      ",".join("n%d" % v[r] for r in g)),
                  flush=True)
dist.barrier()
dist.destroy_process_group()
