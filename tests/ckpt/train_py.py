#!/usr/bin/env python3
"""Training-like program for the checkpoint tests, the twin of train_c.c:
same state function, same checkpoint format, so each resumes the other.

    train_py.py STEPS SLEEP_MS [RESULT_DIR]

SPDX-License-Identifier: GPL-2.0-or-later
"""
import os
import sys
import time

sys.path.insert(0, os.environ.get("TOPOML_CKPT_PY", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib",
    "ckpt")))
import topoml_ckpt  # noqa: E402

M64 = (1 << 64) - 1


def advance(x, s, step):
    x ^= (x << 13) & M64
    x ^= x >> 7
    x ^= (x << 17) & M64
    x = (x + step) & M64
    s = (s * 31 + (x >> 40)) % 2305843009213693951
    return x, s


def append(rdir, name, line):
    if rdir:
        with open(os.path.join(rdir, name), "a") as f:
            f.write(line)


def main():
    steps, ms = int(sys.argv[1]), int(sys.argv[2])
    rdir = sys.argv[3] if len(sys.argv) > 3 else None
    restart = os.environ.get("TOPOML_RESTART_COUNT", "0") or "0"
    x, s, step = 0x9E3779B97F4A7C15, 0, 0
    ck = None
    if os.environ.get("TOPOML_CKPT_DIR"):
        ck = topoml_ckpt.Checkpointer()
        if ck.resume_path:
            with open(os.path.join(ck.resume_path, "state")) as f:
                a, b, c = f.read().split()
            step, x, s = int(a), int(b, 16), int(c, 16)
    line = "restart %s from %d\n" % (restart, step)
    append(rdir, "runs", line)
    print("start " + line, end="", flush=True)
    while step < steps:
        step += 1
        x, s = advance(x, s, step)
        if ms:
            time.sleep(ms / 1000.0)
        if ck and ck.should_checkpoint(step):
            d = ck.begin(step)
            with open(os.path.join(d, "state"), "w") as f:
                f.write("%d %x %x\n" % (step, x, s))
            rc = ck.commit()
            print("ckpt step=%d%s" % (step, " stop" if rc else ""),
                  flush=True)
            if rc == topoml_ckpt.STOP:
                append(rdir, "runs", "stop %s at %d\n" % (restart, step))
                return
    line = "final steps=%d state=%016x%016x\n" % (step, x, s)
    print(line, end="", flush=True)
    append(rdir, "result." + restart, line)
    if ck:
        ck.close()


if __name__ == "__main__":
    main()
