/*
 * The cost model: one definition of a placement's quality, used by the
 * engine, the CLI, the simulator and the tests.  A job of n nodes runs its
 * ranks as a ring in the order of p->nodes (the ring all-reduce of
 * data-parallel training).  Hops are topoml_hops(): fat-tree 2 * (common
 * switch level + 1), dragonfly 2 same router, 3 same group, 3 + 2 * global
 * hops across groups, torus the Manhattan distance with wrap-around.
 *
 * ring_cost         sum of hops between consecutive ranks, ring closed
 *                   (n = 2 counts the pair twice, n = 1 costs 0).
 * ring_lower_bound  the least ring cost any n nodes of this topology can
 *                   have, busy nodes ignored: fat-tree 2n + 2 * sum over
 *                   levels l >= 1 of M(l-1) where M(l) is the fewest
 *                   level-l subtrees that hold n nodes (counted only when
 *                   more than one: each is entered once by the ring);
 *                   dragonfly 2n + M(routers) + 2 * M(groups) (same rule);
 *                   torus n (n + 1 for odd n when the torus is bipartite).
 * span              leaves used (fat-tree), groups used (dragonfly),
 *                   volume of the smallest wrap-aware box around the nodes
 *                   (torus).
 * span_lower_bound  the fewest leaves / groups that can hold n nodes, or
 *                   the smallest box of volume >= n that fits the torus.
 * ..._free          the same two bounds with only the nodes of avail
 *                   counted (fat-tree and dragonfly; on a torus equal to
 *                   the bounds above): 'leaves=2/2' then says the engine
 *                   did the best the free nodes allow.
 * global_hops       dragonfly: global links crossed along the ring.
 * mean_pair_hops    mean hops over all rank pairs (what all-to-all pays),
 *                   computed per subtree / group / dimension, not per pair.
 * largest_free_after  fragmentation: the largest job that could still be
 *                   placed at the best level once this placement is taken
 *                   from avail: on its fewest possible leaves (fat-tree)
 *                   or groups (dragonfly), i.e. the largest F(k) = sum of
 *                   the k largest free counts with F(k) > S(k-1), the
 *                   k-1 largest capacities; on a torus the largest
 *                   all-free box.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "model/model_int.h"

static int _desc_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x < y) - (x > y);
}

/* Decreasing order; counting sort when values are small (leaf sizes). */
static void _sort_desc(int *v, int m)
{
	int mx = 0, *h, pos = 0;

	for (int i = 0; i < m; i++)
		mx = v[i] > mx ? v[i] : mx;
	if (mx > 4 * m + 1024 || !(h = calloc(mx + 1, sizeof(int)))) {
		qsort(v, m, sizeof(int), _desc_cmp);
		return;
	}
	for (int i = 0; i < m; i++)
		h[v[i] < 0 ? 0 : v[i]]++;
	for (int x = mx; x >= 0; x--)
		for (int c = h[x]; c > 0; c--)
			v[pos++] = x;
	free(h);
}

/* Fewest of the capacities that hold n. */
static int _min_cover(int *cap, int m, int n)
{
	int k, mx = 0;

	for (int i = 0; i < m; i++)
		mx = cap[i] > mx ? cap[i] : mx;
	if (n <= mx)
		return 1;	/* the common case: no sort */
	_sort_desc(cap, m);
	k = topoml__min_items(cap, m, n);
	return k < 0 ? m : k;
}

/* Fat-tree: the level-l unit of a leaf, following first parents. */
static int _unit(const topoml_topo_t *t, int leaf, int l)
{
	int u = leaf;

	while (t->switches[u].level < l && t->switches[u].nparents)
		u = t->switches[u].parents[0];
	return u;
}

/* M(l) of the fat-tree: fewest level-l units holding n nodes, leaf s
 * holding leafcap[s] of them. */
static int _ft_units_needed(const topoml_topo_t *t, int l, int n,
			    const int *leafcap)
{
	int *cap = malloc(t->nswitches * sizeof(int)), m = 0, k;
	int *sum = calloc(t->nswitches, sizeof(int));

	if (!cap || !sum) {
		free(cap);
		free(sum);
		return 1;
	}
	/* capacities from leaf counts: no bitmap weights per switch */
	for (int s = 0; s < t->nswitches; s++)
		if (!t->switches[s].nchildren)
			sum[_unit(t, s, l)] += leafcap[s];
	for (int s = 0; s < t->nswitches; s++)
		if (sum[s])
			cap[m++] = sum[s];
	k = _min_cover(cap, m, n);
	free(cap);
	free(sum);
	return k;
}

