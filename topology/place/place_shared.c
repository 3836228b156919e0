/*
 * Placement of jobs that share nodes (issue 18): a job that asks for CPUs
 * or GPUs rather than whole nodes.
 *
 * Whole idle nodes and whole idle leaves are what large jobs wait for, so a
 * shared job goes, in this order:
 *   1. when it fits on one node: onto the partly used node with the least
 *      room that still holds it (cons_tres's best fit), else onto an idle
 *      node of the most used leaf (a leaf that is already broken);
 *   2. else onto the fewest leaves that hold its units, under the lowest
 *      switch (fat-tree) or in one group, else the fewest groups
 *      (dragonfly), picked tightly (the leaves with the least room that
 *      still do, which are the partly used ones), and on each leaf onto
 *      its partly used nodes first.
 * A torus has no leaves: there a job of several nodes takes the box,
 * among those of about the fewest positions that hold it, whose nodes
 * give the lowest span and ring cost over their bounds (the least spare
 * units, the partly used nodes packed, among equals), beside Slurm's own
 * choices along the Hilbert curve and in index order; a one-node job
 * takes the partly used node of best fit, as above, else the first idle
 * one.  cons_tres may refuse a partly used node (memory, GRES the engine
 * does not count): a one-node job then gets the next node in this order, a
 * multi-node job the same rule on the idle nodes only (attempt 1), then
 * nothing.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

struct sh {
	const topoml_topo_t *t;
	const uint32_t *fu;	/* free units per node */
	hwloc_const_bitmap_t partial;
	hwloc_bitmap_t use;	/* nodes that may take the job */
	int nl;			/* leaves (pools) */
	long *cap;		/* free units per leaf */
	int *cnt;		/* usable nodes per leaf */
	bool *idle;		/* leaf whole and idle */
	uint32_t most;		/* the most free units of a usable node */
	unsigned long *usew;	/* use's words, for _use() */
	int *lbm, nlbm;		/* torus: span bound by count, 0 unknown */
};

#define ULBITS ((int)(8 * sizeof(unsigned long)))

static int _leaf(const struct sh *s, int node)
{
	int l = s->t->family == TOPOML_TORUS ? -1 : s->t->nodes[node].leaf;

	return l < 0 ? s->nl - 1 : l;	/* the last pool: no leaf */
}

static inline bool _use(const struct sh *s, int v)
{
	return (s->usew[v / ULBITS] >> (v % ULBITS)) & 1;
}

static bool _partial(const struct sh *s, int node)
{
	return s->partial && hwloc_bitmap_isset(s->partial, node);
}

static int _init(struct sh *s, const struct place_in *in, bool idle_only)
{
	const topoml_topo_t *t = in->t;
	int tcnt = 0;
	long tcap = 0;
	uint32_t most = 0;
	bool torus = t->family == TOPOML_TORUS;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->fu = in->req->free_units;
	s->partial = in->req->partial;
	s->nl = t->nswitches + 1;
	s->use = hwloc_bitmap_alloc();
	s->cap = calloc(s->nl, sizeof(long));
	s->cnt = calloc(s->nl, sizeof(int));
	s->idle = calloc(s->nl, sizeof(bool));
	s->usew = calloc(t->nnodes / ULBITS + 1, sizeof(unsigned long));
	if (!s->use || !s->cap || !s->cnt || !s->idle || !s->usew)
		return -1;
	/* use a word at a time, no call between its bits (the sums stay in
	 * registers); a torus' one pool summed a word at a time, not in
	 * memory a node */
	for (int w = 0; (long)w * ULBITS < t->nnodes; w++) {
		unsigned long a = hwloc_bitmap_to_ith_ulong(in->avail, w);
		unsigned long m = 0, wcap = 0;
		int left = t->nnodes - w * ULBITS;

		if (left < ULBITS)
			a &= (1UL << left) - 1;
		if (idle_only && s->partial)
			a &= ~hwloc_bitmap_to_ith_ulong(s->partial, w);
		for (; a; a &= a - 1) {
			int v = w * ULBITS + __builtin_ctzl(a);
			uint32_t f = s->fu[v];

			if (!f)
				continue;
			m |= a & -a;
			wcap += f;
			if (!torus) {
				s->cap[_leaf(s, v)] += f;
				s->cnt[_leaf(s, v)]++;
			}
			most = f > most ? f : most;
		}
		tcap += wcap;
		tcnt += __builtin_popcountl(m);
		if (m) {
			hwloc_bitmap_set_ith_ulong(s->use, w, m);
			s->usew[w] = m;
		}
	}
	s->most = most;
	if (torus) {
		s->cap[s->nl - 1] += tcap;
		s->cnt[s->nl - 1] += tcnt;
	}
	for (int l = 0; l < t->nswitches; l++) {
		const struct topoml_switch *sw = &t->switches[l];
		bool idle = sw->nnodes > 0 && !sw->nchildren;

		for (int k = 0; k < sw->nnodes && idle; k++)
			idle = hwloc_bitmap_isset(in->avail, sw->nodes[k]) &&
			       !_partial(s, sw->nodes[k]);
		s->idle[l] = idle;
	}
	return 0;
}

static void _clear(struct sh *s)
{
	if (s->use)
		hwloc_bitmap_free(s->use);
	free(s->cap);
	free(s->cnt);
	free(s->idle);
	free(s->usew);
}

/* A node that could hold a one-node job, with its sort key. */
struct nk {
	bool idle_node;
	uint32_t fu;
	bool idle_leaf;
	long leaf_cap;
	int node;
};

/* Partly used nodes first, best fit, then the most used leaves. */
static int _node_cmp(const void *pa, const void *pb)
{
	const struct nk *a = pa, *b = pb;

	if (a->idle_node != b->idle_node)
		return a->idle_node ? 1 : -1;
	if (a->fu != b->fu)
		return a->fu < b->fu ? -1 : 1;
	if (a->idle_leaf != b->idle_leaf)
		return a->idle_leaf ? 1 : -1;
	if (a->leaf_cap != b->leaf_cap)
		return a->leaf_cap < b->leaf_cap ? -1 : 1;
	return a->node - b->node;
}

static int _one_node(struct sh *s, long units, int attempt,
		     hwloc_bitmap_t set)
{
	struct nk *c;
	int n = 0, v, rc = -1;

	c = malloc((hwloc_bitmap_weight(s->use) + 1) * sizeof(*c));
	if (!c)
		return -1;
	hwloc_bitmap_foreach_begin(v, s->use)
		if (s->fu[v] >= units) {
			c[n].idle_node = !_partial(s, v);
			c[n].fu = s->fu[v];
			c[n].idle_leaf = s->idle[_leaf(s, v)];
			c[n].leaf_cap = s->cap[_leaf(s, v)];
			c[n++].node = v;
		}
	hwloc_bitmap_foreach_end();
	qsort(c, n, sizeof(*c), _node_cmp);
	if (attempt < n) {
		hwloc_bitmap_set(set, c[attempt].node);
		rc = 0;
	}
	free(c);
	return rc;
}

struct li {
	long cap;
	int leaf;
	bool idle;
};

/*
 * Most room first; among equals the idle leaves first, because the tight
 * pick takes the last of equal leaves: the partly used one.
 */
static int _leaf_cmp(const void *pa, const void *pb)
{
	const struct li *a = pa, *b = pb;

	if (a->cap != b->cap)
		return a->cap > b->cap ? -1 : 1;
	if (a->idle != b->idle)
		return a->idle ? -1 : 1;
	return b->leaf - a->leaf;
}

