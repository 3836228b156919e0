/*
 * The locality wait (topoml/wait.h): one decision for select/topoml and the
 * simulator, the clocks and verdicts select/topoml keeps per waiting job,
 * and the free-by planners of backfill's will-run.  No Slurm headers.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/torus.h"
#include "topoml/wait.h"
#include "place/common/place_int.h"

/* ---- the decision -------------------------------------------------- */

/* The engine's placement of n nodes of avail, as it would place then
 * (pl cleared by the caller); false where it places none. */
static bool _engine_places(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			   int n, struct topoml_placement *pl)
{
	struct topoml_place_req req = { .unscored = true, .nnodes = n };
	char why[160];

	if (!avail)
		return false;
	req.avail = avail;
	return !topoml_place(t, TOPOML_POLICY_TOPOML, &req, pl, why,
			     sizeof(why));
}

/* Could n nodes of universe ever be an exact box (the engine on it, as
 * it would place then)? */
static bool _box_possible(const topoml_topo_t *t, hwloc_const_bitmap_t all,
			  int n)
{
	struct topoml_placement pl = { 0 };
	bool box = _engine_places(t, all, n, &pl) &&
		   topoml_torus_is_box(t, pl.nodes, pl.n);

	topoml_placement_clear(&pl);
	return box;
}

static void _met(struct topoml_wait_verdict_info *v, const char *what)
{
	if (v->met)
		return;
	v->met = true;
	snprintf(v->met_what, sizeof(v->met_what), "%s", what);
}

/*
 * An exact box (torus): a whole-node job whose placement is no exact box,
 * and spans more than box_span x its nodes, waits where its universe
 * could give it one; a job that could never get one never waits.
 */
static bool _box_short(const topoml_topo_t *t,
		       const struct topoml_wait_policy *p,
		       const struct topoml_wait_job *j,
		       const struct topoml_placement *pl,
		       hwloc_const_bitmap_t universe,
		       struct topoml_wait_memo *memo,
		       struct topoml_wait_verdict_info *v)
{
	char what[64];

	if (!(p->box_wait > 0) || p->torus_curve ||
	    t->family != TOPOML_TORUS || j->pinned || j->nnodes < 2)
		return false;
	snprintf(what, sizeof(what), "torus box of %d nodes", j->nnodes);
	if (topoml_torus_is_box(t, pl->nodes, pl->n)) {
		_met(v, what);
		return false;
	}
	/* a size no box has, or a span the site accepts (LocalityWaitSpan) */
	if (!topoml_torus_wants_box(t, pl->nodes, pl->n, p->box_span)) {
		_met(v, "a placement within LocalityWaitSpan");
		return false;
	}
	if (memo->box < 0) {
		memo->box = _box_possible(t, universe, j->nnodes);
		memo->computed = true;
	}
	if (!memo->box)
		return false;
	v->kind = TOPOML_WAIT_BOX;
	v->bound = p->box_wait;
	v->key = p->box_key ? p->box_key : "LocalityWait";
	snprintf(v->what, sizeof(v->what), "%s", what);
	return true;
}

/* A plain fat-tree (no blocks): its leaves are the domains a job is
 * kept in, as a dragonfly's groups are. */
static bool _ft_plain(const topoml_topo_t *t)
{
	return t->family == TOPOML_FAT_TREE && t->nblocks <= 0;
}

/* The domain of node v: its dragonfly group, or its fat-tree leaf. */
static int _dom(const topoml_topo_t *t, int v, int ndom)
{
	int d;

	if (v < 0 || v >= t->nnodes)
		return -1;
	d = t->family == TOPOML_DRAGONFLY ? t->nodes[v].group :
	    t->nodes[v].leaf;
	return d >= 0 && d < ndom ? d : -1;
}

static int _ndom(const topoml_topo_t *t)
{
	return t->family == TOPOML_DRAGONFLY ? t->ngroups : t->nswitches;
}

static int _desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

/* The fewest domains that hold `size' nodes (largest first): sorted
 * once, O(domains log domains), whatever the size asked. */
static int _dom_min(const topoml_topo_t *t, int size)
{
	int nd = _ndom(t), k = 0, *tot = calloc(nd + 1, sizeof(int));

	if (!tot)
		return nd;
	for (int v = 0; v < t->nnodes; v++) {
		int d = _dom(t, v, nd);

		if (d >= 0)
			tot[d]++;
	}
	qsort(tot, nd, sizeof(int), _desc);
	for (int sum = 0; sum < size && k < nd; k++)
		sum += tot[k];
	free(tot);
	return k;
}