/* Nodes of a dragonfly group, router r holding cap[r] (no bitmap
 * weights). */
static int _group_size(const topoml_topo_t *t, int g, const int *cap)
{
	int n = 0;

	for (int k = 0; k < t->groups[g].nrouters; k++)
		n += cap[t->groups[g].routers[k]];
	return n;
}

/*
 * Nodes each leaf / router can give: all of them, or those in avail
 * (one pass over avail, not one bitmap intersection per switch).
 */
static int *_switch_caps(const topoml_topo_t *t, hwloc_const_bitmap_t avail)
{
	int *cap = calloc(t->nswitches + 1, sizeof(int)), i;

	if (!cap)
		return NULL;
	if (!avail) {
		for (int s = 0; s < t->nswitches; s++)
			cap[s] = t->switches[s].nnodes;
		return cap;
	}
	hwloc_bitmap_foreach_begin(i, avail) {
		if (i >= t->nnodes)
			break;
		if (t->nodes[i].leaf >= 0)
			cap[t->nodes[i].leaf]++;
	} hwloc_bitmap_foreach_end();
	return cap;
}

/* A node of group g, -1 if it has none. */
static int _group_node(const topoml_topo_t *t, int g)
{
	for (int k = 0; k < t->groups[g].nrouters; k++) {
		const struct topoml_switch *sw =
			&t->switches[t->groups[g].routers[k]];

		if (sw->nnodes)
			return sw->nodes[0];
	}
	return -1;
}

static double _ring_lb(const topoml_topo_t *t, int n, const int *swcap)
{
	double lb = 2.0 * n;

	if (n < 2)
		return 0;
	switch (t->family) {
	case TOPOML_FAT_TREE:
		for (int l = 1; l <= t->nlevels; l++) {
			int m = _ft_units_needed(t, l - 1, n, swcap);

			if (m > 1)
				lb += 2.0 * m;
		}
		return lb;
	case TOPOML_DRAGONFLY: {
		int *cap = malloc((t->nswitches + t->ngroups + 1) *
				  sizeof(int)), mr, mg;

		if (!cap)
			return lb;
		for (int g = 0; g < t->ngroups; g++)
			cap[g] = _group_size(t, g, swcap);
		mg = _min_cover(cap, t->ngroups, n);
		memcpy(cap, swcap, t->nswitches * sizeof(int));
		mr = _min_cover(cap, t->nswitches, n);
		free(cap);
		if (mr > 1)
			lb += mr;
		if (mg > 1)
			lb += 2.0 * mg;
		return lb;
	}
	case TOPOML_TORUS:
		return topoml__torus_ring_lb(t, n);
	}
	return 0;
}

static int _span(const topoml_topo_t *t, const int *nodes, int n)
{
	int span = 0;
	char *seen;

	if (t->family == TOPOML_TORUS) {
		int start[3], ext[3];
		long vol = topoml__torus_box(t, nodes, n, true, start, ext);

		/* out of memory: the whole torus, as if spread over it */
		return vol < 0 ? t->dims[0] * t->dims[1] * t->dims[2] :
		       (int)vol;
	}
	seen = calloc((t->family == TOPOML_DRAGONFLY ? t->ngroups :
		       t->nswitches) + 1, 1);
	if (!seen)
		return 0;
	for (int i = 0; i < n; i++) {
		int u = t->family == TOPOML_DRAGONFLY ?
			t->nodes[nodes[i]].group : t->nodes[nodes[i]].leaf;

		if (u >= 0 && !seen[u]) {
			seen[u] = 1;
			span++;
		}
	}
	free(seen);
	return span;
}

static int _span_lb(const topoml_topo_t *t, int n, const int *swcap)
{
	int *cap, m = 0, k;

	if (t->family == TOPOML_TORUS)
		return topoml__torus_span_lb(t, n);
	cap = malloc((t->nswitches + t->ngroups + 1) * sizeof(int));
	if (!cap)
		return 1;
	if (t->family == TOPOML_DRAGONFLY) {
		for (int g = 0; g < t->ngroups; g++)
			cap[m++] = _group_size(t, g, swcap);
	} else {
		for (int s = 0; s < t->nswitches; s++)
			if (!t->switches[s].nchildren)
				cap[m++] = swcap[s];
	}
	k = _min_cover(cap, m, n);
	free(cap);
	return k;
}