/* Take nodes of leaf l, partly used ones first (most room first), until
 * they hold units. */
static long _take_leaf(struct sh *s, int l, long units, int *nodes,
		       hwloc_bitmap_t set)
{
	int n = 0, v;
	long got = 0;

	hwloc_bitmap_foreach_begin(v, s->use)
		if (_leaf(s, v) == l)
			nodes[n++] = v;
	hwloc_bitmap_foreach_end();
	for (int pass = 0; pass < 2 && got < units; pass++) {
		for (int i = 0; i < n && got < units; i++) {
			int best = -1;

			/* pass 0: partly used nodes, the fullest last */
			for (int j = 0; j < n; j++) {
				int x = nodes[j];

				if (x < 0 || _partial(s, x) != !pass)
					continue;
				if (best < 0 || s->fu[x] > s->fu[nodes[best]])
					best = j;
			}
			if (best < 0)
				break;
			hwloc_bitmap_set(set, nodes[best]);
			got += s->fu[nodes[best]];
			nodes[best] = -1;
		}
	}
	return got;
}

/*
 * Fewest leaves among those allowed (NULL = all) that hold units on at
 * least nnodes nodes, picked tightly; with set == NULL only count them.
 * Returns the leaves used (and their room in *room), or -1.
 */
static int _multi(struct sh *s, const unsigned char *allowed, long units,
		  int nnodes, hwloc_bitmap_t set, long *room)
{
	struct li *L = calloc(s->nl, sizeof(*L));
	int *f = calloc(s->nl, sizeof(int)), *take = calloc(s->nl, sizeof(int));
	int *scratch = malloc((s->t->nnodes + 1) * sizeof(int));
	int m = 0, k = -1, rc = -1, picked = 0;
	long sum = 0, cnt = 0, unit_scale = 1;

	if (!L || !f || !take || !scratch)
		goto out;
	for (int l = 0; l < s->nl; l++)
		if (s->cnt[l] && (!allowed || allowed[l])) {
			L[m].cap = s->cap[l];
			L[m].leaf = l;
			L[m++].idle = s->idle[l];
		}
	qsort(L, m, sizeof(*L), _leaf_cmp);
	for (int i = 0; i < m && k < 0; i++) {
		sum += L[i].cap;
		cnt += s->cnt[L[i].leaf];
		if (sum >= units && cnt >= nnodes)
			k = i + 1;
	}
	if (k < 0)
		goto out;
	/* tight_pick works on int: scale huge counts down (never here). */
	while (L[0].cap / unit_scale > 1 << 30)
		unit_scale *= 2;
	for (int i = 0; i < m; i++)
		f[i] = (int)(L[i].cap / unit_scale);
	if (topoml__tight_pick(f, m, k, (int)((units + unit_scale - 1) /
					       unit_scale), take) == 0) {
		cnt = 0;
		for (int i = 0; i < m; i++)
			if (take[i])
				cnt += s->cnt[L[i].leaf];
		if (cnt < nnodes)
			memset(take, 0, m * sizeof(int));
		else
			picked = 1;
	}
	if (!picked)	/* the node count decides: the k largest leaves */
		for (int i = 0; i < k; i++)
			take[i] = f[i];
	if (room) {
		*room = 0;
		for (int i = 0; i < m; i++)
			if (take[i])
				*room += L[i].cap;
	}
	rc = k;
	if (!set)
		goto out;
	/* Units per leaf as picked; then more nodes for -N if needed. */
	for (int i = 0; i < m; i++)
		if (take[i])
			_take_leaf(s, L[i].leaf, (long)take[i] * unit_scale,
				   scratch, set);
	for (int i = 0; i < m && hwloc_bitmap_weight(set) < nnodes; i++) {
		int v;

		if (!take[i])
			continue;
		hwloc_bitmap_foreach_begin(v, s->use)
			if (_leaf(s, v) == L[i].leaf &&
			    hwloc_bitmap_weight(set) < nnodes)
				hwloc_bitmap_set(set, v);
		hwloc_bitmap_foreach_end();
	}
	if (hwloc_bitmap_weight(set) < nnodes)
		rc = -1;
out:
	free(L);
	free(f);
	free(take);
	free(scratch);
	return rc;
}

struct gi {
	long cap;
	int g;
};

/* Groups by room, most first. */
static int _group_cmp(const void *pa, const void *pb)
{
	const struct gi *a = pa, *b = pb;

	if (a->cap != b->cap)
		return a->cap > b->cap ? -1 : 1;
	return a->g - b->g;
}

/*
 * Groups for a dragonfly job that no single group holds: the fewest
 * groups that hold units, picked tightly; allowed gets their routers.
 */
static int _df_groups(struct sh *s, long units, int nnodes,
		      unsigned char *allowed)
{
	const topoml_topo_t *t = s->t;
	int ng = t->ngroups, k = -1, rc = -1;
	int *take = calloc(ng + 1, sizeof(int));
	int *sorted = calloc(ng + 1, sizeof(int));
	struct gi *G = calloc(ng + 1, sizeof(*G));
	long sum = 0, cnt = 0;

	if (!take || !sorted || !G)
		goto out;
	for (int g = 0; g < ng; g++) {
		G[g].g = g;
		for (int r = 0; r < t->groups[g].nrouters; r++)
			G[g].cap += s->cap[t->groups[g].routers[r]];
	}
	qsort(G, ng, sizeof(*G), _group_cmp);
	for (int i = 0; i < ng; i++) {
		const struct topoml_group *g = &t->groups[G[i].g];

		for (int r = 0; r < g->nrouters; r++)
			cnt += s->cnt[g->routers[r]];
		sorted[i] = G[i].cap > 1 << 30 ? 1 << 30 : (int)G[i].cap;
		sum += G[i].cap;
		if (k < 0 && sum >= units && cnt >= nnodes)
			k = i + 1;
	}
	if (k < 0)
		goto out;
	if (topoml__tight_pick(sorted, ng, k, (int)units, take))
		for (int i = 0; i < k; i++)
			take[i] = 1;
	for (int i = 0; i < ng; i++) {
		const struct topoml_group *g = &t->groups[G[i].g];

		if (take[i])
			for (int r = 0; r < g->nrouters; r++)
				allowed[g->routers[r]] = 1;
	}
	rc = 0;
out:
	free(take);
	free(sorted);
	free(G);
	return rc;
}

/* ---- a torus: the best box ------------------------------------------ */

/* One candidate set of a torus job, as the simulator scores it. */
struct tcand {
	int o[3], s[3];		/* its box (s[0] 0: no box) */
	double est;		/* the score foreseen from the box */
	double lb;		/* its span / bound + 1: the score's floor */
	double score;		/* span / bound + ring / bound */
	long spare;		/* units beyond the job's */
	int n;
	int *nodes;
};

/* topoml__torus_span_lb(), each count once a search. */
static int _t_span_lb(struct sh *s, int n)
{
	if (n < 0 || n >= s->nlbm)
		return topoml__torus_span_lb(s->t, n);
	if (!s->lbm[n])
		s->lbm[n] = topoml__torus_span_lb(s->t, n);
	return s->lbm[n];
}

/* Span and ring cost over their bounds, as topoml_score() gives them,
 * of nodes[0..n) (reordered into the ring). */
