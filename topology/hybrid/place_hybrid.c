/*
 * Placement of a hybrid-parallel job (issue 14 items 1, 2, 5): the
 * engine's best candidates, each with its NVLink domains evened out to
 * whole tensor groups where free nodes allow, its nodes in ring order or
 * with pipeline stages kept inside top-level parts, chosen by the cost by
 * traffic kind.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/place.h"
#include "topoml.h"
#include "util/util.h"

#define HYB_CANDIDATES 4

long topoml_hybrid_tp_split(const topoml_topo_t *t, const int *nodes, int n,
			    int tasks_per_node, const struct topoml_parallel *p)
{
	long split = 0;

	if (t->nnvl <= 0 || tasks_per_node < 1 || p->tp < 1)
		return 0;
	for (int r0 = 0; r0 + p->tp <= n * tasks_per_node; r0 += p->tp) {
		int d = t->nodes[nodes[r0 / tasks_per_node]].nvl;
		bool bad = d < 0;

		for (int r = r0 + 1; !bad && r < r0 + p->tp; r++)
			bad = t->nodes[nodes[r / tasks_per_node]].nvl != d;
		split += bad;
	}
	return split;
}

static bool _required(const struct topoml_place_req *req, int v)
{
	return req->required && hwloc_bitmap_isset(req->required, v);
}

long topoml_hybrid_tp_over_top(const topoml_topo_t *t, const int *nodes,
			       int n, int tasks_per_node,
			       const struct topoml_parallel *p)
{
	long over = 0;

	if (tasks_per_node < 1 || p->tp < 1 ||
	    (t->family != TOPOML_DRAGONFLY &&
	     (t->family != TOPOML_FAT_TREE || t->nlevels < 2)))
		return 0;
	for (int r0 = 0; r0 + p->tp <= n * tasks_per_node; r0 += p->tp) {
		int a = nodes[r0 / tasks_per_node];
		bool bad = false;

		for (int r = r0 + 1; !bad && r < r0 + p->tp; r++) {
			int b = nodes[r / tasks_per_node];

			bad = t->family == TOPOML_DRAGONFLY ?
			      t->nodes[a].group != t->nodes[b].group :
			      topoml_common_level(t, a, b) >= t->nlevels - 1;
		}
		over += bad;
	}
	return over;
}

/* The free nodes of each NVLink domain: lst[off[d] .. off[d + 1]). */
struct _dom_free {
	int *off, *lst;
};

static int _dom_free(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		     struct _dom_free *df)
{
	int v, k;

	df->off = calloc(t->nnvl + 1, sizeof(int));
	df->lst = malloc(sizeof(int) * (hwloc_bitmap_weight(avail) + 1));
	if (!df->off || !df->lst)
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		if (t->nodes[v].nvl >= 0)
			df->off[t->nodes[v].nvl + 1]++;
	hwloc_bitmap_foreach_end();
	for (int d = 0; d < t->nnvl; d++)
		df->off[d + 1] += df->off[d];
	hwloc_bitmap_foreach_begin(v, avail)
		if ((k = t->nodes[v].nvl) >= 0)
			df->lst[df->off[k]++] = v;
	hwloc_bitmap_foreach_end();
	for (int d = t->nnvl; d > 0; d--)	/* back to the starts */
		df->off[d] = df->off[d - 1];
	df->off[0] = 0;
	return 0;
}

struct _dom_key {
	int d, kept, dist;
};

static int _dom_key_cmp(const void *a, const void *b)
{
	const struct _dom_key *x = a, *y = b;

	if (x->kept != y->kept)
		return y->kept - x->kept;
	if (x->dist != y->dist)
		return x->dist - y->dist;
	return x->d - y->d;
}

/*
 * What evening out in place leaves (a domain with no free node to
 * complete its remainder, no donor): give up every remainder node (and
 * nodes of no domain) and take as many whole groups of m free nodes from
 * the domains the job uses, then those nearest its nodes.  Whenever the
 * free nodes hold the job in whole groups this leaves none split; else
 * nothing changes (a forced split).  count and in: the job's, updated.
 */
static void _whole_groups(const topoml_topo_t *t,
			  const struct topoml_place_req *req,
			  const struct _dom_free *df, int *nodes, int n, int m,
			  int *count, hwloc_bitmap_t in)
{
	int *rem = malloc(sizeof(int) * n), *fr = calloc(t->nnvl, sizeof(int));
	int *seen = calloc(t->nnvl, sizeof(int));
	struct _dom_key *key = malloc(sizeof(*key) * (t->nnvl + 1));
	int nr = 0, anchor = -1, k = 0, avail = 0, nk = 0;

	if (!rem || !fr || !seen || !key)
		goto out;
	for (int d = 0; d < t->nnvl; d++)
		seen[d] = count[d] % m;
	for (int i = n - 1; i >= 0; i--) {
		int d = t->nodes[nodes[i]].nvl;

		if (d >= 0 && seen[d] <= 0) {
			anchor = nodes[i];
			continue;
		}
		if (_required(req, nodes[i]))
			goto out;	/* it cannot move */
		if (d >= 0)
			seen[d]--;
		rem[nr++] = i;
	}
	if (!nr || nr % m)
		goto out;
	/* free nodes per domain once the remainders are given up */
	for (int r = 0; r < nr; r++)
		hwloc_bitmap_clr(in, nodes[rem[r]]);
	for (int d = 0; d < t->nnvl; d++) {
		for (int j = df->off[d]; j < df->off[d + 1]; j++)
			fr[d] += !hwloc_bitmap_isset(in, df->lst[j]);
		avail += fr[d] / m;
		if (fr[d] < m)
			continue;
		key[nk].d = d;
		key[nk].kept = count[d] - count[d] % m > 0;
		key[nk++].dist = anchor < 0 ? 0 :
			topoml_hops(t, anchor, df->lst[df->off[d]]);
	}
	if (avail < nr / m) {
		for (int r = 0; r < nr; r++)
			hwloc_bitmap_set(in, nodes[rem[r]]);
		goto out;
	}
	/* a domain the job keeps nodes in first, then the nearest */
	qsort(key, nk, sizeof(*key), _dom_key_cmp);
	for (int q = 0; q < nk && k < nr; q++) {
		int d = key[q].d, take = (fr[d] / m) * m;

		take = take < nr - k ? take : nr - k;
		for (int j = df->off[d]; take > 0 && j < df->off[d + 1]; j++) {
			int v = df->lst[j];

			if (hwloc_bitmap_isset(in, v))
				continue;
			hwloc_bitmap_set(in, v);
			nodes[rem[k++]] = v;
			take--;
		}
	}
	for (int d = 0; d < t->nnvl; d++)
		count[d] = 0;
	for (int i = 0; i < n; i++)
		if (t->nodes[nodes[i]].nvl >= 0)
			count[t->nodes[nodes[i]].nvl]++;
out:
	free(rem);
	free(fr);
	free(seen);
	free(key);
}

