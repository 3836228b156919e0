/*
 * topoml checkpoint hook library (libtopoml-ckpt).
 *
 * Agreement rule: every process decides from its own step counter and the
 * node's shared page only.  Periodic checkpoints (every=N) fall on multiples
 * of N on every rank.  An event (interval, warning, signal) bumps page->gen;
 * the first process of the node that sees it (under flock) fixes the target
 * step to the first multiple of `every` (or step) >= its step + 2, and every
 * other process of the node adopts that target.  Ranks of a synchronous
 * loop (one collective per step) are at most one step apart, so none has
 * passed the target yet.  Across nodes the pages are separate: give a
 * reduce function (topoml_ckpt_set_reduce), called at `every` boundaries
 * only, to make the decision exact.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "topoml_ckpt.h"
#include "topoml_ckpt_page.h"
#include "ckpt_layout.h"

struct topoml_ckpt {
	struct topoml_ckpt_hot hot;	/* first: the inline path casts */
	struct topoml_ckpt_page *page;
	int page_fd;			/* -1: private anonymous page */
	char dir[PATH_MAX];
	long every, interval;
	int keep;
	long restart;
	char resume[PATH_MAX];
	long resume_step;
	long pending;			/* agreed step of an event or -1 */
	int (*reduce)(int, void *);
	void *reduce_arg;
	long cstep;			/* checkpoint begun, -1 none */
	long last_step;			/* the loop's last step, -1 unknown */
	int rank, nranks;		/* sharded commits when nranks > 1 */
	long shard_timeout;		/* seconds */
	char tmp[PATH_MAX + 64];
	pthread_t timer;
	bool timer_on;
	volatile int timer_stop;
	/* Stragglers (topoml_ckpt_set_exchange) */
	int (*gather)(const void *, void *, size_t, void *);
	void *gather_arg;
	int x_rank, x_nranks;
	long x_every, x_window, x_last, t_first, t_n;
	double x_threshold;
	int64_t t_start, t_mark, t_sum;
	char node[64];
	char report[PATH_MAX + 64];
	struct strag_rec *rows;		/* x_nranks, after a gather */
	struct strag_node *sn;		/* rank 0: the nodes seen */
	int nsn;
	bool x_replace;			/* policy replace */
	bool replacing;			/* a straggler ends the step */
	char r_node[64], r_ranks[256];	/* it, for DIR/replace-request */
};

/* What a rank sends at each straggler exchange (fixed size, no pointer). */
struct strag_rec {
	char node[64];
	int32_t rank;
	int32_t steps;
	double mean_ns;
};

/* Rank 0: a node's ratios to the job's median, window by window. */
struct strag_win {
	long first, last;
	double ratio;
};

struct strag_node {
	char node[64];
	struct strag_win *h;
	int nh, cap;
	bool named;
};

static struct topoml_ckpt_page *volatile _sig_page;
static struct sigaction _old_term, _old_usr1;
static bool _have_term, _have_usr1;

static void _on_signal(int sig)
{
	struct topoml_ckpt_page *p = _sig_page;

	if (!p)
		return;
	__atomic_fetch_or(&p->reason, sig == SIGTERM ? TOPOML_CKPT_R_TERM :
			  TOPOML_CKPT_R_REQUEST, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_SEQ_CST);
}

/* Take SIGTERM/SIGUSR1 only where the program left them at default. */
static void _install_signals(struct topoml_ckpt_page *p)
{
	const char *e = getenv("TOPOML_CKPT_SIGNALS");
	int sigs[] = { SIGTERM, SIGUSR1 };
	struct sigaction sa, old;
	size_t i;

	if (e && !strcmp(e, "0"))
		return;
	_sig_page = p;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = _on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], NULL, &old) < 0 ||
		    old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
			continue;
		if (sigaction(sigs[i], &sa, NULL) < 0)
			continue;
		if (sigs[i] == SIGTERM) {
			_old_term = old;
			_have_term = true;
		} else {
			_old_usr1 = old;
			_have_usr1 = true;
		}
	}
}

/* Give the signals back their default action when the hook goes. */
static void _restore_signals(void)
{
	if (_have_term)
		sigaction(SIGTERM, &_old_term, NULL);
	if (_have_usr1)
		sigaction(SIGUSR1, &_old_usr1, NULL);
	_have_term = _have_usr1 = false;
}

static void _lock(topoml_ckpt_t *c)
{
	if (c->page_fd >= 0)
		while (flock(c->page_fd, LOCK_EX) < 0 && errno == EINTR)
			;
}

static void _unlock(topoml_ckpt_t *c)
{
	if (c->page_fd >= 0)
		flock(c->page_fd, LOCK_UN);
}