static double _t_score(struct sh *s, int *nodes, int n)
{
	const topoml_topo_t *t = s->t;
	int st[3], ext[3];
	long vol;
	double ring = 0;

	if (n < 2)
		return 2.0;
	vol = topoml__torus_box(t, nodes, n, true, st, ext);
	if (vol < 0)
		return -1;
	topoml_ring_order(t, nodes, n);
	for (int i = 0; i < n; i++)
		ring += topoml_hops(t, nodes[i], nodes[(i + 1) % n]);
	return (double)vol / _t_span_lb(s, n) +
	       ring / topoml__torus_ring_lb(t, n);
}

/* Lower score first, then less spare (the partly used nodes packed). */
static bool _t_better(const struct tcand *a, const struct tcand *b)
{
	if (!b->nodes)
		return true;
	if (a->score < b->score - 1e-9)
		return true;
	return a->score < b->score + 1e-9 && a->spare < b->spare;
}

/*
 * The usable nodes of c's box, its longest side outermost, less nodes
 * from its far end while the rest still hold units on nnodes nodes:
 * each node kept is needed (cons_tres takes them all), and what is
 * dropped is the end of a slab.  Then the score foreseen: the span of
 * what is kept, and a ring of one hop a node but on a line (there and
 * back, or round the torus) or a whole box of odd sides.
 */
static void _t_est(struct sh *s, struct tcand *c, long vol,
		   const int ext[3]);

static int _t_box_set(struct sh *s, long units, int nnodes, struct tcand *c)
{
	const topoml_topo_t *t = s->t;
	const int *o = c->o, *sd = c->s;
	int ax[3] = { 0, 1, 2 }, i[3], m = 0, st[3], ext[3] = { 1, 1, 1 };
	int *off[3] = { NULL };
	long sum = 0, vol;

	c->nodes = malloc((size_t)sd[0] * sd[1] * sd[2] * sizeof(int));
	if (!c->nodes)
		return -1;
	for (int a = 0; a < 2; a++)	/* ax[2]: the longest side */
		for (int b = a + 1; b < 3; b++)
			if (sd[ax[a]] > sd[ax[b]]) {
				int x = ax[a];

				ax[a] = ax[b];
				ax[b] = x;
			}
	/* each axis' positions, wrapped, as offsets into coord_node (once
	 * a side, not three divisions a cell) */
	off[0] = malloc(((size_t)sd[0] + sd[1] + sd[2]) * sizeof(int));
	if (!off[0])
		return -1;
	off[1] = off[0] + sd[0];
	off[2] = off[1] + sd[1];
	for (int k = 0, step = 1; k < 3; step *= t->dims[k], k++)
		for (int j = 0; j < sd[k]; j++)
			off[k][j] = (o[k] + j) % t->dims[k] * step;
	for (i[2] = 0; i[2] < sd[ax[2]]; i[2]++)
		for (i[1] = 0; i[1] < sd[ax[1]]; i[1]++) {
			int p = off[ax[2]][i[2]] + off[ax[1]][i[1]];
			const int *o0 = off[ax[0]];

			for (i[0] = 0; i[0] < sd[ax[0]]; i[0]++) {
				int v = t->coord_node[p + o0[i[0]]];

				if (v >= 0 && _use(s, v)) {
					c->nodes[m++] = v;
					sum += s->fu[v];
				}
			}
		}
	free(off[0]);
	/* marked, then the rest moved down once */
	for (int k = m - 1, left = m; k >= 0 && left > nnodes; k--) {
		int v = c->nodes[k];

		if (sum - s->fu[v] < units)
			continue;
		sum -= s->fu[v];
		c->nodes[k] = -1;
		left--;
	}
	{
		int j = 0;

		for (int k = 0; k < m; k++)
			if (c->nodes[k] >= 0)
				c->nodes[j++] = c->nodes[k];
		m = j;
	}
	c->n = m;
	c->spare = sum - units;
	vol = m < 2 ? 1 : topoml__torus_box(t, c->nodes, m, true, st, ext);
	if (vol < 0)
		return -1;
	_t_est(s, c, vol, ext);
	return 0;
}

/* The score foreseen for the c->n nodes kept, their box vol of sides ext
 * (_t_box_set()). */
static void _t_est(struct sh *s, struct tcand *c, long vol, const int ext[3])
{
	const topoml_topo_t *t = s->t;
	int m = c->n, big = 0;

	for (int k = 0; k < 3; k++)
		big += m >= 2 && ext[k] > 1;
	c->est = (double)vol / _t_span_lb(s, m);
	c->lb = c->est + 1.0;
	if (big == 1 && m > 2) {
		/* a line: back along itself, or round the torus' ring */
		int k = ext[0] > 1 ? 0 : ext[1] > 1 ? 1 : 2;
		int back = ext[k] - 1, round = t->dims[k] - ext[k] + 1;

		if (t->wrap[k] && round < back)
			back = round;
		c->est += (double)(ext[k] - 1 + back) /
			  topoml__torus_ring_lb(t, m);
	} else {
		/* a whole box with no even side: the tour closes longer */
		bool odd = m == vol;

		for (int k = 0; k < 3; k++)
			if (ext[k] > 1 && !(ext[k] & 1))
				odd = false;
		c->est += odd ? 1.2 : 1.0;
	}
}

/*
 * _t_box_set()'s foreseen score without listing the box's nodes, where
 * it keeps them all (no spare: none can go): their count from the count
 * sums pn, their extent on each axis from the box's slabs that hold
 * units (pu; a usable node holds one at least), a few sums a side, not
 * a read of every position (a large job's 100-150 boxes of a thousand
 * positions, scattered over the torus).  The nodes are listed when the
 * box is scored (_t_box_nodes).
 */
static int _t_box_lazy(struct sh *s, const struct topoml_psum *pu,
		       const struct topoml_psum *pn, struct tcand *c)
{
	const topoml_topo_t *t = s->t;
	const int *d = t->dims;
	char *occ = calloc((size_t)d[0] + d[1] + d[2], 1), *oc = occ;
	int ext[3] = { 1, 1, 1 }, st;
	long vol = 1;

	if (!occ)
		return -1;
	c->nodes = NULL;
	c->spare = 0;
	c->n = topoml__psum_wrap(pn, c->o, c->s);
	for (int a = 0; a < 3 && c->n >= 2; oc += d[a], a++) {
		int so[3] = { c->o[0], c->o[1], c->o[2] };
		int ss[3] = { c->s[0], c->s[1], c->s[2] };

		ss[a] = 1;
		for (int j = 0; j < c->s[a]; j++) {
			so[a] = (c->o[a] + j) % d[a];
			oc[so[a]] = topoml__psum_wrap(pu, so, ss) > 0;
		}
		ext[a] = topoml__axis_extent(oc, d[a], t->wrap[a], true, &st);
		vol *= ext[a];
	}
	free(occ);
	_t_est(s, c, vol, ext);
	return 0;
}

/* c's nodes, where _t_box_lazy() left them unlisted. */
static int _t_box_nodes(struct sh *s, long units, int nnodes, struct tcand *c)
{
	return c->nodes ? 0 : _t_box_set(s, units, nnodes, c);
}

/* Four ints at once (GCC's and Clang's vectors: SSE2 on x86-64). */
typedef int v4i __attribute__((vector_size(16)));
typedef unsigned v4u __attribute__((vector_size(16)));

static inline v4i _v4(const int *p)
{
	v4i r;

	memcpy(&r, p, sizeof(r));
	return r;
}