/*
 * A tensor group of m nodes stays in one domain only when the job holds a
 * multiple of m nodes in each domain it uses.  For each domain A short of
 * that, take the missing nodes from A's free ones and give up as many
 * from domains with a remainder of their own (or from nodes of no
 * domain): both move towards a multiple, the job's size stays.
 *
 * One pass over the domains the job uses decides it: a domain evened out
 * never gives a node again, and one that could not be stays so (donors
 * only shrink; giving nodes away raises its need as much as its free
 * nodes).  Donors are a list of the job's positions from the last, each
 * domain's last remainder of them, so the pass costs O(n + free nodes of
 * those domains), not O(domains x n) per domain: a request for many nodes
 * on a fabric of many small domains is no longer quadratic (issue 28).
 */
struct _donors {
	int *nxt, *prv;		/* positions that may give, last first */
	int *dom_next, *dom_head;	/* each domain's givers */
	bool *on;
	int head;
};

static void _donor_drop(struct _donors *g, int i)
{
	if (!g->on[i])
		return;
	g->on[i] = false;
	if (g->prv[i] >= 0)
		g->nxt[g->prv[i]] = g->nxt[i];
	else
		g->head = g->nxt[i];
	if (g->nxt[i] >= 0)
		g->prv[g->nxt[i]] = g->prv[i];
}

static int _donors_init(const topoml_topo_t *t,
			const struct topoml_place_req *req, const int *nodes,
			int n, int m, const int *count, struct _donors *g)
{
	int *left = calloc(t->nnvl, sizeof(int)), last = -1;

	g->nxt = malloc(sizeof(int) * n);
	g->prv = malloc(sizeof(int) * n);
	g->dom_next = malloc(sizeof(int) * n);
	g->dom_head = malloc(sizeof(int) * t->nnvl);
	g->on = calloc(n, sizeof(bool));
	g->head = -1;
	if (!left || !g->nxt || !g->prv || !g->dom_next || !g->dom_head ||
	    !g->on) {
		free(left);
		return -1;
	}
	for (int d = 0; d < t->nnvl; d++) {
		left[d] = count[d] % m;
		g->dom_head[d] = -1;
	}
	for (int i = n - 1; i >= 0; i--) {
		int d = t->nodes[nodes[i]].nvl;

		if (_required(req, nodes[i]) || (d >= 0 && left[d] <= 0))
			continue;
		if (d >= 0) {
			left[d]--;
			g->dom_next[i] = g->dom_head[d];
			g->dom_head[d] = i;
		}
		g->on[i] = true;
		g->prv[i] = last;
		g->nxt[i] = -1;
		if (last >= 0)
			g->nxt[last] = i;
		else
			g->head = i;
		last = i;
	}
	free(left);
	return 0;
}

static void _donors_free(struct _donors *g)
{
	free(g->nxt);
	free(g->prv);
	free(g->dom_next);
	free(g->dom_head);
	free(g->on);
}

static void _even_domains(const topoml_topo_t *t,
			  const struct topoml_place_req *req, int *nodes,
			  int n, int m)
{
	int *count = calloc(t->nnvl, sizeof(int));
	int *used = malloc(sizeof(int) * n), nu = 0;
	hwloc_bitmap_t in = hwloc_bitmap_alloc();
	struct _dom_free df = { NULL, NULL };
	struct _donors g = { 0 };

	if (t->nnvl <= 0 || !count || !used || !in ||
	    _dom_free(t, req->avail, &df))
		goto out;
	for (int i = 0; i < n; i++) {
		int d = t->nodes[nodes[i]].nvl;

		hwloc_bitmap_set(in, nodes[i]);
		if (d >= 0 && !count[d]++)
			used[nu++] = d;
	}
	qsort(used, nu, sizeof(int), topoml__int_cmp);
	if (_donors_init(t, req, nodes, n, m, count, &g))
		goto out;
	for (int u = 0; u < nu; u++) {
		int a = used[u], need = count[a] % m ? m - count[a] % m : 0;
		int add[64], take[64], na = 0, nt = 0;

		if (!need || need > 64)
			continue;
		/* free nodes of A */
		for (int j = df.off[a]; j < df.off[a + 1] && na < need; j++)
			if (!hwloc_bitmap_isset(in, df.lst[j]))
				add[na++] = df.lst[j];
		if (na < need)
			continue;
		/* donors: remainders of other domains, no domain */
		for (int i = g.head; i >= 0 && nt < need; i = g.nxt[i])
			if (t->nodes[nodes[i]].nvl != a)
				take[nt++] = i;
		if (nt < need)
			continue;
		for (int k = 0; k < need; k++) {
			int i = take[k], d = t->nodes[nodes[i]].nvl;

			_donor_drop(&g, i);
			hwloc_bitmap_clr(in, nodes[i]);
			if (d >= 0)
				count[d]--;
			nodes[i] = add[k];
			hwloc_bitmap_set(in, add[k]);
			count[a]++;
		}
		for (int i = g.dom_head[a]; i >= 0; i = g.dom_next[i])
			_donor_drop(&g, i);	/* even now: gives no more */
	}
	_whole_groups(t, req, &df, nodes, n, m, count, in);
out:
	_donors_free(&g);
	free(count);
	free(used);
	free(df.off);
	free(df.lst);
	hwloc_bitmap_free(in);
}

/*
 * The top-level part of each node: its dragonfly group; on a fat tree the
 * first earlier node that reaches it below the top level (a subtree of a
 * spine).  Transfers between parts are what cross the top (cost/cost_hybrid.c).
 * Returns the number of parts, 0 where there is no top to cross.
 */
static int _top_parts(const topoml_topo_t *t, const int *nodes, int n,
		      int *part, int *rep)
{
	int np = 0, *leaf_part;

	if (t->family != TOPOML_DRAGONFLY &&
	    (t->family != TOPOML_FAT_TREE || t->nlevels < 2))
		return 0;
	/* nodes of one leaf share its part: decide once per leaf */
	leaf_part = malloc(sizeof(int) * (t->nswitches + 1));
	if (!leaf_part)
		return 0;
	for (int s = 0; s <= t->nswitches; s++)
		leaf_part[s] = -1;
	for (int i = 0; i < n; i++) {
		int q, l = t->nodes[nodes[i]].leaf;

		if (l >= 0 && leaf_part[l] >= 0) {
			part[i] = leaf_part[l];
			continue;
		}
		for (q = 0; q < np; q++)
			if (t->family == TOPOML_DRAGONFLY ?
			    t->nodes[nodes[rep[q]]].group ==
			    t->nodes[nodes[i]].group :
			    topoml_common_level(t, nodes[rep[q]], nodes[i]) <
			    t->nlevels - 1)
				break;
		if (q == np)
			rep[np++] = i;
		part[i] = q;
		if (l >= 0)
			leaf_part[l] = q;
	}
	free(leaf_part);
	return np;
}

/* Stages the parts' remainders rem[] span, filled in the order ord[]. */
static long _rem_pieces(const int *rem, const int *ord, int np, int g)
{
	long acc = 0, pieces = 0;

	for (int i = 0; i < np; i++) {
		int r = rem[ord[i]];

		if (r > 0)
			pieces += (acc + r - 1) / g - acc / g + 1;
		acc += r;
	}
	return pieces;
}

#define HYB_PACK_PARTS 64
#define HYB_PACK_UNITS 512
#define HYB_PACK_STEPS 65536	/* subset sums' steps, in all */

/*
 * The order of the parts that builds the mixed stages: each stage opened
 * by the largest remainder left and completed exactly by others (a subset
 * sum), so that no remainder is cut over two stages, where that leaves
 * the stages fewer parts in all than the index order does; those that
 * complete none come last.  A part without a remainder keeps its place.
 * Small cases only (HYB_PACK_*), and at most HYB_PACK_STEPS steps of the
 * sums: what is left then comes last too.  Else the index order.
 */
