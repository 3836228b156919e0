/*
 * Slurm 22.05's _eval_nodes() (src/plugins/select/cons_tres/job_test.c)
 * for a job of N whole nodes: best fit over runs of consecutive free
 * nodes, in node index order (policy "linear") or along
 * topology/3d_torus's Hilbert curve ("slurm-hilbert").
 *
 * In the core library, not with the other baselines (sim/place_slurm.c):
 * topoml's own torus engine (place_torus.c) takes a Hilbert run when no
 * box of the job's size exists or when its ring is shorter.  Same code
 * as Slurm's (loops, tie-breaks), CPU counts reduced to node counts.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

struct consec {
	int nodes;
	long cpus;
	int start, end;		/* positions in the order */
	int req;		/* first required position, -1 */
	uint64_t weight;
	bool has_weight;
};

static long _cpus(const struct topoml_eval_nodes *e, int v)
{
	return e->cpus ? e->cpus[v] : 1;
}

/* The node at position p of the order (NULL: node index order). */
static inline int _at(const struct topoml_eval_nodes *e, int p)
{
	return e->order ? e->order[p] : p;
}

/* Position p taken already (inmap NULL: runs are taken once each). */
static inline bool _in(const struct topoml_eval_nodes *e, int p)
{
	return e->inmap && e->inmap[p];
}

/*
 * avail's words, read once a call: the runs test every position, and
 * hwloc_bitmap_isset() a call each was most of their time on a large
 * torus.  w NULL: an infinite bitmap, asked of hwloc.
 */
struct aw {
	unsigned long *w;
	int last;	/* the last bit set, -1 none */
};

#define AW_BITS ((int)(8 * sizeof(unsigned long)))

static int _aw_init(struct aw *a, hwloc_const_bitmap_t avail)
{
	a->w = NULL;
	a->last = hwloc_bitmap_last(avail);
	if (a->last < 0 && !hwloc_bitmap_iszero(avail))
		return 0;	/* infinite */
	a->w = calloc(a->last / AW_BITS + 2, sizeof(unsigned long));
	if (!a->w)
		return -1;
	for (int k = 0; k <= a->last / AW_BITS && a->last >= 0; k++)
		a->w[k] = hwloc_bitmap_to_ith_ulong(avail, k);
	return 0;
}

static inline bool _usable(const struct topoml_eval_nodes *e,
			   const struct aw *a, int v)
{
	bool in = !a->w ? hwloc_bitmap_isset(e->avail, v) :
		  v >= 0 && v <= a->last &&
		  ((a->w[v / AW_BITS] >> (v % AW_BITS)) & 1);

	return in && _cpus(e, v) > 0;
}

static bool _done(const struct topoml_eval_nodes *e)
{
	return e->rem_nodes <= 0 && e->rem_cpus <= 0;
}

/* Take position p: _cpus_to_use() with one node wanted, the counters. */
static void _take(struct topoml_eval_nodes *e, int p)
{
	int v = _at(e, p);
	long c = topoml__cpus_to_use(_cpus(e, v), e->rem_cpus);

	if (e->inmap)
		e->inmap[p] = 1;
	if (e->nodes) {
		e->nodes[e->n] = v;
		e->units[e->n] = (int)c;
	}
	e->n++;
	e->rem_cpus -= c;
	e->rem_nodes--;
}

/* Runs of consecutive usable nodes of equal weight; how many. */
static int _runs(const struct topoml_eval_nodes *e, const struct aw *a,
		 struct consec *c)
{
	int nc = 0;

	/* each run zeroed as it starts (not the whole array: a run a
	 * position at most, tens of thousands along a large torus' curve) */
	c[0] = (struct consec){ .req = -1 };
	for (int p = 0; p < e->nn; p++) {
		int v = _at(e, p);
		bool usable = _usable(e, a, v);
		bool required = e->required &&
				hwloc_bitmap_isset(e->required, v);
		uint64_t w = e->weight ? e->weight[v] : 0;

		if (usable && c[nc].has_weight && w != c[nc].weight) {
			if (c[nc].nodes == 0) {
				c[nc].req = -1;
			} else {
				c[nc].end = p - 1;
				c[++nc] = (struct consec){ .req = -1 };
			}
		}
		if (usable) {
			if (c[nc].nodes == 0)
				c[nc].start = p;
			if (required) {
				if (c[nc].req == -1)
					c[nc].req = p;
				continue;
			}
			c[nc].nodes++;
			c[nc].cpus += _cpus(e, v);
			c[nc].weight = w;
			c[nc].has_weight = true;
		} else if (c[nc].nodes == 0) {
			c[nc].req = -1;
			c[nc].has_weight = false;
		} else {
			c[nc].end = p - 1;
			c[++nc] = (struct consec){ .req = -1 };
		}
	}
	if (c[nc].nodes != 0)
		c[nc++].end = e->nn - 1;
	return nc;
}

