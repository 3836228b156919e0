/*
 * Slurm's switch table and the helpers of cons_tres 22.05 that read it
 * (src/plugins/select/cons_tres/job_test.c: _topo_add_dist(),
 * _topo_compare_switches(), _topo_choose_best_switch()), for the
 * slurm-tree and slurm-dragonfly baselines, by nodes and by CPUs.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>

#include "sim/baselines/slurm_switch.h"
#include "model/model_int.h"
#include "place/common/place_int.h"

void topoml__sl_switches_free(struct topoml_sl_switches *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->n; i++) {
		if (st->nodes && st->nodes[i])
			hwloc_bitmap_free(st->nodes[i]);
		if (st->adj)
			free(st->adj[i]);
	}
	free(st->level);
	free(st->parent);
	free(st->nodes);
	free(st->adj);
	free(st->nadj);
	free(st);
}

static int _link(struct topoml_sl_switches *st, int a, int b)
{
	for (int k = 0; k < 2; k++) {
		int x = k ? b : a, y = k ? a : b;

		if (topoml__grow((void **)&st->adj[x], st->nadj[x],
				 sizeof(int)))
			return -1;
		st->adj[x][st->nadj[x]++] = y;
	}
	return 0;
}

struct topoml_sl_switches *topoml__sl_switches(const topoml_topo_t *t)
{
	struct topoml_sl_switches *st = calloc(1, sizeof(*st));
	int ns = t->nswitches, ng = 0;

	if (!st)
		return NULL;
	if (t->family == TOPOML_DRAGONFLY)
		ng = t->ngroups;
	st->n = ns + (ng ? ng + (ng > 1) : 0);
	st->level = calloc(st->n + 1, sizeof(int));
	st->parent = calloc(st->n + 1, sizeof(int));
	st->nodes = calloc(st->n + 1, sizeof(*st->nodes));
	st->adj = calloc(st->n + 1, sizeof(*st->adj));
	st->nadj = calloc(st->n + 1, sizeof(int));
	if (!st->level || !st->parent || !st->nodes || !st->adj || !st->nadj)
		goto fail;
	for (int i = 0; i < ns; i++) {
		st->level[i] = ng ? 0 : t->switches[i].level;
		st->nodes[i] = hwloc_bitmap_dup(t->switches[i].desc);
		if (!st->nodes[i])
			goto fail;
	}
	if (!ng) {
		/* _find_child_switches(): the last parent listed wins */
		for (int i = 0; i < ns; i++)
			for (int c = 0; c < t->switches[i].nchildren; c++) {
				st->parent[t->switches[i].children[c]] = i;
				if (_link(st, i, t->switches[i].children[c]))
					goto fail;
			}
		return st;
	}
	for (int g = 0; g < ng; g++) {
		st->level[ns + g] = 1;
		st->nodes[ns + g] = hwloc_bitmap_dup(t->groups[g].desc);
		if (!st->nodes[ns + g])
			goto fail;
		for (int k = 0; k < t->groups[g].nrouters; k++) {
			st->parent[t->groups[g].routers[k]] = ns + g;
			if (_link(st, ns + g, t->groups[g].routers[k]))
				goto fail;
		}
		if (ng > 1) {
			st->parent[ns + g] = ns + ng;
			if (_link(st, ns + g, ns + ng))
				goto fail;
		}
	}
	if (ng > 1) {
		st->level[ns + ng] = 2;
		st->nodes[ns + ng] = hwloc_bitmap_alloc();
		if (!st->nodes[ns + ng])
			goto fail;
		hwloc_bitmap_set_range(st->nodes[ns + ng], 0, t->nnodes - 1);
	}
	return st;
fail:
	topoml__sl_switches_free(st);
	return NULL;
}

/* switches_dist row of switch i: hop distance in the switch graph,
 * added to dist (_topo_add_dist()). */
