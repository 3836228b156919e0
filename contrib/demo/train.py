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
import json
import os
import random
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
# topoml_ckpt.py: beside the source tree's demo, or as installed
for _d in (os.path.join(_here, "..", "ckpt"),
           os.path.join(_here, "..", "python")):
    sys.path.insert(0, _d)

from ring import Ring  # noqa: E402

try:
    import topoml_ckpt  # contrib/ckpt/topoml_ckpt.py
except ImportError:  # installed without contrib/ckpt
    topoml_ckpt = None

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
    print("rank %d of %d on %s" % (rank, world,
                                   env.get("SLURMD_NODENAME", "local")),
          flush=True)
    data = shard(rank, world)
    w, step = [0.0] * DIM, 0

    # The checkpoint hook: every rank asks on every step (free); the ranks
    # agree through the ring at `every` boundaries only.
    ck = None
    if topoml_ckpt and env.get("TOPOML_CKPT_DIR"):
        ck = topoml_ckpt.Checkpointer(
            reduce=lambda flag: ring.allreduce([float(flag)])[0] > 0,
            exit_on_stop=False)
        if ck.resume_path:
            with open(os.path.join(ck.resume_path, "state.json")) as f:
                state = json.load(f)
            w, step = state["w"], state["step"]
            if rank == 0:
                print("resumed at step %d from %s" % (step, ck.resume_path),
                      flush=True)

    while step < args.steps:
        g, loss = gradient(w, data)
        total = ring.allreduce(g + [loss])
        g = [v / world for v in total[:DIM]]
        w = [a - args.lr * b for a, b in zip(w, g)]
        step += 1
        if rank == 0 and (step % 50 == 0 or step == args.steps):
            print("step %d loss %.6f" % (step, total[DIM] / world),
                  flush=True)
        if ck and ck.should_checkpoint(step):
            if rank == 0:   # the model is replicated: one rank writes it
                d = ck.begin(step)
                with open(os.path.join(d, "state.json"), "w") as f:
                    json.dump({"step": step, "w": w}, f)
                ck.commit()
            # A stop warning (time limit, requeue, preemption) seen on any
            # node stops every rank right after this checkpoint.
            if ring.allreduce([float(ck.stopping())])[0] > 0:
                if rank == 0:
                    print("stopping after checkpoint %d" % step, flush=True)
                ring.close()
                return
    ring.close()
    if rank == 0:
        print("final loss %.6f over %d ranks (%s)" %
              (total[DIM] / world, world,
               env.get("SLURM_JOB_NODELIST", "local")), flush=True)
        print("final weights %s" % " ".join("%.6f" % v for v in w),
              flush=True)

if __name__ == "__main__":
    main()