static void _pack_parts(const int *rem, int np, int g, int *ord)
{
	int grp[HYB_PACK_PARTS], by[HYB_PACK_UNITS], alt[HYB_PACK_PARTS];
	int ng = 0, k = 0;
	long steps = 0;

	for (int q = 0; q < np; q++)
		ord[q] = q;
	if (np > HYB_PACK_PARTS || g > HYB_PACK_UNITS)
		return;
	for (int q = 0; q < np; q++)
		grp[q] = rem[q] > 0 ? -1 : -2;	/* -2: no remainder */
	for (;;) {
		int a = -1, need;

		for (int q = 0; q < np; q++)
			if (grp[q] == -1 && (a < 0 || rem[q] > rem[a]))
				a = q;
		if (a < 0)
			break;
		grp[a] = ng;
		need = g - rem[a];
		steps += (long)np * (need + 1);
		if (steps > HYB_PACK_STEPS) {
			for (int q = 0; q < np; q++)
				grp[q] = grp[q] == -1 || q == a ? -3 : grp[q];
			break;
		}
		for (int x = 0; x <= need; x++)
			by[x] = x ? -1 : np;
		for (int q = 0; q < np && need > 0; q++) {
			if (grp[q] != -1 && grp[q] != -3)
				continue;
			for (int x = need; x >= rem[q]; x--)
				if (by[x] < 0 && by[x - rem[q]] >= 0)
					by[x] = q;
		}
		if (need > 0 && by[need] < 0) {
			grp[a] = -3;	/* completes no stage: last */
			continue;
		}
		for (int x = need; x > 0; x -= rem[by[x]])
			grp[by[x]] = ng;
		ng++;
	}
	/* groups where their first part is, remainders left last */
	for (int q = 0; q < np; q++) {
		if (grp[q] == -2) {
			alt[k++] = q;
			continue;
		}
		if (grp[q] < 0)
			continue;
		for (int r = q, gq = grp[q]; r < np; r++)
			if (grp[r] == gq) {
				alt[k++] = r;
				if (r > q)
					grp[r] = -4;	/* placed */
			}
		grp[q] = -4;
	}
	for (int q = 0; q < np; q++)
		if (grp[q] == -3)
			alt[k++] = q;
	if (_rem_pieces(rem, alt, np, g) < _rem_pieces(rem, ord, np, g))
		memcpy(ord, alt, sizeof(int) * np);
}

/*
 * The top-level part each unit (m consecutive nodes: a tensor group) of
 * the order counts in, into upart[], and how many units each part
 * counts, into cnt[]: a unit inside one part, that part; a unit over
 * the top, the part of its nodes whose count of units inside it is left
 * closest to a whole stage of g, ties to the part holding most of the
 * unit, then its first node's.  There it completes (or fills up) a
 * stage whose rings then leave the part only at the unit's nodes
 * outside, where counted in another part it may open a stage mixed of
 * parts whose rings all cross the top.
 */
static void _unit_parts(const int *part, int U, int m, int np, int g,
			int *upart, int *cnt, int *share)
{
	for (int q = 0; q < np; q++)
		cnt[q] = share[q] = 0;
	for (int u = 0; u < U; u++) {
		bool over = false;

		for (int j = 1; j < m; j++)
			over |= part[u * m + j] != part[u * m];
		upart[u] = over ? -1 : part[u * m];
		if (!over)
			cnt[upart[u]]++;
	}
	/* O(m) a unit: its nodes per part counted, chosen, reset */
	for (int u = 0; u < U; u++) {
		const int *pu = part + (size_t)u * m;
		int best = -1;
		long bs = -1;

		if (upart[u] >= 0)
			continue;
		for (int j = 0; j < m; j++)
			share[pu[j]]++;
		for (int j = 0; j < m; j++) {
			long sc = (long)(cnt[pu[j]] % g) * (m + 1) +
				  share[pu[j]];

			if (sc > bs) {
				bs = sc;
				best = pu[j];
			}
		}
		for (int j = 0; j < m; j++)
			share[pu[j]] = 0;
		upart[u] = best;
		cnt[best]++;
	}
}

/*
 * Megatron puts pipeline stage s on ranks [s * T*C*D, (s + 1) * T*C*D),
 * so in ring order a stage is a run of the ring, and a run that straddles
 * two top-level parts sends all of its data-parallel rings through the
 * top.  This order keeps whole stages inside one part where the job's
 * count there allows (floor(count / stage) of them), and builds the
 * stages that must mix parts from the parts' remainders: a part's
 * remainder comes first when a mixed stage is open (it completes it),
 * else last (it opens the next one), so a mixed stage sits between the
 * parts it joins and pipeline neighbours stay close.  The parts come in
 * index order, or in _pack_parts' where remainders that fill a stage
 * exactly then spread the mixed stages over fewer parts.  Tensor groups
 * of m nodes move as units, each in the part _unit_parts counts it in.
 * 0 with out[] filled, -1 when the shape does not split into stages of
 * whole units (ring order stays).
 */
static int _stage_order(const topoml_topo_t *t, const int *nodes, int n,
			int tasks_per_node, const struct topoml_parallel *p,
			int *out)
{
	long stage_ranks = (long)p->tp * p->cp * (p->dp > 0 ? p->dp : 0);
	int m, S, g, U, np, k = 0, npend = 0, rc = -1;
	int *part = NULL, *rep = NULL, *pend = NULL, *unit = NULL;
	int *rests = NULL, *ord = NULL;	/* units past whole stages */
	int *upart = NULL, *share = NULL;

	if (p->pp < 2 || stage_ranks < 1 || stage_ranks % tasks_per_node ||
	    n % p->pp)
		return -1;
	S = (int)(stage_ranks / tasks_per_node);
	m = p->tp > tasks_per_node ? p->tp / tasks_per_node : 1;
	if ((p->tp > tasks_per_node && p->tp % tasks_per_node) ||
	    (p->tp < tasks_per_node && tasks_per_node % p->tp) || S % m ||
	    S * p->pp != n)
		return -1;
	g = S / m;
	U = n / m;
	part = malloc(sizeof(int) * n);
	rep = malloc(sizeof(int) * n);
	pend = malloc(sizeof(int) * U);
	unit = malloc(sizeof(int) * U);
	if (!part || !rep || !pend || !unit)
		goto out;
	np = _top_parts(t, nodes, n, part, rep);
	if (np < 2)
		goto out;
	rests = calloc(np, sizeof(int));
	ord = malloc(sizeof(int) * np);
	upart = malloc(sizeof(int) * U);
	share = malloc(sizeof(int) * np);
	if (!rests || !ord || !upart || !share)
		goto out;
	_unit_parts(part, U, m, np, g, upart, rests, share);
	for (int q = 0; q < np; q++)
		rests[q] %= g;
	_pack_parts(rests, np, g, ord);
	for (int qi = 0; qi < np; qi++) {
		int q = ord[qi], cnt = 0, full, rem;
		bool head = npend > 0;

		/* the part's units, in ring order (a unit: its first node) */
		for (int u = 0; u < U; u++)
			if (upart[u] == q)
				unit[cnt++] = u;
		full = (cnt / g) * g;
		rem = cnt - full;
		for (int i = 0; !head && i < full; i++)
			out[k++] = unit[i];
		for (int i = head ? 0 : full; i < (head ? rem : cnt); i++) {
			pend[npend++] = unit[i];
			if (npend == g) {
				for (int j = 0; j < g; j++)
					out[k++] = pend[j];
				npend = 0;
			}
		}
		for (int i = rem; head && i < cnt; i++)
			out[k++] = unit[i];
	}
	rc = npend || k != U ? -1 : 0;
	/* units to nodes, from the back so out[] can hold both */
	for (int u = U - 1; !rc && u >= 0; u--)
		for (int j = m - 1; j >= 0; j--)
			out[u * m + j] = nodes[out[u] * m + j];
out:
	free(part);
	free(rep);
	free(pend);
	free(unit);
	free(rests);
	free(ord);
	free(upart);
	free(share);
	return rc;
}