/*
 * The box sums of a row of origins (prefix sums over the torus, once):
 * D[x], x in 0..d[0], is the sum of the cells before x in the slab of
 * origin (y, z) and sides sd[1] x sd[2], split where the slab wraps round
 * the torus' ends, so that the box at x of side sd[0] is two reads of D.
 * A row costs four reads a position (up to 16 where the slab wraps).
 */
static void _t_row(const struct topoml_psum *g, int y, int z,
		   const int sd[3], int *D)
{
	const int *d = g->d;
	int lo[2][2], hi[2][2], nw[2] = { 1, 1 }, o[2] = { y, z };

	for (int k = 0; k < 2; k++) {
		lo[k][0] = o[k];
		hi[k][0] = o[k] + sd[k + 1];
		if (hi[k][0] > d[k + 1]) {
			hi[k][0] = d[k + 1];
			lo[k][1] = 0;
			hi[k][1] = o[k] + sd[k + 1] - d[k + 1];
			nw[k] = 2;
		}
	}
	for (int a = 0; a < nw[0]; a++)
		for (int b = 0; b < nw[1]; b++) {
			const int *p11, *p01, *p10, *p00;
			int x = 0;

			p11 = &g->p[topoml__psum_at(g, 0, hi[0][a], hi[1][b])];
			p01 = &g->p[topoml__psum_at(g, 0, lo[0][a], hi[1][b])];
			p10 = &g->p[topoml__psum_at(g, 0, hi[0][a], lo[1][b])];
			p00 = &g->p[topoml__psum_at(g, 0, lo[0][a], lo[1][b])];
			for (; x + 4 <= d[0] + 1; x += 4) {
				v4i r = _v4(p11 + x) - _v4(p01 + x) -
					_v4(p10 + x) + _v4(p00 + x);

				if (a || b)
					r += _v4(D + x);
				memcpy(D + x, &r, sizeof(r));
			}
			for (; x <= d[0]; x++)
				D[x] = (a || b ? D[x] : 0) + p11[x] - p01[x] -
				       p10[x] + p00[x];
		}
}

/*
 * Whether a box of the row (its first n origins, side s) holds units
 * with less than w spare: the boxes of a row that none of them could
 * take are then counted read, not read one by one (a loop that
 * vectorises; the scan that reads them finds nothing there either).
 */
static bool _t_row_any(const int *D, int d0, int n, int s, long units,
		       long w)
{
	int m = d0 - s + 1 < n ? d0 - s + 1 : n, hit = 0, un;
	unsigned uw;

	if (units > INT_MAX)
		return false;
	un = (int)units;
	/* u - units as unsigned is below w (< INT_MAX) iff units <= u and
	 * u - units < w: the sums are far below INT_MAX */
	uw = (unsigned)(w > INT_MAX ? INT_MAX : w);
	{
		v4i any = { 0, 0, 0, 0 }, vu = { un, un, un, un };
		v4u vw = { uw, uw, uw, uw };
		int x = 0;

		for (; x + 4 <= m; x += 4)
			any |= (v4i)((v4u)(_v4(D + x + s) - _v4(D + x) - vu) <
				     vw);
		hit = any[0] | any[1] | any[2] | any[3];
		for (; x < m; x++)
			hit |= (unsigned)(D[x + s] - D[x] - un) < uw;
	}
	for (int x = m; x < n; x++)
		hit |= (unsigned)(D[d0] - D[x] + D[x + s - d0] - un) < uw;
	return hit;
}

/*
 * The unit sums mod 2^16, for the rows of a shape whose boxes hold fewer
 * than 2^16 units (vol x most): the same box sums from half the bytes, a
 * vector at a time, to find the rows no box of can take the job.
 */
struct t16 {
	uint16_t *p;	/* topoml_psum's layout, padded; NULL: none */
	int most;	/* the most units a position holds */
	bool wide;	/* 16 to a vector (AVX2), not 8 */
	uint64_t *hits;	/* a plane's rows that may hold a box */
	uint16_t *u;	/* room for its sums (_t_hit16) */
};

/* The most lanes a row is read with: the sums' padding. */
#define T_LANES 16

typedef uint16_t v8u __attribute__((vector_size(16)));

#define T_PLANE_FN _t_plane16
#define T_V v8u
#define T_L 8
#define T_ATTR
#include "place/place_shared_row.h"

/*
 * x86-64's baseline (what a distribution builds for) has 8 lanes of 16
 * bits; where the CPU has AVX2, 16 (a search's hottest loop): chosen
 * when the search starts, so the package still runs everywhere.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define T_WIDE 1
typedef uint16_t v16u __attribute__((vector_size(32)));

#define T_PLANE_FN _t_plane16w
#define T_V v16u
#define T_L 16
#define T_ATTR __attribute__((target("avx2")))
#include "place/place_shared_row.h"
#endif

static bool _t_wide(void)
{
#ifdef T_WIDE
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

/* The rows of a plane read 16 to a vector where wide (the CPU has AVX2),
 * else 8. */
static void _t_hit16(const struct topoml_psum *g, const uint16_t *p16,
		     int z, const int sd[3], int n, int ny, long units,
		     long w, uint16_t *u, uint64_t *hits, bool wide)
{
#ifdef T_WIDE
	if (wide) {
		_t_plane16w(g, p16, z, sd, n, ny, units, w, u, hits);
		return;
	}
#endif
	(void)wide;
	_t_plane16(g, p16, z, sd, n, ny, units, w, u, hits);
}

int topoml__shared_rows16(const struct topoml_psum *g, const uint16_t *p16,
			  int z, const int sd[3], int n, int ny, long units,
			  long w, uint64_t *hits, bool wide)
{
	uint16_t *u = calloc(((size_t)g->d[1] + 1) *
			     ((size_t)g->d[0] + 1 + T_LANES), sizeof(*u));

	if (!u)
		return -1;
	_t_hit16(g, p16, z, sd, n, ny, units, w, u, hits,
		 wide && _t_wide());
	free(u);
	return 0;
}

bool topoml__shared_wide = true;

/* The box at x of side s along a row's D (d0 positions; it may wrap). */
static inline int _t_rsum(const int *D, int d0, int x, int s)
{
	return x + s <= d0 ? D[x + s] - D[x] :
	       D[d0] - D[x] + D[x + s - d0];
}

/*
 * The box at (x, y, z) of sides sd: from its row's D, or where a row has
 * few origins (a box nearly as long as the torus; D would cost more
 * than its boxes, then a read would not bound the work) read alone.
 */
static inline int _t_at(const struct topoml_psum *g, const int *D,
			bool narrow, int x, int y, int z, const int sd[3])
{
	int o[3] = { x, y, z };

	return narrow ? topoml__psum_wrap(g, o, sd) :
	       _t_rsum(D, g->d[0], x, sd[0]);
}

/* Whether the rows of lim0 origins are read box by box. */
static inline bool _t_narrow(const int *d, int lim0)
{
	return 4L * lim0 < d[0] + 1;
}

/* Box sums read at most, then only what was found competes: on a
 * torus of 4608 nodes a search takes a millisecond or two, tens of them
 * where it is fragmented (less and the boxes found get worse there). */
#define T_BUDGET 10000000L
/* Above this many positions the sums leave the caches and a read costs
 * more: the budget shrinks with the torus, so that a search there costs
 * about what one on a torus of this size does (tens of ms at most). */
#define T_BUDGET_NODES 16384L
/* Boxes whose ring is ordered for their exact score: the best foreseen. */
#define T_EXACT 8
/* A box of this many positions or more is foreseen from sums (its nodes
 * listed only if scored): fewer are read faster one by one. */
