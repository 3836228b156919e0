/*
 * Slurm 22.05's own node choice, reproduced as baselines: what cons_tres
 * (src/plugins/select/cons_tres/job_test.c) does for a job of N whole
 * nodes (-N N --exclusive, every node with the same CPUs, no GRES):
 *
 *   slurm-tree       _eval_nodes_topo()   TopologyPlugin=topology/tree
 *   slurm-dragonfly  _eval_nodes_dfly()   ... with TopologyParam=dragonfly
 *
 * (linear and slurm-hilbert, _eval_nodes(), are in the core library:
 * place_linear.c, because topoml's torus engine uses them.)
 *
 * The code follows Slurm's step by step (same loops, same tie-breaks, same
 * quirks such as the parent index 0 of a root switch), with CPU counts
 * reduced to node counts, which is exact for whole equal nodes.  Slurm
 * walks nodes in node index order (slurm.conf order): here the model's node
 * index, which is the topology file's order; the job's node list, hence
 * its rank order, is that order.
 *
 * Slurm's switch table is the topology file's switch list in file order;
 * on a dragonfly model it is built as the topology.conf a site writes for
 * TopologyParam=dragonfly: routers (leaves), then one switch per group,
 * then one root.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim/baselines/baselines.h"

#define SL_INFINITE 0xffffffffu

struct sw {
	int level;
	int parent;		/* Slurm's: 0 for a root */
	hwloc_bitmap_t nodes;	/* nodes below */
	int nadj;
	int *adj;		/* parents and children: for distances */
};

struct stab {
	int n;
	struct sw *s;
};

static void _stab_free(struct stab *st)
{
	for (int i = 0; st->s && i < st->n; i++) {
		hwloc_bitmap_free(st->s[i].nodes);
		free(st->s[i].adj);
	}
	free(st->s);
}

static int _adj_add(struct sw *s, int v)
{
	int *n = realloc(s->adj, (s->nadj + 1) * sizeof(int));

	if (!n)
		return -1;
	s->adj = n;
	s->adj[s->nadj++] = v;
	return 0;
}

static int _stab_build(const topoml_topo_t *t, struct stab *st)
{
	int ns = t->nswitches, ng = 0, rc = -1;

	if (t->family == TOPOML_DRAGONFLY)
		ng = t->ngroups;
	st->n = ns + (ng ? ng + (ng > 1) : 0);
	st->s = calloc(st->n ? st->n : 1, sizeof(*st->s));
	if (!st->s)
		return -1;
	for (int i = 0; i < ns; i++) {
		const struct topoml_switch *sw = &t->switches[i];

		st->s[i].level = ng ? 0 : sw->level;
		st->s[i].nodes = hwloc_bitmap_dup(sw->desc);
		if (!st->s[i].nodes)
			goto out;
	}
	if (!ng) {
		/* _find_child_switches(): the last parent listed wins */
		for (int i = 0; i < ns; i++) {
			const struct topoml_switch *sw = &t->switches[i];

			for (int c = 0; c < sw->nchildren; c++) {
				st->s[sw->children[c]].parent = i;
				if (_adj_add(&st->s[i], sw->children[c]) ||
				    _adj_add(&st->s[sw->children[c]], i))
					goto out;
			}
		}
		rc = 0;
		goto out;
	}
	for (int g = 0; g < ng; g++) {
		struct sw *gs = &st->s[ns + g];

		gs->level = 1;
		gs->nodes = hwloc_bitmap_dup(t->groups[g].desc);
		if (!gs->nodes)
			goto out;
		for (int k = 0; k < t->groups[g].nrouters; k++) {
			int r = t->groups[g].routers[k];

			st->s[r].parent = ns + g;
			if (_adj_add(gs, r) || _adj_add(&st->s[r], ns + g))
				goto out;
		}
		if (ng > 1) {
			gs->parent = ns + ng;
			if (_adj_add(gs, ns + ng) ||
			    _adj_add(&st->s[ns + ng], ns + g))
				goto out;
		}
	}
	if (ng > 1) {
		struct sw *root = &st->s[ns + ng];

		root->level = 2;
		root->nodes = hwloc_bitmap_alloc();
		if (!root->nodes)
			goto out;
		hwloc_bitmap_set_range(root->nodes, 0, t->nnodes - 1);
	}
	rc = 0;
out:
	return rc;
}