void topoml__sl_add_dist(const struct topoml_sl_switches *st,
			 uint32_t *dist, int i, int *queue, uint32_t *d)
{
	int head = 0, tail = 0;

	for (int k = 0; k < st->n; k++)
		d[k] = TOPOML_SL_INFINITE;
	d[i] = 0;
	queue[tail++] = i;
	while (head < tail) {
		int x = queue[head++];

		for (int a = 0; a < st->nadj[x]; a++) {
			int y = st->adj[x][a];

			if (d[y] == TOPOML_SL_INFINITE) {
				d[y] = d[x] + 1;
				queue[tail++] = y;
			}
		}
	}
	for (int k = 0; k < st->n; k++)
		dist[k] = (d[k] == TOPOML_SL_INFINITE ||
			   dist[k] == TOPOML_SL_INFINITE) ?
			  TOPOML_SL_INFINITE : dist[k] + d[k];
}

/* _topo_compare_switches() */
static int _compare_switches(const struct topoml_sl_switches *st, int i,
			     int j, int rem, const int *cnt)
{
	for (int guard = 0; guard < 4 * st->n + 8; guard++) {
		bool i_fit = cnt[i] >= rem, j_fit = cnt[j] >= rem;

		if (i_fit && j_fit) {
			if (cnt[i] != cnt[j])
				return cnt[i] < cnt[j] ? 1 : -1;
			break;
		} else if (i_fit) {
			return 1;
		} else if (j_fit) {
			return -1;
		}
		if ((st->parent[i] != i || st->parent[j] != j) &&
		    st->parent[i] != st->parent[j]) {
			i = st->parent[i];
			j = st->parent[j];
			continue;
		}
		break;
	}
	if (cnt[i] != cnt[j])
		return cnt[i] > cnt[j] ? 1 : -1;
	if (st->level[i] != st->level[j])
		return st->level[i] < st->level[j] ? 1 : -1;
	return 0;
}

void topoml__sl_choose_best(const struct topoml_sl_switches *st,
			    const uint32_t *dist, const int *cnt, int rem,
			    int i, int *best)
{
	int tcs;

	if (*best == -1 || dist[i] == TOPOML_SL_INFINITE || !cnt[i]) {
		if (cnt[i] && dist[i] < TOPOML_SL_INFINITE)
			*best = i;
		return;
	}
	tcs = _compare_switches(st, i, *best, rem, cnt);
	if ((dist[i] < dist[*best] && tcs >= 0) ||
	    (dist[i] == dist[*best] && tcs > 0))
		*best = i;
}

/* ---- _eval_nodes_topo() and _eval_nodes_dfly() ---------------------- */

/* Slurm's node weight list: distinct weights, ascending, with their nodes. */
struct wgroup {
	uint64_t w;
	hwloc_bitmap_t nodes;
};

static int _wg_cmp(const void *a, const void *b)
{
	const struct wgroup *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return 0;
}

static uint64_t _w(const struct topoml_sl_eval *e, int v)
{
	return e->weight ? e->weight[v] : 0;
}

static int _weight_groups(const struct topoml_sl_eval *e,
			  hwloc_const_bitmap_t nodes, struct wgroup **out)
{
	struct wgroup *g = NULL;
	int n = 0, v;

	hwloc_bitmap_foreach_begin(v, nodes)
		uint64_t w = _w(e, v);
		int k;

		for (k = 0; k < n; k++)
			if (g[k].w == w)
				break;
		if (k == n) {
			struct wgroup *x = realloc(g, (n + 1) * sizeof(*g));

			if (!x)
				goto fail;
			g = x;
			g[n].w = w;
			g[n].nodes = hwloc_bitmap_alloc();
			if (!g[n].nodes)
				goto fail;
			n++;
		}
		hwloc_bitmap_set(g[k].nodes, v);
	hwloc_bitmap_foreach_end();
	/* list_sort() is a stable merge sort; weights are distinct anyway */
	if (n)
		qsort(g, n, sizeof(*g), _wg_cmp);
	*out = g;
	return n;
fail:
	for (int k = 0; k < n; k++)
		hwloc_bitmap_free(g[k].nodes);
	free(g);
	return -1;
}

