/*
 * --ml-preflight=full: a compute probe on each node and a ring stream
 * over the step's nodes (each to its successor in ring order only), the
 * results gathered around the same ring, each node judged against the
 * job's median.  See preflight.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "preflight.h"

#define PF_MAGIC	0x746d7066u	/* "tmpf" */
#define PF_CHUNK	(256 * 1024)

static long long _now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* A fixed integer workload: the same work on every node. */
static uint64_t __attribute__((noinline)) _work(uint64_t iters, uint64_t x)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s += x * 0x9e3779b97f4a7c15ull;
	}
	return s;
}

long ml_pf_probe_us(long iters)
{
	long best = -1;

	/* The fastest of five: what the node can do, not what a passing
	 * neighbour left it. */
	for (int r = 0; r < 5; r++) {
		long long a = _now_us();
		uint64_t v = _work((uint64_t)iters, 88172645463325252ull + r);
		long t;

		/* The result is "used": the work cannot be optimised away. */
		__asm__ __volatile__("" : : "r"(v));
		t = (long)(_now_us() - a);
		if (best < 0 || t < best)
			best = t;
	}
	return best > 0 ? best : 1;
}

static int _cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The median of the known (> 0) values; 0 when fewer than 3. */
static long _median(const struct ml_pf_rec *r, int n, bool bw)
{
	long *v = malloc(sizeof(long) * (n + 1)), m;
	int k = 0;

	if (!v)
		return 0;
	for (int i = 0; i < n; i++) {
		long x = bw ? r[i].bw_kbs : r[i].probe_us;

		if (r[i].known && x > 0)
			v[k++] = x;
	}
	if (k < 3) {
		free(v);
		return 0;
	}
	qsort(v, k, sizeof(long), _cmp_long);
	m = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	free(v);
	return m;
}

int ml_pf_ring_judge(const struct ml_pf_rec *r, int n, int me,
		     const char *const *names, double outlier,
		     double ring_outlier, char *why, size_t whylen)
{
	long mp = _median(r, n, false), mb = _median(r, n, true);
	int bad = 0, s = (me + 1) % n;
	size_t off = 0;

	if (whylen)
		why[0] = '\0';
	if (n < 3 || me < 0 || me >= n || !r[me].known || outlier <= 1.0 ||
	    ring_outlier <= 1.0)
		return 0;
	if (mp > 0 && r[me].probe_us > outlier * mp) {
		off += snprintf(why + off, off < whylen ? whylen - off : 0,
				"compute probe %.1f ms, %.2fx the job's median "
				"%.1f ms", r[me].probe_us / 1000.0,
				(double)r[me].probe_us / mp, mp / 1000.0);
		bad++;
	}
	/* Both of its ring links slow: the node, not one link. */
	if (mb > 0 && r[me].bw_kbs > 0 && r[s].known && r[s].bw_kbs > 0 &&
	    r[me].bw_kbs * ring_outlier < mb &&
	    r[s].bw_kbs * ring_outlier < mb) {
		off += snprintf(why + off, off < whylen ? whylen - off : 0,
				"%sring stream from %s %.0f MB/s, to %s %.0f "
				"MB/s, the job's median %.0f MB/s",
				bad ? "; " : "", names[(me + n - 1) % n],
				r[me].bw_kbs / 1000.0, names[s],
				r[s].bw_kbs / 1000.0, mb / 1000.0);
		bad++;
	}
	return bad;
}