/* Take from run r: around its first required node, else from its start
 * (when one node is left to take: the single node with the fewest CPUs
 * that hold the rest, the first of equals). */
static void _take_run(struct topoml_eval_nodes *e, const struct aw *aw,
		      const struct consec *r)
{
	int bf = -1;

	if (r->req != -1) {
		for (int p = r->req; p <= r->end && !_done(e); p++)
			if (!_in(e, p) && _usable(e, aw, _at(e, p)))
				_take(e, p);
		for (int p = r->req - 1; p >= r->start && !_done(e); p--)
			if (!_in(e, p) && _usable(e, aw, _at(e, p)))
				_take(e, p);
		return;
	}
	for (int p = r->start; e->rem_nodes <= 1 && p <= r->end; p++) {
		long a = _cpus(e, _at(e, p));

		if (_in(e, p) || !_usable(e, aw, _at(e, p)) ||
		    a < e->rem_cpus)
			continue;
		if (bf == -1 || a < _cpus(e, _at(e, bf))) {
			bf = p;
			if (a == e->rem_cpus)
				break;
		}
	}
	for (int p = r->start; p <= r->end && !_done(e); p++)
		if (!_in(e, p) && _usable(e, aw, _at(e, p)) &&
		    (bf < 0 || p == bf))
			_take(e, p);
}

/* Runs by CPUs, most first, the first of equals first. */
struct run_key {
	long cpus;
	int i;
};

static int _by_cpus(const void *a, const void *b)
{
	const struct run_key *x = a, *y = b;

	if (x->cpus != y->cpus)
		return x->cpus > y->cpus ? -1 : 1;
	return x->i - y->i;
}

/*
 * Where no run holds a required node and all weigh the same, and no run
 * holds the CPUs still wanted, the loop below takes the first run of
 * the most CPUs: runs sorted so once make each such step O(1), not a
 * scan of every run (a job as large as the machine took the runs^2 scan
 * on a large torus: seconds inside slurmctld).  NULL: scan every step.
 */
static int *_sorted_runs(const struct consec *c, int nc)
{
	struct run_key *k;
	int *ord;
	long most = 0;

	for (int i = 0; i < nc; i++) {
		if (c[i].req != -1 || c[i].weight != c[0].weight)
			return NULL;
		if (c[i].cpus > most)
			most = c[i].cpus;
	}
	ord = malloc(sizeof(int) * nc);
	if (!ord)
		return NULL;
	/*
	 * Runs hold a few CPUs each: counted by CPUs, most first, in index
	 * order among equals (the comparator's order, not a comparison
	 * sort: on a 97k-node torus the curve's ~30k runs took ~1.5 ms).
	 */
	if (most <= 4L * nc + 4096) {	/* CPUs are never negative */
		int *at = calloc(most + 2, sizeof(int));

		if (at) {
			for (int i = 0; i < nc; i++)
				at[most - c[i].cpus + 1]++;
			for (long x = 1; x <= most + 1; x++)
				at[x] += at[x - 1];
			for (int i = 0; i < nc; i++)
				ord[at[most - c[i].cpus]++] = i;
			free(at);
			return ord;
		}
	}
	k = malloc(sizeof(*k) * nc);
	if (!k) {
		free(ord);
		return NULL;
	}
	for (int i = 0; i < nc; i++)
		k[i] = (struct run_key){ c[i].cpus, i };
	qsort(k, nc, sizeof(*k), _by_cpus);
	for (int i = 0; i < nc; i++)
		ord[i] = k[i].i;
	free(k);
	return ord;
}