/* The domains (groups, leaves) the n nodes are in; -1 out of memory. */
static int _dom_count(const topoml_topo_t *t, const int *nodes, int n)
{
	int nd = _ndom(t), k = 0;
	unsigned char *in = calloc(nd + 1, 1);

	if (!in)
		return -1;
	for (int i = 0; i < n; i++) {
		int d = _dom(t, nodes[i], nd);

		if (d >= 0 && !in[d]) {
			in[d] = 1;
			k++;
		}
	}
	free(in);
	return k;
}

/* Are the n nodes in as few domains (groups, leaves) as `size' nodes
 * need? */
static bool _dom_fewest(const topoml_topo_t *t, const int *nodes, int n,
			int size)
{
	int k = _dom_count(t, nodes, n);

	return k < 0 || k <= _dom_min(t, size);
}

/* Are the n nodes inside one aligned group of base blocks of the
 * BlockSizes level of a job of `size' nodes (Slurm's topology/block)?
 * On a dragonfly (a plain fat-tree): in as few groups (leaves) as the
 * machine allows (the hold asks it of a dragonfly job one group holds
 * only). */
static bool _block_aligned(const topoml_topo_t *t, const int *nodes, int n,
			   int size)
{
	int lvl, bpb, g0 = -1;

	if (t->family == TOPOML_DRAGONFLY || _ft_plain(t))
		return _dom_fewest(t, nodes, n, size);
	lvl = topoml__block_level(t, size, NULL);
	bpb = lvl < 0 ? t->nblocks : 1 << lvl;
	for (int i = 0; i < n; i++) {
		int b = nodes[i] >= 0 && nodes[i] < t->nnodes ?
			t->nodes[nodes[i]].leaf : -1;

		if (b < 0 || b >= t->nblocks)
			return false;
		if (g0 >= 0 && b / bpb != g0)
			return false;
		g0 = b / bpb;
	}
	return true;
}

/* Does the engine place n nodes of avail inside an aligned group? */
static bool _block_fits(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			int n)
{
	struct topoml_placement pl = { 0 };
	bool in = _engine_places(t, avail, n, &pl) && pl.n == n &&
		  _block_aligned(t, pl.nodes, pl.n, n);

	topoml_placement_clear(&pl);
	return in;
}

/*
 * The --ml-parallel job's traffic on placement pl (workers first, in rank
 * order), at the default weights; false where it has none to price or
 * its ranks pass topoml_hybrid_max_ranks, which bounds the cost (linear
 * in the ranks, as the job view's).
 */
static bool _hybrid_cost_of(const topoml_topo_t *t,
			    const struct topoml_wait_job *j,
			    const struct topoml_placement *pl,
			    struct topoml_hybrid_cost *c)
{
	double w[TOPOML_KIND_COUNT];

	if (!j->par || j->tpn < 1 || j->nnodes - j->spares < 1 ||
	    (long)(j->nnodes - j->spares) * j->tpn >
	    topoml_hybrid_max_ranks(t))
		return false;
	topoml_kind_weights_default(w);
	return !topoml_hybrid_cost(t, pl->nodes, j->nnodes - j->spares,
				   j->tpn, j->par, w, c);
}

/* Does any of the job's traffic cross the top-level parts (dragonfly
 * groups)? */
static bool _hybrid_crosses_top(const topoml_topo_t *t,
				const struct topoml_wait_job *j,
				const struct topoml_placement *pl)
{
	struct topoml_hybrid_cost c;

	if (!_hybrid_cost_of(t, j, pl, &c))
		return false;
	for (int k = 0; k < TOPOML_KIND_COUNT; k++)
		if (c.kind[k].cross_top)
			return true;
	return false;
}

/*
 * Does the job's placement pl, on two dragonfly groups g and h, load
 * their global links more than one of its nodes loads its own link: per
 * direction, more of one kind's transfers than tasks per node times the
 * pair's links (a data-parallel ring crosses the pair both ways, a
 * pipeline boundary's sends one way at a time)?  A tensor, context or
 * expert group that crosses always does.
 */
static bool _hybrid_loads_pair(const topoml_topo_t *t,
			       const struct topoml_wait_job *j,
			       const struct topoml_placement *pl, int g, int h)
{
	struct topoml_hybrid_cost c;
	long cap;

	if (!t->global_links || !_hybrid_cost_of(t, j, pl, &c))
		return true;
	cap = (long)j->tpn * t->global_links[g * t->ngroups + h];
	return c.kind[TOPOML_KIND_TP].cross_top ||
	       c.kind[TOPOML_KIND_CP].cross_top ||
	       c.kind[TOPOML_KIND_EP].cross_top ||
	       c.kind[TOPOML_KIND_DP].cross_top > 2 * cap ||
	       c.kind[TOPOML_KIND_PP].cross_top > cap;
}