static int _sockaddr(const char *addr, int port, struct sockaddr_storage *sa,
		     socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV }, *res = NULL;
	char ps[16];

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(addr, ps, &hints, &res) || !res)
		return -1;
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static bool _same_host(const struct sockaddr_storage *a,
		       const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
			((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

static int _port_of(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET ?
		ntohs(((const struct sockaddr_in *)a)->sin_port) :
		ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
}

static void _set_port(struct sockaddr_storage *a, int port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

/*
 * The stream to the successor: from this node's own address and a port
 * below 1024 when root (the successor takes only its predecessor's
 * address and such a port: no other user can speak for a node), then
 * a nonblocking connect.
 */
static int _connect(const struct ml_pf_ring *r,
		    const struct sockaddr_storage *me,
		    const struct sockaddr_storage *to, socklen_t len)
{
	struct sockaddr_storage src = *me;
	int fd = socket(to->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (r->privileged) {
		int p;

		for (p = 1023; p >= 600; p--) {
			_set_port(&src, p);
			if (!bind(fd, (struct sockaddr *)&src, len))
				break;
			if (errno != EADDRINUSE) {
				p = 0;
				break;
			}
		}
		if (p < 600) {
			close(fd);
			return -1;
		}
	} else {
		_set_port(&src, 0);
		(void)bind(fd, (struct sockaddr *)&src, len);
	}
	if (connect(fd, (const struct sockaddr *)to, len) &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

struct _rec_wire {
	uint32_t idx, probe_us, bw_kbs, pad;
};

struct _hdr_wire {
	uint32_t magic, jobid, stepid, n, from;
};

_Static_assert(sizeof(struct _hdr_wire) == sizeof(((struct ml_pf_rx *)0)->hdr),
	       "header size");
_Static_assert(sizeof(struct _rec_wire) == sizeof(((struct ml_pf_rx *)0)->rec),
	       "record size");

static void _put_rec(struct _rec_wire *w, int idx, const struct ml_pf_rec *r)
{
	w->idx = htonl((uint32_t)idx);
	w->probe_us = htonl((uint32_t)r->probe_us);
	w->bw_kbs = htonl((uint32_t)r->bw_kbs);
	w->pad = 0;
}

/* The sending side: header, the bulk, then records as they come. */
struct _out {
	int fd;
	bool up;			/* connected */
	long long retry_at;		/* reconnect time after a refusal */
	size_t sent;			/* of header + bulk */
	size_t total;
	unsigned char *q;		/* n records at most */
	size_t qlen, qoff;
	int recs_due, recs_queued;	/* records to send, queued so far */
	bool done;
};

static ssize_t _send_some(struct _out *o, const unsigned char *zero,
			  const struct _hdr_wire *h)
{
	ssize_t k;

	if (o->sent < sizeof(*h)) {
		k = send(o->fd, (const char *)h + o->sent,
			 sizeof(*h) - o->sent, MSG_NOSIGNAL);
	} else if (o->sent < o->total) {
		size_t left = o->total - o->sent;

		k = send(o->fd, zero, left < PF_CHUNK ? left : PF_CHUNK,
			 MSG_NOSIGNAL);
	} else if (o->qoff < o->qlen) {
		k = send(o->fd, o->q + o->qoff, o->qlen - o->qoff,
			 MSG_NOSIGNAL);
		if (k > 0)
			o->qoff += (size_t)k;
		return k;
	} else {
		return 0;
	}
	if (k > 0)
		o->sent += (size_t)k;
	return k;
}

int ml_pf_rx_feed(struct ml_pf_rx *x, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t hlen = sizeof(struct _hdr_wire), total = hlen + x->bytes;
	int ev = 0;

	while (len && !x->bad) {
		if (x->off < hlen) {
			size_t k = hlen - x->off < len ? hlen - x->off : len;
			struct _hdr_wire h;

			memcpy(x->hdr + x->off, b, k);
			x->off += k;
			b += k;
			len -= k;
			if (x->off < hlen)
				break;
			memcpy(&h, x->hdr, hlen);
			if (ntohl(h.magic) != PF_MAGIC ||
			    ntohl(h.jobid) != x->jobid ||
			    ntohl(h.stepid) != x->stepid ||
			    ntohl(h.n) != (uint32_t)x->n ||
			    ntohl(h.from) != (uint32_t)x->from) {
				x->bad = true;
				break;
			}
			ev |= ML_PF_RX_HDR;
		} else if (x->off < total) {
			size_t k = total - x->off < len ? total - x->off : len;

			x->off += k;
			b += k;
			len -= k;
			if (x->off == total)
				ev |= ML_PF_RX_BULK;
		} else {
			size_t k = sizeof(x->rec) - x->roff < len ?
				sizeof(x->rec) - x->roff : len;
			struct _rec_wire w;
			uint32_t i;

			memcpy(x->rec + x->roff, b, k);
			x->roff += k;
			b += k;
			len -= k;
			if (x->roff < sizeof(x->rec))
				break;
			x->roff = 0;
			memcpy(&w, x->rec, sizeof(w));
			i = ntohl(w.idx);
			/* each other node once, no more than there are */
			if (i >= (uint32_t)x->n || i == (uint32_t)x->me ||
			    x->recs[i].known || x->got >= x->n - 1 ||
			    ntohl(w.probe_us) > INT32_MAX ||
			    ntohl(w.bw_kbs) > INT32_MAX) {
				x->bad = true;
				break;
			}
			x->recs[i].probe_us = (long)ntohl(w.probe_us);
			x->recs[i].bw_kbs = (long)ntohl(w.bw_kbs);
			x->recs[i].known = true;
			x->order[x->got++] = (int)i;
		}
	}
	return ev;
}

int ml_pf_ring_run(const struct ml_pf_ring *r, struct ml_pf_rec *recs,
		   char *err, size_t errlen)
{
	struct sockaddr_storage me, to, from, peer;
	socklen_t len, flen, plen;
	int n = r->n, i = r->me, s = (i + 1) % n, p = (i + n - 1) % n;
	int lfd = -1, in = -1, one = 1, fwd = 0, rc = -1;
	struct _out o = { .fd = -1 };
	struct _hdr_wire h = {
		htonl(PF_MAGIC), htonl(r->jobid), htonl(r->stepid),
		htonl((uint32_t)n), htonl((uint32_t)i)
	};
	struct ml_pf_rx rx = {
		.n = n, .me = i, .from = p, .jobid = r->jobid,
		.stepid = r->stepid, .bytes = r->bytes, .recs = recs,
	};
	unsigned char *zero = calloc(1, PF_CHUNK), *scratch = malloc(PF_CHUNK);
	long long t0 = _now_us(), deadline = t0 + r->timeout_ms * 1000LL;
	long long bulk0 = 0;
	bool in_eof = false;

	err[0] = '\0';
	o.q = malloc(sizeof(struct _rec_wire) * (n + 1));
	rx.order = malloc(sizeof(int) * (n + 1));
	if (!zero || !scratch || !o.q || !rx.order) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (_sockaddr(r->addr[i], r->port, &me, &len) ||
	    _sockaddr(r->addr[s], r->port, &to, &len) ||
	    _sockaddr(r->addr[p], r->port, &from, &flen)) {
		snprintf(err, errlen, "cannot resolve the ring's addresses");
		goto out;
	}
	lfd = socket(me.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		     0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				  sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&me, len) || listen(lfd, 8)) {
		snprintf(err, errlen, "cannot listen on %s port %d: %s",
			 r->addr[i], r->port, strerror(errno));
		goto out;
	}
	o.total = sizeof(h) + r->bytes;
	/* Own record, then each one from the predecessor but the
	 * successor's own (it has it). */
	o.recs_due = n - 1;
	while (_now_us() < deadline) {
		struct pollfd pf[3];
		int np = 0, li = -1, ii = -1, oi = -1;
		long long now = _now_us();
		int wait_ms = (int)((deadline - now) / 1000) + 1;

		if (!o.done && o.fd < 0 && now >= o.retry_at) {
			o.fd = _connect(r, &me, &to, len);
			o.up = false;
			if (o.fd < 0)
				o.retry_at = now + 20000;
		}
		if (in < 0) {
			pf[np] = (struct pollfd){ lfd, POLLIN, 0 };
			li = np++;
		} else if (!in_eof) {
			pf[np] = (struct pollfd){ in, POLLIN, 0 };
			ii = np++;
		}
		if (o.fd >= 0 && !o.done &&
		    (!o.up || o.sent < o.total || o.qoff < o.qlen)) {
			pf[np] = (struct pollfd){ o.fd, POLLOUT, 0 };
			oi = np++;
		}
		if (o.done && in_eof)
			break;
		if (o.fd < 0 && !o.done && o.retry_at - now < wait_ms * 1000LL)
			wait_ms = (int)((o.retry_at - now) / 1000) + 1;
		if (poll(pf, np, wait_ms) < 0 && errno != EINTR)
			break;
		if (li >= 0 && (pf[li].revents & POLLIN)) {
			plen = sizeof(peer);
			int fd = accept4(lfd, (struct sockaddr *)&peer, &plen,
					 SOCK_NONBLOCK | SOCK_CLOEXEC);

			/* Only the predecessor, from a port of root's. */
			if (fd >= 0 && (!_same_host(&peer, &from) ||
					(r->privileged &&
					 _port_of(&peer) >= 1024)))
				close(fd);
			else if (fd >= 0)
				in = fd;
		}
		if (ii >= 0 &&
		    (pf[ii].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t k = recv(in, scratch, PF_CHUNK, 0);
			int ev = 0;

			if (k == 0 || (k < 0 && errno != EAGAIN &&
				       errno != EINTR))
				in_eof = true;
			else if (k > 0)
				ev = ml_pf_rx_feed(&rx, scratch, (size_t)k);
			if (rx.bad && !in_eof) {
				snprintf(err, errlen, "a stream from %s that "
					 "is not this step's ring",
					 r->names[p]);
				in_eof = true;
			}
			if (ev & ML_PF_RX_HDR)
				bulk0 = _now_us();
			if (ev & ML_PF_RX_BULK) {
				long long dt = _now_us() - bulk0;

				recs[i].bw_kbs = (long)(r->bytes * 1000.0 /
							(dt > 0 ? dt : 1));
				if (!recs[i].bw_kbs)
					recs[i].bw_kbs = 1;
				recs[i].known = true;
				_put_rec((struct _rec_wire *)(o.q + o.qlen), i,
					 &recs[i]);
				o.qlen += sizeof(struct _rec_wire);
				o.recs_queued++;
			}
			/* Pass on what came, but the successor's own. */
			for (; fwd < rx.got; fwd++) {
				int x = rx.order[fwd];

				if (x == s || o.recs_queued >= o.recs_due)
					continue;
				_put_rec((struct _rec_wire *)(o.q + o.qlen), x,
					 &recs[x]);
				o.qlen += sizeof(struct _rec_wire);
				o.recs_queued++;
			}
		}
		if (oi >= 0 && pf[oi].revents) {
			if (!o.up) {
				int e = 0;
				socklen_t el = sizeof(e);

				getsockopt(o.fd, SOL_SOCKET, SO_ERROR, &e, &el);
				if (e || (pf[oi].revents &
					  (POLLERR | POLLHUP))) {
					/* not listening yet: again soon */
					close(o.fd);
					o.fd = -1;
					o.retry_at = _now_us() + 10000;
					continue;
				}
				o.up = true;
			}
			if (_send_some(&o, zero, &h) < 0 && errno != EAGAIN &&
			    errno != EINTR) {
				snprintf(err, errlen, "stream to %s: %s",
					 r->names[s], strerror(errno));
				close(o.fd);
				o.fd = -1;
				o.done = true;
			}
		}
		if (o.fd >= 0 && o.up && o.sent == o.total &&
		    o.qoff == o.qlen &&
		    o.recs_queued == o.recs_due) {
			/* This side closes first: no TIME_WAIT left on the
			 * listening port, which the tasks may bind next. */
			close(o.fd);
			o.fd = -1;
			o.done = true;
		}
	}
	rc = rx.got;
	if (!err[0] && (rx.got < n - 1 || !o.done))
		snprintf(err, errlen, "the ring did not complete in %d ms (%d "
			 "of %d nodes' results, stream to %s %s)",
			 r->timeout_ms, rx.got + recs[i].known, n, r->names[s],
			 o.done ? "sent" : "not sent");
out:
	if (o.fd >= 0)
		close(o.fd);
	if (in >= 0)
		close(in);
	if (lfd >= 0)
		close(lfd);
	free(zero);
	free(scratch);
	free(o.q);
	free(rx.order);
	return rc;
}