/* The runs' choice and take, Slurm's loop; frees c. */
static int _eval(struct topoml_eval_nodes *e, struct aw *a, struct consec *c,
		 int nc)
{
	int *ord, top = 0;

	ord = nc > 1 ? _sorted_runs(c, nc) : NULL;
	while (nc && !_done(e)) {
		int bn = 0, bi = 0, breq = -1;
		long bcpus = 0;
		bool bsuff = false;
		uint64_t bw = 0;

		while (ord && top < nc && c[ord[top]].nodes == 0)
			top++;
		if (ord && top < nc && c[ord[top]].cpus < e->rem_cpus) {
			/* no run suffices: the scan's choice, at once */
			_take_run(e, a, &c[ord[top]]);
			c[ord[top]].nodes = 0;
			continue;
		}
		for (int i = 0; i < nc; i++) {
			bool suff, nb;

			if (c[i].nodes == 0)
				continue;
			suff = c[i].cpus >= e->rem_cpus &&
			       c[i].nodes >= e->rem_nodes;
			nb = bn == 0 || (breq == -1 && c[i].req != -1) ||
			     c[i].weight < bw;
			if (!nb && c[i].weight == bw &&
			    ((suff && !bsuff) || (suff && c[i].cpus < bcpus) ||
			     (!suff && c[i].cpus > bcpus)))
				nb = true;
			if (nb) {
				bn = c[i].nodes;
				bcpus = c[i].cpus;
				bi = i;
				breq = c[i].req;
				bsuff = suff;
				bw = c[i].weight;
			}
		}
		if (bn == 0)
			break;
		_take_run(e, a, &c[bi]);
		c[bi].nodes = 0;
	}
	free(ord);
	free(c);
	free(a->w);
	return _done(e) ? 0 : 1;
}

int topoml__eval_nodes(struct topoml_eval_nodes *e)
{
	struct consec *c = malloc((e->nn + 1) * sizeof(*c));
	struct aw a;

	if (!c || _aw_init(&a, e->avail)) {
		free(c);
		return -1;
	}
	/* Required nodes first. */
	for (int p = 0; e->required && p < e->nn && e->rem_nodes > 0; p++) {
		if (!hwloc_bitmap_isset(e->required, _at(e, p)))
			continue;
		e->inmap[p] = 1;
		e->rem_cpus -= _cpus(e, _at(e, p));
		e->rem_nodes--;
	}
	return _eval(e, &a, c, _runs(e, &a, c));
}

int topoml__eval_runs(struct topoml_eval_nodes *e, const int *run, int nr)
{
	struct consec *c = malloc((nr + 1) * sizeof(*c));
	struct aw a;

	if (!c || _aw_init(&a, e->avail)) {
		free(c);
		return -1;
	}
	/* as _runs() makes them: usable nodes of one weight (none) */
	for (int i = 0; i < nr; i++) {
		c[i] = (struct consec){ .start = run[2 * i],
					.end = run[2 * i + 1], .req = -1,
					.has_weight = true };
		c[i].nodes = c[i].end - c[i].start + 1;
		for (int p = c[i].start; p <= c[i].end; p++)
			c[i].cpus += _cpus(e, _at(e, p));
	}
	return _eval(e, &a, c, nr);
}

/* A word at a time: where the bits change, by ctz. */
int topoml__bit_runs(const unsigned long *w, int n, int *run)
{
	int nr = 0, nw = (n + AW_BITS - 1) / AW_BITS;
	bool in = false;

	for (int k = 0; k < nw; k++) {
		unsigned long x = w[k];
		int b = 0;

		if (k == nw - 1 && n % AW_BITS)
			x &= (1UL << (n % AW_BITS)) - 1;
		while (b < AW_BITS) {
			/* the rest of the word: where the bit changes */
			unsigned long y = (in ? ~x : x) >> b;
			int z;

			if (!y)
				break;
			z = b + __builtin_ctzl(y);
			if (in)
				run[2 * nr++ + 1] = k * AW_BITS + z - 1;
			else
				run[2 * nr] = k * AW_BITS + z;
			in = !in;
			b = z;
		}
		/* a run that ends with the word goes on into the next */
	}
	if (in)
		run[2 * nr++ + 1] = n - 1;
	return nr;
}

int topoml__place_slurm_linear(const struct place_in *in, bool hilbert,
			       struct topoml_placement *out, char *why,
			       size_t whylen)
{
	const topoml_topo_t *t = in->t;
	int nn = t->nnodes, *ident = NULL, rc = -1;
	struct topoml_eval_nodes e = {
		.nn = nn,
		.avail = in->avail,
		.required = in->nreq ? in->required : NULL,
		.weight = in->req->weight,
		.rem_cpus = in->n,
		.rem_nodes = in->n,
	};

	if (in->req->attempt > 0) {
		snprintf(why, whylen, "%s has no alternative placements",
			 hilbert ? "slurm-hilbert" : "linear");
		return -1;
	}
	if (hilbert) {
		e.order = topoml__torus_curve(t, NULL);
		if (!e.order) {
			snprintf(why, whylen,
				 "slurm-hilbert needs a 3D torus");
			return -1;
		}
	} else {
		e.order = ident = malloc((nn ? nn : 1) * sizeof(int));
		for (int i = 0; ident && i < nn; i++)
			ident[i] = i;
	}
	e.inmap = calloc(nn ? nn : 1, 1);
	if (!e.order || !e.inmap || (rc = topoml__eval_nodes(&e)) < 0) {
		snprintf(why, whylen, "out of memory");
		rc = -1;
		goto out;
	}
	if (rc) {
		snprintf(why, whylen, "%s: no allocation found",
			 hilbert ? "slurm-hilbert" : "linear");
		rc = -1;
		goto out;
	}
	rc = -1;
	out->nodes = malloc(in->n * sizeof(int));
	if (!out->nodes) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	out->n = 0;
	for (int p = 0; p < nn; p++)
		if (e.inmap[p])
			out->nodes[out->n++] = e.order[p];
	rc = 0;
out:
	free(ident);
	free(e.inmap);
	return rc;
}

