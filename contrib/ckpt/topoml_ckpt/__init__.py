"""topoml checkpoint hook for Python training loops (PyTorch or plain).

Pure Python twin of libtopoml-ckpt (contrib/ckpt/topoml_ckpt.h): same
environment (exported by the topoml SPANK plugin for --ml-ckpt), same
per-node shared page (mmap of TOPOML_CKPT_PAGE), same directory layout, so
C and Python programs can resume each other's checkpoints.

    with topoml_ckpt.Checkpointer(last_step=nsteps) as ck:
        start = ck.resume_step + 1 if ck.resume_path else 1  # load resume_path
        for step in range(start, nsteps + 1):
            train_step()
            if ck.should_checkpoint(step):
                with ck.save(step) as d:
                    torch.save(model.state_dict(), d + "/model.pt")

After a checkpoint that answers a stop warning (time limit ahead, requeue,
preemption) save() exits the process (exit_on_stop=True), the job is
requeued and the next run starts from TOPOML_RESUME.  Leaving the `with`
block normally (or finish()) tells the plugin that the loop is over, so a
warning that lands on the last steps does not requeue a finished job.

Several ranks: save() is for rank 0 only, unless every rank passes
shards=True, in which case every rank calls save(step), writes its own
files into the same directory, and rank 0 commits once all of them are
complete.  See topoml-ckpt(7).

SPDX-License-Identifier: GPL-2.0-or-later
"""

import atexit
import contextlib
import fcntl
import json
import mmap
import os
import socket
import stat
import shutil
import signal
import struct
import sys
import threading
import time
from types import FrameType, TracebackType
from typing import (Any, Callable, Dict, Iterator, List, Optional,
                    Sequence, Tuple, Type)

__all__ = ["Checkpointer", "EXIT_REPLACE", "REPLACE_REQUEST", "STOP",
           "StaleRun", "StragglerDetector", "__version__", "scale_lr",
           "keep_global_batch"]

#: Version of topoml this module belongs to.
__version__ = "0.1.0"

#: commit() result: the checkpoint answered a stop warning; exit.
STOP = 1

#: save()'s exit status after the checkpoint that hands a straggler's
#: place to a spare (EX_TEMPFAIL: run again).
EXIT_REPLACE = 75

#: File of the checkpoint directory that asks topoml-run to put a spare
#: in a straggler's place: "node=N", "step=S" (the checkpoint to resume
#: from), "ranks=", "job=" lines, written by rank 0's commit of that
#: step just before `latest` moves to it.
REPLACE_REQUEST = "replace-request"

PAGE_MAGIC = 0x4b43504c4d4f5054
PAGE_VERSION = 1
PAGE_SIZE = 4096
PAGE_PIDS = 64
R_INTERVAL, R_REQUEST, R_LIMIT, R_TERM = 0x1, 0x2, 0x4, 0x8
R_STOP = R_LIMIT | R_TERM

# Offsets of struct topoml_ckpt_page (spank/ckpt/topoml_ckpt_page.h).
_MAGIC, _VERSION, _GEN, _REASON, _REQUEUED = 0, 8, 16, 24, 28
_TARGET_STEP, _TARGET_GEN, _COMMIT_STEP, _COMMIT_TIME = 32, 40, 48, 56
_COMMIT_GEN, _COMMIT_REASON, _START_TIME = 64, 72, 80
_INTERVAL_TIME, _NPIDS, _PIDS = 96, 104, 112
_FINISHED = 496

# How often shard waits look at the directory (seconds).
_SHARD_POLL = 0.02


class StaleRun(OSError):
    """A newer run of the job owns the checkpoint directory."""


def _env_int(name: str, default: int, maximum: int) -> int:
    s = os.environ.get(name, "")
    if not s:
        return default
    try:
        v = int(s, 10)
    except ValueError:
        v = -1
    if v < 0 or v > maximum:
        raise ValueError("%s=%r: expected an integer 0..%d"
                         % (name, s, maximum))
    return v


def _read_latest(directory: str) -> Tuple[int, Optional[str]]:
    """(step, path) of DIR/latest, or (-1, None)."""
    try:
        link = os.readlink(os.path.join(directory, "latest"))
    except OSError:
        return -1, None
    if not link.startswith("step-") or "/" in link:
        return -1, None
    try:
        step = int(link[5:], 10)
    except ValueError:
        return -1, None
    path = os.path.join(directory, link)
    if step < 0 or not os.path.isdir(path):
        return -1, None
    return step, path