int topoml__shared_lazy_vol = 256;

/*
 * The origins of a box of sides sd that hold units on nnodes nodes (pn
 * NULL: any count): any (first) or the one with the least spare, into
 * o and *spare.  Whether one does; *reads counts the box sums read.
 */
/*
 * The cells that are not a whole idle node of the most units (anchors):
 * a box with none holds vol x most units, the most spare its volume can
 * have, so a box of less spare holds an anchor.
 */
struct tanch {
	const int *cell;	/* anchor positions, x fastest */
	int n;
	int most;		/* a box without anchors: vol x most units */
};

/* The scan order's index of origin x (lim: origins per axis). */
static long _t_oidx(const int x[3], const int lim[3])
{
	return ((long)x[2] * lim[1] + x[1]) * lim[0] + x[0];
}

/*
 * _t_scan's least spare from the origins of boxes that hold an anchor
 * (the same origin as the scan's: the first in its order among the
 * least), then, when none beats a box without anchors, the scan's first
 * such box.  Reads the boxes round the anchors only: on a torus mostly
 * idle or mostly whole a small job's search then reads a few hundred
 * boxes, not every origin.
 */
static bool _t_scan_anch(const topoml_topo_t *t, const struct topoml_psum *pu,
			 const struct topoml_psum *pn, long units, int nnodes,
			 const int sd[3], const int lim[3],
			 const struct tanch *an, int *row, int o[3],
			 long *spare, long *reads, long budget)
{
	const int *d = t->dims;
	long vol = (long)sd[0] * sd[1] * sd[2], bidx = -1;
	long idle = vol * an->most - units;
	bool found = false;

	for (int i = 0; i < an->n; i++) {
		int p = an->cell[i], c[3], lo[3], hi[3], x[3];

		c[0] = p % d[0];
		c[1] = p / d[0] % d[1];
		c[2] = p / d[0] / d[1];
		for (int k = 0; k < 3; k++) {
			/* origins whose box covers c along axis k */
			if (sd[k] == d[k]) {
				lo[k] = hi[k] = 0;
			} else {
				lo[k] = c[k] - sd[k] + 1;
				hi[k] = c[k];
				if (!t->wrap[k]) {
					if (lo[k] < 0)
						lo[k] = 0;
					if (hi[k] > lim[k] - 1)
						hi[k] = lim[k] - 1;
				}
			}
		}
		for (int z = lo[2]; z <= hi[2]; z++)
			for (int y = lo[1]; y <= hi[1]; y++)
				for (int w = lo[0]; w <= hi[0]; w++) {
					long u, ix;

					x[0] = (w + d[0]) % d[0];
					x[1] = (y + d[1]) % d[1];
					x[2] = (z + d[2]) % d[2];
					if (*reads >= budget)
						return found;
					u = topoml__psum_wrap(pu, x, sd);
					++*reads;
					if (u < units || u - units >= idle ||
					    (found && u - units > *spare))
						continue;
					ix = _t_oidx(x, lim);
					if (found && u - units == *spare &&
					    ix >= bidx)
						continue;
					if (pn && topoml__psum_wrap(pn, x, sd) <
						  nnodes)
						continue;
					memcpy(o, x, sizeof(x));
					*spare = u - units;
					bidx = ix;
					found = true;
				}
	}
	if (found || idle < 0 || vol < nnodes)
		return found;
	/* the first box of no anchor: idle spare, as the scan finds it */
	for (int z = 0; z < lim[2]; z++)
		for (int y = 0; y < lim[1]; y++) {
			bool narrow = _t_narrow(d, lim[0]);

			if (*reads >= budget)
				return false;
			if (!narrow)
				_t_row(pu, y, z, sd, row);
			for (int x = 0; x < lim[0]; x++) {
				if (*reads >= budget)
					return false;
				++*reads;
				if (_t_at(pu, row, narrow, x, y, z, sd) -
				    units != idle)
					continue;
				o[0] = x;
				o[1] = y;
				o[2] = z;
				*spare = idle;
				return true;
			}
		}
	return false;
}

/* row: room for 2 x (d[0] + 1) ints, the rows' sums; h: pu mod 2^16, read
 * where a box holds fewer than 2^16 units */
static bool _t_scan(const topoml_topo_t *t, const struct topoml_psum *pu,
		    const struct topoml_psum *pn, long units, int nnodes,
		    const int sd[3], bool first, int o[3], long *spare,
		    long *reads, long budget, const struct tanch *an,
		    int *row, struct t16 *h)
{
	const int *d = t->dims;
	int lim[3], *du = row, *dn = row + d[0] + 1;
	bool found = false, narrow, use16 = false;
	long vol = (long)sd[0] * sd[1] * sd[2];

	for (int k = 0; k < 3; k++)
		lim[k] = sd[k] == d[k] ? 1 : t->wrap[k] ? d[k] :
			 d[k] - sd[k] + 1;
	if (!first && an && an->cell &&
	    (long)an->n * sd[0] * sd[1] * sd[2] <
	    (long)lim[0] * lim[1] * lim[2])
		return _t_scan_anch(t, pu, pn, units, nnodes, sd, lim, an,
				    row, o, spare, reads, budget);
	narrow = _t_narrow(d, lim[0]);
	use16 = !narrow && h && h->p && units < 65536 &&
		vol * h->most < 65536;
	for (int z = 0; z < lim[2]; z++)
		for (int y = 0; y < lim[1]; y++) {
			bool hn = narrow;

			if (*reads >= budget)
				return found;
			/* a plane's rows at once (as many as the budget
			 * reads, a row reading lim[0]): those that hold a
			 * box with the spare then hold those with the spare
			 * when the row comes, and more (the row's scan then
			 * finds none, reading what it counts) */
			if (use16 && !y) {
				long ny = (budget - *reads + lim[0] - 1) /
					  lim[0];

				_t_hit16(pu, h->p, z, sd, lim[0],
					 ny < lim[1] ? (int)ny : lim[1], units,
					 found ? *spare : LONG_MAX, h->u,
					 h->hits, h->wide);
			}
			if (!use16 && !narrow)
				_t_row(pu, y, z, sd, du);
			if (!narrow &&
			    !(use16 ? h->hits[y / 64] >> (y % 64) & 1 :
			      _t_row_any(du, d[0], lim[0], sd[0], units,
					 found ? *spare : LONG_MAX))) {
				if (budget - *reads <= lim[0]) {
					*reads = budget;
					return found;
				}
				*reads += lim[0];
				continue;
			}
			if (use16)	/* a box may: the row's exact sums */
				_t_row(pu, y, z, sd, du);
			for (int x = 0; x < lim[0]; x++) {
				long u;

				/* honest: a scan stops where the budget ends
				 * (what it found so far still holds the job) */
				if (*reads >= budget)
					return found;
				u = _t_at(pu, du, narrow, x, y, z, sd);
				++*reads;
				if (u < units || (found && u - units >= *spare))
					continue;
				if (pn && !hn) {
					_t_row(pn, y, z, sd, dn);
					hn = true;
				}
				if (pn && _t_at(pn, dn, narrow, x, y, z, sd) <
					  nnodes)
					continue;
				o[0] = x;
				o[1] = y;
				o[2] = z;
				*spare = u - units;
				found = true;
				if (first || !*spare)
					return true;
			}
		}
	return found;
}

struct tpair {
	int a, b, reach;	/* the least volume a x b x c can hold */
};