/*
 * Ring order, or stages kept in top-level parts (_stage_order) when that
 * sends fewer data-parallel transfers through the top: the level a fabric
 * tapers at, and issue 14's target; c holds the cost of the order left.
 */
static void _stages_aligned(const topoml_topo_t *t, int *nodes, int n,
			    int tasks_per_node,
			    const struct topoml_parallel *p,
			    const double w[TOPOML_KIND_COUNT],
			    struct topoml_hybrid_cost *c)
{
	struct topoml_hybrid_cost c2;
	int *alt = malloc(sizeof(int) * (n > 0 ? n : 1));

	if (alt && !_stage_order(t, nodes, n, tasks_per_node, p, alt) &&
	    !topoml_hybrid_cost(t, alt, n, tasks_per_node, p, w, &c2) &&
	    c2.kind[TOPOML_KIND_DP].cross_top <
	    c->kind[TOPOML_KIND_DP].cross_top) {
		memcpy(nodes, alt, sizeof(int) * n);
		*c = c2;
	}
	free(alt);
}

/* Index of the part with the most (most=true) or fewest whole stages
 * (then free nodes) among those with at least min_free left; -1 none. */
static int _pick_part(const int *left, int np, int S, int min_free,
		      bool most)
{
	int best = -1;

	for (int q = 0; q < np; q++) {
		if (left[q] < min_free || left[q] <= 0)
			continue;
		if (best < 0 ||
		    (most ? left[q] / S > left[best] / S ||
		     (left[q] / S == left[best] / S && left[q] < left[best]) :
		     left[q] > left[best]))
			best = q;
	}
	return best;
}

/*
 * The free nodes arr[0..na) that form whole groups of m inside NVLink
 * domains (the first floor(free / m) * m of each domain, in index
 * order): where they hold the job's n nodes, every other node's part
 * becomes -1.  0, or -1 for no memory.
 */
static int _whole_slots(const topoml_topo_t *t, const int *arr, int na,
			int n, int m, int *part)
{
	int *cnt, groups = 0;

	if (t->nnvl < 1)
		return 0;
	cnt = calloc(t->nnvl, sizeof(int));
	if (!cnt)
		return -1;
	for (int i = 0; i < na; i++)
		if (t->nodes[arr[i]].nvl >= 0)
			cnt[t->nodes[arr[i]].nvl]++;
	for (int d = 0; d < t->nnvl; d++) {
		groups += cnt[d] / m;
		cnt[d] = cnt[d] / m * m;	/* now: slots left */
	}
	if (groups >= n / m)
		for (int i = 0; i < na; i++) {
			int d = t->nodes[arr[i]].nvl;

			if (d < 0 || cnt[d] <= 0)
				part[i] = -1;
			else
				cnt[d]--;
		}
	free(cnt);
	return 0;
}

#define HYB_EVEN_PARTS 16

/* Whether some NVLink domain holds a count of nodes[] not a multiple of
 * m (or a node lies in none); cnt: zeros of t->nnvl, left so. */
static bool _odd_domain(const topoml_topo_t *t, const int *nodes, int n,
			int m, int *cnt)
{
	bool odd = false;

	for (int i = 0; i < n; i++) {
		int d = t->nodes[nodes[i]].nvl;

		odd |= d < 0;
		if (d >= 0)
			cnt[d]++;
	}
	for (int i = 0; i < n; i++) {
		int d = t->nodes[nodes[i]].nvl;

		if (d >= 0 && cnt[d]) {
			odd |= cnt[d] % m != 0;
			cnt[d] = 0;
		}
	}
	return odd;
}

/*
 * A candidate built for the job's pipeline stages: whole stages from
 * the top-level parts that hold them (most whole stages first, then the
 * fuller part: big parts stay for big jobs), the stages no part holds
 * from the parts with the most free nodes left, so that fewest stages
 * straddle the top; a job of one stage goes into the part that holds it
 * most tightly, or into the fewest parts.  The engine picks the nodes
 * inside each part.  Where tensor groups span m > 1 nodes and the free
 * nodes hold the job in whole groups inside NVLink domains, only those
 * whole groups' nodes count (_whole_slots): a part's free nodes that
 * would split a group hold no stage, and the nodes the engine picks in a
 * part are evened out to whole groups there.  0 with out filled, -1
 * when there is none (one part, required nodes, shared nodes, a leaf
 * limit).
 */
static int _part_candidate(const topoml_topo_t *t,
			   const struct topoml_place_req *req,
			   const struct topoml_parallel *p, int m,
			   struct topoml_placement *out)
{
	int n = req->nnodes, P = n % p->pp ? 1 : p->pp, S = n / P;
	int na = hwloc_bitmap_weight(req->avail), np, k = 0, v, rc = -1;
	int evened = 0;
	int *arr = NULL, *part = NULL, *rep = NULL, *left = NULL, *take = NULL;
	int *dcnt = NULL;
	hwloc_bitmap_t sub = NULL;
	char why[256];