/*
 * An --ml-parallel job on two dragonfly groups that loads their global
 * links no more than a node's own link (_hybrid_loads_pair: a job of one
 * stage, or one stage whole in a group and a node of the other's over
 * the pair) takes as long a step there as in one group, unless another
 * job's traffic crosses the same groups (topoml-netsim: a 67-node job of
 * one stage 85.5 ms on two groups, 85.2 in one; a 17-node one 81.2 on
 * two, but 242 ms beside a 134-node job's rings on the same pair, that
 * job 262 ms instead of 181): with groups that hold no node of another
 * job spanning groups (owners known), it starts at once.  Not where
 * NVLink joins nodes: in one group its ranks may talk over NVLink (a
 * 17-node job 16 ms a step in one NVL domain, 81 ms over two groups).
 * One pass over the nodes and one hybrid cost, as _hybrid_crosses_top.
 */
static bool _df_pair_free(const topoml_topo_t *t,
			  const struct topoml_wait_policy *p,
			  const struct topoml_wait_job *j,
			  const struct topoml_placement *pl)
{
	int g = -1, h = -1, ng = t->ngroups;
	unsigned char *shared;
	bool free_pair;

	if ((!(p->box_wait > 0) && !(p->hybrid_wait > 0)) ||
	    t->family != TOPOML_DRAGONFLY || t->nnvl > 0 || !j->owner ||
	    !j->par || j->pinned || j->tpn < 1 ||
	    j->nnodes - j->spares < 1 || pl->n < j->nnodes)
		return false;
	for (int i = 0; i < pl->n; i++) {
		int d = _dom(t, pl->nodes[i], ng);

		if (d < 0)
			return false;
		if (d == g || d == h)
			continue;
		if (g >= 0 && h >= 0)
			return false;	/* a third group */
		if (g < 0)
			g = d;
		else
			h = d;
	}
	if (h < 0 || !(shared = calloc(ng + 1, 1)))
		return false;
	free_pair = !topoml__df_shared_groups(t, j->owner, NULL, shared, 1) &&
		    !shared[g] && !shared[h] &&
		    !_hybrid_loads_pair(t, j, pl, g, h);
	free(shared);
	return free_pair;
}

/*
 * Slurm's aligned group (blocks): the engine takes a job no aligned
 * group of its BlockSizes level holds into a larger one, on as few
 * blocks; with a wait such a job waits for an aligned group where its
 * universe has one, its ring steps then crossing no higher level.  On a
 * plain fat-tree the same for the fewest leaves: a job the engine
 * spreads over more leaves than its size needs (one leaf where one holds
 * it) waits for as few, its ring then crossing fewer uplinks, which
 * other jobs' rings share.  On a dragonfly, as Kueue's topology-aware
 * scheduling, only a job one group holds waits, for one group; larger
 * ones take the fewest groups there are at once.  The deprecated
 * TorusBoxWait= sets the torus half only.
 */
static bool _block_short(const topoml_topo_t *t,
			 const struct topoml_wait_policy *p,
			 const struct topoml_wait_job *j,
			 const struct topoml_placement *pl,
			 hwloc_const_bitmap_t universe,
			 struct topoml_wait_memo *memo,
			 struct topoml_wait_verdict_info *v)
{
	bool df = t->family == TOPOML_DRAGONFLY, ft = _ft_plain(t);
	char what[64];