static double _pairs(double c)
{
	return c * (c - 1) / 2;
}

static double _mean_pair_hops(const topoml_topo_t *t, const int *nodes,
			      int n)
{
	double p = _pairs(n), sum = 0;

	if (n < 2)
		return 0;
	switch (t->family) {
	case TOPOML_FAT_TREE: {
		int *cnt = calloc(t->nswitches, sizeof(int));

		if (!cnt)
			return 0;
		/* sum = 2P + 2 * sum_l #pairs whose common level >= l */
		sum = 2 * p;
		for (int l = 1; l <= t->nlevels; l++) {
			double same = 0;

			memset(cnt, 0, t->nswitches * sizeof(int));
			for (int i = 0; i < n; i++)
				cnt[_unit(t, t->nodes[nodes[i]].leaf, l - 1)]++;
			for (int s = 0; s < t->nswitches; s++)
				same += _pairs(cnt[s]);
			sum += 2 * (p - same);
		}
		free(cnt);
		break;
	}
	case TOPOML_DRAGONFLY: {
		int *rc = calloc(t->nswitches, sizeof(int));
		int *gc = calloc(t->ngroups, sizeof(int));
		double same_r = 0, same_g = 0;

		if (!rc || !gc) {
			free(rc);
			free(gc);
			return 0;
		}
		for (int i = 0; i < n; i++) {
			rc[t->nodes[nodes[i]].leaf]++;
			gc[t->nodes[nodes[i]].group]++;
		}
		for (int s = 0; s < t->nswitches; s++)
			same_r += _pairs(rc[s]);
		for (int g = 0; g < t->ngroups; g++)
			same_g += _pairs(gc[g]);
		sum = 2 * same_r + 3 * (same_g - same_r);
		/* across groups: 3 + 2 * global hops, per group pair */
		for (int a = 0; a < t->ngroups; a++) {
			int ra;

			if (!gc[a])
				continue;
			ra = _group_node(t, a);
			for (int b = a + 1; b < t->ngroups; b++) {
				int gh;

				if (!gc[b])
					continue;
				gh = topoml_global_hops(t, ra, _group_node(t, b));
				sum += (double)gc[a] * gc[b] * (3 + 2 * gh);
			}
		}
		free(rc);
		free(gc);
		break;
	}
	case TOPOML_TORUS:
		for (int d = 0; d < 3; d++) {
			int size = t->dims[d];
			double *h = calloc(size, sizeof(double));

			if (!h)
				return 0;
			for (int i = 0; i < n; i++)
				h[t->nodes[nodes[i]].coord[d]]++;
			for (int a = 0; a < size; a++) {
				if (!h[a])
					continue;
				for (int b = a + 1; b < size; b++) {
					int dd = b - a;

					if (t->wrap[d] && size - dd < dd)
						dd = size - dd;
					sum += h[a] * h[b] * dd;
				}
			}
			free(h);
		}
		break;
	}
	return sum / p;
}

/* Largest F(k) with F(k) > S(k-1): free counts f, capacities s. */
static int _best_level_free(int *f, int *s, int m)
{
	long F = 0, S = 0;
	int best = 0;

	_sort_desc(f, m);
	_sort_desc(s, m);
	for (int k = 0; k < m; k++) {
		F += f[k];
		if (f[k] == 0)
			break;
		if (F > S && F > best)
			best = (int)F;
		S += s[k];
	}
	return best;
}

/* Largest rectangle under a histogram h[0..n-1] (stack method). */
static long _hist_max(const int *h, int n, int *stack)
{
	long best = 0;
	int top = 0;

	for (int i = 0; i <= n; i++) {
		int cur = i < n ? h[i] : 0;

		while (top && h[stack[top - 1]] >= cur) {
			int hh = h[stack[--top]];
			int left = top ? stack[top - 1] + 1 : 0;
			long area = (long)hh * (i - left);

			if (area > best)
				best = area;
		}
		stack[top++] = i;
	}
	return best;
}