static int _t_pair_cmp(const void *pa, const void *pb)
{
	const struct tpair *a = pa, *b = pb;

	return a->reach != b->reach ? a->reach - b->reach :
	       a->a * 64 + a->b - (b->a * 64 + b->b);
}

/*
 * P in _t_pair_cmp's order.  Made a-major, so while b < 64 the order of
 * equal reaches is already the comparator's: a stable radix sort by
 * reach then, in a few passes over the bases, not a comparison sort.
 */
static int _t_pair_sort(struct tpair *P, int n, int d1)
{
	struct tpair *tmp;
	int most = 0;

	if (d1 >= 64) {
		qsort(P, n, sizeof(*P), _t_pair_cmp);
		return 0;
	}
	tmp = malloc((n + 1) * sizeof(*tmp));
	if (!tmp)
		return -1;
	for (int i = 0; i < n; i++)
		if (P[i].reach > most)
			most = P[i].reach;
	for (int sh = 0; sh < 32 && most >> sh; sh += 8) {
		int at[257] = { 0 };

		for (int i = 0; i < n; i++)
			at[((P[i].reach >> sh) & 255) + 1]++;
		for (int k = 1; k <= 256; k++)
			at[k] += at[k - 1];
		for (int i = 0; i < n; i++)
			tmp[at[(P[i].reach >> sh) & 255]++] = P[i];
		memcpy(P, tmp, n * sizeof(*P));
	}
	free(tmp);
	return 0;
}

/*
 * Boxes known not to hold the job: a box that holds it still does when it
 * grows, so none of a x b x c does where inf[(a-1) + (b-1) * d[0]] >= c
 * (recorded from whole scans only, onto every smaller base at once).
 */
static void _t_inf_set(int *inf, const int *d, int a, int b, int c)
{
	for (int y = 0; y < b; y++)
		for (int x = 0; x < a; x++)
			if (inf[x + y * d[0]] < c)
				inf[x + y * d[0]] = c;
}

/*
 * The fewest positions of a box that holds the job, or -1.  A box that
 * holds it still does when it grows, so for each base a x b the least
 * height c is a binary search; bases are tried from the smallest volume
 * they could reach, and one that cannot beat the best so far is skipped,
 * as is a box inside one that a whole scan found empty (inf).
 */
static int _t_first(const topoml_topo_t *t, const struct topoml_psum *pu,
		    const struct topoml_psum *pn, long units, int nnodes,
		    int vmin, long *reads, long budget, int *inf, int *row,
		    struct t16 *h)
{
	const int *d = t->dims;
	struct tpair *P = malloc((size_t)d[0] * d[1] * sizeof(*P));
	int np = 0, vf = -1;

	if (!P)
		return -1;
	for (int a = 1; a <= d[0]; a++)
		for (int b = 1; b <= d[1]; b++) {
			int c = (vmin + a * b - 1) / (a * b);

			if (c <= d[2]) {
				P[np].a = a;
				P[np].b = b;
				P[np++].reach = a * b * c;
			}
		}
	if (_t_pair_sort(P, np, d[1])) {
		free(P);
		return -1;
	}
	for (int i = 0; i < np && *reads < budget; i++) {
		int ab = P[i].a * P[i].b, lo = P[i].reach / ab, hi = d[2];
		int o[3], found = -1;
		long spare;

		if (vf > 0 && P[i].reach >= vf)
			break;
		if (vf > 0 && (vf - 1) / ab < hi)
			hi = (vf - 1) / ab;
		while (lo <= hi) {
			int mid = (lo + hi) / 2;
			int sd[3] = { P[i].a, P[i].b, mid };

			if (inf[sd[0] - 1 + (sd[1] - 1) * d[0]] < mid &&
			    _t_scan(t, pu, pn, units, nnodes, sd, true, o,
				    &spare, reads, budget, NULL, row, h)) {
				found = mid;
				hi = mid - 1;
			} else {
				if (*reads < budget)
					_t_inf_set(inf, d, sd[0], sd[1], mid);
				lo = mid + 1;
			}
		}
		if (found > 0)
			vf = ab * found;
	}
	free(P);
	return vf;
}

/*
 * c's score, but where its span alone (its ring costs its bound at least)
 * shows it cannot beat best: then -1, unordered (Slurm's runs are spread
 * on a large torus: the ring order of a set no better than the best).
 */
static int _t_eval_score(struct sh *s, const struct tcand *best,
			 struct tcand *c)
{
	int st[3], ext[3];
	long vol;
	double lb;

	if (best->nodes && c->n >= 2) {
		vol = topoml__torus_box(s->t, c->nodes, c->n, true, st, ext);
		if (vol < 0)
			return -1;
		lb = (double)vol / _t_span_lb(s, c->n) + 1.0;
		if (lb >= best->score + 1e-9 ||
		    (lb >= best->score - 1e-9 && c->spare >= best->spare))
			return -1;
	}
	c->score = _t_score(s, c->nodes, c->n);
	return c->score < 0 ? -1 : 0;
}

/*
 * Slurm's _eval_nodes() by units along order (the Hilbert curve, or
 * node index order where NULL): a candidate beside the boxes.  Its runs
 * are those of the usable nodes, found a word at a time in a bitmap of
 * the positions (use's own words in index order, gathered once along the
 * curve), not a position at a time.
 */
static int _t_eval(struct sh *s, const int *order, long units, int nnodes,
		   const struct tcand *best, struct tcand *c)
{
	int nn = s->t->nnodes, nw = nn / ULBITS + 1, nr;
	unsigned long *cw = NULL;
	const unsigned long *w = s->usew;
	int *run = malloc(((size_t)nn / 2 + 2) * 2 * sizeof(int));
	long most = units > nnodes ? units : nnodes;
	struct topoml_eval_nodes e = {
		.order = order,
		.nn = nn,
		.avail = s->use,
		/* the usable nodes' units: the runs read no others */
		.cpus = s->fu,
		.rem_cpus = units,
		.rem_nodes = nnodes,
	};
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!run)
		return -1;
	if (order) {
		/* without branches: half the nodes are free, at random */
		cw = calloc(nw, sizeof(*cw));
		if (!cw)
			goto out;
		for (int k = 0; k < nw; k++) {
			int p0 = k * ULBITS, p1 = nn - p0 < ULBITS ? nn :
						 p0 + ULBITS;
			unsigned long x = 0;

			/* a word in a register, stored once */
			for (int p = p0; p < p1; p++)
				x |= (unsigned long)_use(s, order[p]) <<
				     (p - p0);
			cw[k] = x;
		}
		w = cw;
	}
	nr = topoml__bit_runs(w, nn, run);
	/* each node taken holds a unit or is a node wanted */
	e.nodes = malloc(((most < nn ? most : nn) + 1) * sizeof(int));
	e.units = malloc(((most < nn ? most : nn) + 1) * sizeof(int));
	if (e.nodes && e.units && topoml__eval_runs(&e, run, nr) == 0 &&
	    e.n > 0) {
		long sum = 0;

		c->nodes = e.nodes;
		e.nodes = NULL;
		c->n = e.n;
		for (int i = 0; i < c->n; i++)
			sum += s->fu[c->nodes[i]];
		c->spare = sum - units;
		rc = _t_eval_score(s, best, c);
	}
out:
	free(run);
	free(cw);
	free(e.nodes);
	free(e.units);
	return rc;
}

/*
 * A box with no spare whose span and ring are at their bounds: no set
 * beats it.  Where the budget cuts the search short (a large torus) the
 * search ends there: the boxes after it could only tie.
 */