	if (!(p->box_wait > 0) ||
	    (!df && !ft && (t->nblocks <= 0 || t->block_base <= 0)) ||
	    j->pinned || j->nnodes < 2 || pl->n < j->nnodes ||
	    (p->box_key && !strcmp(p->box_key, "TorusBoxWait")))
		return false;
	snprintf(what, sizeof(what), df ? "one dragonfly group for %d "
		 "nodes" : ft ? "fewest fat-tree leaves for %d nodes" :
		 "aligned block group for %d nodes", j->nnodes);
	if (_block_aligned(t, pl->nodes, pl->n, j->nnodes)) {
		_met(v, what);
		return false;
	}
	/* a dragonfly holds only a job one group holds, as Kueue does:
	 * holding larger ones for their fewest groups cost more wait than
	 * it gained in span and ring at the same mean wait */
	if (df && _dom_min(t, j->nnodes) > 1)
		return false;
	if (memo->box < 0) {
		memo->box = _block_fits(t, universe, j->nnodes);
		memo->computed = true;
	}
	if (!memo->box)
		return false;
	v->kind = TOPOML_WAIT_BLOCK;
	v->bound = p->box_wait;
	/*
	 * A dragonfly job on two groups, one global hop more than on one,
	 * waits half as long as one spread further: every second waited
	 * costs the same, and a job held the whole wait that then spreads
	 * anyway pays both.  On Theta's trace this bought more span for the
	 * same mean wait than any one bound did.  Not an --ml-parallel job
	 * whose traffic crosses the two: its node's ranks each send over
	 * the global link (a ring of tasks-per-node rings, or a pipeline
	 * boundary), not one ring's, and its step took up to twice its time
	 * in one group (topoml-netsim), so it waits the whole wait.
	 */
	v->key = p->box_key ? p->box_key : "LocalityWait";
	snprintf(v->what, sizeof(v->what), "%s", what);
	if (df && _dom_count(t, pl->nodes, pl->n) == 2 &&
	    !_hybrid_crosses_top(t, j, pl)) {
		v->bound = p->box_wait / 2;
		snprintf(v->what, sizeof(v->what),
			 "%.39s (on two: half the wait)", what);
	}
	return true;
}

/*
 * Whole tensor groups and data-parallel rings below the top
 * (--ml-parallel): a whole-node job whose placement splits more tensor
 * groups over NVLink domains, or sends more data-parallel traffic through
 * the top level, than its workers' shape gets on its universe waits.  On
 * a dragonfly not a job of one or two stages that no group holds: it
 * crosses the global links on any groups (two stages are striped over
 * two where that moves less over them, its rings crossing by design),
 * and held for fewer data-parallel transfers through the top it waited
 * longer for no shorter step under contention (topoml-netsim).  Jobs of
 * more stages keep the hold: there it shortened their steps.
 */
static bool _hybrid_short(const topoml_topo_t *t,
			  const struct topoml_wait_policy *p,
			  const struct topoml_wait_job *j,
			  const struct topoml_placement *pl,
			  hwloc_const_bitmap_t universe,
			  struct topoml_wait_memo *memo,
			  struct topoml_wait_verdict_info *v)
{
	static const char what[] =
		"whole tensor groups and data-parallel rings below the top";
	struct topoml_hybrid_locality now, none = { 0, 0 };
	int workers = j->nnodes - j->spares;

	if (!(p->hybrid_wait > 0) || j->pinned || !j->par ||
	    pl->n < j->nnodes)
		return false;
	if (t->family == TOPOML_DRAGONFLY && j->par->pp <= 2 &&
	    _dom_min(t, j->nnodes) > 1)
		return false;
	if (topoml_hybrid_locality(t, pl->nodes, workers, j->tpn, j->par,
				   p->weights, &now))
		return false;
	if (!topoml_hybrid_falls_short(&now, &none)) {
		_met(v, what);
		return false;
	}
	/* The best the universe allows: only that is worth it. */
	if (!memo->hyb_known) {
		if (!universe ||
		    topoml_hybrid_best_locality(t, universe, workers, j->par,
						j->tpn, p->weights,
						&memo->best))
			memo->best.tp_split = -1;	/* none fits */
		memo->hyb_known = true;
		memo->computed = true;
	}
	if (memo->best.tp_split < 0 ||
	    !topoml_hybrid_falls_short(&now, &memo->best)) {
		_met(v, what);
		return false;
	}
	v->kind = TOPOML_WAIT_HYBRID;
	v->bound = p->hybrid_wait;
	v->key = p->hybrid_key ? p->hybrid_key : "LocalityWait";
	v->goal = memo->best;
	snprintf(v->what, sizeof(v->what), "%s", what);
	return true;
}

enum topoml_wait_kind topoml_wait_criterion(const topoml_topo_t *t,
					    const struct topoml_wait_policy *p,
					    const struct topoml_wait_job *j,
					    const struct topoml_placement *pl,
					    hwloc_const_bitmap_t universe,
					    struct topoml_wait_memo *memo,
					    struct topoml_wait_verdict_info *v)
{
	memset(v, 0, sizeof(*v));
	v->key = "LocalityWait";
	memo->computed = false;
	if (!pl->n)
		return TOPOML_WAIT_NONE;
	if (_box_short(t, p, j, pl, universe, memo, v))
		return v->kind;
	if (_df_pair_free(t, p, j, pl)) {
		_met(v, "two dragonfly groups no other job spans");
		return TOPOML_WAIT_NONE;
	}
	if (_block_short(t, p, j, pl, universe, memo, v) ||
	    _hybrid_short(t, p, j, pl, universe, memo, v))
		return v->kind;
	return TOPOML_WAIT_NONE;
}