/*
 * Torus: the largest box all of whose nodes are free.  For each x-extent
 * a and start x0 (wrapping in x), the (y, z) cells whose x-run from x0 is
 * free for a nodes form a 0/1 matrix; its largest all-1 rectangle, times
 * a, is a free box.  O(X * X * Y * Z) at worst, far less on a busy machine
 * (extents longer than the longest free x-run are skipped).  Boxes that
 * wrap in y or z are not seen: a slight underestimate there.
 */
static int _largest_free_box(const topoml_topo_t *t,
			     hwloc_const_bitmap_t freeset)
{
	int X = t->dims[0], Y = t->dims[1], Z = t->dims[2];
	bool wx = t->wrap[0] && X > 1;
	int *run = malloc((size_t)X * Y * Z * sizeof(int));
	int *h = calloc(Y + 1, sizeof(int)), *stack = malloc((Y + 2) *
							     sizeof(int));
	long best = 0;

	if (!run || !h || !stack)
		goto out;
	/* run[x][y][z]: free nodes from x on in +x (wrapping), at most X */
	for (int z = 0; z < Z; z++)
		for (int y = 0; y < Y; y++) {
			int r = 0;

			for (int k = (wx ? 2 * X : X) - 1; k >= 0; k--) {
				int c[3] = { k % X, y, z };
				int v = t->coord_node[topoml__torus_pos(t, c)];

				r = (v >= 0 && hwloc_bitmap_isset(freeset, v)) ?
				    r + 1 : 0;
				if (r > X)
					r = X;
				if (k < X)
					run[((size_t)z * Y + y) * X + k] = r;
			}
		}
	/* Per start x0, extents a upwards: the (y, z) rectangle A(a) only
	 * shrinks as a grows, so a * A(a) <= amax * A(a) bounds the rest. */
	for (int x0 = 0; x0 < X; x0++) {
		int amax = 0;

		for (size_t k = 0; k < (size_t)Y * Z; k++)
			if (run[k * X + x0] > amax)
				amax = run[k * X + x0];
		if ((long)amax * Y * Z <= best)
			continue;
		for (int a = 1; a <= amax; a++) {
			long A = 0;

			if (!wx && x0 + a > X)
				break;
			memset(h, 0, Y * sizeof(int));
			for (int z = 0; z < Z; z++) {
				long r;

				for (int y = 0; y < Y; y++)
					h[y] = run[((size_t)z * Y + y) * X +
						   x0] >= a ? h[y] + 1 : 0;
				r = _hist_max(h, Y, stack);
				if (r > A)
					A = r;
			}
			if (A * a > best)
				best = A * a;
			if (!A || A * amax <= best)
				break;
		}
	}
out:
	free(run);
	free(h);
	free(stack);
	return (int)best;
}

static int _largest_free_after(const topoml_topo_t *t,
			       hwloc_const_bitmap_t avail,
			       const int *nodes, int n)
{
	hwloc_bitmap_t f = hwloc_bitmap_dup(avail);
	int best = 0, m = 0, *fv = NULL, *sv = NULL, *lf = NULL;

	if (!f)
		return 0;
	for (int i = 0; i < n; i++)
		hwloc_bitmap_clr(f, nodes[i]);
	if (t->family == TOPOML_TORUS) {
		best = _largest_free_box(t, f);
		goto out;
	}
	lf = topoml__leaf_free(t, f);
	fv = malloc((t->nswitches + t->ngroups + 1) * sizeof(int));
	sv = malloc((t->nswitches + t->ngroups + 1) * sizeof(int));
	if (!lf || !fv || !sv)
		goto out;
	if (t->family == TOPOML_DRAGONFLY) {
		for (int g = 0; g < t->ngroups; g++) {
			fv[m] = sv[m] = 0;
			for (int k = 0; k < t->groups[g].nrouters; k++) {
				int s = t->groups[g].routers[k];

				fv[m] += lf[s];
				sv[m] += t->switches[s].nnodes;
			}
			m++;
		}
	} else {
		for (int s = 0; s < t->nswitches; s++) {
			if (t->switches[s].nchildren)
				continue;
			fv[m] = lf[s];
			sv[m++] = t->switches[s].nnodes;
		}
	}
	best = _best_level_free(fv, sv, m);
out:
	free(lf);
	free(fv);
	free(sv);
	hwloc_bitmap_free(f);
	return best;
}

int topoml_largest_free(const topoml_topo_t *t, hwloc_const_bitmap_t avail)
{
	if (!t || !avail)
		return 0;
	return _largest_free_after(t, avail, NULL, 0);
}

