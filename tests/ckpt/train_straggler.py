#!/usr/bin/env python3
"""Real PyTorch DistributedDataParallel training (gloo, CPU) for the
straggler tests (test_ckpt_straggler.sh, test_ckpt_replace.sh): each
step's compute is a fixed
number of 2 ms slices (it advances only while the process runs, as real
compute does, without loading the test machine's CPUs), then a forward
and backward pass whose gradients DDP all-reduces.  topoml_ckpt times the
compute through its DDP communication hook (watch_ddp) and names a slow
node.

    srun train_straggler.py STEPS SLICES MARK_STEP RESULT_DIR

RESULT_DIR/pid.RANK: "NODE PID" of each rank (the test's fault injector
stops and continues the processes of one node); RESULT_DIR/at.MARK_STEP
appears once rank 0 finished step MARK_STEP; RESULT_DIR/done.JOBID has
rank 0's exchange count and cost (ms) at the end.  A run resumes from the
last checkpoint (model, optimizer, step), so a step relaunched by
topoml-run ends with an uninterrupted run's parameters: RESULT_DIR/final
(rank 0), RESULT_DIR/runs "start RELAUNCH from STEP t TIME nodes NODES"
per run.  The batch of a step is a function of the step and the rank.

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


def main():
    steps, slices = int(sys.argv[1]), int(sys.argv[2])
    mark, rdir = int(sys.argv[3]), sys.argv[4]
    env = os.environ
    rank = int(env["SLURM_PROCID"])
    world = int(env["SLURM_NTASKS"])
    job = env.get("SLURM_JOB_ID", "0")
    relaunch = int(env.get("TOPOML_RUN_RESTARTS", "0") or 0)
    with open(os.path.join(rdir, ".pid.%d" % rank), "w") as f:
        f.write("%s %d\n" % (env.get("SLURMD_NODENAME", "-"), os.getpid()))
    os.replace(os.path.join(rdir, ".pid.%d" % rank),
               os.path.join(rdir, "pid.%d" % rank))
    # A fresh port per run: the failed run's store may linger.
    port = 20000 + (int(job) * 37 + relaunch * 7) % 20000
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)

    def any_rank(flag):
        t = torch.tensor([int(flag)])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return int(t.item())

    ck = topoml_ckpt.Checkpointer(reduce=any_rank, last_step=steps)
    ck.watch_ddp(ddp)
    start = 1
    if ck.resume_path:
        st = torch.load(os.path.join(ck.resume_path, "m.pt"))
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        start = st["step"] + 1
    if rank == 0:
        with open(os.path.join(rdir, "runs"), "a") as f:
            f.write("start %d from %d t %.3f nodes %s\n" % (
                relaunch, start - 1, time.time(),
                env.get("TOPOML_WORKER_NODES", "-")))
    for step in range(start, steps + 1):
        for _ in range(slices):
            time.sleep(0.002)
        g = torch.Generator().manual_seed(step * 64 + rank)
        x = torch.randn(32, 16, generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x),
                                            torch.sin(x.sum(1, True)))
        loss.backward()
        opt.step()
        if ck.should_checkpoint(step) and rank == 0:
            with ck.save(step) as d:
                torch.save({"model": model.state_dict(),
                            "opt": opt.state_dict(), "step": step},
                           os.path.join(d, "m.pt"))
        if step == mark and rank == 0:
            open(os.path.join(rdir, "at.%d" % mark), "w").close()
    ck.finish()
    ck.close()
    if rank == 0:
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        with open(os.path.join(rdir, ".final"), "w") as f:
            f.write(" ".join(v.hex() for v in flat.tolist()) + "\n")
        os.replace(os.path.join(rdir, ".final"), os.path.join(rdir, "final"))
    dist.barrier()
    if rank == 0:
        with open(os.path.join(rdir, "done.%s" % job), "w") as f:
            f.write("steps %d exchanges %d first_exchange_ms %.3f "
                    "later_exchange_ms_mean %.3f\n" % (
                        steps, ck.exchanges, ck.exchange_first_s * 1e3,
                        ck.exchange_s * 1e3 / max(ck.exchanges - 1, 1)))
    sys.stdout.flush()
    sys.stderr.flush()
    # gloo's teardown hangs now and then at exit (torch 1.13).
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except SystemExit as e:
        # save() after the checkpoint that hands a straggler's place to a
        # spare (EXIT_REPLACE), or a stop warning: its status, no teardown.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(e.code if isinstance(e.code, int) else 1)
    except BaseException:  # noqa: B036 - a peer died, or a signal
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