double topoml_wait_left(double since, double now, double bound)
{
	double left;

	/* as the simulator has always compared: now - since against bound */
	if (!(bound > 0) || now - since >= bound)
		return 0;
	left = since + bound - now;
	return left > 0 ? left : 1e-9;
}

double topoml_wait_decide(const topoml_topo_t *t,
			  const struct topoml_wait_policy *p,
			  const struct topoml_wait_job *j,
			  const struct topoml_placement *pl,
			  hwloc_const_bitmap_t universe,
			  struct topoml_wait_memo *memo, double since,
			  double now, struct topoml_wait_verdict_info *v)
{
	if (!topoml_wait_criterion(t, p, j, pl, universe, memo, v))
		return 0;
	return topoml_wait_left(since < 0 ? now : since, now, v->bound);
}

static int _cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* then: the nodes of avail free by `when'. */
static void _free_by(hwloc_const_bitmap_t avail, const int64_t *free_at,
		     int64_t when, hwloc_bitmap_t then)
{
	int v;

	hwloc_bitmap_zero(then);
	hwloc_bitmap_foreach_begin(v, avail)
		if ((free_at[v] > 0 ? free_at[v] : 0) <= when)
			hwloc_bitmap_set(then, v);
	hwloc_bitmap_foreach_end();
}

/* Do the nodes of avail free by `when' hold the job as local as goal? */
static bool _hybrid_met_by(const topoml_topo_t *t,
			   const struct topoml_wait_policy *p,
			   const struct topoml_wait_job *j,
			   const struct topoml_hybrid_locality *goal,
			   hwloc_const_bitmap_t avail, const int64_t *free_at,
			   int64_t when, hwloc_bitmap_t then)
{
	struct topoml_hybrid_locality b;

	_free_by(avail, free_at, when, then);
	return hwloc_bitmap_weight(then) >= j->nnodes &&
	       !topoml_hybrid_best_locality(t, then, j->nnodes - j->spares,
					    j->par, j->tpn, p->weights, &b) &&
	       !topoml_hybrid_falls_short(&b, goal);
}

/*
 * The nodes free soonest by the running jobs' limits that give the job
 * its goal: the end times are bisected, a best placement each (the
 * engine's nodes bound the cost).
 */
static int64_t _hybrid_plan(const topoml_topo_t *t,
			    const struct topoml_wait_policy *p,
			    const struct topoml_wait_job *j,
			    const struct topoml_hybrid_locality *goal,
			    hwloc_const_bitmap_t avail, const int64_t *free_at,
			    int64_t deadline, hwloc_bitmap_t then)
{
	int64_t *at, when = -1;
	int v, n = 0, m = 0, lo = 0, hi, mid;

	if (!j->par)
		return -1;
	if (!(at = calloc(t->nnodes + 1, sizeof(*at))))
		return -2;
	hwloc_bitmap_foreach_begin(v, avail)
		if (v < t->nnodes)
			at[n++] = free_at[v] > 0 ? free_at[v] : 0;
	hwloc_bitmap_foreach_end();
	qsort(at, n, sizeof(*at), _cmp_i64);
	for (int i = 0; i < n; i++)
		if (!m || at[i] != at[m - 1])
			at[m++] = at[i];
	hi = m - 1;
	if (m < 1 || !_hybrid_met_by(t, p, j, goal, avail, free_at, at[hi],
				     then))
		goto out;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (_hybrid_met_by(t, p, j, goal, avail, free_at, at[mid],
				   then))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (at[lo] > deadline)
		goto out;
	_free_by(avail, free_at, at[lo], then);
	when = at[lo];
out:
	if (when < 0)
		hwloc_bitmap_zero(then);
	free(at);
	return when;
}

/*
 * Blocks: the soonest of the running jobs' ends (bisected: more free
 * nodes never lose an aligned group) by which the engine places the job
 * inside one, and in then the nodes free by it.
 */
