"""topoml checkpoint hook for Python training loops (PyTorch or plain).

Pure Python twin of libtopoml-ckpt (contrib/ckpt/topoml_ckpt.h): same
environment (exported by the topoml SPANK plugin for --ml-ckpt), same
per-node shared page (mmap of TOPOML_CKPT_PAGE), same directory layout, so
C and Python programs can resume each other's checkpoints.

    ck = topoml_ckpt.Checkpointer()
    start = ck.resume_step + 1 if ck.resume_path else 1   # load from resume_path
    for step in range(start, nsteps + 1):
        train_step()
        if ck.should_checkpoint(step):
            with ck.save(step) as d:
                torch.save(model.state_dict(), d + "/model.pt")

After a checkpoint that answers a stop warning (time limit ahead, requeue,
preemption) save() exits the process (exit_on_stop=True), the job is
requeued and the next run starts from TOPOML_RESUME.  See topoml-ckpt(7).

SPDX-License-Identifier: GPL-2.0-or-later
"""

import contextlib
import fcntl
import mmap
import os
import stat
import shutil
import signal
import struct
import sys
import threading
import time

__all__ = ["Checkpointer", "STOP", "StaleRun"]

STOP = 1

PAGE_MAGIC = 0x4b43504c4d4f5054
PAGE_VERSION = 1
PAGE_SIZE = 4096
PAGE_PIDS = 64
R_INTERVAL, R_REQUEST, R_LIMIT, R_TERM = 0x1, 0x2, 0x4, 0x8
R_STOP = R_LIMIT | R_TERM

# Offsets of struct topoml_ckpt_page (contrib/ckpt/topoml_ckpt_page.h).
_MAGIC, _VERSION, _GEN, _REASON, _REQUEUED = 0, 8, 16, 24, 28
_TARGET_STEP, _TARGET_GEN, _COMMIT_STEP, _COMMIT_TIME = 32, 40, 48, 56
_COMMIT_GEN, _COMMIT_REASON, _START_TIME = 64, 72, 80
_INTERVAL_TIME, _NPIDS, _PIDS = 96, 104, 112


class StaleRun(OSError):
    """A newer run of the job owns the checkpoint directory."""


def _env_int(name, default, maximum):
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


def _read_latest(directory):
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


def _read_epoch(directory):
    # The same rule as the C layout: a regular file of ours, never a
    # symlink, never a FIFO that would block.
    try:
        fd = os.open(os.path.join(directory, "epoch"),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return -1
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return -1
        return int(os.read(fd, 32).strip() or -1)
    except (OSError, ValueError):
        return -1
    finally:
        os.close(fd)


def _write_epoch(directory, restart):
    if _read_epoch(directory) >= restart:
        return
    tmp = os.path.join(directory, ".epoch.%d" % os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, b"%d\n" % restart)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(directory, "epoch"))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _fsync_path(path, directory=False):
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(top):
    for root, dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                _fsync_path(p)
        for name in dirs:
            _fsync_path(os.path.join(root, name), True)
    _fsync_path(top, True)


