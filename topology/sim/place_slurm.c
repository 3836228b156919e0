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
 * Slurm's switch table (slurm_switch.c, shared with sim.c's jobs by
 * CPUs) is the topology file's switch list in file order; on a dragonfly
 * model it is built as the topology.conf a site writes for
 * TopologyParam=dragonfly: routers (leaves), then one switch per group,
 * then one root.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "baselines.h"
#include "slurm_switch.h"

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
	struct topoml_sl_switches *st;
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
	s.st = topoml__sl_switches(t);
	if (!best || !orig || !s.node_map || !s.st || _start(&s, orig))
		goto oom;
	s.swb = calloc(s.st->n, sizeof(*s.swb));
	s.cnt = calloc(s.st->n, sizeof(int));
	s.required = calloc(s.st->n, sizeof(int));
	dist = calloc(s.st->n, sizeof(*dist));
	drow = calloc(s.st->n, sizeof(*drow));
	queue = calloc(s.st->n, sizeof(int));
	if (!s.swb || !s.cnt || !s.required || !dist || !drow || !queue)
		goto oom;
	if (have_req)
		hwloc_bitmap_copy(s.node_map, in->required);

	/* Identify the highest level switch to be used. */
	for (int i = 0; i < s.st->n; i++) {
		int lvl = s.st->level[i];

		s.swb[i] = hwloc_bitmap_dup(s.st->nodes[i]);
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
			if (top == -1 || lvl > s.st->level[top])
				top = i;
		}
		if (dfly) {
			if (!have_req &&
			    hwloc_bitmap_intersects(orig, s.swb[i]) &&
			    (top == -1 || lvl > s.st->level[top]))
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
			     (lvl >= s.st->level[top] &&
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
	for (int i = 0; i < s.st->n; i++)
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
		for (int i = 0; i < s.st->n; i++) {
			if (s.required[i])
				continue;
			if (hwloc_bitmap_intersects(req2, s.swb[i])) {
				s.required[i] = 1;
				if (dfly && s.st->level[i] == 0)
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
	for (int i = 0; i < s.st->n; i++) {
		hwloc_bitmap_and(s.swb[i], s.swb[i], best);
		s.cnt[i] = hwloc_bitmap_weight(s.swb[i]);
	}

	if (dfly) {
		int i;

		/* No leaf yet: the one with the most available nodes. */
		if (leaf_count == 0) {
			int b = -1;

			for (i = 0; i < s.st->n; i++) {
				if (s.st->level[i] != 0)
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

			for (i = 0; i < s.st->n; i++) {
				if (!s.required[i] || s.st->level[i] != 0)
					continue;
				hwloc_bitmap_foreach_begin(v, s.swb[i])
					if (!hwloc_bitmap_isset(s.node_map, v))
						have++;
				hwloc_bitmap_foreach_end();
				break;
			}
			if (have >= s.rem && i < s.st->n) {
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
			for (i = 0; i < s.st->n; i++) {
				if (s.st->level[i] != 0)
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
		for (int i = 0; i < s.st->n; i++) {
			if (!s.required[i] || s.st->level[i] != 0)
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
	for (int i = 0; i < s.st->n; i++)
		if (s.required[i])
			topoml__sl_add_dist(s.st, dist, i, queue, drow);
	/* Then more leaf switches, nearest and best fitting first. */
	for (int prev = s.rem + 1; prev != s.rem;) {
		int b = -1;

		prev = s.rem;
		for (int i = 0; i < s.st->n; i++) {
			if (s.required[i] || s.st->level[i] != 0)
				continue;
			topoml__sl_choose_best(s.st, dist, s.cnt, s.rem, i,
					       &b);
		}
		if (b == -1)
			break;
		topoml__sl_add_dist(s.st, dist, b, queue, drow);
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
	for (int i = 0; s.swb && s.st && i < s.st->n; i++)
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
	topoml__sl_switches_free(s.st);
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