static long _env_long(const char *name, long def, long max, char *err,
		      size_t errlen, bool *bad)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > max) {
		snprintf(err, errlen, "%s='%s': expected an integer 0..%ld",
			 name, s, max);
		*bad = true;
	}
	return v;
}

/* A shared page made by the plugin, or a private one. */
static int _open_page(topoml_ckpt_t *c, char *err, size_t errlen)
{
	const char *path = getenv("TOPOML_CKPT_PAGE");
	struct stat st;
	void *m;

	c->page_fd = -1;
	if (path && *path) {
		c->page_fd = open(path, O_RDWR | O_CLOEXEC);
		if (c->page_fd < 0 || fstat(c->page_fd, &st) < 0 ||
		    st.st_size < TOPOML_CKPT_PAGE_SIZE) {
			snprintf(err, errlen, "TOPOML_CKPT_PAGE=%s: %s", path,
				 c->page_fd < 0 ? strerror(errno) :
				 "too small");
			goto fail;
		}
		m = mmap(NULL, TOPOML_CKPT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, c->page_fd, 0);
	} else {
		m = mmap(NULL, TOPOML_CKPT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the checkpoint page: %s",
			 strerror(errno));
		goto fail;
	}
	c->page = m;
	if (c->page_fd < 0) {
		c->page->magic = TOPOML_CKPT_PAGE_MAGIC;
		c->page->version = TOPOML_CKPT_PAGE_VERSION;
		c->page->size = TOPOML_CKPT_PAGE_SIZE;
		c->page->target_step = -1;
		c->page->commit_step = -1;
		c->page->start_time = time(NULL);
	} else if (c->page->magic != TOPOML_CKPT_PAGE_MAGIC ||
		   c->page->version != TOPOML_CKPT_PAGE_VERSION) {
		snprintf(err, errlen, "TOPOML_CKPT_PAGE=%s: not a topoml "
			 "checkpoint page (version %u)", path,
			 c->page->version);
		goto fail;
	}
	return 0;
fail:
	if (c->page_fd >= 0)
		close(c->page_fd);
	c->page_fd = -1;
	return -1;
}

static void _register_pid(topoml_ckpt_t *c)
{
	struct topoml_ckpt_page *p = c->page;

	_lock(c);
	if (p->npids >= 0 && p->npids < TOPOML_CKPT_PAGE_PIDS)
		p->pids[p->npids++] = getpid();
	_unlock(c);
}