/* Scratch of one call. */
struct sl {
	struct topoml_sl_eval *e;
	const struct topoml_sl_switches *st;
	hwloc_bitmap_t usable;	/* avail, with CPUs left */
	hwloc_bitmap_t *swb;	/* switch_node_bitmap */
	int *cnt;
	int *required;
	struct wgroup *wg;
	int nwg;
};

static long _cpus(const struct topoml_sl_eval *e, int v)
{
	return e->cpus ? e->cpus[v] : 1;
}

static bool _done(const struct topoml_sl_eval *e)
{
	return e->rem_nodes <= 0 && e->rem_cpus <= 0;
}

/* Take node v: _cpus_to_use() with one node wanted, then the counters. */
static void _take(struct topoml_sl_eval *e, int v)
{
	long c = topoml__cpus_to_use(_cpus(e, v), e->rem_cpus);

	hwloc_bitmap_set(e->map, v);
	if (e->nodes) {
		e->nodes[e->n] = v;
		e->units[e->n] = (int)c;
	}
	e->n++;
	e->rem_cpus -= c;
	e->rem_nodes--;
}

/* A node of switch i the job may still take. */
static bool _free(const struct topoml_sl_eval *e, int v)
{
	return !hwloc_bitmap_isset(e->map, v) && _cpus(e, v) > 0;
}

/* Every free node of B in order, until the job has enough: true then. */
static bool _take_all(struct topoml_sl_eval *e, hwloc_const_bitmap_t b)
{
	int v;

	hwloc_bitmap_foreach_begin(v, b)
		if (!_free(e, v))
			continue;
		_take(e, v);
		if (_done(e))
			return true;
	hwloc_bitmap_foreach_end();
	return false;
}

/* Lowest-weight nodes under the top switch, weight group by weight group,
 * until there are enough; the groups before the last become required
 * (req2). */
static int _best_nodes(struct sl *s, int top, hwloc_bitmap_t best,
		       hwloc_bitmap_t req2)
{
	struct topoml_sl_eval *e = s->e;
	int best_cnt = 0, v;
	long best_cpus = 0;
	bool sufficient = false;

	for (int k = 0; k < s->nwg && !sufficient; k++) {
		if (best_cnt > 0)
			hwloc_bitmap_or(req2, req2, best);
		hwloc_bitmap_foreach_begin(v, s->wg[k].nodes)
			if ((e->required &&
			     hwloc_bitmap_isset(e->required, v)) ||
			    !hwloc_bitmap_isset(s->swb[top], v))
				continue;
			hwloc_bitmap_set(best, v);
			best_cpus += _cpus(e, v);
			best_cnt++;
		hwloc_bitmap_foreach_end();
		sufficient = best_cpus >= e->rem_cpus &&
			     best_cnt >= e->rem_nodes;
	}
	return sufficient ? 0 : -1;
}

/* The highest level switch to be used; -1: none.  leaf_count: the
 * dragonfly's leaves holding required nodes. */
static int _top(struct sl *s, bool dfly, int *leaf_count)
{
	struct topoml_sl_eval *e = s->e;
	const struct topoml_sl_switches *st = s->st;
	bool have_req = e->required && !hwloc_bitmap_iszero(e->required);
	uint64_t top_w = 0;
	int top = -1, v;

	for (int i = 0; i < st->n; i++) {
		int lvl = st->level[i];

		s->swb[i] = hwloc_bitmap_dup(st->nodes[i]);
		if (!s->swb[i])
			return -2;
		if (!dfly) {
			hwloc_bitmap_and(s->swb[i], s->swb[i], s->usable);
			s->cnt[i] = hwloc_bitmap_weight(s->swb[i]);
		}
		if (have_req &&
		    hwloc_bitmap_intersects(e->required, s->swb[i])) {
			s->required[i] = 1;
			if (dfly && lvl == 0)
				(*leaf_count)++;
			if (top == -1 || lvl > st->level[top])
				top = i;
		}
		if (dfly) {
			if (!have_req &&
			    hwloc_bitmap_intersects(s->usable, s->swb[i]) &&
			    (top == -1 || lvl > st->level[top]))
				top = i;
			continue;
		}
		/* _enough_nodes() with min == req nodes */
		if (s->cnt[i] < e->rem_nodes || have_req || !s->cnt[i])
			continue;
		/* the lowest weight of the switch's nodes */
		uint64_t w = UINT64_MAX;

		hwloc_bitmap_foreach_begin(v, s->swb[i])
			if (_w(e, v) < w)
				w = _w(e, v);
		hwloc_bitmap_foreach_end();
		if (top == -1 || (lvl >= st->level[top] && w <= top_w)) {
			top = i;
			top_w = w;
		}
	}
	return top;
}