/* switches_dist row of switch i: hop distance in the switch graph. */
static void _add_dist(const struct stab *st, uint32_t *dist, int i,
		      int *queue, uint32_t *d)
{
	int head = 0, tail = 0;

	for (int k = 0; k < st->n; k++)
		d[k] = SL_INFINITE;
	d[i] = 0;
	queue[tail++] = i;
	while (head < tail) {
		int x = queue[head++];

		for (int a = 0; a < st->s[x].nadj; a++) {
			int y = st->s[x].adj[a];

			if (d[y] != SL_INFINITE)
				continue;
			d[y] = d[x] + 1;
			queue[tail++] = y;
		}
	}
	/* _topo_add_dist() */
	for (int k = 0; k < st->n; k++) {
		if (d[k] == SL_INFINITE || dist[k] == SL_INFINITE)
			dist[k] = SL_INFINITE;
		else
			dist[k] += d[k];
	}
}

static int _compare_switches(const struct stab *st, int i, int j, int rem,
			     const int *cnt)
{
	for (int guard = 0; guard < 4 * st->n + 8; guard++) {
		bool i_fit = cnt[i] >= rem, j_fit = cnt[j] >= rem;

		if (i_fit && j_fit) {
			if (cnt[i] < cnt[j])
				return 1;
			if (cnt[i] > cnt[j])
				return -1;
			break;
		} else if (i_fit) {
			return 1;
		} else if (j_fit) {
			return -1;
		}
		if (((st->s[i].parent != i) || (st->s[j].parent != j)) &&
		    (st->s[i].parent != st->s[j].parent)) {
			i = st->s[i].parent;
			j = st->s[j].parent;
			continue;
		}
		break;
	}
	if (cnt[i] > cnt[j])
		return 1;
	if (cnt[i] < cnt[j])
		return -1;
	if (st->s[i].level < st->s[j].level)
		return 1;
	if (st->s[i].level > st->s[j].level)
		return -1;
	return 0;
}

static void _choose_best_switch(const struct stab *st, const uint32_t *dist,
				const int *cnt, int rem, int i, int *best)
{
	int tcs;

	if (*best == -1 || dist[i] == SL_INFINITE || !cnt[i]) {
		if (cnt[i] && dist[i] < SL_INFINITE)
			*best = i;
		return;
	}
	tcs = _compare_switches(st, i, *best, rem, cnt);
	if (((dist[i] < dist[*best]) && (tcs >= 0)) ||
	    ((dist[i] == dist[*best]) && (tcs > 0)))
		*best = i;
}

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

static int _weight_groups(const struct place_in *in,
			  hwloc_const_bitmap_t node_map, struct wgroup **out)
{
	const uint64_t *wt = in->req->weight;
	struct wgroup *g = NULL;
	int n = 0, v;

	hwloc_bitmap_foreach_begin(v, node_map)
		uint64_t w = wt ? wt[v] : 0;
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
	qsort(g, n, sizeof(*g), _wg_cmp);
	*out = g;
	return n;
fail:
	for (int k = 0; k < n; k++)
		hwloc_bitmap_free(g[k].nodes);
	free(g);
	return -1;
}

struct sl {
	const struct place_in *in;
	struct stab st;
	hwloc_bitmap_t node_map;	/* the job's nodes so far */
	hwloc_bitmap_t *swb;		/* switch_node_bitmap */
	int *cnt;
	int *required;
	struct wgroup *wg;
	int nwg;
	int rem, min_rem, max_nodes;
};

