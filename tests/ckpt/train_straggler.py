#!/usr/bin/env python3
"""Real PyTorch DistributedDataParallel training (gloo, CPU) for the
straggler test (test_ckpt_straggler.sh): each step's compute is a fixed
number of 2 ms slices (it advances only while the process runs, as real
compute does, without loading the test machine's CPUs), then a forward
and backward pass whose gradients DDP all-reduces.  topoml_ckpt times the
compute through its DDP communication hook (watch_ddp) and names a slow
node.

    srun train_straggler.py STEPS SLICES MARK_STEP RESULT_DIR

RESULT_DIR/pid.RANK: "NODE PID" of each rank (the test's fault injector
stops and continues the processes of one node); RESULT_DIR/at.MARK_STEP
appears once rank 0 finished step MARK_STEP; RESULT_DIR/done.JOBID has
rank 0's exchange count and cost (ms) at the end.

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
    with open(os.path.join(rdir, "pid.%d" % rank), "w") as f:
        f.write("%s %d\n" % (env.get("SLURMD_NODENAME", "-"), os.getpid()))
    port = 20000 + int(job) * 37 % 20000
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

    ck = topoml_ckpt.Checkpointer(reduce=any_rank)
    ck.watch_ddp(ddp)
    for step in range(1, steps + 1):
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
                torch.save(model.state_dict(), os.path.join(d, "m.pt"))
        if step == mark and rank == 0:
            open(os.path.join(rdir, "at.%d" % mark), "w").close()
    ck.finish()
    ck.close()
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
    except BaseException:  # noqa: B036 - a peer died, or a signal
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