/*
 * NVLink domains (blocks): how many the job uses, the fewest that could
 * hold it (largest domains first), and ring steps that leave a domain
 * (they go over the slower scale-out network).  A node outside every
 * domain is a domain of its own.
 */
static void _nvl_score(const topoml_topo_t *t, const int *nodes, int n,
		       struct topoml_score *s)
{
	int *cnt = calloc(t->nnvl, sizeof(int)), *size = NULL;
	int left = n;

	if (!cnt)
		return;
	for (int i = 0; i < n; i++) {
		int d = t->nodes[nodes[i]].nvl;

		if (d < 0 || !cnt[d]++)
			s->nvl_span++;
	}
	for (int i = 0; n >= 2 && i < n; i++) {
		int a = t->nodes[nodes[i]].nvl;
		int b = t->nodes[nodes[(i + 1) % n]].nvl;

		s->nvl_crossings += a < 0 || a != b;
	}
	size = calloc(t->nnvl, sizeof(int));
	if (size) {
		for (int i = 0; i < t->nnodes; i++)
			if (t->nodes[i].nvl >= 0)
				size[t->nodes[i].nvl]++;
		/* few domains: take the largest left, one at a time */
		while (left > 0) {
			int m = -1;

			for (int d = 0; d < t->nnvl; d++)
				if (size[d] && (m < 0 || size[d] > size[m]))
					m = d;
			if (m < 0) {
				s->nvl_span_lower_bound += left;
				break;
			}
			left -= size[m];
			size[m] = 0;
			s->nvl_span_lower_bound++;
		}
	}
	free(size);
	free(cnt);
}

void topoml_score(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		  struct topoml_placement *p)
{
	struct topoml_score *s;
	int n, *cap;

	if (!t || !p)
		return;
	s = &p->score;
	memset(s, 0, sizeof(*s));
	n = p->n;
	if (n < 1 || !p->nodes)
		return;
	if (n >= 2) {
		for (int i = 0; i < n; i++) {
			int a = p->nodes[i], b = p->nodes[(i + 1) % n];

			s->ring_cost += topoml_hops(t, a, b);
			s->global_hops += topoml_global_hops(t, a, b);
		}
	}
	s->span = _span(t, p->nodes, n);
	if ((cap = _switch_caps(t, NULL))) {
		s->ring_lower_bound = _ring_lb(t, n, cap);
		s->span_lower_bound = _span_lb(t, n, cap);
		free(cap);
	}
	s->ring_lower_bound_free = s->ring_lower_bound;
	s->span_lower_bound_free = s->span_lower_bound;
	if (avail && t->family != TOPOML_TORUS &&
	    (cap = _switch_caps(t, avail))) {
		s->ring_lower_bound_free = _ring_lb(t, n, cap);
		s->span_lower_bound_free = _span_lb(t, n, cap);
		free(cap);
	}
	s->mean_pair_hops = _mean_pair_hops(t, p->nodes, n);
	if (t->nnvl > 0)
		_nvl_score(t, p->nodes, n, s);
	if (avail)
		s->largest_free_after = _largest_free_after(t, avail,
							    p->nodes, n);
}

int topoml_idle_leaves_broken(const topoml_topo_t *t,
			      hwloc_const_bitmap_t avail,
			      hwloc_const_bitmap_t partial, const int *nodes,
			      int n)
{
	int *used, broken = 0;

	if (!t || !avail || !nodes || n < 1 || t->family == TOPOML_TORUS)
		return 0;
	used = calloc(t->nswitches, sizeof(int));
	if (!used)
		return 0;
	for (int i = 0; i < n; i++) {
		int l = nodes[i] >= 0 && nodes[i] < t->nnodes ?
			t->nodes[nodes[i]].leaf : -1;

		if (l >= 0)
			used[l]++;
	}
	for (int s = 0; s < t->nswitches; s++) {
		const struct topoml_switch *sw = &t->switches[s];
		bool idle = true;

		/* A leaf the job takes whole is used, not broken. */
		if (!used[s] || used[s] >= sw->nnodes)
			continue;
		for (int k = 0; k < sw->nnodes && idle; k++)
			idle = hwloc_bitmap_isset(avail, sw->nodes[k]) &&
			       !(partial &&
				 hwloc_bitmap_isset(partial, sw->nodes[k]));
		broken += idle;
	}
	free(used);
	return broken;
}
