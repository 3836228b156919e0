#!/usr/bin/env python3
"""Real PyTorch DistributedDataParallel training (gloo, CPU) for the hot
spare test (test_ckpt_spares.sh): every step trains one global batch of 360
samples (a function of the step only), each rank its slice (the
keep-global-batch rule of topoml_ckpt), so a run that loses a node and
resumes from the last checkpoint, on a spare or on fewer ranks, ends with
the parameters of an uninterrupted run (up to floating-point summation
order).

    srun train_ddp.py STEPS SLEEP_MS RESULT_DIR

RESULT_DIR/runs gets "start RELAUNCH from STEP world ... restart RESTART
nodes ..." per run (rank 0), RESULT_DIR/steps.RESTART.RELAUNCH the steps
rank 0 trained, RESULT_DIR/final the
parameters.  Rendezvous on 127.0.0.1: the test cluster's slurmd all run
on this host.  TRAIN_HOLD=STEP:PATH[,STEP:PATH...]: before step STEP
every rank waits until PATH exists, so that a job the test kills is
still training when its turn comes, however loaded the machine.

SPDX-License-Identifier: GPL-2.0-or-later
"""
import datetime
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.environ.get("TOPOML_CKPT_PY", os.path.dirname(
    os.path.abspath(__file__))))
import topoml_ckpt  # noqa: E402


GLOBAL_BATCH = 360    # splits over 2-6, 8, 9 or 10 ranks


def main():
    steps, ms, rdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    env = os.environ
    rank = int(env["SLURM_PROCID"])
    world = int(env["SLURM_NTASKS"])
    relaunch = int(env.get("TOPOML_RUN_RESTARTS", "0") or 0)
    restart = int(env.get("TOPOML_RESTART_COUNT", "0") or 0)
    # A fresh port per run: the failed run's store may linger.
    port = 20000 + (int(env.get("SLURM_JOB_ID", "0")) * 31 +
                    relaunch * 7 + restart * 3) % 20000
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=30))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)

    def any_rank(flag):
        t = torch.tensor([int(flag)])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return int(t.item())

    ck = topoml_ckpt.Checkpointer(reduce=any_rank)
    # Elastic resume, keep-the-global-batch rule: on fewer ranks each
    # takes a larger slice, so the averaged gradient is the same.
    per, accum = topoml_ckpt.keep_global_batch(GLOBAL_BATCH, world)
    assert accum == 1
    step = 0
    if ck.resume_path:
        st = torch.load(os.path.join(ck.resume_path, "state.pt"))
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step = st["step"]
    if rank == 0:
        with open(os.path.join(rdir, "runs"), "a") as f:
            f.write("start %d from %d world %d resume_world %d t %.2f "
                    "restart %d nodes %s\n" % (
                        relaunch, step, world, ck.resume_world_size,
                        time.time(), restart,
                        env.get("TOPOML_WORKER_NODES", "-")))
        log = open(os.path.join(rdir, "steps.%d.%d" % (restart, relaunch)),
                   "w")
    holds = {}
    for h in filter(None, env.get("TRAIN_HOLD", "").split(",")):
        hold_step, _, hold_path = h.partition(":")
        holds[int(hold_step)] = hold_path
    while step < steps:
        if step + 1 in holds:
            while not os.path.exists(holds[step + 1]):
                time.sleep(0.1)
        step += 1
        # This rank's slice of the step's global batch.
        g = torch.Generator().manual_seed(step)
        x = torch.randn(GLOBAL_BATCH, 16, generator=g)[
            rank * per:(rank + 1) * per]
        y = torch.sin(x.sum(1, keepdim=True))
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        if rank == 0:
            log.write("%d %.6f\n" % (step, loss.item()))
            log.flush()
        time.sleep(ms / 1000.0)
        if ck.should_checkpoint(step):
            if rank == 0:
                d = ck.begin(step)
                torch.save({"model": model.state_dict(),
                            "opt": opt.state_dict(), "step": step},
                           os.path.join(d, "state.pt"))
                ck.commit()
            dist.barrier()
    if rank == 0:
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        with open(os.path.join(rdir, "final"), "w") as f:
            f.write(" ".join("%.9g" % v for v in flat.tolist()) + "\n")
    ck.close()
    dist.barrier()
    if rank == 0:
        log.close()
    # All ranks are done: leave without gloo's teardown, which now and
    # then hangs at exit (torch 1.13) and keeps the step running.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: B036 - a peer died, or a signal
        # Leave at once: a rank stuck in gloo's teardown keeps its
        # sockets open, so its peers wait for their timeout, and
        # topoml_ckpt takes SIGTERM as a stop warning, so the step ends
        # only at KillWait.  srun --kill-on-bad-exit ends the others.
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