/* _eval_nodes_dfly() from the leaves on: all on one leaf if it holds the
 * job, else one node per leaf, round robin. */
static int _dfly_leaves(struct sl *s, int leaf_count)
{
	struct topoml_sl_eval *e = s->e;
	const struct topoml_sl_switches *st = s->st;
	int i, v;

	/* No leaf yet: the one with the most available nodes. */
	if (leaf_count == 0) {
		int b = -1;

		for (i = 0; i < st->n; i++)
			if (st->level[i] == 0 &&
			    (b == -1 || s->cnt[i] > s->cnt[b]))
				b = i;
		if (b != -1) {
			leaf_count = 1;
			s->required[b] = 1;
		}
	}
	/* All on one leaf if that leaf can take the whole job. */
	if (leaf_count == 1) {
		long c = 0;
		int nds = 0;

		for (i = 0; i < st->n; i++)
			if (s->required[i] && st->level[i] == 0)
				break;
		if (i < st->n) {
			hwloc_bitmap_foreach_begin(v, s->swb[i])
				if (_free(e, v)) {
					c += _cpus(e, v);
					nds++;
				}
			hwloc_bitmap_foreach_end();
		}
		if (i < st->n && c >= e->rem_cpus && nds >= e->rem_nodes) {
			if (_take_all(e, s->swb[i]))
				return 0;
		}
	}
	/* Then one node per leaf switch, round robin. */
	for (int prev = e->rem_nodes + 1; prev != e->rem_nodes;) {
		prev = e->rem_nodes;
		for (i = 0; i < st->n; i++) {
			if (st->level[i] != 0)
				continue;
			hwloc_bitmap_foreach_begin(v, s->swb[i])
				if (!_free(e, v))
					continue;
				_take(e, v);
				if (_done(e))
					return 0;
				break;
			hwloc_bitmap_foreach_end();
		}
	}
	return 1;
}

/* _eval_nodes_topo() from the leaves on: the leaves already required,
 * then more leaves, nearest and best fitting first. */
static int _tree_leaves(struct sl *s, uint32_t *dist, uint32_t *drow,
			int *queue)
{
	struct topoml_sl_eval *e = s->e;
	const struct topoml_sl_switches *st = s->st;

	for (int i = 0; i < st->n; i++) {
		if (!s->required[i] || st->level[i] != 0)
			continue;
		if (_take_all(e, s->swb[i]))
			return 0;
	}
	for (int i = 0; i < st->n; i++)
		if (s->required[i])
			topoml__sl_add_dist(st, dist, i, queue, drow);
	for (int prev = e->rem_nodes + 1; prev != e->rem_nodes;) {
		int b = -1;

		prev = e->rem_nodes;
		for (int i = 0; i < st->n; i++)
			if (!s->required[i] && st->level[i] == 0)
				topoml__sl_choose_best(st, dist, s->cnt,
						       e->rem_nodes, i, &b);
		if (b == -1)
			break;
		topoml__sl_add_dist(st, dist, b, queue, drow);
		if (_take_all(e, s->swb[b]))
			return 0;
		s->cnt[b] = 0;
	}
	return 1;
}