static void *_timer(void *arg)
{
	topoml_ckpt_t *c = arg;
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	while (!c->timer_stop) {
		struct topoml_ckpt_page *p = c->page;
		int64_t now = time(NULL), base;

		base = p->commit_time > p->interval_time ? p->commit_time :
		       p->interval_time;
		if (base < p->start_time)
			base = p->start_time;
		if (c->interval > 0 && now - base >= c->interval) {
			p->interval_time = now;
			__atomic_fetch_or(&p->reason, TOPOML_CKPT_R_INTERVAL,
					  __ATOMIC_SEQ_CST);
			__atomic_fetch_add(&p->gen, 1, __ATOMIC_SEQ_CST);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void _update_next(topoml_ckpt_t *c, long step)
{
	long next = LONG_MAX;

	if (c->every > 0)
		next = (step / c->every + 1) * c->every;
	else if (c->reduce)
		next = step + 1;
	if (c->pending >= 0 && c->pending < next)
		next = c->pending > step ? c->pending : step + 1;
	c->hot.next = next;
}

topoml_ckpt_t *topoml_ckpt_open(const char *dir, char *err, size_t errlen)
{
	topoml_ckpt_t *c;
	bool bad = false;
	char dummy[8];

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->page_fd = -1;
	c->pending = -1;
	c->cstep = -1;
	c->last_step = -1;
	if (!dir)
		dir = getenv("TOPOML_CKPT_DIR");
	if (!dir || !*dir) {
		snprintf(err, errlen, "no checkpoint directory "
			 "(TOPOML_CKPT_DIR is not set: run with --ml-ckpt)");
		goto fail;
	}
	if (strlen(dir) >= sizeof(c->dir) - 64) {
		snprintf(err, errlen, "checkpoint directory name too long");
		goto fail;
	}
	strcpy(c->dir, dir);
	c->every = _env_long("TOPOML_CKPT_EVERY", 0, LONG_MAX / 2, err,
			     errlen, &bad);
	c->interval = _env_long("TOPOML_CKPT_INTERVAL", 0, 365L * 86400, err,
				errlen, &bad);
	c->keep = (int)_env_long("TOPOML_CKPT_KEEP", 3, 100000, err, errlen,
				 &bad);
	c->restart = _env_long("TOPOML_RESTART_COUNT", 0, INT_MAX, err,
			       errlen, &bad);
	c->shard_timeout = _env_long("TOPOML_CKPT_SHARD_TIMEOUT", 600,
				     365L * 86400, err, errlen, &bad);
	if (bad)
		goto fail;
	if (topoml_ckpt__mkdir_p(c->dir) < 0) {
		snprintf(err, errlen, "%s: %s", c->dir, strerror(errno));
		goto fail;
	}
	if (access(c->dir, W_OK | X_OK) < 0) {
		snprintf(err, errlen, "%s: %s", c->dir, strerror(errno));
		goto fail;
	}
	if (_open_page(c, err, errlen) < 0)
		goto fail;
	c->hot.gen = &c->page->gen;
	c->hot.seen = 0;
	c->resume_step = topoml_ckpt__read_latest(c->dir, c->resume, sizeof(c->resume));
	if (c->resume_step < 0)
		c->resume[0] = '\0';
	if (c->restart > 0)
		topoml_ckpt__write_epoch(c->dir, c->restart);
	_register_pid(c);
	_install_signals(c->page);
	if (c->page_fd < 0 && c->interval > 0) {
		if (pthread_create(&c->timer, NULL, _timer, c) == 0)
			c->timer_on = true;
	}
	_update_next(c, 0);
	return c;
fail:
	free(c);
	return NULL;
}

void topoml_ckpt_close(topoml_ckpt_t *c)
{
	if (!c)
		return;
	if (c->timer_on) {
		c->timer_stop = 1;
		pthread_join(c->timer, NULL);
	}
	if (_sig_page == c->page) {
		_restore_signals();
		_sig_page = NULL;
	}
	if (c->cstep >= 0)
		topoml_ckpt_abort(c);
	munmap(c->page, TOPOML_CKPT_PAGE_SIZE);
	if (c->page_fd >= 0)
		close(c->page_fd);
	while (c->nsn > 0)
		free(c->sn[--c->nsn].h);
	free(c->sn);
	free(c->rows);
	free(c);
}

void topoml_ckpt_set_every(topoml_ckpt_t *c, long steps)
{
	c->every = steps > 0 ? steps : 0;
	_update_next(c, 0);
}

void topoml_ckpt_set_interval(topoml_ckpt_t *c, long seconds)
{
	c->interval = seconds > 0 ? seconds : 0;
	if (c->interval && c->page_fd < 0 && !c->timer_on &&
	    pthread_create(&c->timer, NULL, _timer, c) == 0)
		c->timer_on = true;
}

void topoml_ckpt_set_keep(topoml_ckpt_t *c, int keep)
{
	c->keep = keep > 0 ? keep : 0;
}

void topoml_ckpt_set_reduce(topoml_ckpt_t *c, int (*fn)(int, void *),
			    void *arg)
{
	c->reduce = fn;
	c->reduce_arg = arg;
	_update_next(c, 0);
}

void topoml_ckpt_set_last_step(topoml_ckpt_t *c, long step)
{
	c->last_step = step >= 0 ? step : -1;
}

void topoml_ckpt_finish(topoml_ckpt_t *c)
{
	__atomic_store_n(&c->page->finished, 1, __ATOMIC_SEQ_CST);
}

void topoml_ckpt_set_shards(topoml_ckpt_t *c, int rank, int nranks)
{
	if (nranks > 1 && rank >= 0 && rank < nranks) {
		c->rank = rank;
		c->nranks = nranks;
	} else {
		c->rank = 0;
		c->nranks = 0;
	}
}

const char *topoml_ckpt_resume_path(const topoml_ckpt_t *c)
{
	return c->resume_step >= 0 ? c->resume : NULL;
}

long topoml_ckpt_resume_step(const topoml_ckpt_t *c)
{
	return c->resume_step;
}

const char *topoml_ckpt_dir(const topoml_ckpt_t *c)
{
	return c->dir;
}

int topoml_ckpt_pending(const topoml_ckpt_t *c)
{
	return c->pending >= 0 ||
	       __atomic_load_n(&c->page->gen, __ATOMIC_RELAXED) != c->hot.seen;
}

int topoml_ckpt_stopping(const topoml_ckpt_t *c)
{
	return c->replacing || (__atomic_load_n(&c->page->reason,
						 __ATOMIC_RELAXED) &
				TOPOML_CKPT_R_STOP) != 0;
}

int topoml_ckpt_replacing(const topoml_ckpt_t *c)
{
	return c->replacing;
}

static long _align(const topoml_ckpt_t *c, long s)
{
	if (c->every <= 0)
		return s;
	return (s + c->every - 1) / c->every * c->every;
}

int topoml_ckpt_should_slow(topoml_ckpt_t *c, long step)
{
	uint64_t g = __atomic_load_n(&c->page->gen, __ATOMIC_ACQUIRE);
	bool boundary, due;

	if (g != c->hot.seen) {
		struct topoml_ckpt_page *p = c->page;
		long t;

		c->hot.seen = g;
		_lock(c);
		if (p->target_gen != g) {
			/* A target still ahead answers this event too. */
			if (p->target_step < step)
				p->target_step = _align(c, step + 2);
			p->target_gen = g;
		}
		t = p->target_step;
		_unlock(c);
		if (t >= step && (c->pending < 0 || t < c->pending))
			c->pending = t;
	}
	boundary = c->every > 0 ? step % c->every == 0 : true;
	due = (c->every > 0 && step > 0 && boundary) ||
	      (c->pending >= 0 && step >= c->pending);
	if (c->reduce && boundary)
		due = c->reduce(due, c->reduce_arg) != 0;
	if (due) {
		c->pending = -1;
		/* A checkpoint follows: the next step's time is not compute. */
		c->t_start = 0;
	}
	_update_next(c, step);
	return due;
}

static int64_t _now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int _cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n-1] (sorts v), n > 0. */
static double _median_d(double *v, int n)
{
	qsort(v, n, sizeof(*v), _cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* s as the contents of a JSON string: quote, backslash, controls escaped. */
static void _json_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
}

static struct strag_node *_strag_node(topoml_ckpt_t *c, const char *node)
{
	struct strag_node *n;
	int i;

	for (i = 0; i < c->nsn; i++)
		if (!strcmp(c->sn[i].node, node))
			return &c->sn[i];
	if (!(n = realloc(c->sn, (c->nsn + 1) * sizeof(*n))))
		return NULL;
	c->sn = n;
	n = &c->sn[c->nsn++];
	memset(n, 0, sizeof(*n));
	snprintf(n->node, sizeof(n->node), "%s", node);
	return n;
}

/* Name a node once: stderr (the job's output) and the health report. */
static void _name_straggler(topoml_ckpt_t *c, const char *node,
			    const char *ranks, double ratio, long since,
			    long step, double node_ns, double job_ns)
{
	const char *job = getenv("SLURM_JOB_ID");
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	fprintf(stderr, "topoml: straggler: node %s (ranks %s) %.2fx the "
		"job's median compute time since step %ld\n", node, ranks,
		ratio, since);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!(f = fopen(c->report, "a"))) {
		fprintf(stderr, "topoml: straggler: cannot append to %s: %s\n",
			c->report, strerror(errno));
		return;
	}
	fprintf(f, "{\"event\": \"straggler\", \"job\": \"");
	_json_str(f, job ? job : "");
	fprintf(f, "\", \"job_compute_ms\": %.3f, \"node\": \"", job_ns / 1e6);
	_json_str(f, node);
	fprintf(f, "\", \"node_compute_ms\": %.3f, \"ranks\": [%s], "
		"\"ratio\": %.3f, \"since_step\": %ld, \"step\": %ld, "
		"\"threshold\": %g, \"time\": \"%s\", \"window\": %ld}\n",
		node_ns / 1e6, ranks, ratio, since, step, c->x_threshold, when,
		c->x_window);
	if (fclose(f) != 0)
		fprintf(stderr, "topoml: straggler: %s: %s\n", c->report,
			strerror(errno));
}

/*
 * Policy replace: the first node named ends the step at a checkpoint of
 * this step, on every rank (each ran the same detection on the same rows).
 */
static void _replace(topoml_ckpt_t *c, const char *node, const char *ranks,
		     long step)
{
	if (c->replacing || (c->last_step >= 0 && c->last_step <= step))
		return;
	c->replacing = true;
	snprintf(c->r_node, sizeof(c->r_node), "%s", node);
	snprintf(c->r_ranks, sizeof(c->r_ranks), "%s", ranks);
	c->pending = step;
	c->hot.next = step;	/* the slow path, this very step */
	if (c->x_rank == 0)
		fprintf(stderr, "topoml: straggler: node %s: checkpoint at "
			"step %ld, then topoml-run puts a spare in its place\n",
			node, step);
}

/*
 * Rank 0, the rule of the Python twin (StragglerDetector): a node's value
 * is the median of its ranks' mean compute, the job's the median over all
 * ranks; a node whose median ratio over the windows spanning its last
 * x_window steps is >= x_threshold is named once.  With policy replace
 * every rank runs it (only rank 0 names).
 */
static void _detect(topoml_ckpt_t *c, long first, long last)
{
	int n = c->x_nranks, i, j, nv = 0, nodes = 0;
	double *all, *v, ratio, job, node_v;
	struct strag_rec *r = c->rows;

	all = malloc(2 * n * sizeof(*all));
	if (!all)
		return;
	v = all + n;
	for (i = 0; i < n; i++) {
		r[i].node[sizeof(r[i].node) - 1] = '\0';
		if (r[i].steps > 0 && r[i].mean_ns > 0)
			all[nv++] = r[i].mean_ns;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(r[j].node, r[i].node); j++)
			;
		if (j == i && r[i].steps > 0 && r[i].mean_ns > 0)
			nodes++;
	}
	if (nv == 0 || nodes < 2) {
		free(all);
		return;
	}
	job = _median_d(all, nv);
	for (i = 0; i < n; i++) {
		struct strag_node *sn;
		char ranks[256] = "";
		size_t len = 0;
		long since = -1;
		int k, nr = 0;

		for (j = 0; j < i && strcmp(r[j].node, r[i].node); j++)
			;
		if (j < i)
			continue;	/* node done with its first rank */
		for (j = i; j < n; j++) {
			if (strcmp(r[j].node, r[i].node))
				continue;
			if (len < sizeof(ranks) - 16)
				len += snprintf(ranks + len, sizeof(ranks) - len,
						"%s%d", nr++ ? "," : "",
						r[j].rank);
		}
		nv = 0;
		for (j = i; j < n; j++)
			if (!strcmp(r[j].node, r[i].node) && r[j].steps > 0 &&
			    r[j].mean_ns > 0)
				v[nv++] = r[j].mean_ns;
		if (!nv || !(sn = _strag_node(c, r[i].node)))
			continue;
		node_v = _median_d(v, nv);
		if (sn->nh == sn->cap) {
			struct strag_win *h = realloc(sn->h, (sn->cap = sn->cap ?
						      2 * sn->cap : 8) *
						      sizeof(*h));
			if (!h)
				continue;
			sn->h = h;
		}
		sn->h[sn->nh++] = (struct strag_win){ first, last,
						      node_v / job };
		while (sn->nh > 1 && last - sn->h[1].first + 1 >= c->x_window)
			memmove(sn->h, sn->h + 1, --sn->nh * sizeof(*sn->h));
		if (sn->named || last - sn->h[0].first + 1 < c->x_window)
			continue;
		for (k = 0; k < sn->nh; k++)
			v[k] = sn->h[k].ratio;
		ratio = _median_d(v, sn->nh);
		if (ratio < c->x_threshold)
			continue;
		for (k = 0; k < sn->nh && since < 0; k++)
			if (sn->h[k].ratio >= c->x_threshold)
				since = sn->h[k].first;
		sn->named = true;
		if (c->x_rank == 0)
			_name_straggler(c, r[i].node, ranks, ratio, since, last,
					node_v, job);
		if (c->x_replace)
			_replace(c, r[i].node, ranks, last);
	}
	free(all);
}

static void _exchange(topoml_ckpt_t *c, long step)
{
	struct strag_rec mine;
	long first;

	memset(&mine, 0, sizeof(mine));
	snprintf(mine.node, sizeof(mine.node), "%s", c->node);
	mine.rank = c->x_rank;
	mine.steps = c->t_n > INT32_MAX ? INT32_MAX : (int32_t)c->t_n;
	mine.mean_ns = c->t_n ? (double)c->t_sum / c->t_n : 0;
	/* A window spans the steps since the last exchange. */
	first = c->x_last >= 0 ? c->x_last + 1 : c->t_n ? c->t_first : step;
	c->x_last = step;
	c->t_sum = 0;
	c->t_n = 0;
	if (c->gather(&mine, c->rows, sizeof(mine), c->gather_arg) != 0)
		return;
	if (c->x_rank == 0 || c->x_replace)
		_detect(c, first, step);
}

void topoml_ckpt_step_time(topoml_ckpt_t *c, long step)
{
	if (c->t_start && c->t_mark > c->t_start) {
		c->t_sum += c->t_mark - c->t_start;
		if (!c->t_n++)
			c->t_first = step;
	}
	c->t_mark = 0;
	if (step > 0 && step % c->x_every == 0)
		_exchange(c, step);
	c->t_start = _now_ns();
}

void topoml_ckpt_mark_compute_done(topoml_ckpt_t *c)
{
	if (c->hot.timing)
		c->t_mark = _now_ns();
}

int topoml_ckpt_set_exchange(topoml_ckpt_t *c, int rank, int nranks,
			     int (*gather)(const void *, void *, size_t,
					   void *),
			     void *arg)
{
	const char *s = getenv("TOPOML_STRAGGLER_THRESHOLD");
	const char *pol = getenv("TOPOML_STRAGGLER_POLICY");
	char err[160] = "", *end;
	bool bad = false;
	long every, window;
	double thr = 1.2;
	struct strag_rec *rows;

	c->hot.timing = 0;
	every = _env_long("TOPOML_STRAGGLER_EVERY", 20, 1L << 30, err,
			  sizeof(err), &bad);
	window = _env_long("TOPOML_STRAGGLER_WINDOW", 50, 1L << 30, err,
			   sizeof(err), &bad);
	if (s && *s) {
		errno = 0;
		thr = strtod(s, &end);
		if (errno || *end || !(thr >= 1.0) || thr > 1e6) {
			snprintf(err, sizeof(err), "TOPOML_STRAGGLER_THRESHOLD="
				 "'%s': expected a number >= 1", s);
			bad = true;
		}
	}
	if (pol && *pol && strcmp(pol, "report") && strcmp(pol, "replace")) {
		snprintf(err, sizeof(err), "TOPOML_STRAGGLER_POLICY='%.40s': "
			 "expected report or replace", pol);
		bad = true;
	}
	if (bad || rank < 0 || nranks < 1 || rank >= nranks) {
		if (bad)
			fprintf(stderr, "topoml: %s\n", err);
		errno = EINVAL;
		return -1;
	}
	if (!gather || !every)
		return 0;
	if (!(rows = calloc(nranks, sizeof(*rows)))) {
		errno = ENOMEM;
		return -1;
	}
	free(c->rows);
	c->rows = rows;
	c->gather = gather;
	c->gather_arg = arg;
	c->x_rank = rank;
	c->x_nranks = nranks;
	c->x_every = every;
	c->x_window = window;
	c->x_threshold = thr;
	c->x_replace = pol && !strcmp(pol, "replace");
	c->x_last = -1;
	c->t_start = c->t_mark = c->t_sum = 0;
	c->t_n = 0;
	s = getenv("SLURMD_NODENAME");
	if (s && *s)
		snprintf(c->node, sizeof(c->node), "%s", s);
	else if (gethostname(c->node, sizeof(c->node) - 1) < 0)
		strcpy(c->node, "?");
	s = getenv("TOPOML_HEALTH_REPORT");
	if (s && *s)
		snprintf(c->report, sizeof(c->report), "%s", s);
	else
		snprintf(c->report, sizeof(c->report), "%s/health.jsonl",
			 c->dir);
	c->hot.timing = 1;
	return 0;
}

static int _rm_rf_at(int dfd, const char *name)
{
	int fd, rc = 0;
	DIR *d;
	struct dirent *e;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (_rm_rf_at(dirfd(d), e->d_name) < 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

/* Remove temporary directories of earlier runs of the job. */
static void _clean_stale(topoml_ckpt_t *c)
{
	DIR *d = opendir(c->dir);
	struct dirent *e;
	long r;
	char *s;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, ".tmp-step-", 10) &&
		    strncmp(e->d_name, ".trash-", 7))
			continue;
		if (!strncmp(e->d_name, ".tmp-step-", 10)) {
			s = strstr(e->d_name, "-r");
			r = s ? strtol(s + 2, NULL, 10) : -1;
			if (r >= c->restart)
				continue;
		}
		_rm_rf_at(dirfd(d), e->d_name);
	}
	closedir(d);
}