static int64_t _block_plan(const topoml_topo_t *t,
			   const struct topoml_wait_job *j,
			   hwloc_const_bitmap_t avail, const int64_t *free_at,
			   hwloc_bitmap_t then)
{
	int64_t *at, when = -1;
	int v, n = 0, m = 0, lo = 0, hi, mid;

	if (!(at = calloc(t->nnodes + 1, sizeof(*at))))
		return -2;
	hwloc_bitmap_foreach_begin(v, avail)
		if (v < t->nnodes)
			at[n++] = free_at[v] > 0 ? free_at[v] : 0;
	hwloc_bitmap_foreach_end();
	qsort(at, n, sizeof(*at), _cmp_i64);
	for (int i = 0; i < n; i++)
		if (!m || at[i] != at[m - 1])
			at[m++] = at[i];
	hi = m - 1;
	if (m < 1)
		goto out;
	_free_by(avail, free_at, at[hi], then);
	if (!_block_fits(t, then, j->nnodes))
		goto out;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		_free_by(avail, free_at, at[mid], then);
		if (_block_fits(t, then, j->nnodes))
			hi = mid;
		else
			lo = mid + 1;
	}
	_free_by(avail, free_at, at[lo], then);
	when = at[lo];
out:
	if (when < 0)
		hwloc_bitmap_zero(then);
	free(at);
	return when;
}

int64_t topoml_wait_plan(const topoml_topo_t *t,
			 const struct topoml_wait_policy *p,
			 const struct topoml_wait_job *j,
			 const struct topoml_wait_verdict_info *v,
			 hwloc_const_bitmap_t avail, const int64_t *free_at,
			 int64_t deadline, hwloc_bitmap_t then)
{
	if (!free_at || !then)
		return -1;
	switch (v->kind) {
	case TOPOML_WAIT_BOX:
		return topoml_torus_box_free_by(t, avail, free_at, j->nnodes,
						then);
	case TOPOML_WAIT_HYBRID:
		return _hybrid_plan(t, p, j, &v->goal, avail, free_at,
				    deadline, then);
	case TOPOML_WAIT_BLOCK:
		return _block_plan(t, j, avail, free_at, then);
	default:
		return -1;
	}
}

/* Slots of the verdicts kept with a waiting job's clock */
enum { _VERDICT_BOX, _VERDICT_HYBRID };

static uint64_t _memo_key(uint64_t salt, int slot,
			  const struct topoml_wait_job *j)
{
	uint64_t v[10];
	int n = 0;

	if (!salt)
		return 0;
	v[n++] = salt;
	v[n++] = slot;
	if (slot == _VERDICT_BOX) {
		v[n++] = j->nnodes;
	} else {
		if (!j->par)
			return 0;
		v[n++] = j->nnodes - j->spares;
		v[n++] = j->tpn;
		v[n++] = j->par->tp;
		v[n++] = j->par->pp;
		v[n++] = j->par->dp;
		v[n++] = j->par->ep;
		v[n++] = j->par->cp;
	}
	return topoml_wait_key(v, n);
}

void topoml_wait_memo_load(const struct topoml_box_waits *w, uint32_t job,
			   uint64_t salt, const struct topoml_wait_job *j,
			   struct topoml_wait_memo *memo)
{
	int64_t val[TOPOML_WAIT_VALS];

	*memo = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	if (topoml_box_wait_verdict_get(w, job, _VERDICT_BOX,
					_memo_key(salt, _VERDICT_BOX, j), val))
		memo->box = val[0] != 0;
	if (topoml_box_wait_verdict_get(w, job, _VERDICT_HYBRID,
					_memo_key(salt, _VERDICT_HYBRID, j),
					val)) {
		memo->hyb_known = true;
		memo->best.tp_split = val[0];
		memo->best.dp_top = val[1];
	}
}

void topoml_wait_memo_save(struct topoml_box_waits *w, uint32_t job,
			   uint64_t salt, const struct topoml_wait_job *j,
			   const struct topoml_wait_memo *memo)
{
	int64_t val[TOPOML_WAIT_VALS] = { 0 };

	if (memo->box >= 0) {
		val[0] = memo->box;
		topoml_box_wait_verdict_set(w, job, _VERDICT_BOX,
					    _memo_key(salt, _VERDICT_BOX, j),
					    val);
	}
	if (memo->hyb_known) {
		val[0] = memo->best.tp_split;
		val[1] = memo->best.dp_top;
		topoml_box_wait_verdict_set(w, job, _VERDICT_HYBRID,
					    _memo_key(salt, _VERDICT_HYBRID,
						      j), val);
	}
}

/* ---- free-by planners ---------------------------------------------- */