int topoml__sl_eval_switch(struct topoml_sl_eval *e, bool dfly, char *why,
			   size_t whylen)
{
	const struct topoml_sl_switches *st = e->st;
	const char *name = dfly ? "slurm-dragonfly" : "slurm-tree";
	struct sl s = { .e = e, .st = st };
	hwloc_bitmap_t best = hwloc_bitmap_alloc();
	hwloc_bitmap_t req2 = hwloc_bitmap_alloc();
	bool have_req = e->required && !hwloc_bitmap_iszero(e->required);
	uint32_t *dist = calloc(st->n + 1, sizeof(*dist));
	uint32_t *drow = calloc(st->n + 1, sizeof(*drow));
	int *queue = calloc(st->n + 1, sizeof(int));
	int top, leaf_count = 0, rc = -1, v;

	s.usable = hwloc_bitmap_alloc();
	s.swb = calloc(st->n + 1, sizeof(*s.swb));
	s.cnt = calloc(st->n + 1, sizeof(int));
	s.required = calloc(st->n + 1, sizeof(int));
	if (!best || !req2 || !dist || !drow || !queue || !s.usable ||
	    !s.swb || !s.cnt || !s.required)
		goto oom;
	hwloc_bitmap_foreach_begin(v, e->avail)
		if (_cpus(e, v) > 0)
			hwloc_bitmap_set(s.usable, v);
	hwloc_bitmap_foreach_end();
	/* the required nodes first */
	if (have_req) {
		hwloc_bitmap_or(e->map, e->map, e->required);
		hwloc_bitmap_foreach_begin(v, e->avail)
			if (hwloc_bitmap_isset(e->required, v)) {
				e->rem_cpus -= _cpus(e, v);
				e->rem_nodes--;
			}
		hwloc_bitmap_foreach_end();
	}
	s.nwg = _weight_groups(e, s.usable, &s.wg);
	if (s.nwg < 0)
		goto oom;

	/* Identify the highest level switch to be used. */
	top = _top(&s, dfly, &leaf_count);
	if (top == -2)
		goto oom;
	if (top == -1) {
		snprintf(why, whylen, "%s: unable to identify top level switch",
			 name);
		goto out;
	}
	if (have_req && !hwloc_bitmap_isincluded(e->required, s.swb[top])) {
		snprintf(why, whylen, "required nodes do not have shared network");
		goto out;
	}
	for (int i = 0; i < st->n; i++)
		if (i != top)
			hwloc_bitmap_and(s.swb[i], s.swb[i], s.swb[top]);
	if (have_req && _done(e)) {
		rc = 0;
		goto out;
	}
	if (_best_nodes(&s, top, best, req2)) {
		snprintf(why, whylen, "insufficient resources currently available");
		goto out;
	}
	if (!hwloc_bitmap_iszero(req2)) {
		hwloc_bitmap_foreach_begin(v, req2)
			_take(e, v);
		hwloc_bitmap_foreach_end();
		for (int i = 0; i < st->n; i++) {
			if (s.required[i] ||
			    !hwloc_bitmap_intersects(req2, s.swb[i]))
				continue;
			s.required[i] = 1;
			if (dfly && st->level[i] == 0)
				leaf_count++;
		}
		if (_done(e)) {
			rc = 0;
			goto out;
		}
	}
	hwloc_bitmap_or(best, best, e->map);
	for (int i = 0; i < st->n; i++) {
		hwloc_bitmap_and(s.swb[i], s.swb[i], best);
		s.cnt[i] = hwloc_bitmap_weight(s.swb[i]);
	}
	if (!(dfly ? _dfly_leaves(&s, leaf_count) :
		     _tree_leaves(&s, dist, drow, queue)) ||
	    (e->rem_cpus <= 0 && e->n > 0)) {
		rc = 0;
		goto out;
	}
	snprintf(why, whylen, "%s: no allocation found", name);
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	for (int i = 0; s.swb && i < st->n; i++)
		if (s.swb[i])
			hwloc_bitmap_free(s.swb[i]);
	for (int k = 0; k < s.nwg; k++)
		hwloc_bitmap_free(s.wg[k].nodes);
	free(s.wg);
	free(s.swb);
	free(s.cnt);
	free(s.required);
	free(dist);
	free(drow);
	free(queue);
	if (s.usable)
		hwloc_bitmap_free(s.usable);
	if (best)
		hwloc_bitmap_free(best);
	if (req2)
		hwloc_bitmap_free(req2);
	return rc;
}