static bool _done(const struct sl *s)
{
	return s->rem <= 0;
}

static void _take(struct sl *s, int v)
{
	hwloc_bitmap_set(s->node_map, v);
	s->rem--;
	s->min_rem--;
	s->max_nodes--;
}

/* Shared start of _eval_nodes_topo and _eval_nodes_dfly. */
static int _start(struct sl *s, hwloc_const_bitmap_t orig)
{
	int v;

	s->rem = s->min_rem = s->max_nodes = s->in->n;
	hwloc_bitmap_foreach_begin(v, orig)
		if (hwloc_bitmap_isset(s->in->required, v)) {
			s->rem--;
			s->min_rem--;
			s->max_nodes--;
		}
	hwloc_bitmap_foreach_end();
	s->nwg = _weight_groups(s->in, orig, &s->wg);
	return s->nwg < 0 ? -1 : 0;
}

/* Lowest-weight nodes under the top switch, weight group by weight group,
 * until there are enough; the groups before the last become required. */
static int _best_nodes(struct sl *s, int top, hwloc_bitmap_t best,
		       hwloc_bitmap_t *req2)
{
	int best_cnt = 0, v;
	bool sufficient = false;

	for (int k = 0; k < s->nwg && !sufficient; k++) {
		if (best_cnt > 0) {
			if (!*req2)
				*req2 = hwloc_bitmap_alloc();
			hwloc_bitmap_or(*req2, *req2, best);
		}
		hwloc_bitmap_foreach_begin(v, s->wg[k].nodes)
			if (hwloc_bitmap_isset(s->in->required, v) ||
			    !hwloc_bitmap_isset(s->swb[top], v))
				continue;
			hwloc_bitmap_set(best, v);
			best_cnt++;
		hwloc_bitmap_foreach_end();
		sufficient = best_cnt >= s->rem;
	}
	return sufficient ? 0 : -1;
}