static bool _t_at_bounds(struct sh *s, long units, int nnodes,
			 struct tcand *c)
{
	if (c->spare || c->est >= 2.0 + 1e-9 ||
	    _t_box_nodes(s, units, nnodes, c))
		return false;
	c->score = _t_score(s, c->nodes, c->n);
	return c->score >= 0 && c->score < 2.0 + 1e-9;
}

/* Foreseen score, then spare, then the order found. */
static int _t_est_cmp(const void *pa, const void *pb)
{
	const struct tcand *a = pa, *b = pb;

	if (a->est != b->est)
		return a->est < b->est ? -1 : 1;
	if (a->spare != b->spare)
		return a->spare < b->spare ? -1 : 1;
	return 0;
}


/* The usable nodes' count sums. */
static int _t_count_sums(struct sh *s, struct topoml_psum *pn)
{
	const topoml_topo_t *t = s->t;
	const int *d = t->dims;

	if (topoml__psum_alloc(pn, d))
		return -1;
	for (int z = 0, p = 0; z < d[2]; z++)
		for (int y = 0; y < d[1]; y++) {
			int *r = &pn->p[topoml__psum_at(pn, 1, y + 1, z + 1)];

			for (int x = 0; x < d[0]; x++, p++) {
				int v = t->coord_node[p];

				r[x] = v >= 0 && _use(s, v);
			}
		}
	topoml__psum_finish(pn);
	return 0;
}

/*
 * A torus job that needs several nodes: for every shape of box from the
 * fewest positions that could hold it up to a few more than the first
 * that does (a line is short, but its ring goes there and back), the
 * origin where it holds the job's units on nnodes nodes with the least
 * spare (the partly used nodes, packed); its nodes as _t_box_set() keeps
 * them.  The best foreseen are scored exactly, beside Slurm's own
 * choices along the Hilbert curve and in index order; the best by span
 * and ring cost over their bounds wins.  -1 when no candidate.
 */
static int _torus_best(struct sh *s, long units, int nnodes,
		       hwloc_bitmap_t set)
{
	const topoml_topo_t *t = s->t;
	const int *d = t->dims;
	int np = d[0] * d[1] * d[2], vmin, vf = -1, nfull = 0;
	int nc = 0, cap = 0, rc = -1, v;
	uint32_t most = 1, clip;
	long reads = 0, budget = T_BUDGET;
	struct topoml_psum pu = { .p = NULL }, pn = { .p = NULL };
	struct tcand best = { .nodes = NULL }, c, *cv = NULL;
	const int *curve = topoml__torus_curve(t, NULL);
	struct tanch an = { .n = 0 };
	struct t16 h = { .p = NULL, .hits = NULL, .u = NULL };
	int *anch = NULL, *inf = NULL, *row = NULL;
	bool cnt = false;

	if (!t->coord_node || np <= 0)
		return -1;
	if (np > T_BUDGET_NODES)
		budget = T_BUDGET / np * T_BUDGET_NODES;
	/* the sums are ints (the clip of sums over the torus twice in
	 * each axis, as they were: the same boxes compare the same) */
	clip = (uint32_t)(INT_MAX / 8 / np);
	if (!clip)
		clip = 1;
	inf = calloc((size_t)d[0] * d[1], sizeof(int));
	row = calloc(2 * ((size_t)d[0] + 1), sizeof(int));
	s->nlbm = (np < 4096 ? np : 4096) + 1;
	s->lbm = calloc(s->nlbm, sizeof(int));
	if (!s->lbm)
		s->nlbm = 0;
	if (!inf || !row || topoml__psum_alloc(&pu, d))
		goto out;
	/* the usable nodes' units (clipped) into the sums; anchors are the
	 * positions below the most of them (an.most), nfull the others */
	for (int z = 0, p = 0; z < d[2]; z++)
		for (int y = 0; y < d[1]; y++) {
			int *r = &pu.p[topoml__psum_at(&pu, 1, y + 1, z + 1)];

			int sum = 0;

			/* without branches but the rare new most: half the
			 * positions are usable, at random; the running sum
			 * along x, as the sums begin */
			for (int x = 0; x < d[0]; x++, p++) {
				int w, u;
				bool ok;
				uint32_t f;

				v = t->coord_node[p];
				w = v < 0 ? 0 : v;
				ok = v >= 0 && _use(s, w);
				f = ok ? s->fu[w] : 0;
				u = (int)(f > clip ? clip : f);
				sum += u;
				r[x] = sum;
				most = f > most ? f : most;
				if (u > an.most) {
					an.most = u;
					nfull = 0;
				}
				nfull += ok && u == an.most;
			}
		}
	if (an.most < 1) {
		an.most = 1;
		nfull = 0;
	}
	/* a box of units holds at least units / most nodes: count them only
	 * where that may be fewer than the job's */
	cnt = nnodes > 1 && (long)nnodes * an.most > units;
	if (cnt && _t_count_sums(s, &pn))
		goto out;
	/* the sums mod 2^16 beside them, for the scans' rows (padded: read
	 * a vector at a time past a row's end) */
	if (d[0] < 32768) {
		size_t nc = (size_t)(d[0] + 1) * (d[1] + 1) * (d[2] + 1);

		h.p = malloc((nc + T_LANES) * sizeof(*h.p));
		h.hits = malloc(((size_t)d[1] / 64 + 1) * sizeof(*h.hits));
		/* zeroed: a vector's lanes past a row's last origin are
		 * read (and masked) before any is stored there */
		h.u = calloc(((size_t)d[1] + 1) * ((size_t)d[0] + 1 + T_LANES),
			     sizeof(*h.u));
		if (h.p)
			memset(h.p + nc, 0, T_LANES * sizeof(*h.p));
		if (!h.hits || !h.u) {
			free(h.p);
			h.p = NULL;
		}
	}
	topoml__psum_finish_yz(&pu, h.p);
	vmin = (int)((units + most - 1) / most);
	if (vmin < nnodes)
		vmin = nnodes;
	/* the scans read round the anchors only where there are fewer of
	 * them than origins over the least volume: list them then */
	if ((long)(np - nfull) * vmin < np) {
		anch = malloc(np * sizeof(int));
		if (!anch)
			goto out;
		for (int p = 0; p < np; p++) {
			int x = t->coord_node[p];

			if (x < 0 || !_use(s, x) ||
			    (int)(s->fu[x] > clip ? clip : s->fu[x]) <
			    an.most)
				anch[an.n++] = p;
		}
		an.cell = anch;
	}
	/* the first volume may spend half the budget: the shapes from it
	 * are then searched too, whatever it found */
	h.most = an.most;
	h.wide = topoml__shared_wide && _t_wide();
	vf = _t_first(t, &pu, cnt ? &pn : NULL, units, nnodes, vmin, &reads,
		      budget / 2, inf, row, &h);
	for (int vol = vf; vf > 0 && vol <= np && reads < budget &&
	     vol <= vf + 2 + (vf / 8 < 8 ? vf / 8 : 8); vol++) {
		for (int a = 1; a <= d[0] && a <= vol; a++) {
			for (int b = 1; b <= d[1] && a * b <= vol; b++) {
				int sd[3] = { a, b, vol / (a * b) }, bo[3];
				long bspare;

				if (vol % (a * b) || sd[2] > d[2] ||
				    inf[a - 1 + (b - 1) * d[0]] >= sd[2] ||
				    !_t_scan(t, &pu, cnt ? &pn : NULL,
					     units, nnodes, sd, false, bo,
					     &bspare, &reads, budget, &an,
					     row, &h))
					continue;
				if (nc == cap) {
					struct tcand *x;

					cap = cap ? 2 * cap : 32;
					x = realloc(cv, cap * sizeof(*cv));
					if (!x)
						goto out;
					cv = x;
				}
				memset(&cv[nc], 0, sizeof(cv[nc]));
				memcpy(cv[nc].o, bo, sizeof(bo));
				memcpy(cv[nc].s, sd, sizeof(sd));
				/* no spare and no clip, a large box: its
				 * nodes listed only if it is scored */
				if (!bspare && most <= clip &&
				    vol >= topoml__shared_lazy_vol && !pn.p &&
				    _t_count_sums(s, &pn))
					goto out;
				if (!bspare && most <= clip &&
				    vol >= topoml__shared_lazy_vol ?
				    _t_box_lazy(s, &pu, &pn, &cv[nc++]) :
				    _t_box_set(s, units, nnodes, &cv[nc++]))
					goto out;
				if (np > T_BUDGET_NODES &&
				    _t_at_bounds(s, units, nnodes,
						 &cv[nc - 1])) {
					best = cv[nc - 1];
					goto take;
				}
			}
		}
	}
	if (nc)
		qsort(cv, nc, sizeof(*cv), _t_est_cmp);
	for (int i = 0; i < nc && i < T_EXACT; i++) {
		/* the ring costs its bound at least: a box that could not
		 * beat the best even so is not ordered */
		if (best.nodes && (cv[i].lb >= best.score + 1e-9 ||
				   (cv[i].lb >= best.score - 1e-9 &&
				    cv[i].spare >= best.spare)))
			continue;
		if (_t_box_nodes(s, units, nnodes, &cv[i]))
			goto out;
		cv[i].score = _t_score(s, cv[i].nodes, cv[i].n);
		if (cv[i].score >= 0 && _t_better(&cv[i], &best))
			best = cv[i];
	}
	for (int k = 0; k < 2; k++) {
		if (!k && !curve)
			continue;
		/* no set scores below 2 (span and ring at their bounds) nor
		 * spares less than none: Slurm's choices cannot beat that */
		if (best.nodes && best.score < 2.0 + 1e-9 && best.spare <= 0)
			break;
		if (_t_eval(s, k ? NULL : curve, units, nnodes, &best,
			    &c) == 0 &&
		    _t_better(&c, &best)) {
			/* the boxes' sets are freed with cv */
			if (best.nodes && !best.s[0])
				free(best.nodes);
			best = c;
		} else {
			free(c.nodes);
		}
	}
take:
	if (best.nodes) {
		for (int i = 0; i < best.n; i++)
			hwloc_bitmap_set(set, best.nodes[i]);
		rc = 0;
	}
	if (!best.s[0])
		free(best.nodes);
out:
	for (int i = 0; i < nc; i++)
		free(cv[i].nodes);
	free(cv);
	free(anch);
	free(inf);
	free(row);
	free(h.p);
	free(h.hits);
	free(h.u);
	free(s->lbm);
	s->lbm = NULL;
	s->nlbm = 0;
	topoml__psum_free(&pu);
	topoml__psum_free(&pn);
	return rc;
}