	memset(out, 0, sizeof(*out));
	/* --switches=N bounds the leaves of the whole job: the engine's */
	if (req->required || req->units || req->max_leaves > 0 || na < n ||
	    n < 2)
		return -1;
	arr = malloc(sizeof(int) * na);
	part = malloc(sizeof(int) * na);
	rep = malloc(sizeof(int) * na);
	left = calloc(na, sizeof(int));
	take = calloc(na, sizeof(int));
	sub = hwloc_bitmap_alloc();
	dcnt = calloc(t->nnvl + 1, sizeof(int));
	out->nodes = malloc(sizeof(int) * n);
	if (!arr || !part || !rep || !left || !take || !sub || !dcnt ||
	    !out->nodes)
		goto out;
	hwloc_bitmap_foreach_begin(v, req->avail)
		arr[k++] = v;
	hwloc_bitmap_foreach_end();
	np = _top_parts(t, arr, na, part, rep);
	if (np < 2)
		goto out;
	if (m > 1 && _whole_slots(t, arr, na, n, m, part))
		goto out;
	for (int i = 0; i < na; i++)
		if (part[i] >= 0)
			left[part[i]]++;
	/* whole stages */
	for (int stages = P; stages > 0;) {
		int q = _pick_part(left, np, S, S, true);
		int s = q < 0 ? 0 : left[q] / S;

		if (q < 0)
			break;
		s = s < stages ? s : stages;
		if (P == 1) {	/* one stage: the tightest part holding it */
			for (int r = 0; r < np; r++)
				if (left[r] >= S && left[r] < left[q])
					q = r;
		}
		take[q] += s * S;
		left[q] -= s * S;
		stages -= s;
	}
	k = 0;
	for (int q = 0; q < np; q++)
		k += take[q];
	/* the rest from the parts with most left */
	while (k < n) {
		int q = _pick_part(left, np, S, 1, false), x = n - k;

		if (q < 0)
			goto out;
		x = x < left[q] ? x : left[q];
		take[q] += x;
		left[q] -= x;
		k += x;
	}
	k = 0;
	for (int q = 0; q < np; q++) {
		struct topoml_place_req r2 = *req;
		struct topoml_placement pl;

		if (!take[q])
			continue;
		/* a part taken whole leaves nothing to choose */
		if (!left[q]) {
			for (int i = 0; i < na; i++)
				if (part[i] == q)
					out->nodes[k++] = arr[i];
			continue;
		}
		hwloc_bitmap_zero(sub);
		for (int i = 0; i < na; i++)
			if (part[i] == q)
				hwloc_bitmap_set(sub, arr[i]);
		r2.nnodes = take[q];
		r2.avail = sub;
		r2.attempt = 0;
		r2.unscored = true;
		/* whether the job waits was decided on the whole machine:
		 * a part must not hold its share (blocks: for an aligned
		 * group its free nodes lack, or fewer blocks) */
		r2.admitted = true;
		if (topoml_place(t, TOPOML_POLICY_TOPOML, &r2, &pl, why,
				 sizeof(why)))
			goto out;
		if (pl.n != take[q]) {
			topoml_placement_clear(&pl);
			goto out;
		}
		/* whole groups inside the part: evening out over the whole
		 * job could move a node to another part's domain and make
		 * a stage straddle two (a part's evening costs O(domains
		 * of the machine): HYB_EVEN_PARTS at most) */
		if (m > 1 && P > 1 && t->nnvl > 0 &&
		    evened < HYB_EVEN_PARTS &&
		    _odd_domain(t, pl.nodes, pl.n, m, dcnt)) {
			_even_domains(t, &r2, pl.nodes, pl.n, m);
			evened++;
		}
		memcpy(out->nodes + k, pl.nodes, sizeof(int) * pl.n);
		k += pl.n;
		topoml_placement_clear(&pl);
	}
	out->n = n;
	rc = k == n ? 0 : -1;
out:
	if (rc)
		topoml_placement_clear(out);
	free(arr);
	free(part);
	free(rep);
	free(left);
	free(take);
	free(dcnt);
	hwloc_bitmap_free(sub);
	return rc;
}

struct _ranked {
	struct topoml_placement pl;
	long split, over, tp_top, dp_top;
	double cost;
	bool priced;
	int rank;
};