const char *topoml_ckpt_begin(topoml_ckpt_t *c, long step)
{
	if (step < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (c->cstep >= 0)
		topoml_ckpt_abort(c);
	_clean_stale(c);
	if ((size_t)snprintf(c->tmp, sizeof(c->tmp), "%s/.tmp-step-%012ld-r%ld",
			     c->dir, step, c->restart) >= sizeof(c->tmp)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (mkdir(c->tmp, 0755) < 0 && errno != EEXIST)
		return NULL;
	c->cstep = step;
	return c->tmp;
}

void topoml_ckpt_abort(topoml_ckpt_t *c)
{
	if (c->cstep < 0)
		return;
	_rm_rf_at(AT_FDCWD, c->tmp);
	c->cstep = -1;
}

/* fsync every file and directory below (and including) fd. */
static int _fsync_tree(int fd)
{
	DIR *d;
	struct dirent *e;
	int dfd, rc = 0;

	if ((dfd = dup(fd)) < 0)
		return -1;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return -1;
	}
	while ((e = readdir(d))) {
		int f;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		f = openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (f < 0) {
			if (errno != ELOOP)
				rc = -1;
			continue;
		}
		if (fstat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (_fsync_tree(f) < 0)
				rc = -1;
		} else if (fsync(f) < 0) {
			rc = -1;
		}
		close(f);
	}
	closedir(d);
	if (fsync(fd) < 0)
		rc = -1;
	return rc;
}

static int _cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* Keep the `keep` newest complete checkpoints, never the latest one. */
static void _prune(topoml_ckpt_t *c, int dfd, long latest)
{
	long *steps = NULL, n = 0, cap = 0, i, s;
	char name[64], trash[96];
	struct dirent *e;
	char *end;
	DIR *d;
	int fd;

	if (c->keep <= 0 || (fd = dup(dfd)) < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "step-", 5))
			continue;
		s = strtol(e->d_name + 5, &end, 10);
		if (*end || s < 0)
			continue;
		if (n == cap) {
			long *t = realloc(steps, (cap = cap ? 2 * cap : 16) *
					  sizeof(*steps));
			if (!t)
				goto out;
			steps = t;
		}
		steps[n++] = s;
	}
	qsort(steps, n, sizeof(*steps), _cmp_long);
	for (i = 0; i < n - c->keep; i++) {
		if (steps[i] == latest)
			continue;
		snprintf(name, sizeof(name), "step-%012ld", steps[i]);
		snprintf(trash, sizeof(trash), ".trash-%012ld-%d", steps[i],
			 (int)getpid());
		/* Out of the step-* namespace first, then delete. */
		if (renameat(dfd, name, dfd, trash) == 0)
			_rm_rf_at(dfd, trash);
	}