static int _cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t topoml_job_free_by(const int64_t *free_at, hwloc_const_bitmap_t avail,
			   int n, hwloc_bitmap_t out)
{
	int w = hwloc_bitmap_weight(avail), k = 0, v;
	int64_t *t, when;

	hwloc_bitmap_zero(out);
	if (n < 1 || w < n || !(t = malloc((size_t)w * sizeof(*t))))
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		t[k++] = free_at[v];
	hwloc_bitmap_foreach_end();
	qsort(t, k, sizeof(*t), _cmp64);
	when = t[n - 1];
	free(t);
	hwloc_bitmap_foreach_begin(v, avail)
		if (free_at[v] <= when)
			hwloc_bitmap_set(out, v);
	hwloc_bitmap_foreach_end();
	return when;
}

struct _ends {
	int64_t at;
	int v;
};

static int _cmp_ends(const void *a, const void *b)
{
	const struct _ends *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

int64_t topoml_job_units_free_by(const int64_t *free_at, const uint32_t *cap,
				 uint32_t *fu, hwloc_const_bitmap_t avail,
				 uint64_t units, hwloc_bitmap_t idle_then)
{
	int w = hwloc_bitmap_weight(avail), k = 0, v;
	uint64_t have = 0;
	int64_t when = -1;
	struct _ends *e;

	hwloc_bitmap_zero(idle_then);
	if (w <= 0)
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		have += fu[v];
	hwloc_bitmap_foreach_end();
	if (have >= units)
		return 0;
	if (!(e = malloc((size_t)w * sizeof(*e))))
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		if (free_at[v] > 0)
			e[k++] = (struct _ends){ free_at[v], v };
	hwloc_bitmap_foreach_end();
	qsort(e, k, sizeof(*e), _cmp_ends);
	for (int i = 0; i < k && have < units; i++) {
		if (cap[e[i].v] > fu[e[i].v])
			have += cap[e[i].v] - fu[e[i].v];
		when = e[i].at;
	}
	free(e);
	if (have < units)
		return -1;
	hwloc_bitmap_foreach_begin(v, avail)
		if (free_at[v] > 0 && free_at[v] <= when) {
			fu[v] = cap[v];
			hwloc_bitmap_set(idle_then, v);
		}
	hwloc_bitmap_foreach_end();
	return when;
}

/* ---- the clocks and the verdict cache ----------------------------- */

static unsigned _box_hash(const struct topoml_box_waits *w, uint32_t job)
{
	return (unsigned)((job * 2654435761u) & (unsigned)(w->nidx - 1));
}

static int _box_wait_find(const struct topoml_box_waits *w, uint32_t job)
{
	if (!w->nidx)
		return -1;
	for (unsigned h = _box_hash(w, job);; h = (h + 1) & (w->nidx - 1)) {
		int i = w->idx[h] - 1;

		if (i < 0)
			return -1;
		if (w->job[i] == job)
			return i;
	}
}

/* The index cell holding slot i (which is in the index). */
static unsigned _box_cell(const struct topoml_box_waits *w, int i)
{
	unsigned h = _box_hash(w, w->job[i]);

	while (w->idx[h] != i + 1)
		h = (h + 1) & (w->nidx - 1);
	return h;
}

/* Empty cell h, moving back the run after it (linear probing). */
static void _box_unindex(struct topoml_box_waits *w, unsigned h)
{
	unsigned mask = w->nidx - 1, j = h;

	w->idx[h] = 0;
	for (;;) {
		unsigned home;

		j = (j + 1) & mask;
		if (!w->idx[j])
			return;
		home = _box_hash(w, w->job[w->idx[j] - 1]);
		/* j's entry stays if its home lies cyclically in (h, j] */
		if (((j - home) & mask) < ((j - h) & mask))
			continue;
		w->idx[h] = w->idx[j];
		w->idx[j] = 0;
		h = j;
	}
}

static void _box_index(struct topoml_box_waits *w, int i)
{
	unsigned h = _box_hash(w, w->job[i]);

	while (w->idx[h])
		h = (h + 1) & (w->nidx - 1);
	w->idx[h] = i + 1;
}

static void _box_wait_drop(struct topoml_box_waits *w, int i)
{
	_box_unindex(w, _box_cell(w, i));
	w->n--;
	if (i == w->n)
		return;
	/* the last slot moves into i */
	w->idx[_box_cell(w, w->n)] = i + 1;
	w->job[i] = w->job[w->n];
	w->since[i] = w->since[w->n];
	memmove(&w->verdict[i * TOPOML_WAIT_SLOTS],
	       &w->verdict[w->n * TOPOML_WAIT_SLOTS],
	       TOPOML_WAIT_SLOTS * sizeof(*w->verdict));
}

/* Room for one more clock: capacity and index doubled as needed. */
static int _box_grow(struct topoml_box_waits *w)
{
	int cap = w->cap ? 2 * w->cap : 16, nidx = 4 * cap, *idx;
	uint32_t *j;
	int64_t *s;
	struct topoml_wait_verdict *v;

	if (w->n < w->cap)
		return 0;
	if (cap > (1 << 24))
		return -1;	/* more clocks than slurmctld has jobs */
	if (!(j = realloc(w->job, cap * sizeof(*j))))
		return -1;
	w->job = j;
	if (!(s = realloc(w->since, cap * sizeof(*s))))
		return -1;
	w->since = s;
	if (!(v = realloc(w->verdict,
			  cap * TOPOML_WAIT_SLOTS * sizeof(*v))))
		return -1;
	w->verdict = v;
	if (!(idx = calloc(nidx, sizeof(*idx))))
		return -1;
	free(w->idx);
	w->idx = idx;
	w->nidx = nidx;
	w->cap = cap;
	for (int i = 0; i < w->n; i++)
		_box_index(w, i);
	return 0;
}

int64_t topoml_box_wait_left(struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait)
{
	int i;

	if (wait <= 0) {
		topoml_box_wait_forget(w, job);
		return 0;
	}
	/* clocks of jobs that went away while waiting, once a minute */
	if (!w->swept || now - w->swept >= 60 || now < w->swept) {
		w->swept = now;
		for (i = w->n - 1; i >= 0; i--)
			if (w->job[i] != job &&
			    now - w->since[i] > 2 * wait + 3600)
				_box_wait_drop(w, i);
	}
	i = _box_wait_find(w, job);
	if (i < 0) {
		if (_box_grow(w))
			return 0;	/* out of memory: do not wait */
		i = w->n++;
		w->job[i] = job;
		w->since[i] = now;
		memset(&w->verdict[i * TOPOML_WAIT_SLOTS], 0,
		       TOPOML_WAIT_SLOTS * sizeof(*w->verdict));
		_box_index(w, i);
	}
	if (now - w->since[i] >= wait) {
		_box_wait_drop(w, i);
		return 0;
	}
	return w->since[i] + wait - now;
}

int64_t topoml_box_wait_peek(const struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait)
{
	int i = _box_wait_find(w, job);

	if (wait <= 0)
		return 0;
	if (i < 0)
		return wait;
	return now - w->since[i] >= wait ? 0 : w->since[i] + wait - now;
}

int64_t topoml_box_wait_forget(struct topoml_box_waits *w, uint32_t job)
{
	int i = _box_wait_find(w, job);
	int64_t since;

	if (i < 0)
		return -1;
	since = w->since[i];
	_box_wait_drop(w, i);
	return since;
}

void topoml_box_waits_clear(struct topoml_box_waits *w)
{
	free(w->job);
	free(w->since);
	free(w->verdict);
	free(w->idx);
	memset(w, 0, sizeof(*w));
}

bool topoml_box_wait_verdict_get(const struct topoml_box_waits *w,
				 uint32_t job, int slot, uint64_t key,
				 int64_t val[TOPOML_WAIT_VALS])
{
	int i = _box_wait_find(w, job);
	const struct topoml_wait_verdict *v;

	if (i < 0 || !key || slot < 0 || slot >= TOPOML_WAIT_SLOTS)
		return false;
	v = &w->verdict[i * TOPOML_WAIT_SLOTS + slot];
	if (v->key != key)
		return false;
	memcpy(val, v->val, sizeof(v->val));
	return true;
}

bool topoml_box_wait_verdict_set(struct topoml_box_waits *w, uint32_t job,
				 int slot, uint64_t key,
				 const int64_t val[TOPOML_WAIT_VALS])
{
	int i = _box_wait_find(w, job);
	struct topoml_wait_verdict *v;

	if (i < 0 || !key || slot < 0 || slot >= TOPOML_WAIT_SLOTS)
		return false;
	v = &w->verdict[i * TOPOML_WAIT_SLOTS + slot];
	v->key = key;
	memcpy(v->val, val, sizeof(v->val));
	return true;
}

/* splitmix64's finaliser: every input bit moves every output bit */
static uint64_t _mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t topoml_wait_key(const uint64_t *v, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < n; i++)
		h = _mix64(h ^ v[i]) + 0x9e3779b97f4a7c15ULL;
	return h ? h : 1;
}