def _read_epoch_job(directory: str) -> Tuple[int, int]:
    """DIR/epoch, "RESTART JOB": (restart count, job id whose run DIR
    holds, 0 unrecorded); (-1, 0) when absent."""
    # The same rule as the C layout: a regular file of ours, never a
    # symlink, never a FIFO that would block.
    try:
        fd = os.open(os.path.join(directory, "epoch"),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return -1, 0
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return -1, 0
        words = os.read(fd, 64).split()
        restart = int(words[0]) if words else -1
        job = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        return restart, job
    except (OSError, ValueError):
        return -1, 0
    finally:
        os.close(fd)


def _read_epoch(directory: str) -> int:
    return _read_epoch_job(directory)[0]


def _write_epoch(directory: str, restart: int) -> None:
    # The job recorded stays: the plugin alone says whose run DIR holds.
    cur, job = _read_epoch_job(directory)
    if cur >= restart:
        return
    tmp = os.path.join(directory, ".epoch.%d" % os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, (b"%d %d\n" % (restart, job)) if job else
                     b"%d\n" % restart)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(directory, "epoch"))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _fsync_path(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(top: str) -> None:
    for root, dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                _fsync_path(p)
        for name in dirs:
            _fsync_path(os.path.join(root, name), True)
    _fsync_path(top, True)


#: File of a checkpoint directory with what the helper knows of the run
#: that wrote it ("world_size=N" lines); the training files are the user's.
META = ".topoml-meta"


def _write_meta(directory: str, world_size: int) -> None:
    with open(os.path.join(directory, META), "w") as f:
        f.write("world_size=%d\n" % world_size)


def _resume_world_size(path: Optional[str]) -> int:
    """TOPOML_RESUME_WORLD_SIZE, else the checkpoint's META, else -1."""
    s = os.environ.get("TOPOML_RESUME_WORLD_SIZE", "")
    if s.isdigit() and int(s) > 0:
        return int(s)
    if not path:
        return -1
    try:
        with open(os.path.join(path, META)) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k == "world_size" and v.isdigit() and int(v) > 0:
                    return int(v)
    except OSError:
        pass
    return -1


def scale_lr(lr: float, world_size: int, ref_world_size: int) -> float:
    """Linear scaling rule: the learning rate follows the world size
    (the global batch grows with it).  lr was tuned for ref_world_size
    ranks (e.g. Checkpointer.resume_world_size); unknown (<= 0): lr."""
    if ref_world_size <= 0 or world_size <= 0:
        return lr
    return lr * world_size / ref_world_size


def keep_global_batch(global_batch: int, world_size: int,
                      max_per_rank: Optional[int] = None
                      ) -> Tuple[int, int]:
    """Keep the global batch on another world size: (per-rank batch,
    gradient accumulation steps) with per_rank * accum * world_size ==
    global_batch; accumulation grows only where the per-rank batch would
    exceed max_per_rank.  ValueError when no such split exists."""
    if world_size <= 0 or global_batch <= 0 or global_batch % world_size:
        raise ValueError("global batch %d cannot be split over %d ranks"
                         % (global_batch, world_size))
    per = global_batch // world_size
    accum = 1
    while max_per_rank and per > max_per_rank:
        d = next((k for k in range(2, per + 1) if per % k == 0), per)
        per //= d
        accum *= d
    return per, accum


def _env_rank() -> Tuple[int, int]:
    """(rank, world size) from torch.distributed's or Slurm's variables."""
    env = os.environ
    rank = env.get("RANK") or env.get("SLURM_PROCID") or "0"
    world = env.get("WORLD_SIZE") or env.get("SLURM_NTASKS") or "1"
    try:
        return int(rank, 10), int(world, 10)
    except ValueError:
        return 0, 1


# A collective's worker thread (gloo's) may still hold the last reference
# to the tensor that reduce() made when the program ends, for a moment
# after the collective returned.  Dropping it needs the GIL; during the
# interpreter's teardown the thread is then ended inside C++ code and the
# process aborts ("terminate called without an active exception", exit
# 134) after a complete training.  So once reduce() ran, the exit first
# lets such threads run while Python still does: a short sleep releases
# the GIL.
_SETTLE_S = 0.2
_settle = {"armed": False}


def _settle_collectives() -> None:
    if _settle["armed"]:
        _settle["armed"] = False
        time.sleep(_SETTLE_S)


def _arm_settle() -> None:
    if not _settle["armed"]:
        _settle["armed"] = True
        atexit.unregister(_settle_collectives)
        atexit.register(_settle_collectives)


def _env_float(name: str, default: float, minimum: float) -> float:
    s = os.environ.get(name, "")
    if not s:
        return default
    try:
        v = float(s)
    except ValueError:
        v = minimum - 1
    if not v >= minimum or v != v or v == float("inf"):
        raise ValueError("%s=%r: expected a number >= %g"
                         % (name, s, minimum))
    return v


def _median(v: Sequence[float]) -> float:
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


class StragglerDetector:
    """Rank 0's side of straggler detection: one summary per rank and
    window of steps in, the nodes to name out.

    A window's summary of a rank is (node, rank, mean compute seconds per
    step, steps counted).  A node's value is the median of its ranks'; the
    job's is the median over all ranks.  A node whose median ratio to the
    job's median, over the windows that span its last `window` steps, is
    >= threshold is named once (add() returns it): the median lets one
    noisy window neither name a node nor hide one.  The job's median
    needs three nodes or more to mean anything: with two, each is the
    other's reference.
    """

    def __init__(self, threshold: float = 1.2, window: int = 50) -> None:
        self.threshold = threshold
        self.window = window
        # node: [(first step, last step, ratio)] spanning >= window steps
        self._hist: Dict[str, List[Tuple[int, int, float]]] = {}
        self.named: Dict[str, Dict[str, Any]] = {}

    def add(self, first_step: int, last_step: int,
            summaries: Sequence[Tuple[str, int, float, int]]
            ) -> List[Dict[str, Any]]:
        """The summaries of steps first_step..last_step; returns the
        findings (dicts) of nodes named by this window."""
        ranks: Dict[str, List[int]] = {}
        vals: Dict[str, List[float]] = {}
        allv = []
        for node, rank, mean, n in summaries:
            ranks.setdefault(node, []).append(rank)
            if n > 0 and mean > 0:
                vals.setdefault(node, []).append(mean)
                allv.append(mean)
        found: List[Dict[str, Any]] = []
        if len(vals) < 2 or not allv:
            return found
        job = _median(allv)
        for node in sorted(vals):
            h = self._hist.setdefault(node, [])
            h.append((first_step, last_step, _median(vals[node]) / job))
            while len(h) > 1 and last_step - h[1][0] + 1 >= self.window:
                h.pop(0)
            if node in self.named or last_step - h[0][0] + 1 < self.window:
                continue
            ratio = _median([r for _, _, r in h])
            if ratio < self.threshold:
                continue
            since = next(a for a, _, r in h if r >= self.threshold)
            f = {"event": "straggler", "node": node,
                 "ranks": sorted(ranks[node]),
                 "ratio": round(ratio, 3),
                 "since_step": since, "step": last_step,
                 "node_compute_ms": round(_median(vals[node]) * 1e3, 3),
                 "job_compute_ms": round(job * 1e3, 3),
                 "threshold": self.threshold, "window": self.window}
            self.named[node] = f
            found.append(f)
        return found


def straggler_message(f: Dict[str, Any]) -> str:
    """The line a finding prints in the job's output."""
    return ("topoml: straggler: node %s (ranks %s) %.2fx the job's median "
            "compute time since step %d"
            % (f["node"], ",".join(str(r) for r in f["ranks"]),
               f["ratio"], f["since_step"]))


class _TorchGather:
    """gather() over torch.distributed: the node names travel once
    (all_gather_object), then each summary is one all_gather of three
    float64 per rank."""

    def __init__(self) -> None:
        self.nodes: Optional[List[object]] = None

    def __call__(self, row: object) -> List[object]:
        import torch  # only where the job uses it
        import torch.distributed as dist
        node, rank, mean, n = row  # type: ignore[misc]
        world = dist.get_world_size()
        if self.nodes is None:
            self.nodes = [None] * world
            dist.all_gather_object(self.nodes, node)
        mine = torch.tensor([float(rank), float(mean), float(n)],
                            dtype=torch.float64)
        out = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(out, mine)
        return [(self.nodes[i], int(t[0]), float(t[1]), int(t[2]))
                for i, t in enumerate(out)]


class Checkpointer:
    """The checkpoint hook of one process (rank).

    Arguments override the environment the plugin exports
    (TOPOML_CKPT_DIR, _EVERY, _INTERVAL, _KEEP).  reduce(flag) must return
    the maximum of flag over all ranks (e.g. a one-element all_reduce MAX);
    it is called at `every` boundaries only and makes the decision exact
    across nodes.  exit_on_stop: save() exits the process after a
    checkpoint that answers a stop warning.  signals: take SIGTERM/SIGUSR1
    where the program left them at their default.  last_step: the loop's
    last step; a commit of it marks the job finished (never requeued, see
    finish()).  shards: every rank calls save() for the same steps and
    writes its own files; rank 0 commits once every shard is complete
    (rank and world_size default to RANK/WORLD_SIZE or
    SLURM_PROCID/SLURM_NTASKS; shard_timeout bounds the waits, seconds).

    Stragglers: gather(obj) must return the list of every rank's obj
    (torch.distributed.all_gather_object; watch_ddp() supplies it).  Then
    each rank times its compute per step, from the end of
    should_checkpoint() to mark_compute_done() (called by the DDP
    communication hook watch_ddp() installs, or by the loop), every
    straggler_every steps (TOPOML_STRAGGLER_EVERY, 20; 0 off) the ranks
    exchange their means and rank 0 names a node whose compute stays at
    straggler_threshold (TOPOML_STRAGGLER_THRESHOLD, 1.2) times the
    job's median or more for straggler_window steps
    (TOPOML_STRAGGLER_WINDOW, 50): one line on stderr and a JSON line
    appended to health_report (TOPOML_HEALTH_REPORT, DIR/health.jsonl).
    With TOPOML_STRAGGLER_POLICY=replace (topoml-run --on-straggler=
    replace sets it while a spare is left) every rank runs the same
    detection on the same all-gathered summaries, so all of them know at
    the same exchange step: should_checkpoint() is True there on every
    rank, the commit writes DIR/replace-request and returns STOP, and
    save() exits with EXIT_REPLACE; topoml-run relaunches the step with
    a spare in the straggler's place, from that checkpoint.
    """

    #: The checkpoint directory of the job (absolute).
    dir: str
    #: Latest complete checkpoint when the hook was opened: its step and
    #: path, -1 and None on a first start.
    resume_step: int
    resume_path: Optional[str]

    def __init__(self, directory: Optional[str] = None,
                 every: Optional[int] = None,
                 interval: Optional[int] = None,
                 keep: Optional[int] = None,
                 reduce: Optional[Callable[[int], object]] = None,
                 exit_on_stop: bool = True, signals: bool = True,
                 last_step: Optional[int] = None, shards: bool = False,
                 rank: Optional[int] = None,
                 world_size: Optional[int] = None,
                 shard_timeout: Optional[float] = None,
                 gather: Optional[Callable[[object], Sequence[object]]]
                 = None,
                 straggler_every: Optional[int] = None,
                 straggler_threshold: Optional[float] = None,
                 straggler_window: Optional[int] = None,
                 health_report: Optional[str] = None) -> None:
        env = os.environ
        directory = directory or env.get("TOPOML_CKPT_DIR", "")
        if not directory:
            raise ValueError("no checkpoint directory (TOPOML_CKPT_DIR is "
                             "not set: run with --ml-ckpt)")
        self.dir = os.path.abspath(directory)
        self.every = (every if every is not None else
                      _env_int("TOPOML_CKPT_EVERY", 0, 1 << 62))
        self.interval = (interval if interval is not None else
                         _env_int("TOPOML_CKPT_INTERVAL", 0, 365 * 86400))
        self.keep = (keep if keep is not None else
                     _env_int("TOPOML_CKPT_KEEP", 3, 100000))
        self.restart = _env_int("TOPOML_RESTART_COUNT", 0, 1 << 31)
        self.reduce = reduce
        self.exit_on_stop = exit_on_stop
        self.last_step = (last_step if last_step is not None and
                          last_step >= 0 else -1)
        env_rank, env_world = _env_rank()
        self.rank = env_rank if rank is None else rank
        self.world_size = env_world if world_size is None else world_size
        if not 0 <= self.rank < max(self.world_size, 1):
            raise ValueError("rank %d of %d ranks" % (self.rank,
                                                      self.world_size))
        self.shards = bool(shards) and self.world_size > 1
        self.shard_timeout = (float(shard_timeout)
                              if shard_timeout is not None else
                              float(_env_int("TOPOML_CKPT_SHARD_TIMEOUT",
                                             600, 365 * 86400)))
        os.makedirs(self.dir, exist_ok=True)
        if not os.access(self.dir, os.W_OK | os.X_OK):
            raise PermissionError("%s: not writable" % self.dir)
        self._fd = -1
        page = env.get("TOPOML_CKPT_PAGE", "")
        if page:
            self._fd = os.open(page, os.O_RDWR)
            if os.fstat(self._fd).st_size < PAGE_SIZE:
                raise ValueError("TOPOML_CKPT_PAGE=%s: too small" % page)
            self._page = mmap.mmap(self._fd, PAGE_SIZE)
            magic, version = struct.unpack_from("<QI", self._page, 0)
            if magic != PAGE_MAGIC or version != PAGE_VERSION:
                raise ValueError("TOPOML_CKPT_PAGE=%s: not a topoml "
                                 "checkpoint page" % page)
        else:
            self._page = mmap.mmap(-1, PAGE_SIZE)
            struct.pack_into("<QII", self._page, 0, PAGE_MAGIC,
                             PAGE_VERSION, PAGE_SIZE)
            self._put("q", _TARGET_STEP, -1)
            self._put("q", _COMMIT_STEP, -1)
            self._put("q", _START_TIME, int(time.time()))
        self.resume_step, self.resume_path = _read_latest(self.dir)
        #: World size the resumed checkpoint was written with, -1 unknown
        #: (a first start, or a checkpoint of an older helper).
        self.resume_world_size = _resume_world_size(self.resume_path)
        if self.restart > 0:
            _write_epoch(self.dir, self.restart)
        self._seen = 0
        self._pending = -1
        self._sig = 0
        self._cstep = -1
        self._tmp: Optional[str] = None
        self._old_signals: Dict[int, object] = {}
        with self._locked():
            n = self._get("i", _NPIDS)
            if 0 <= n < PAGE_PIDS:
                self._put("i", _PIDS + 4 * n, os.getpid())
                self._put("i", _NPIDS, n + 1)
        if signals and env.get("TOPOML_CKPT_SIGNALS", "1") != "0":
            self._install_signals()
        # Straggler timing: on once a gather function is known.
        self._gather = gather
        self.straggler_every = (
            straggler_every if straggler_every is not None else
            _env_int("TOPOML_STRAGGLER_EVERY", 20, 1 << 30))
        self.detector = StragglerDetector(
            straggler_threshold if straggler_threshold is not None else
            _env_float("TOPOML_STRAGGLER_THRESHOLD", 1.2, 1.0),
            straggler_window if straggler_window is not None else
            _env_int("TOPOML_STRAGGLER_WINDOW", 50, 1 << 30))
        policy = env.get("TOPOML_STRAGGLER_POLICY", "") or "report"
        if policy not in ("report", "replace"):
            raise ValueError("TOPOML_STRAGGLER_POLICY=%r: expected report "
                             "or replace" % policy)
        #: "replace": a straggler named ends the step at a checkpoint
        #: (topoml-run puts a spare in its place); "report": named only.
        self.straggler_policy = policy
        #: The finding that ends this step (policy replace), else None.
        self.replacing: Optional[Dict[str, Any]] = None
        self.health_report = (health_report or
                              env.get("TOPOML_HEALTH_REPORT") or
                              os.path.join(self.dir, "health.jsonl"))
        self.node = env.get("SLURMD_NODENAME") or socket.gethostname()
        #: Straggler exchanges made and the seconds they took (this rank;
        #: the first, which also sends the node names, apart).
        self.exchanges = 0
        self.exchange_s = 0.0
        self.exchange_first_s = 0.0
        self._t_start = 0
        self._t_mark = 0
        self._t_sum = 0
        self._t_n = 0
        self._t_first = -1
        self._x_last = -1
        self._timer: Optional[threading.Thread] = None
        if self._fd < 0 and self.interval > 0:
            self._stop_timer = threading.Event()
            self._timer = threading.Thread(target=self._interval_timer,
                                           daemon=True)
            self._timer.start()

    # -- page access ---------------------------------------------------
    def _get(self, fmt: str, off: int) -> int:
        return struct.unpack_from("<" + fmt, self._page, off)[0]

    def _put(self, fmt: str, off: int, value: int) -> None:
        struct.pack_into("<" + fmt, self._page, off, value)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if self._fd >= 0:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _raise_event(self, why: int) -> None:
        with self._locked():
            self._put("I", _REASON, self._get("I", _REASON) | why)
            self._put("Q", _GEN, self._get("Q", _GEN) + 1)

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, why in ((signal.SIGTERM, R_TERM),
                         (signal.SIGUSR1, R_REQUEST)):
            if signal.getsignal(sig) == signal.SIG_DFL:
                self._old_signals[sig] = signal.signal(
                    sig, self._make_handler(why))

    def _make_handler(self, why: int
                      ) -> Callable[[int, Optional[FrameType]], None]:
        def handler(signum: int, frame: Optional[FrameType]) -> None:
            self._sig |= why
        return handler

    def _interval_timer(self) -> None:
        while not self._stop_timer.wait(0.1):
            now = int(time.time())
            base = max(self._get("q", _COMMIT_TIME),
                       self._get("q", _INTERVAL_TIME),
                       self._get("q", _START_TIME))
            if now - base >= self.interval:
                self._put("q", _INTERVAL_TIME, now)
                self._raise_event(R_INTERVAL)

    def finish(self) -> None:
        """The training loop is over: the plugin must not requeue the job
        (a stop warning near the end would otherwise restart it with no
        step left to run).  Call it after the loop; leaving a
        `with Checkpointer() as ck:` block without an exception does."""
        with self._locked():
            self._put("I", _FINISHED, 1)

    def finished(self) -> bool:
        """True once this node's page says the loop is over."""
        return bool(self._get("I", _FINISHED))

    def close(self) -> None:
        """Give the signals back, stop the interval timer, drop a
        checkpoint begun and not committed.  Does not mark the job
        finished (a program stopping for a requeue closes too)."""
        if threading.current_thread() is threading.main_thread():
            for sig, old in self._old_signals.items():
                signal.signal(sig, old)  # type: ignore[arg-type]
        self._old_signals = {}
        if self._timer:
            self._stop_timer.set()
            self._timer.join()
            self._timer = None
        if self._cstep >= 0:
            self.abort()

    def __enter__(self) -> "Checkpointer":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        # Only a loop that ran to its end is finished: an exception or
        # save()'s exit after a stop warning leaves the job requeue-able.
        if exc_type is None:
            self.finish()
        self.close()

    # -- decisions -----------------------------------------------------
    def _align(self, s: int) -> int:
        if self.every <= 0:
            return s
        return (s + self.every - 1) // self.every * self.every

    # -- stragglers ----------------------------------------------------
    def mark_compute_done(self) -> None:
        """This rank's gradients are ready (it enters the step's gradient
        collective now): the step's compute time ends here.  The hook
        watch_ddp() installs calls it; a loop without DDP calls it just
        before its collective.  A clock read, nothing else."""
        self._t_mark = time.perf_counter_ns()

    def watch_ddp(self, ddp: Any) -> None:
        """Time this rank's compute through a DDP communication hook
        (register_comm_hook: call it before the first step, once per
        model) that marks the last gradient bucket ready, then
        all-reduces as DDP does by default.  Without a gather function,
        straggler summaries travel over torch.distributed.  A model with
        a communication hook of its own (DDP takes one) calls
        mark_compute_done() from that hook, on its last bucket, instead."""
        from torch.distributed.algorithms.ddp_comm_hooks import (
            default_hooks)

        # No annotations: DDP refuses a hook annotated otherwise than
        # GradBucket -> Future[Tensor], types this module does not import.
        def hook(state, bucket):  # type: ignore[no-untyped-def]
            if bucket.is_last():
                self._t_mark = time.perf_counter_ns()
            return default_hooks.allreduce_hook(state, bucket)

        ddp.register_comm_hook(None, hook)
        if self._gather is None:
            self._gather = _TorchGather()

    def _exchange(self, step: int) -> None:
        t0 = time.perf_counter()
        mean = self._t_sum / self._t_n / 1e9 if self._t_n else 0.0
        assert self._gather is not None
        rows = self._gather((self.node, self.rank, mean, self._t_n))
        # A window spans the steps since the last exchange.
        first = (self._x_last + 1 if self._x_last >= 0 else
                 self._t_first if self._t_first >= 0 else step)
        self._x_last = step
        self._t_sum = self._t_n = 0
        self._t_first = -1
        # Policy replace: every rank runs rank 0's detection on the same
        # rows (an all-gather), so all decide at this step, no message.
        replace = self.straggler_policy == "replace"
        if self.rank == 0 or replace:
            found = self.detector.add(first, step, [
                (str(r[0]), int(r[1]), float(r[2]), int(r[3]))
                for r in rows])  # type: ignore[index]
            for f in found:
                if self.rank == 0:
                    self._name_straggler(f)
            if (found and replace and self.replacing is None and
                    not 0 <= self.last_step <= step):
                self.replacing = found[0]
                self._pending = step
                if self.rank == 0:
                    sys.stderr.write(
                        "topoml: straggler: node %s: checkpoint at step "
                        "%d, then topoml-run puts a spare in its place\n"
                        % (found[0]["node"], step))
                    sys.stderr.flush()
        self.exchanges += 1
        if self.exchanges == 1:
            self.exchange_first_s = time.perf_counter() - t0
        else:
            self.exchange_s += time.perf_counter() - t0

    def _name_straggler(self, f: Dict[str, Any]) -> None:
        f = dict(f, job=os.environ.get("SLURM_JOB_ID", ""),
                 time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        sys.stderr.write(straggler_message(f) + "\n")
        sys.stderr.flush()
        try:
            with open(self.health_report, "a") as r:
                r.write(json.dumps(f, sort_keys=True) + "\n")
        except OSError as e:
            sys.stderr.write("topoml: straggler: cannot append to %s: %s\n"
                             % (self.health_report, e.strerror))

    def _step_time(self, step: int) -> None:
        if self._t_start and self._t_mark > self._t_start:
            self._t_sum += self._t_mark - self._t_start
            self._t_n += 1
            if self._t_first < 0:
                self._t_first = step
        self._t_mark = 0
        if step > 0 and step % self.straggler_every == 0:
            self._exchange(step)

    def should_checkpoint(self, step: int) -> bool:
        """True when this step must be checkpointed: a multiple of
        `every`, or the step all ranks of the node agreed on for an event
        (interval, stop warning, signal).  Same rule as the C library."""
        timing = self._gather is not None and self.straggler_every > 0
        if timing:
            self._step_time(step)
        due = self._should_checkpoint(step)
        if timing:
            # A checkpoint follows: the next step's time is not compute.
            self._t_start = 0 if due else time.perf_counter_ns()
        return due

    def _should_checkpoint(self, step: int) -> bool:
        if self._sig:
            why, self._sig = self._sig, 0
            self._raise_event(why)
        gen = self._get("Q", _GEN)
        if gen != self._seen:
            self._seen = gen
            with self._locked():
                if self._get("Q", _TARGET_GEN) != gen:
                    if self._get("q", _TARGET_STEP) < step:
                        self._put("q", _TARGET_STEP, self._align(step + 2))
                    self._put("Q", _TARGET_GEN, gen)
                t = self._get("q", _TARGET_STEP)
            if t >= step and (self._pending < 0 or t < self._pending):
                self._pending = t
        boundary = step % self.every == 0 if self.every > 0 else True
        due = ((self.every > 0 and step > 0 and boundary) or
               (self._pending >= 0 and step >= self._pending))
        if self.reduce is not None and boundary:
            due = bool(self.reduce(1 if due else 0))
            _arm_settle()
        if due:
            self._pending = -1
        return due

    def pending(self) -> bool:
        """True when an event waits for its checkpoint step."""
        return (self._pending >= 0 or self._sig != 0 or
                self._get("Q", _GEN) != self._seen)

    def stopping(self) -> bool:
        """True once a stop warning (time limit, SIGTERM) arrived, or a
        straggler is to be replaced (policy replace)."""
        return (bool((self._get("I", _REASON) | self._sig) & R_STOP) or
                self.replacing is not None)

    # -- commit --------------------------------------------------------
    def _clean_stale(self) -> None:
        for name in os.listdir(self.dir):
            if name.startswith(".trash-"):
                shutil.rmtree(os.path.join(self.dir, name), True)
            elif name.startswith(".tmp-step-"):
                try:
                    r = int(name.rsplit("-r", 1)[1])
                except (IndexError, ValueError):
                    r = -1
                if r < self.restart:
                    shutil.rmtree(os.path.join(self.dir, name), True)

    def begin(self, step: int) -> str:
        """An empty temporary directory to write checkpoint `step` into
        (ranks that share a checkpoint get the same one)."""
        if step < 0:
            raise ValueError("step must be >= 0")
        if self._cstep >= 0:
            self.abort()
        self._clean_stale()
        self._tmp = os.path.join(self.dir, ".tmp-step-%012d-r%d"
                                 % (step, self.restart))
        os.makedirs(self._tmp, exist_ok=True)
        self._cstep = step
        return self._tmp

    def abort(self) -> None:
        """Drop the checkpoint begun (its temporary directory)."""
        if self._cstep >= 0:
            if self._tmp:
                shutil.rmtree(self._tmp, True)
            self._cstep = -1

    def _record_commit(self, final: bool) -> int:
        # `finished` before commit_reason: the plugin reads them in the
        # other order (see topoml_ckpt_page.h).
        with self._locked():
            if final:
                self._put("I", _FINISHED, 1)
            reason = self._get("I", _REASON) | self._sig
            self._put("q", _COMMIT_STEP, self._cstep)
            self._put("q", _COMMIT_TIME, int(time.time()))
            self._put("I", _COMMIT_REASON, reason)
            self._put("Q", _COMMIT_GEN, self._seen)
        return reason

    def _mark_shard(self, tmp: str) -> None:
        # An empty .shard-R says this rank closed all its files; rank 0
        # fsyncs the whole tree before the rename.
        fd = os.open(os.path.join(tmp, ".shard-%d" % self.rank),
                     os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        os.close(fd)
        _fsync_path(tmp, True)

    def _wait_shards(self, tmp: str) -> None:
        until = time.monotonic() + self.shard_timeout
        r = 1
        while r < self.world_size:
            # Markers stay until the commit: count on from the last seen.
            if os.path.lexists(os.path.join(tmp, ".shard-%d" % r)):
                r += 1
                continue
            if not os.path.isdir(tmp):
                raise RuntimeError("checkpoint step %d: %s went away "
                                   "(another rank gave it up)"
                                   % (self._cstep, tmp))
            if time.monotonic() >= until:
                raise TimeoutError("checkpoint step %d: rank %d never "
                                   "completed its shard in %gs"
                                   % (self._cstep, r, self.shard_timeout))
            time.sleep(_SHARD_POLL)
        for r in range(1, self.world_size):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(tmp, ".shard-%d" % r))

    def _wait_committed(self, tmp: str) -> None:
        until = time.monotonic() + self.shard_timeout
        final = os.path.join(self.dir, "step-%012d" % self._cstep)
        while True:
            if _read_latest(self.dir)[0] >= self._cstep:
                return
            if _read_epoch(self.dir) > self.restart:
                raise StaleRun("a newer run of the job owns %s" % self.dir)
            if not os.path.lexists(tmp) and not os.path.isdir(final):
                raise RuntimeError("checkpoint step %d: rank 0 gave it up"
                                   % self._cstep)
            if time.monotonic() >= until:
                raise TimeoutError("checkpoint step %d: rank 0 did not "
                                   "commit in %gs"
                                   % (self._cstep, self.shard_timeout))
            time.sleep(_SHARD_POLL)

    def commit(self) -> int:
        """fsync, rename to step-N, move `latest`, prune.  Returns 0 or
        STOP (the job is stopping: exit; never for last_step).  With
        shards, ranks other than 0 mark their shard complete and wait for
        rank 0's commit.  Raises StaleRun, TimeoutError, OSError."""
        if self._cstep < 0 or self._tmp is None:
            raise RuntimeError("commit() without begin()")
        tmp = self._tmp
        final = self.last_step >= 0 and self._cstep >= self.last_step
        if self.shards and self.rank > 0:
            try:
                self._mark_shard(tmp)
                self._wait_committed(tmp)
            except BaseException:
                self._cstep = -1
                raise
            reason = self._record_commit(final)
            self._cstep = -1
            if self.replacing is not None and not final:
                return STOP
            return STOP if reason & R_STOP and not final else 0
        try:
            if self.shards:
                self._wait_shards(tmp)
            _write_meta(tmp, self.world_size)
            _fsync_tree(tmp)
            if _read_epoch(self.dir) > self.restart:
                raise StaleRun("a newer run of the job owns %s" % self.dir)
            name = "step-%012d" % self._cstep
            final_dir = os.path.join(self.dir, name)
            try:
                os.rename(tmp, final_dir)
            except OSError:
                if not os.path.isdir(final_dir):
                    raise
                # Same step committed before: that copy is complete.
                shutil.rmtree(tmp, True)
            _fsync_path(self.dir, True)
            if self.replacing is not None and not final:
                # Before `latest` moves: ranks waiting for this commit
                # exit then, and srun may end this rank at once.
                self._request_replace(self._cstep)
            link_tmp = os.path.join(self.dir, ".latest.%d" % os.getpid())
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link_tmp)
            os.symlink(name, link_tmp)
            os.replace(link_tmp, os.path.join(self.dir, "latest"))
            _fsync_path(self.dir, True)
        except BaseException:
            shutil.rmtree(tmp, True)
            self._cstep = -1
            raise
        reason = self._record_commit(final)
        self._prune(self._cstep)
        self._cstep = -1
        if self.replacing is not None and not final:
            return STOP
        if not reason & R_STOP or final:
            return 0
        if reason & R_LIMIT and self._fd >= 0:
            # The plugin requeues the job once it sees this commit.
            for _ in range(1500):
                if self._get("I", _REQUEUED):
                    break
                time.sleep(0.02)
        return STOP

    def _request_replace(self, step: int) -> None:
        # Written whole (rename), read by topoml-run, which relaunches
        # only once `latest` is this step.
        f = self.replacing or {}
        tmp = os.path.join(self.dir, ".%s.%d" % (REPLACE_REQUEST,
                                                 os.getpid()))
        with open(tmp, "w") as o:
            o.write("node=%s\nstep=%d\nranks=%s\njob=%s\n" % (
                f.get("node", ""), step,
                ",".join(str(r) for r in f.get("ranks", [])),
                os.environ.get("SLURM_JOB_ID", "")))
        os.replace(tmp, os.path.join(self.dir, REPLACE_REQUEST))

    def _prune(self, latest: int) -> None:
        if self.keep <= 0:
            return
        steps = []
        for name in os.listdir(self.dir):
            if name.startswith("step-"):
                try:
                    steps.append(int(name[5:], 10))
                except ValueError:
                    pass
        steps.sort()
        for s in steps[:max(0, len(steps) - self.keep)]:
            if s == latest:
                continue
            trash = os.path.join(self.dir, ".trash-%012d-%d"
                                 % (s, os.getpid()))
            try:
                os.rename(os.path.join(self.dir, "step-%012d" % s), trash)
            except OSError:
                continue
            shutil.rmtree(trash, True)

    @contextlib.contextmanager
    def save(self, step: int) -> Iterator[str]:
        """with ck.save(step) as d: write files into d.  Commits on exit;
        exits the process after a stop warning when exit_on_stop (status
        0), or with EXIT_REPLACE after the checkpoint that hands a
        straggler's place to a spare (policy replace).

        With several ranks, only rank 0 may call it, unless the hook was
        made with shards=True on every rank (then every rank writes its
        own files into d and one commit follows the last shard).  Other
        ranks get a RuntimeError that says so, before anything is written:
        a shared step directory committed by one rank while another still
        writes into it would be torn."""
        if self.world_size > 1 and self.rank > 0 and not self.shards:
            raise RuntimeError(
                "topoml_ckpt: save() on rank %d of %d: one rank commits a "
                "checkpoint.  Either call save() on rank 0 only (the model "
                "is replicated: `if rank == 0: with ck.save(step) as d:`), "
                "or make the Checkpointer with shards=True on every rank so "
                "that each rank writes its own files into d and rank 0 "
                "commits once all are complete." % (self.rank,
                                                    self.world_size))
        d = self.begin(step)
        try:
            yield d
        except BaseException:
            # With shards too: the other ranks see the directory go and
            # fail at once instead of waiting for a shard that never comes.
            self.abort()
            raise
        if self.commit() == STOP and self.exit_on_stop:
            sys.stdout.flush()
            sys.exit(EXIT_REPLACE if self.replacing is not None else 0)