static int _slurm_switch_eval(const struct place_in *in, bool dfly,
			      hwloc_bitmap_t result, char *why,
			      size_t whylen)
{
	const topoml_topo_t *t = in->t;
	struct sl s = { .in = in };
	hwloc_bitmap_t best = hwloc_bitmap_alloc(), req2 = NULL;
	hwloc_bitmap_t orig = hwloc_bitmap_dup(in->avail);
	bool have_req = in->nreq > 0;
	uint32_t *dist = NULL, *drow = NULL;
	int *queue = NULL, top = -1, leaf_count = 0, rc = -1, v;
	uint64_t top_w = 0;

	s.node_map = hwloc_bitmap_alloc();
	if (!best || !orig || !s.node_map || _stab_build(t, &s.st) ||
	    _start(&s, orig))
		goto oom;
	s.swb = calloc(s.st.n, sizeof(*s.swb));
	s.cnt = calloc(s.st.n, sizeof(int));
	s.required = calloc(s.st.n, sizeof(int));
	dist = calloc(s.st.n, sizeof(*dist));
	drow = calloc(s.st.n, sizeof(*drow));
	queue = calloc(s.st.n, sizeof(int));
	if (!s.swb || !s.cnt || !s.required || !dist || !drow || !queue)
		goto oom;
	if (have_req)
		hwloc_bitmap_copy(s.node_map, in->required);

	/* Identify the highest level switch to be used. */
	for (int i = 0; i < s.st.n; i++) {
		int lvl = s.st.s[i].level;

		s.swb[i] = hwloc_bitmap_dup(s.st.s[i].nodes);
		if (!s.swb[i])
			goto oom;
		if (!dfly) {
			hwloc_bitmap_and(s.swb[i], s.swb[i], orig);
			s.cnt[i] = hwloc_bitmap_weight(s.swb[i]);
		}
		if (have_req && hwloc_bitmap_intersects(in->required, s.swb[i])) {
			s.required[i] = 1;
			if (dfly && lvl == 0)
				leaf_count++;
			if (top == -1 || lvl > s.st.s[top].level)
				top = i;
		}
		if (dfly) {
			if (!have_req &&
			    hwloc_bitmap_intersects(orig, s.swb[i]) &&
			    (top == -1 || lvl > s.st.s[top].level))
				top = i;
			continue;
		}
		/* _enough_nodes() with min == req nodes */
		if (s.cnt[i] < s.rem)
			continue;
		if (!have_req) {
			int k;

			for (k = 0; k < s.nwg; k++)
				if (hwloc_bitmap_intersects(s.wg[k].nodes,
							    s.swb[i]))
					break;
			if (k < s.nwg &&
			    (top == -1 ||
			     (lvl >= s.st.s[top].level &&
			      s.wg[k].w <= top_w))) {
				top = i;
				top_w = s.wg[k].w;
			}
		}
	}
	if (top == -1) {
		snprintf(why, whylen, "%s: unable to identify top level switch",
			 dfly ? "slurm-dragonfly" : "slurm-tree");
		goto out;
	}
	if (have_req && !hwloc_bitmap_isincluded(in->required, s.swb[top])) {
		snprintf(why, whylen, "required nodes do not have shared network");
		goto out;
	}
	for (int i = 0; i < s.st.n; i++)
		if (i != top)
			hwloc_bitmap_and(s.swb[i], s.swb[i], s.swb[top]);
	if (have_req && _done(&s)) {
		rc = 0;
		goto out;
	}

	if (_best_nodes(&s, top, best, &req2)) {
		snprintf(why, whylen, "insufficient resources currently available");
		goto out;
	}
	if (req2) {
		hwloc_bitmap_foreach_begin(v, req2)
			if (s.max_nodes <= 0)
				break;
			s.rem--;
			s.min_rem--;
			s.max_nodes--;
		hwloc_bitmap_foreach_end();
		for (int i = 0; i < s.st.n; i++) {
			if (s.required[i])
				continue;
			if (hwloc_bitmap_intersects(req2, s.swb[i])) {
				s.required[i] = 1;
				if (dfly && s.st.s[i].level == 0)
					leaf_count++;
			}
		}
		hwloc_bitmap_or(s.node_map, s.node_map, req2);
		if (_done(&s)) {
			rc = 0;
			goto out;
		}
		if (s.max_nodes <= 0)
			goto fail;
	}
	hwloc_bitmap_or(best, best, s.node_map);
	for (int i = 0; i < s.st.n; i++) {
		hwloc_bitmap_and(s.swb[i], s.swb[i], best);
		s.cnt[i] = hwloc_bitmap_weight(s.swb[i]);
	}

	if (dfly) {
		int i;

		/* No leaf yet: the one with the most available nodes. */
		if (leaf_count == 0) {
			int b = -1;

			for (i = 0; i < s.st.n; i++) {
				if (s.st.s[i].level != 0)
					continue;
				if (b == -1 || s.cnt[i] > s.cnt[b])
					b = i;
			}
			if (b != -1) {
				leaf_count = 1;
				s.required[b] = 1;
			}
		}
		/* All on one leaf if that leaf can take the whole job. */
		if (leaf_count == 1) {
			int have = 0;

			for (i = 0; i < s.st.n; i++) {
				if (!s.required[i] || s.st.s[i].level != 0)
					continue;
				hwloc_bitmap_foreach_begin(v, s.swb[i])
					if (!hwloc_bitmap_isset(s.node_map, v))
						have++;
				hwloc_bitmap_foreach_end();
				break;
			}
			if (have >= s.rem && i < s.st.n) {
				hwloc_bitmap_foreach_begin(v, s.swb[i])
					if (hwloc_bitmap_isset(s.node_map, v))
						continue;
					_take(&s, v);
					if (_done(&s)) {
						rc = 0;
						goto out;
					}
					if (s.max_nodes <= 0)
						goto fail;
				hwloc_bitmap_foreach_end();
			}
		}
		/* Then one node per leaf switch, round robin. */
		for (int prev = s.rem + 1; prev != s.rem;) {
			prev = s.rem;
			for (i = 0; i < s.st.n; i++) {
				if (s.st.s[i].level != 0)
					continue;
				hwloc_bitmap_foreach_begin(v, s.swb[i])
					if (hwloc_bitmap_isset(s.node_map, v))
						continue;
					_take(&s, v);
					if (_done(&s)) {
						rc = 0;
						goto out;
					}
					if (s.max_nodes <= 0)
						goto fail;
					break;
				hwloc_bitmap_foreach_end();
			}
		}
		goto end;
	}

	/* Fill the leaf switches already required. */
	if (have_req || req2) {
		for (int i = 0; i < s.st.n; i++) {
			if (!s.required[i] || s.st.s[i].level != 0)
				continue;
			hwloc_bitmap_foreach_begin(v, s.swb[i])
				if (hwloc_bitmap_isset(s.node_map, v))
					continue;
				_take(&s, v);
				if (_done(&s)) {
					rc = 0;
					goto out;
				}
			hwloc_bitmap_foreach_end();
		}
	}
	for (int i = 0; i < s.st.n; i++)
		if (s.required[i])
			_add_dist(&s.st, dist, i, queue, drow);
	/* Then more leaf switches, nearest and best fitting first. */
	for (int prev = s.rem + 1; prev != s.rem;) {
		int b = -1;

		prev = s.rem;
		for (int i = 0; i < s.st.n; i++) {
			if (s.required[i] || s.st.s[i].level != 0)
				continue;
			_choose_best_switch(&s.st, dist, s.cnt, s.rem, i, &b);
		}
		if (b == -1)
			break;
		_add_dist(&s.st, dist, b, queue, drow);
		hwloc_bitmap_foreach_begin(v, s.swb[b])
			if (s.max_nodes <= 0)
				break;
			if (hwloc_bitmap_isset(s.node_map, v))
				continue;
			_take(&s, v);
			if (_done(&s)) {
				rc = 0;
				goto out;
			}
		hwloc_bitmap_foreach_end();
		s.cnt[b] = 0;
	}
end:
	if (s.min_rem <= 0) {
		rc = 0;
		goto out;
	}
fail:
	snprintf(why, whylen, "%s: no allocation found",
		 dfly ? "slurm-dragonfly" : "slurm-tree");
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	if (rc == 0)
		hwloc_bitmap_copy(result, s.node_map);
	for (int i = 0; s.swb && i < s.st.n; i++)
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
	_stab_free(&s.st);
	hwloc_bitmap_free(s.node_map);
	hwloc_bitmap_free(best);
	hwloc_bitmap_free(req2);
	hwloc_bitmap_free(orig);
	return rc;
}

/* Nodes of a set in index order: Slurm's node list and rank order. */
static int _index_order(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			struct topoml_placement *out)
{
	int n = hwloc_bitmap_weight(set), i = 0, v;

	(void)t;
	out->nodes = malloc((n > 0 ? n : 1) * sizeof(int));
	if (!out->nodes)
		return -1;
	hwloc_bitmap_foreach_begin(v, set)
		out->nodes[i++] = v;
	hwloc_bitmap_foreach_end();
	out->n = i;
	return 0;
}

int topoml__place_slurm_tree(const struct place_in *in, bool dragonfly,
			     struct topoml_placement *out, char *why,
			     size_t whylen)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int rc = -1;

	if (!set)
		return -1;
	if (in->req->attempt > 0) {
		/* Slurm has one answer per state. */
		snprintf(why, whylen, "%s has no alternative placements",
			 dragonfly ? "slurm-dragonfly" : "slurm-tree");
		goto out;
	}
	if (_slurm_switch_eval(in, dragonfly, set, why, whylen))
		goto out;
	rc = _index_order(in->t, set, out);
out:
	hwloc_bitmap_free(set);
	return rc;
}
