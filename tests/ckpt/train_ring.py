#!/usr/bin/env python3
"""Data-parallel twin of train_py.py for the multi-node checkpoint test:
every rank advances the same state, the ranks run in lockstep through a
ring all-reduce per step (contrib/demo/ring.py), all ranks decide with
topoml_ckpt (reduce= through the ring, at `every` boundaries only), rank 0
writes the checkpoint.  Each rank logs the steps it checkpointed to
RESULT_DIR/ckpts.RESTART.RANK so the test can compare them.

    srun train_ring.py STEPS SLEEP_MS RESULT_DIR

SPDX-License-Identifier: GPL-2.0-or-later
"""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("TOPOML_CKPT_PY", here))
sys.path.insert(0, os.environ.get("TOPOML_RING_PY", here))
import topoml_ckpt  # noqa: E402
from ring import Ring  # noqa: E402
from train_py import advance  # noqa: E402


def main():
    steps, ms, rdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    env = os.environ
    rank = int(env.get("SLURM_PROCID", "0"))
    world = int(env.get("SLURM_NTASKS", "1"))
    restart = int(env.get("TOPOML_RESTART_COUNT", "0") or 0)
    port = 15000 + (int(env.get("SLURM_JOB_ID", "0")) * 7 + restart) % 20000
    ring = Ring(rank, world, "127.0.0.1", port)

    def any_rank(flag):
        return 1 if ring.allreduce([float(flag)])[0] > 0 else 0

    ck = topoml_ckpt.Checkpointer(reduce=any_rank)
    x, s, step = 0x9E3779B97F4A7C15, 0, 0
    if ck.resume_path:
        with open(os.path.join(ck.resume_path, "state")) as f:
            a, b, c = f.read().split()
        step, x, s = int(a), int(b, 16), int(c, 16)
    log = open(os.path.join(rdir, "ckpts.%d.%d" % (restart, rank)), "w")
    if rank == 0:
        with open(os.path.join(rdir, "runs"), "a") as f:
            f.write("restart %d from %d\n" % (restart, step))
    while step < steps:
        step += 1
        x, s = advance(x, s, step)
        ring.allreduce([1.0])           # the loop's own collective
        time.sleep(ms / 1000.0)
        if ck.should_checkpoint(step):
            log.write("%d\n" % step)
            log.flush()
            rc = 0
            if rank == 0:
                d = ck.begin(step)
                with open(os.path.join(d, "state"), "w") as f:
                    f.write("%d %x %x\n" % (step, x, s))
                rc = ck.commit()
            # Stop together once rank 0's commit answered the warning (the
            # plugin requeues on that): one more collective, on checkpoint
            # steps only.
            if any_rank(1 if rc else 0):
                if rank == 0:
                    with open(os.path.join(rdir, "runs"), "a") as f:
                        f.write("stop %d at %d\n" % (restart, step))
                return
    if rank == 0:
        with open(os.path.join(rdir, "result.%d" % restart), "w") as f:
            f.write("final steps=%d state=%016x%016x\n" % (step, x, s))
    ring.close()


if __name__ == "__main__":
    main()