out:
	closedir(d);
	free(steps);
}

/*
 * Publish a commit in the node's page; the reason it answered.  `finished`
 * is stored before commit_reason: the plugin's timer reads them in the
 * other order, so it never requeues after a commit of the last step.
 */
static uint32_t _record_commit(topoml_ckpt_t *c, bool final)
{
	struct topoml_ckpt_page *p = c->page;
	uint32_t reason;

	_lock(c);
	if (final)
		__atomic_store_n(&p->finished, 1, __ATOMIC_SEQ_CST);
	reason = __atomic_load_n(&p->reason, __ATOMIC_SEQ_CST);
	p->commit_step = c->cstep;
	p->commit_time = time(NULL);
	__atomic_store_n(&p->commit_reason, reason, __ATOMIC_SEQ_CST);
	__atomic_store_n(&p->commit_gen, c->hot.seen, __ATOMIC_SEQ_CST);
	_unlock(c);
	return reason;
}

#define SHARD_POLL_NS (20 * 1000 * 1000)

/*
 * Shards (set_shards): a rank marks its shard complete with an empty
 * `.shard-R` in the temporary directory, after closing its files (rank 0
 * fsyncs the whole tree before the rename).
 */
static int _shard_mark(const topoml_ckpt_t *c, int tfd)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), ".shard-%d", c->rank);
	fd = openat(tfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -1;
	close(fd);
	return fsync(tfd);
}

