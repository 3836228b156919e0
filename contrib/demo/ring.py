"""A minimal ring all-reduce over TCP for the topoml demo job.

It plays the part NCCL or gloo plays in a real training job: ranks meet at
MASTER_ADDR:MASTER_PORT (set per task by the topoml SPANK plugin), then each
rank talks only to its ring neighbours, in RANK order.  With
--ml-rank-order=topology that order follows the network, so every ring step
stays as close to one switch as the placement allows.

Pure Python, standard library only.
SPDX-License-Identifier: GPL-2.0-or-later
"""

import json
import os
import socket
import struct
import time


def _send_msg(sock, payload):
    sock.sendall(struct.pack("!I", len(payload)) + payload)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        buf += chunk
    return bytes(buf)


def _recv_msg(sock):
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    return _recv_exact(sock, n)


def _connect(addr, port, deadline):
    while True:
        try:
            return socket.create_connection((addr, port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Ring:
    """Ring of WORLD_SIZE ranks; allreduce() sums lists of floats."""

    def __init__(self, rank=None, world=None, master_addr=None,
                 master_port=None, timeout=60):
        env = os.environ
        self.rank = int(rank if rank is not None else env["RANK"])
        self.world = int(world if world is not None else env["WORLD_SIZE"])
        master_addr = master_addr or env["MASTER_ADDR"]
        master_port = int(master_port or env["MASTER_PORT"])
        deadline = time.monotonic() + timeout
        self.prev = self.next = None
        if self.world == 1:
            return
        # Each rank listens on an ephemeral port for its ring predecessor.
        lsock = socket.socket()
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("", 0))
        lsock.listen(1)
        me = {"rank": self.rank, "host": socket.gethostname(),
              "addr": _local_addr(master_addr),
              "port": lsock.getsockname()[1]}
        table = self._rendezvous(me, master_addr, master_port, deadline)
        nxt = table[(self.rank + 1) % self.world]
        # Connect forward and accept from behind concurrently-safe: the
        # listen backlog holds the predecessor until we accept.
        self.next = _connect(nxt["addr"], nxt["port"], deadline)
        lsock.settimeout(timeout)
        self.prev, _ = lsock.accept()
        lsock.close()
        for s in (self.next, self.prev):
            s.settimeout(timeout)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _rendezvous(self, me, addr, port, deadline):
        if self.rank == 0:
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("", port))
            srv.listen(self.world)
            srv.settimeout(max(1, deadline - time.monotonic()))
            entries, conns = {0: me}, []
            while len(entries) < self.world:
                c, _ = srv.accept()
                e = json.loads(_recv_msg(c))
                entries[e["rank"]] = e
                conns.append(c)
            blob = json.dumps(entries).encode()
            for c in conns:
                _send_msg(c, blob)
                c.close()
            srv.close()
        else:
            c = _connect(addr, port, deadline)
            _send_msg(c, json.dumps(me).encode())
            entries = json.loads(_recv_msg(c))
            c.close()
        return {int(k): v for k, v in entries.items()}

    def allreduce(self, values):
        """Sum of values over all ranks (reduce-scatter + all-gather)."""
        n, w = len(values), self.world
        if w == 1:
            return list(values)
        out = list(values)
        bounds = [(i * n // w, (i + 1) * n // w) for i in range(w)]

        def chunk(i):
            lo, hi = bounds[i % w]
            return out[lo:hi]

        def exchange(send_idx):
            data = chunk(send_idx)
            _send_msg(self.next, struct.pack("!%dd" % len(data), *data))
            got = _recv_msg(self.prev)
            return struct.unpack("!%dd" % (len(got) // 8), got)

        for step in range(w - 1):
            recv_idx = (self.rank - step - 1) % w
            got = exchange(self.rank - step)
            lo, _ = bounds[recv_idx]
            for k, v in enumerate(got):
                out[lo + k] += v
        for step in range(w - 1):
            recv_idx = (self.rank - step) % w
            got = exchange(self.rank - step + 1)
            lo, _ = bounds[recv_idx]
            out[lo:lo + len(got)] = got
        return out

    def close(self):
        for s in (self.next, self.prev):
            if s:
                s.close()


def _local_addr(master_addr):
    """The address peers reach us at: the one we use toward the master."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((master_addr, 9))
        addr = s.getsockname()[0]
        s.close()
        return addr
    except OSError:
        return "127.0.0.1"