/*
 * A job that needs several nodes: the candidate with the fewest leaves,
 * then the lowest switch (fat-tree: any switch's subtree; dragonfly: one
 * group, else the fewest groups), then the least room: leaves inside it
 * as _multi picks them.
 */
static int _multi_best(struct sh *s, long units, int nnodes,
		       hwloc_bitmap_t set)
{
	const topoml_topo_t *t = s->t;
	unsigned char *ok = calloc(s->nl, 1), *best = calloc(s->nl, 1);
	int bk = -1, blevel = 0, rc = -1;
	long broom = 0;

	if (!ok || !best)
		goto out;
	if (t->family == TOPOML_FAT_TREE) {
		for (int sw = 0; sw < t->nswitches; sw++) {
			const struct topoml_switch *x = &t->switches[sw];
			long room;
			int k;

			if (!x->nchildren)
				continue;
			for (int l = 0; l < t->nswitches; l++)
				ok[l] = !t->switches[l].nchildren &&
					t->switches[l].nnodes &&
					hwloc_bitmap_isset(x->desc,
						t->switches[l].nodes[0]);
			ok[s->nl - 1] = 0;
			k = _multi(s, ok, units, nnodes, NULL, &room);
			if (k < 0)
				continue;
			if (bk < 0 || k < bk || (k == bk &&
			    (x->level < blevel || (x->level == blevel &&
						   room < broom)))) {
				bk = k;
				blevel = x->level;
				broom = room;
				memcpy(best, ok, s->nl);
			}
		}
	} else if (t->family == TOPOML_DRAGONFLY) {
		for (int g = 0; g < t->ngroups; g++) {
			const struct topoml_group *gr = &t->groups[g];
			long room;
			int k;

			memset(ok, 0, s->nl);
			for (int r = 0; r < gr->nrouters; r++)
				ok[gr->routers[r]] = 1;
			k = _multi(s, ok, units, nnodes, NULL, &room);
			if (k >= 0 && (bk < 0 || k < bk ||
				       (k == bk && room < broom))) {
				bk = k;
				broom = room;
				memcpy(best, ok, s->nl);
			}
		}
		if (bk < 0) {
			memset(best, 0, s->nl);
			if (_df_groups(s, units, nnodes, best) == 0)
				bk = 0;
		}
	} else if (t->family == TOPOML_TORUS &&
		   _torus_best(s, units, nnodes, set) == 0) {
		rc = 0;
		goto out;
	}
	/* No subtree or group holds it (or a torus): every leaf. */
	rc = _multi(s, bk >= 0 ? best : NULL, units, nnodes, set, NULL);
	if (rc < 0 && bk >= 0) {
		hwloc_bitmap_zero(set);
		rc = _multi(s, NULL, units, nnodes, set, NULL);
	}
out:
	free(ok);
	free(best);
	return rc < 0 ? -1 : 0;
}

int topoml__place_shared(const struct place_in *in,
			 struct topoml_placement *out, char *why,
			 size_t whylen)
{
	const struct topoml_place_req *req = in->req;
	long units = req->units;
	struct sh s;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int rc = -1;

	memset(&s, 0, sizeof(s));
	if (!set || _init(&s, in, false)) {
		snprintf(why, whylen, "out of memory");
		goto clear;
	}
	if (in->n <= 1 && units <= s.most) {
		/* Attempt k: the k-th best node. */
		rc = _one_node(&s, units, req->attempt, set);
	} else if (req->attempt <= 1) {
		/* Attempt 1: the idle nodes only. */
		if (req->attempt == 1) {
			_clear(&s);
			memset(&s, 0, sizeof(s));
			if (_init(&s, in, true)) {
				snprintf(why, whylen, "out of memory");
				goto clear;
			}
		}
		rc = _multi_best(&s, units, in->n, set);
	}
	if (rc) {
		snprintf(why, whylen,
			 "no %s choice %d for %ld units on %d node(s)",
			 req->attempt == 1 ? "idle-node" : "shared-node",
			 req->attempt, units, in->n);
		goto clear;
	}
	rc = topoml__placement_from_set(in->t, set, out);
	if (rc)
		snprintf(why, whylen, "out of memory");
clear:
	_clear(&s);
	if (set)
		hwloc_bitmap_free(set);
	return rc;
}