/* Rank 0: wait for every other rank's marker, then drop the markers. */
static int _shards_wait_marks(const topoml_ckpt_t *c, int tfd)
{
	struct timespec ts = { 0, SHARD_POLL_NS };
	time_t until = time(NULL) + c->shard_timeout;
	char name[32];
	int r = 1;

	while (r < c->nranks) {
		snprintf(name, sizeof(name), ".shard-%d", r);
		/* Markers never go away before the commit: count on. */
		if (faccessat(tfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			r++;
			continue;
		}
		if (time(NULL) >= until) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	for (r = 1; r < c->nranks; r++) {
		snprintf(name, sizeof(name), ".shard-%d", r);
		unlinkat(tfd, name, 0);
	}
	return 0;
}

/*
 * Other ranks: wait until rank 0 committed the step (`latest` names it);
 * ECANCELED when rank 0 gave it up (the temporary directory went away
 * without becoming step-N).
 */
static int _shards_wait_commit(const topoml_ckpt_t *c, int dfd)
{
	struct timespec ts = { 0, SHARD_POLL_NS };
	time_t until = time(NULL) + c->shard_timeout;
	char name[64], path[PATH_MAX];
	struct stat st;

	snprintf(name, sizeof(name), "step-%012ld", c->cstep);
	for (;;) {
		if (topoml_ckpt__read_latest(c->dir, path, sizeof(path)) >=
		    c->cstep)
			return 0;
		if (topoml_ckpt__read_epoch(c->dir, geteuid()) > c->restart) {
			errno = ESTALE;
			return -1;
		}
		if (faccessat(AT_FDCWD, c->tmp, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT &&
		    (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     !S_ISDIR(st.st_mode))) {
			errno = ECANCELED;
			return -1;
		}
		if (time(NULL) >= until) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
}

/*
 * DIR/replace-request for topoml-run (node=, step=, ranks=, job=), whole
 * or not at all (rename).  topoml-run relaunches only from DIR/latest.
 */
static int _replace_request(topoml_ckpt_t *c, int dfd)
{
	const char *job = getenv("SLURM_JOB_ID");
	char tmp[64];
	int fd, saved;
	FILE *f;

	snprintf(tmp, sizeof(tmp), ".replace-request.%d", (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (!(f = fdopen(fd, "w"))) {
		saved = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		errno = saved;
		return -1;
	}
	fprintf(f, "node=%s\nstep=%ld\nranks=%s\njob=%s\n", c->r_node,
		c->cstep, c->r_ranks, job && !strchr(job, '\n') ? job : "");
	if (fclose(f) != 0 || renameat(dfd, tmp, dfd, "replace-request") < 0) {
		saved = errno;
		unlinkat(dfd, tmp, 0);
		errno = saved;
		return -1;
	}
	return 0;
}

int topoml_ckpt_commit(topoml_ckpt_t *c)
{
	struct topoml_ckpt_page *p = c->page;
	char name[64], link_tmp[64];
	int dfd = -1, tfd = -1, rc = -1, saved;
	uint32_t reason;
	long epoch;
	bool final;

	if (c->cstep < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	if ((tfd = open(c->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	final = c->last_step >= 0 && c->cstep >= c->last_step;
	if (c->nranks > 1 && c->rank > 0) {
		if (_shard_mark(c, tfd) < 0 || _shards_wait_commit(c, dfd) < 0)
			goto out;
		reason = _record_commit(c, final);
		c->cstep = -1;
		rc = ((reason & TOPOML_CKPT_R_STOP) || c->replacing) &&
		     !final ? TOPOML_CKPT_STOP : 0;
		goto out;
	}
	if (c->nranks > 1 && _shards_wait_marks(c, tfd) < 0)
		goto out;
	if (_fsync_tree(tfd) < 0)
		goto out;
	epoch = topoml_ckpt__read_epoch(c->dir, geteuid());
	if (epoch > c->restart) {
		errno = ESTALE;
		goto out;
	}
	snprintf(name, sizeof(name), "step-%012ld", c->cstep);
	if (renameat(AT_FDCWD, c->tmp, dfd, name) < 0) {
		if (errno != ENOTEMPTY && errno != EEXIST)
			goto out;
		/* Same step committed before: that copy is complete. */
		_rm_rf_at(AT_FDCWD, c->tmp);
	}
	if (fsync(dfd) < 0)
		goto out;
	/* Before `latest` moves: shard ranks exit then, srun may end us. */
	if (c->replacing && !final && _replace_request(c, dfd) < 0)
		goto out;
	snprintf(link_tmp, sizeof(link_tmp), ".latest.%d", (int)getpid());
	unlinkat(dfd, link_tmp, 0);
	if (symlinkat(name, dfd, link_tmp) < 0)
		goto out;
	if (renameat(dfd, link_tmp, dfd, "latest") < 0) {
		saved = errno;
		unlinkat(dfd, link_tmp, 0);
		errno = saved;
		goto out;
	}
	if (fsync(dfd) < 0)
		goto out;
	reason = _record_commit(c, final);
	_prune(c, dfd, c->cstep);
	c->cstep = -1;
	rc = 0;
	if (c->replacing && !final)
		rc = TOPOML_CKPT_STOP;
	/* The last step: nothing left to run, the loop just ends. */
	else if ((reason & TOPOML_CKPT_R_STOP) && !final) {
		/*
		 * Before the time limit the plugin requeues the job once it
		 * sees this commit; exiting first would end the job instead.
		 */
		if ((reason & TOPOML_CKPT_R_LIMIT) && c->page_fd >= 0) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			int i;

			for (i = 0; i < 1500 &&
			     !__atomic_load_n(&p->requeued, __ATOMIC_SEQ_CST);
			     i++)
				nanosleep(&ts, NULL);
		}
		rc = TOPOML_CKPT_STOP;
	}
out:
	saved = errno;
	if (rc < 0 && c->cstep >= 0) {
		_rm_rf_at(AT_FDCWD, c->tmp);
		c->cstep = -1;
	}
	if (tfd >= 0)
		close(tfd);
	if (dfd >= 0)
		close(dfd);
	errno = saved;
	return rc;
}