static int _ranked_cmp(const void *a, const void *b)
{
	const struct _ranked *x = a, *y = b;

	if (x->priced != y->priced)
		return x->priced ? -1 : 1;
	/*
	 * A tensor group off NVLink all-reduces over the network every
	 * layer; one over the top also through the most shared links:
	 * it counts as two split groups.
	 */
	if (x->priced && x->split + x->over != y->split + y->over)
		return x->split + x->over < y->split + y->over ? -1 : 1;
	if (x->priced && x->tp_top != y->tp_top)
		return x->tp_top < y->tp_top ? -1 : 1;
	if (x->priced && x->dp_top != y->dp_top)
		return x->dp_top < y->dp_top ? -1 : 1;
	if (x->priced && x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->rank - y->rank;	/* the engine's own order */
}

/*
 * The nodes no domain holds a whole tensor group of (!done), into out:
 * groups of m inside one top-level part where the counts allow (a group
 * over the top all-reduces through it every layer), the rest last, each
 * in ring order.  Returns how many.
 */
static int _group_rest(const topoml_topo_t *t, const int *nodes, int n,
		       int m, const bool *done, int *out)
{
	int nl = 0, k = 0, np;
	int *left = malloc(sizeof(int) * (n + 1));
	int *part = malloc(sizeof(int) * (n + 1));
	int *rep = malloc(sizeof(int) * (n + 1));
	int *cnt = calloc(n + 1, sizeof(int));
	bool *used = calloc(n + 1, sizeof(bool));

	for (int i = 0; left && i < n; i++)
		if (!done[i])
			left[nl++] = nodes[i];
	if (!left || !part || !rep || !cnt || !used ||
	    (np = _top_parts(t, left, nl, part, rep)) < 2) {
		for (int i = 0; i < n; i++)
			if (!done[i])
				out[k++] = nodes[i];
		goto out;
	}
	for (int i = 0; i < nl; i++)
		cnt[part[i]]++;
	/* whole groups of a part, m at a time as they come in ring order */
	for (int q = 0; q < np; q++) {
		int take = cnt[q] / m * m;

		for (int i = 0; i < nl && take > 0; i++)
			if (part[i] == q) {
				out[k++] = left[i];
				used[i] = true;
				take--;
			}
	}
	for (int i = 0; i < nl; i++)
		if (!used[i])
			out[k++] = left[i];
out:
	free(left);
	free(part);
	free(rep);
	free(cnt);
	free(used);
	return k;
}

/*
 * Tensor groups of m nodes are m consecutive nodes of the order: keep the
 * ring, but emit a domain's nodes m at a time, when its m-th arrives, so
 * each group lies in one domain where the counts allow (the ring may cross
 * a domain boundary in the middle of a group); what cannot form a whole
 * group goes last, in ring order.
 */
static void _group_units(const topoml_topo_t *t, int *nodes, int n, int m)
{
	int nd = t->nnvl + 1, k = 0;
	int *pend = malloc(sizeof(int) * (size_t)nd * m);
	int *np = calloc(nd, sizeof(int)), *out = malloc(sizeof(int) * n);
	bool *done = calloc(n, sizeof(bool));

	if (!pend || !np || !out || !done)
		goto out;
	for (int i = 0; i < n; i++) {
		int d = t->nodes[nodes[i]].nvl;

		d = d < 0 ? nd - 1 : d;
		pend[d * m + np[d]++] = i;
		if (np[d] < m)
			continue;
		for (int j = 0; j < m; j++) {
			out[k++] = nodes[pend[d * m + j]];
			done[pend[d * m + j]] = true;
		}
		np[d] = 0;
	}
	k += _group_rest(t, nodes, n, m, done, out + k);
	memcpy(nodes, out, sizeof(int) * n);
out:
	free(pend);
	free(np);
	free(out);
	free(done);
}

/* Top-level parts the chunks of groups a and b change between. */
static int _chunk_cross(const int *part, int m, int a, int b)
{
	int c = 0;

	for (int j = 0; j < m; j++)
		c += part[a * m + j] != part[b * m + j];
	return c;
}

#define HYB_OVER_MOVES 16	/* groups moved: O(16 x groups x m) */

/*
 * One stage: the data-parallel ring of chunk j (a tensor group's j-th
 * node) runs through the j-th node of every group in order, so a group
 * over the top left where _group_rest put it (last) sends some rings out
 * of their part and back.  Move each such group to the gap between two
 * groups where its chunks cross the fewest parts.
 */
static void _place_over_groups(const topoml_topo_t *t, int *nodes, int n,
			       int m)
{
	int G = n / m, moved = 0;
	int *part = malloc(sizeof(int) * n), *rep = malloc(sizeof(int) * n);
	int *ord = malloc(sizeof(int) * (G + 1)), *tmp = NULL;
	int *moves = calloc(G + 1, sizeof(int));	/* per group */

	if (!part || !rep || !ord || !moves || G < 3 ||
	    _top_parts(t, nodes, n, part, rep) < 2 ||
	    !(tmp = malloc(sizeof(int) * n)))
		goto out;
	for (int u = 0; u < G; u++)
		ord[u] = u;
	/* twice: a group moved next to one leaves that one's place */
	for (int i = G - 1, pass = 0; moved < HYB_OVER_MOVES; i--) {
		int x, best = -1, bc, prev, next;
		bool over = false;

		if (i < 0) {
			if (++pass == 2)
				break;
			i = G - 1;
		}
		x = ord[i];
		for (int j = 1; j < m; j++)
			over |= t->nodes[nodes[x * m + j]].nvl !=
				t->nodes[nodes[x * m]].nvl;
		if (!over || moves[x] > pass)
			continue;
		moves[x]++;
		moved++;
		prev = ord[(i + G - 1) % G];
		next = ord[(i + 1) % G];
		bc = _chunk_cross(part, m, prev, x) +
		     _chunk_cross(part, m, x, next) -
		     _chunk_cross(part, m, prev, next);
		/* gap after ord[q] (not the gaps beside x) */
		for (int q = 0; q < G; q++) {
			int a = ord[q], b = ord[(q + 1) % G], c;

			if (a == x || b == x)
				continue;
			c = _chunk_cross(part, m, a, x) +
			    _chunk_cross(part, m, x, b) -
			    _chunk_cross(part, m, a, b);
			if (c < bc) {
				bc = c;
				best = q;
			}
		}
		if (best < 0)
			continue;
		/* take x out of place i, put it after ord[best] */
		if (best > i) {
			memmove(ord + i, ord + i + 1,
				sizeof(int) * (best - i));
			ord[best] = x;
		} else {
			memmove(ord + best + 2, ord + best + 1,
				sizeof(int) * (i - best - 1));
			ord[best + 1] = x;
			i++;	/* ord[i] moved one on: look at it again */
		}
	}
	for (int u = 0; u < G; u++)
		memcpy(tmp + u * m, nodes + ord[u] * m, sizeof(int) * m);
	memcpy(nodes, tmp, sizeof(int) * G * m);
out:
	free(part);
	free(rep);
	free(ord);
	free(tmp);
	free(moves);
}

/*
 * The ring with tensor groups formed inside domains (_group_units) when
 * that splits fewer of them: a split group costs more than any other
 * transfer, so this may send more data-parallel transfers through the
 * top (where counts force a split, the leftovers go last; in a job of
 * one stage those over the top then move between the parts they join).
 */
static void _grouped(const topoml_topo_t *t, int *nodes, int n,
		     int tasks_per_node, const struct topoml_parallel *p)
{
	int *alt = malloc(sizeof(int) * n), m = p->tp / tasks_per_node;

	if (!alt)
		return;
	memcpy(alt, nodes, sizeof(int) * n);
	_group_units(t, alt, n, m);
	if (topoml_hybrid_tp_split(t, alt, n, tasks_per_node, p) <
	    topoml_hybrid_tp_split(t, nodes, n, tasks_per_node, p)) {
		memcpy(nodes, alt, sizeof(int) * n);
		if (p->pp == 1 && p->cp == 1 && p->ep == 1 && n % m == 0)
			_place_over_groups(t, nodes, n, m);
	}
	free(alt);
}

/* Hops between the nodes at the same positions of a and b. */
static long _pp_hops(const topoml_topo_t *t, const int *a, const int *b,
		     int S)
{
	long h = 0;

	for (int i = 0; i < S; i++)
		h += topoml_hops(t, a[i], b[i]);
	return h;
}

static int _long_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/*
 * Dragonfly: the most pipeline pairs at the same positions of a and b
 * that send over one link, one way: between two routers of a group (its
 * local link), or two groups (their global links).  Sorted keys, so
 * O(S log S); key[] holds S.
 */
static int _pp_link_max(const topoml_topo_t *t, const int *a, const int *b,
			int S, long *key)
{
	long L = t->nswitches + 1, G = t->ngroups + 1;
	int k = 0, best = 0;

	for (int i = 0; i < S; i++) {
		const struct topoml_node *x = &t->nodes[a[i]],
					 *y = &t->nodes[b[i]];

		if (x->leaf == y->leaf)
			continue;
		key[k++] = x->group == y->group ?
			   (long)x->leaf * L + y->leaf :
			   L * L + (long)x->group * G + y->group;
	}
	qsort(key, k, sizeof(long), _long_cmp);
	for (int i = 0, run = 0; i < k; i++) {
		run = i && key[i] == key[i - 1] ? run + 1 : 1;
		if (run > best)
			best = run;
	}
	return best;
}

/* Extra rotations a dragonfly stage tries (a bound on the cost). */
#define PP_ALIGN_DF_ROTATIONS 32

/*
 * Pipeline neighbours: rank i of stage s sends to rank i of stage s + 1,
 * so nodes at the same position of neighbouring stages should be close.
 * Rotating or reversing a stage's units (tensor groups of m nodes) keeps
 * its data-parallel rings (cyclic) and tensor groups as they are: stage
 * after stage, take the rotation (at a unit where the leaf changes, or
 * none) and direction with the fewest hops to the stage before.  Only
 * without context or expert parallelism, whose groups a rotation would
 * cut.  On a dragonfly, of those as few hops, the one whose pairs load
 * one router-to-router link least, also among the first rotations that
 * are not at a leaf change: stages of whole routers at the same offsets
 * pair a router's every node with one other router's, 4 nodes' sends
 * on one local link where half a router's offset puts 2 (topoml-netsim:
 * a 34-node two-stage job's step 124 ms against 103 ms).
 */
static bool _pp_align(const topoml_topo_t *t, int *nodes, int n,
		      int tasks_per_node, const struct topoml_parallel *p)
{
	long stage_ranks = (long)p->tp * p->cp * p->dp, *key = NULL;
	int P = p->pp, S, m, g, *cur = NULL, *best = NULL, *rot = NULL;
	bool moved = false, df = t->family == TOPOML_DRAGONFLY;

	if (P < 2 || p->cp != 1 || p->ep != 1 || n % P ||
	    stage_ranks % tasks_per_node)
		return false;
	S = n / P;
	m = p->tp > tasks_per_node && p->tp % tasks_per_node == 0 ?
		p->tp / tasks_per_node : 1;
	if (S % m || S != stage_ranks / tasks_per_node)
		return false;
	g = S / m;
	cur = malloc(sizeof(int) * S);
	best = malloc(sizeof(int) * S);
	rot = malloc(sizeof(int) * (g + PP_ALIGN_DF_ROTATIONS + 1));
	key = df ? malloc(sizeof(long) * S) : NULL;
	if (!cur || !best || !rot || (df && !key))
		goto out;
	for (int s = 1; s < P; s++) {
		const int *prev = nodes + (size_t)(s - 1) * S;
		int *st = nodes + (size_t)s * S, nrot = 0, nleaf, bl = 0;
		long bc = _pp_hops(t, prev, st, S);

		memcpy(best, st, sizeof(int) * S);
		if (df)
			bl = _pp_link_max(t, prev, st, S, key);
		rot[nrot++] = 0;
		for (int u = 1; u < g && nrot < 9; u++)
			if (t->nodes[st[u * m]].leaf !=
			    t->nodes[st[(u - 1) * m]].leaf)
				rot[nrot++] = u;
		nleaf = nrot;
		for (int u = 1; df && u < g && u <= PP_ALIGN_DF_ROTATIONS; u++)
			rot[nrot++] = u;
		for (int r = 0; r < nrot; r++)
			for (int rev = 0; rev < 2; rev++) {
				long c;
				int l = 0;

				if (!rot[r] && !rev)
					continue;
				for (int j = 0; j < g; j++) {
					int u = rev ? (rot[r] - 1 - j + 2 * g) %
						g : (rot[r] + j) % g;

					memcpy(cur + j * m, st + u * m,
					       sizeof(int) * m);
				}
				c = _pp_hops(t, prev, cur, S);
				/* the extra rotations only break ties: the
				 * hops stay those of the leaf changes' */
				if (c > bc || (r >= nleaf && c < bc))
					continue;
				if (df)
					l = _pp_link_max(t, prev, cur, S, key);
				if (c < bc || l < bl) {
					bc = c;
					bl = l;
					memcpy(best, cur, sizeof(int) * S);
					moved = true;
				}
			}
		memcpy(st, best, sizeof(int) * S);
	}
out:
	free(cur);
	free(best);
	free(rot);
	free(key);
	return moved;
}

/*
 * A data-parallel ring edge moves about twice the stage's gradient share
 * per step, a pipeline send one micro-batch's activations each way per
 * micro-batch: about 4 sends' worth per edge (topoml-netsim's default
 * sizes; 1 to 4 for dense models of 7B and up at tp 4-8, pp 2).  A ring
 * of dp ranks moves (dp - 1) / dp of that: at equal counts through the
 * top, a narrow stage's rings move less than its sends.
 */
#define HYB_DP_EDGE_SENDS 4

/* Pipeline sends' worth of traffic through the top per step, times dp. */
static long _top_bytes(const struct topoml_hybrid_cost *c, int dp)
{
	return (long)dp * c->kind[TOPOML_KIND_PP].cross_top +
	       HYB_DP_EDGE_SENDS * (long)(dp - 1) *
	       c->kind[TOPOML_KIND_DP].cross_top;
}

/*
 * Two stages over top-level parts, each inside its parts: every pipeline
 * send of the boundary crosses the top.  Striped instead, position i of
 * both stages in one part (tensor groups of m nodes move as units), the
 * sends stay below the top and each stage's data-parallel rings cross it
 * once per part.  Taken when that moves less through the top (a wide
 * stage: its sends outweigh the rings' crossings).
 */
static void _striped(const topoml_topo_t *t, int *nodes, int n,
		     int tasks_per_node, const struct topoml_parallel *p,
		     const double w[TOPOML_KIND_COUNT],
		     struct topoml_hybrid_cost *c)
{
	long stage_ranks = (long)p->tp * p->cp * p->dp;
	int m = p->tp > tasks_per_node ? p->tp / tasks_per_node : 1;
	int U = n / m, np, k0 = 0, k1 = 0, nl = 0;
	int *part = NULL, *rep = NULL, *alt = NULL, *left = NULL;
	struct topoml_hybrid_cost c2;

	if (t->family != TOPOML_DRAGONFLY || p->pp != 2 || p->cp != 1 ||
	    p->ep != 1 || n % (2 * m) ||
	    stage_ranks % tasks_per_node || stage_ranks / tasks_per_node !=
	    n / 2 || !c->kind[TOPOML_KIND_PP].cross_top)
		return;
	part = malloc(sizeof(int) * n);
	rep = malloc(sizeof(int) * n);
	alt = malloc(sizeof(int) * n);
	left = malloc(sizeof(int) * (U + 1));
	if (!part || !rep || !alt || !left ||
	    (np = _top_parts(t, nodes, n, part, rep)) < 2)
		goto out;
	/* stage 0 fills alt[0, n/2), stage 1 alt[n/2, n): unit by unit */
	for (int q = 0; q < np; q++) {
		int odd = -1;

		for (int u = 0; u < U; u++) {
			int *dst;

			if (part[u * m] != q)
				continue;
			if (odd < 0) {
				odd = u;
				continue;
			}
			dst = alt + (size_t)k0++ * m;
			memcpy(dst, nodes + (size_t)odd * m, sizeof(int) * m);
			dst = alt + n / 2 + (size_t)k1++ * m;
			memcpy(dst, nodes + (size_t)u * m, sizeof(int) * m);
			odd = -1;
		}
		if (odd >= 0)
			left[nl++] = odd;
	}
	for (int i = 0; i < nl; i++) {
		int *dst = i < nl / 2 ? alt + (size_t)k0++ * m :
			   alt + n / 2 + (size_t)k1++ * m;

		memcpy(dst, nodes + (size_t)left[i] * m, sizeof(int) * m);
	}
	if (k0 * m == n / 2 && k1 * m == n / 2 &&
	    !topoml_hybrid_cost(t, alt, n, tasks_per_node, p, w, &c2) &&
	    _top_bytes(&c2, p->dp) < _top_bytes(c, p->dp)) {
		memcpy(nodes, alt, sizeof(int) * n);
		*c = c2;
	}
out:
	free(part);
	free(rep);
	free(alt);
	free(left);
}

/* Order a set of nodes for the job's ranks and price it: 0 or -1. */
static int _order(const topoml_topo_t *t, int *nodes, int n,
		  int tasks_per_node, const struct topoml_parallel *p,
		  const double w[TOPOML_KIND_COUNT],
		  struct topoml_hybrid_cost *c)
{
	topoml_ring_order(t, nodes, n);
	if (t->nnvl > 0 && p->tp > tasks_per_node &&
	    p->tp % tasks_per_node == 0)
		_grouped(t, nodes, n, tasks_per_node, p);
	if (topoml_hybrid_cost(t, nodes, n, tasks_per_node, p, w, c))
		return -1;
	_stages_aligned(t, nodes, n, tasks_per_node, p, w, c);
	if (_pp_align(t, nodes, n, tasks_per_node, p) &&
	    topoml_hybrid_cost(t, nodes, n, tasks_per_node, p, w, c))
		return -1;
	_striped(t, nodes, n, tasks_per_node, p, w, c);
	return 0;
}

int topoml_hybrid_order(const topoml_topo_t *t, int *nodes, int n,
			int tasks_per_node, const struct topoml_parallel *p,
			const double w[TOPOML_KIND_COUNT])
{
	struct topoml_hybrid_cost c;

	if (n < 1 || tasks_per_node < 1)
		return -1;
	return _order(t, nodes, n, tasks_per_node, p, w, &c);
}

/*
 * Even out, order and price one candidate.  With spares, only the
 * workers are priced: those _publish will keep once it has put the
 * spares last (topoml_spares_workers); the spares follow them.
 */
static void _price(const topoml_topo_t *t, const struct topoml_place_req *req,
		   const struct topoml_parallel *p, int tasks_per_node,
		   const double w[TOPOML_KIND_COUNT], int m, int spares,
		   struct _ranked *r)
{
	struct topoml_hybrid_cost c;
	int nw = r->pl.n;

	if (!r->pl.nodes || r->pl.n != req->nnodes)
		return;
	if (m > 1)
		_even_domains(t, req, r->pl.nodes, r->pl.n, m);
	if (spares > 0)
		nw = topoml_spares_workers(t, r->pl.nodes, r->pl.n, spares);
	if (_order(t, r->pl.nodes, nw, tasks_per_node, p, w, &c))
		return;
	r->priced = true;
	r->cost = c.weighted;
	r->dp_top = c.kind[TOPOML_KIND_DP].cross_top;
	r->tp_top = c.kind[TOPOML_KIND_TP].cross_top;
	r->split = topoml_hybrid_tp_split(t, r->pl.nodes, nw, tasks_per_node,
					  p);
	r->over = topoml_hybrid_tp_over_top(t, r->pl.nodes, nw, tasks_per_node,
					    p);
}

/*
 * topoml.h's contract, and what callers must know beyond it: each
 * candidate's nodes come back evened out and in the order its ranks
 * should take (ring, or stages kept in parts); cand[k - 1] may come back
 * as a different placement (its former nodes freed), so the caller owns
 * and clears cand[0..k) as before.  Deterministic: the same state gives
 * the same answer (slurmctld asks several times per job).  With spares
 * (topoml_spares_last), p is sized for the workers and no candidate is built
 * for the stages: _part_candidate sizes stages on all req->nnodes.
 */
long topoml_hybrid_max_ranks(const topoml_topo_t *t)
{
	long per_node = 8L * (t ? t->nnodes : 0);

	return per_node > 65536 ? per_node : 65536;
}

int topoml_hybrid_rank_spares(const topoml_topo_t *t,
			      const struct topoml_place_req *req,
			      const struct topoml_parallel *p,
			      int tasks_per_node, const double *w,
			      struct topoml_placement *cand, int k, int spares)
{
	struct _ranked *r, extra = { 0 };
	int m;

	if (k <= 0 || tasks_per_node < 1 || spares < 0 ||
	    (spares > 0 && spares >= req->nnodes) ||
	    (long)req->nnodes * tasks_per_node > topoml_hybrid_max_ranks(t))
		return 0;
	r = calloc(k, sizeof(*r));
	if (!r)
		return -1;
	/* nodes per tensor group, when a group spans nodes */
	m = p->tp > tasks_per_node && p->tp % tasks_per_node == 0 ?
		p->tp / tasks_per_node : 1;
	for (int i = 0; i < k; i++) {
		r[i].pl = cand[i];
		r[i].rank = i;
		_price(t, req, p, tasks_per_node, w, m, spares, &r[i]);
	}
	qsort(r, k, sizeof(*r), _ranked_cmp);
	/*
	 * The engine's candidates are chosen for one ring; one built for
	 * the stages replaces the last when it sends fewer data-parallel
	 * transfers through the top (or splits fewer tensor groups).
	 */
	if (!spares && !_part_candidate(t, req, p, m, &extra.pl)) {
		extra.rank = k;
		_price(t, req, p, tasks_per_node, w, m, 0, &extra);
		if (extra.priced && _ranked_cmp(&extra, &r[k - 1]) < 0) {
			topoml_placement_clear(&r[k - 1].pl);
			r[k - 1] = extra;
			qsort(r, k, sizeof(*r), _ranked_cmp);
		} else {
			topoml_placement_clear(&extra.pl);
		}
	}
	for (int i = 0; i < k; i++)
		cand[i] = r[i].pl;
	free(r);
	return 0;
}

int topoml_hybrid_rank(const topoml_topo_t *t,
		       const struct topoml_place_req *req,
		       const struct topoml_parallel *p, int tasks_per_node,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_placement *cand, int k)
{
	return topoml_hybrid_rank_spares(t, req, p, tasks_per_node, w, cand,
					 k, 0);
}

int topoml_place_hybrid(const topoml_topo_t *t,
			const struct topoml_place_req *req,
			const struct topoml_parallel *p, int tasks_per_node,
			const double w[TOPOML_KIND_COUNT],
			struct topoml_placement *out,
			struct topoml_hybrid_cost *cost, char *why,
			size_t whylen)
{
	struct topoml_placement cand[HYB_CANDIDATES];
	int k;

	memset(out, 0, sizeof(*out));
	memset(cand, 0, sizeof(cand));
	if (tasks_per_node < 1 || req->nnodes < 1 ||
	    (long)p->tp * p->pp * p->cp * (p->dp > 0 ? p->dp : 0) !=
	    (long)req->nnodes * tasks_per_node) {
		snprintf(why, whylen, "the parallel sizes do not fit %d "
			 "nodes of %d tasks", req->nnodes, tasks_per_node);
		return -1;
	}
	k = topoml_place_ranked(t, TOPOML_POLICY_TOPOML, req, HYB_CANDIDATES,
				cand, why, whylen);
	if (k <= 0)
		return -1;
	if (topoml_hybrid_rank(t, req, p, tasks_per_node, w, cand, k) ||
	    (cost && topoml_hybrid_cost(t, cand[0].nodes, cand[0].n,
					tasks_per_node, p, w, cost))) {
		snprintf(why, whylen, "no candidate could be priced");
		for (int i = 0; i < k; i++)
			topoml_placement_clear(&cand[i]);
		return -1;
	}
	*out = cand[0];
	for (int i = 1; i < k; i++)
		topoml_placement_clear(&cand[i]);
	if (!req->unscored)
		topoml_score(t, req->avail, out);
	return 0;
}

int topoml_hybrid_locality(const topoml_topo_t *t, const int *nodes, int n,
			   int tasks_per_node, const struct topoml_parallel *p,
			   const double w[TOPOML_KIND_COUNT],
			   struct topoml_hybrid_locality *out)
{
	struct topoml_hybrid_cost hc;

	if (topoml_hybrid_cost(t, nodes, n, tasks_per_node, p, w, &hc))
		return -1;
	out->tp_split = topoml_hybrid_tp_split(t, nodes, n, tasks_per_node,
					       p);
	out->dp_top = hc.kind[TOPOML_KIND_DP].cross_top;
	return 0;
}

int topoml_hybrid_best_locality(const topoml_topo_t *t,
				hwloc_const_bitmap_t all, int n,
				const struct topoml_parallel *p,
				int tasks_per_node,
				const double w[TOPOML_KIND_COUNT],
				struct topoml_hybrid_locality *out)
{
	struct topoml_place_req req = { .nnodes = n, .avail = all,
					.unscored = true };
	struct topoml_placement pl = { 0 };
	char why[128];
	int rc;

	if (topoml_place_hybrid(t, &req, p, tasks_per_node, w, &pl, NULL,
				why, sizeof(why)))
		return -1;
	rc = topoml_hybrid_locality(t, pl.nodes, pl.n, tasks_per_node, p, w,
				    out);
	topoml_placement_clear(&pl);
	return rc;
}

bool topoml_hybrid_falls_short(const struct topoml_hybrid_locality *now,
			       const struct topoml_hybrid_locality *best)
{
	return now->tp_split > best->tp_split || now->dp_top > best->dp_top;
}
