#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One training rendezvous per srun step at MASTER_ADDR:MASTER_PORT.

rdv.py SYNC_DIR TOTAL [torch|socket]

torch: torch.distributed with gloo (rank 0's TCPStore listens on
MASTER_PORT) and an all_reduce; socket: rank 0 listens on MASTER_PORT, the
other ranks connect and name their step, rank 0 accepts only its own.
Once its rendezvous is up, every rank writes SYNC_DIR/up.JOB.STEP.RANK and
waits until TOTAL ranks (of every concurrent step and job) are up, so all
rank-0 ports are held at the same time: a port two steps share fails one
of them (address in use) or mixes their ranks.  Prints one line:
"RDV JOB.STEP RANK PORT ok RESV_PORTS" (RESV_PORTS "-" when none).
"""
import os
import socket
import sys
import time

env = os.environ
ADDR, PORT = env["MASTER_ADDR"], int(env["MASTER_PORT"])
RANK, WORLD = int(env["RANK"]), int(env["WORLD_SIZE"])
ME = "%s.%s" % (env["SLURM_JOB_ID"], env["SLURM_STEP_ID"])
SYNC, TOTAL = sys.argv[1], int(sys.argv[2])
MODE = sys.argv[3] if len(sys.argv) > 3 else "socket"
DEADLINE = time.time() + 150


def fail(msg):
    print("RDV %s %d %d FAIL %s" % (ME, RANK, PORT, msg), flush=True)
    sys.exit(1)


def all_up():
    open(os.path.join(SYNC, "up.%s.%d" % (ME, RANK)), "w").close()
    while len([f for f in os.listdir(SYNC) if f.startswith("up.")]) < TOTAL:
        if time.time() > DEADLINE:
            fail("not all %d ranks came up" % TOTAL)
        time.sleep(0.1)


def by_torch():
    import datetime
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    all_up()
    t = torch.tensor([RANK + 1.0])
    dist.all_reduce(t)
    if int(t.item()) != WORLD * (WORLD + 1) // 2:
        fail("all_reduce gave %s" % t.item())
    names = [None] * WORLD
    dist.all_gather_object(names, ME)
    if any(n != ME for n in names):
        fail("ranks of other steps in this group: %s" % names)
    dist.barrier()
    dist.destroy_process_group()


def by_socket():
    if RANK == 0:
        s = socket.socket()
        # As torch's TCPStore: a closed earlier run's TIME_WAIT does not
        # block the port; two listeners at once still cannot share it.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((ADDR, PORT))
        except OSError as e:
            fail("bind %s:%d: %s" % (ADDR, PORT, e))
        s.listen(WORLD)
        s.settimeout(120)
        peers = []
        for _ in range(WORLD - 1):
            c, _ = s.accept()
            who = c.makefile().readline().split()
            if not who or who[0] != ME:
                fail("a rank of another step joined: %s" % who)
            peers.append(c)
        for c in peers:
            c.sendall(("ok %s\n" % ME).encode())
        all_up()
        for c in peers:
            c.close()
        s.close()
        return
    while True:
        try:
            c = socket.create_connection((ADDR, PORT), timeout=10)
            break
        except OSError:
            if time.time() > DEADLINE:
                fail("cannot reach %s:%d" % (ADDR, PORT))
            time.sleep(0.2)
    c.sendall(("%s %d\n" % (ME, RANK)).encode())
    ans = c.makefile().readline().split()
    if ans != ["ok", ME]:
        fail("rank 0 of another step answered: %s" % ans)
    all_up()
    c.close()


if MODE == "torch":
    by_torch()
else:
    by_socket()
print("RDV %s %d %d ok %s" % (ME, RANK, PORT,
                              env.get("SLURM_STEP_RESV_PORTS", "-")),
      flush=True)