/*
 * Whether the curve's positions [st, st + len) are all nodes, i is the
 * index of one of them, and free: positions are distinct and ascending, so
 * the window is whole when its ends are where they would be.
 */
static bool _window_free(const uint64_t *pos, const int *pre, int nn, int i,
			 uint64_t st, uint64_t len)
{
	long lo = i - (long)(pos[i] - st), hi = lo + (long)len;

	return lo >= 0 && hi <= nn && pos[lo] == st &&
	       pos[hi - 1] == st + len - 1 &&
	       (uint64_t)(pre[hi] - pre[lo]) == len;
}

/*
 * Buddy best fit along the curve: a power-of-two size n takes a window of
 * the curve of n positions from a multiple of n (a box of the curve's
 * cube) whose cells are all nodes and all free, the one inside the
 * smallest such all-free window of 2n, 4n, ... positions, so that large
 * free windows stay whole.  Positions are the curve's own, not the rank
 * among the nodes: on a torus whose sides are no powers of two a window
 * is still a box, never a run across the curve's jumps.  Without one, or
 * for other sizes, Slurm's best-fit run.  One discipline for every job:
 * exact boxes placed anywhere break the curve's free runs, and runs
 * break the boxes (doc/results.md).
 */
int topoml__place_curve(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	const topoml_topo_t *t = in->t;
	int nn = t->nnodes, n = in->n, best = -1;
	uint64_t bestblk = 0;
	const uint64_t *pos;
	const int *node = topoml__torus_curve(t, &pos);
	int *pre = NULL;
	unsigned long *words;
	const int bpl = sizeof(unsigned long) * CHAR_BIT;

	if (n < 1 || (n & (n - 1)) || n > nn || !node)
		goto run;
	pre = malloc((nn + 1) * sizeof(int));
	if (!pre)
		goto run;
	/* pre[i]: free nodes among the first i along the curve (the free
	 * set's words once, not hwloc_bitmap_isset() per node) */
	pre[0] = 0;
	words = malloc(((nn + bpl - 1) / bpl) * sizeof(*words));
	for (int k = 0; words && k < (nn + bpl - 1) / bpl; k++)
		words[k] = hwloc_bitmap_to_ith_ulong(in->avail, k);
	for (int i = 0; i < nn; i++)
		pre[i + 1] = pre[i] + (words ?
			     (int)(words[node[i] / bpl] >> (node[i] % bpl) &
				   1) :
			     hwloc_bitmap_isset(in->avail, node[i]));
	free(words);
	for (int i = 0; i + n <= nn;) {
		uint64_t st = pos[i] / n * n, blk = n;

		/* the window of i's position: every cell a node, all free */
		if (pos[i] != st || !_window_free(pos, pre, nn, i, st, n)) {
			/* on to the next window's first position */
			while (i < nn && pos[i] < st + n)
				i++;
			continue;
		}
		/* the largest all-free window around it */
		while (blk * 2 <= (uint64_t)nn &&
		       _window_free(pos, pre, nn, i, pos[i] / (blk * 2) *
				    (blk * 2), blk * 2))
			blk *= 2;
		if (best < 0 || blk < bestblk) {
			best = i;
			bestblk = blk;
		}
		/* a window in no larger free one: none can fit better, and
		 * ties keep the first */
		if (bestblk == (uint64_t)n)
			break;
		i += n;
	}
	if (best >= 0) {
		out->nodes = malloc(n * sizeof(int));
		if (!out->nodes)
			goto run;
		out->n = n;
		memcpy(out->nodes, node + best, n * sizeof(int));
		free(pre);
		return 0;
	}
run:
	free(pre);
	return topoml__place_slurm_linear(in, true, out, why, whylen);
}