class Checkpointer:
    """The hook.  Arguments override the environment; reduce(flag) -> max
    of flag over all ranks, called at `every` boundaries only, makes the
    decision exact across nodes (e.g. a one-element all_reduce MAX)."""

    def __init__(self, directory=None, every=None, interval=None, keep=None,
                 reduce=None, exit_on_stop=True, signals=True):
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
        if self.restart > 0:
            _write_epoch(self.dir, self.restart)
        self._seen = 0
        self._pending = -1
        self._sig = 0
        self._cstep = -1
        self._tmp = None
        with self._locked():
            n = self._get("i", _NPIDS)
            if 0 <= n < PAGE_PIDS:
                self._put("i", _PIDS + 4 * n, os.getpid())
                self._put("i", _NPIDS, n + 1)
        if signals and env.get("TOPOML_CKPT_SIGNALS", "1") != "0":
            self._install_signals()
        self._timer = None
        if self._fd < 0 and self.interval > 0:
            self._stop_timer = threading.Event()
            self._timer = threading.Thread(target=self._interval_timer,
                                           daemon=True)
            self._timer.start()

    # -- page access ---------------------------------------------------
    def _get(self, fmt, off):
        return struct.unpack_from("<" + fmt, self._page, off)[0]

    def _put(self, fmt, off, value):
        struct.pack_into("<" + fmt, self._page, off, value)

    @contextlib.contextmanager
    def _locked(self):
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if self._fd >= 0:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _raise_event(self, why):
        with self._locked():
            self._put("I", _REASON, self._get("I", _REASON) | why)
            self._put("Q", _GEN, self._get("Q", _GEN) + 1)

    def _install_signals(self):
        if threading.current_thread() is not threading.main_thread():
            return
        self._old_signals = {}
        for sig, why in ((signal.SIGTERM, R_TERM),
                         (signal.SIGUSR1, R_REQUEST)):
            if signal.getsignal(sig) == signal.SIG_DFL:
                self._old_signals[sig] = signal.signal(
                    sig, self._make_handler(why))

    def _make_handler(self, why):
        def handler(signum, frame):
            self._sig |= why
        return handler

    def _interval_timer(self):
        while not self._stop_timer.wait(0.1):
            now = int(time.time())
            base = max(self._get("q", _COMMIT_TIME),
                       self._get("q", _INTERVAL_TIME),
                       self._get("q", _START_TIME))
            if now - base >= self.interval:
                self._put("q", _INTERVAL_TIME, now)
                self._raise_event(R_INTERVAL)

    def close(self):
        if threading.current_thread() is threading.main_thread():
            for sig, old in getattr(self, "_old_signals", {}).items():
                signal.signal(sig, old)
        self._old_signals = {}
        if self._timer:
            self._stop_timer.set()
            self._timer.join()
            self._timer = None
        if self._cstep >= 0:
            self.abort()

    # -- decisions -----------------------------------------------------
    def _align(self, s):
        if self.every <= 0:
            return s
        return (s + self.every - 1) // self.every * self.every

    def should_checkpoint(self, step):
        """True when this step must be checkpointed (same rule as C)."""
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
        if due:
            self._pending = -1
        return due

    def pending(self):
        return (self._pending >= 0 or self._sig != 0 or
                self._get("Q", _GEN) != self._seen)

    def stopping(self):
        return bool((self._get("I", _REASON) | self._sig) & R_STOP)

    # -- commit --------------------------------------------------------
    def _clean_stale(self):
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

    def begin(self, step):
        """An empty temporary directory to write checkpoint `step` into."""
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

    def abort(self):
        if self._cstep >= 0:
            shutil.rmtree(self._tmp, True)
            self._cstep = -1

    def commit(self):
        """fsync, rename to step-N, move `latest`, prune.  Returns 0 or
        STOP (the job is stopping: exit); raises StaleRun, OSError."""
        if self._cstep < 0:
            raise RuntimeError("commit() without begin()")
        try:
            _fsync_tree(self._tmp)
            if _read_epoch(self.dir) > self.restart:
                raise StaleRun("a newer run of the job owns %s" % self.dir)
            name = "step-%012d" % self._cstep
            final = os.path.join(self.dir, name)
            try:
                os.rename(self._tmp, final)
            except OSError:
                if not os.path.isdir(final):
                    raise
                # Same step committed before: that copy is complete.
                shutil.rmtree(self._tmp, True)
            _fsync_path(self.dir, True)
            link_tmp = os.path.join(self.dir, ".latest.%d" % os.getpid())
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link_tmp)
            os.symlink(name, link_tmp)
            os.replace(link_tmp, os.path.join(self.dir, "latest"))
            _fsync_path(self.dir, True)
        except BaseException:
            shutil.rmtree(self._tmp, True)
            self._cstep = -1
            raise
        with self._locked():
            reason = self._get("I", _REASON) | self._sig
            self._put("q", _COMMIT_STEP, self._cstep)
            self._put("q", _COMMIT_TIME, int(time.time()))
            self._put("I", _COMMIT_REASON, reason)
            self._put("Q", _COMMIT_GEN, self._seen)
        self._prune(self._cstep)
        self._cstep = -1
        if not reason & R_STOP:
            return 0
        if reason & R_LIMIT and self._fd >= 0:
            # The plugin requeues the job once it sees this commit.
            for _ in range(1500):
                if self._get("I", _REQUEUED):
                    break
                time.sleep(0.02)
        return STOP

    def _prune(self, latest):
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
    def save(self, step):
        """with ck.save(step) as d: write files into d.  Commits on exit;
        exits the process after a stop warning when exit_on_stop."""
        d = self.begin(step)
        try:
            yield d
        except BaseException:
            self.abort()
            raise
        if self.commit() == STOP and self.exit_on_stop:
            sys.stdout.flush()
            sys.exit(0)
