/*
 * Event-driven trace simulator: FCFS with EASY backfill, nodes chosen by
 * topoml_place() (the engine select/topoml runs), one machine state per
 * policy.
 *
 * Scheduling, at every instant where jobs arrive or end:
 * - FCFS: start queued jobs in submit order while they fit; stop at the
 *   first that does not (as Slurm's main scheduler does in one partition).
 * - EASY backfill (Slurm's sched/backfill with one reservation): the
 *   blocked head job gets a reservation at the earliest time enough nodes
 *   are free if every running job ends at its requested wall time (the
 *   "shadow" time); later jobs start now when they fit and either end (by
 *   their wall time) before the shadow time, or use only nodes the head
 *   job will not need then (the "extra" nodes).
 * Jobs run for their trace run time; wall times only drive the estimate.
 * A job the policy cannot place although enough nodes are free waits like
 * a job that does not fit: at the head its reservation is the placement
 * the policy makes on the nodes free soonest by the running jobs' limits
 * (Slurm's will-run); a job that can never be placed (nothing runs,
 * nothing arrives) is dropped and counted as unplaced.
 *
 * Cost: each event is O(running + queued) plus the placement calls; the
 * running set is kept in an end-time heap and a wall-time ordered array,
 * node state (free set, owners) is updated incrementally.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "model/model_int.h"
#include "place/common/place_int.h"
#include "topoml/wait.h"
#include "sim/baselines/baselines.h"
#include "sim/baselines/slurm_switch.h"
#include "place/torus/torus_grid.h"

struct run {
	double start;
	double end;		/* actual */
	double est_end;		/* by wall time */
	int n;
	int *nodes;
	int *units;		/* taken on each of nodes */
	long u;			/* units in all */
	int span;
	double ring_cost;
	hwloc_bitmap_t region;	/* units of a multi-unit job, else NULL */
	int nshared;		/* running multi-unit jobs overlapping */
	double shared_since;
	bool backfilled;
	double box_since;	/* the locality wait's clock: placeable
				 * since, or 0 */
};

struct state {
	const topoml_topo_t *t;
	const struct topoml_trace *tr;
	enum topoml_policy policy;
	const struct topoml_sim_opts *o;

	hwloc_bitmap_t avail;	/* idle nodes */
	uint32_t *owner;	/* job index + 1, 0 = idle */
	int nfree;		/* idle nodes */

	/*
	 * Units (cores) per node: the trace's cores_per_node when it is in
	 * cores, else 1 (a job takes whole nodes, units = nodes).
	 */
	int upn;
	uint32_t *fu;		/* free units per node */
	long ufree;
	hwloc_bitmap_t partial;	/* partly used nodes with free units */
	hwloc_bitmap_t cand;	/* scratch: the nodes a job may use now */
	unsigned char *used;	/* cloud_power: used once (powered up) */
	uint64_t *weight;	/* cloud_power: Slurm's scheduling weight */
	/* Slurm's switch table (shared jobs) */
	struct topoml_sl_switches *st;
	int *snodes;		/* scratch: a shared job's nodes, units */
	int *sunits;

	struct run *runs;	/* by job index */
	int *heap;		/* running jobs, min actual end */
	int nheap;
	int *by_est;		/* running jobs by estimated end */
	int nest;
	int *queue;		/* pending jobs, FCFS order */
	int nqueue;
	int *multi;		/* running multi-unit jobs */
	int nmulti;

	struct topoml_sim_jobout *jobout;
	struct topoml_placement pl;

	double now;
	int held;		/* the job _try_start held for a box, or -1 */
	int refused;		/* the job the policy last could not place */
	enum topoml_wait_kind held_kind;	/* for a box or blocks */
	/* the locality wait: per job size, what the machine offers
	 * (topoml/wait.h); all its nodes */
	struct topoml_wait_memo *wmemo;
	hwloc_bitmap_t all;
	bool dirty;		/* free set changed since frag_val */
	double frag_val;
	double frag_t;		/* time frag_val holds since */
	double frag_int;
	double last_end;

	/* accumulators */
	int started;
	double *waits;
	double busy;		/* node-seconds */
	double span_ratio;
	double span_ratio_free;
	double span_sum;
	double ring;
	double ring_lb;
	double ring_lb_free;
	double global;
	double pair_hops;
	int multi_node_jobs;
	int isolated_boxes;
	int box_possible;
	int isolated_when_possible;
	double sharing;		/* node-seconds */
	int backfilled;
	int unplaced;
	long placements;
};

/* ---- running-set containers ---------------------------------------- */

static bool _heap_less(struct state *s, int a, int b)
{
	return s->runs[s->heap[a]].end < s->runs[s->heap[b]].end;
}

static void _heap_swap(struct state *s, int a, int b)
{
	int x = s->heap[a];

	s->heap[a] = s->heap[b];
	s->heap[b] = x;
}

static void _heap_push(struct state *s, int job)
{
	int i = s->nheap++;

	s->heap[i] = job;
	while (i && _heap_less(s, i, (i - 1) / 2)) {
		_heap_swap(s, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static int _heap_pop(struct state *s)
{
	int top = s->heap[0], i = 0;

	s->heap[0] = s->heap[--s->nheap];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < s->nheap && _heap_less(s, l, m))
			m = l;
		if (r < s->nheap && _heap_less(s, r, m))
			m = r;
		if (m == i)
			break;
		_heap_swap(s, i, m);
		i = m;
	}
	return top;
}

/* Position of job in by_est, ordered by (est_end, job). */
static int _est_pos(struct state *s, int job)
{
	double e = s->runs[job].est_end;
	int lo = 0, hi = s->nest;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int k = s->by_est[mid];
		double ke = s->runs[k].est_end;

		if (ke < e || (ke == e && k < job))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void _est_insert(struct state *s, int job)
{
	int i = _est_pos(s, job);

	memmove(&s->by_est[i + 1], &s->by_est[i],
		(s->nest - i) * sizeof(int));
	s->by_est[i] = job;
	s->nest++;
}

static void _est_remove(struct state *s, int job)
{
	int i = _est_pos(s, job);

	if (i < s->nest && s->by_est[i] == job) {
		memmove(&s->by_est[i], &s->by_est[i + 1],
			(s->nest - i - 1) * sizeof(int));
		s->nest--;
	}
}

/* ---- units, sharing ------------------------------------------------ */

/*
 * The units a job occupies, or NULL when it does not span two: leaves
 * (fat-tree), groups (dragonfly), its bounding box's positions (torus).
 */
static hwloc_bitmap_t _region(struct state *s, const int *nodes, int n,
			      bool *exact_box)
{
	const topoml_topo_t *t = s->t;
	hwloc_bitmap_t r;

	*exact_box = false;
	if (n < 2)
		return NULL;
	r = hwloc_bitmap_alloc();
	if (t->family == TOPOML_TORUS) {
		int lo[3], ext[3], c[3];
		long vol = topoml__torus_box(t, nodes, n, false, lo, ext);

		if (vol < 0) {
			hwloc_bitmap_free(r);
			return NULL;
		}
		*exact_box = vol == n;
		for (int z = 0; z < ext[2]; z++)
			for (int y = 0; y < ext[1]; y++)
				for (int x = 0; x < ext[0]; x++) {
					c[0] = (lo[0] + x) % t->dims[0];
					c[1] = (lo[1] + y) % t->dims[1];
					c[2] = (lo[2] + z) % t->dims[2];
					hwloc_bitmap_set(r,
						topoml__torus_pos(t, c));
				}
		return r;
	}
	for (int i = 0; i < n; i++) {
		const struct topoml_node *nd = &t->nodes[nodes[i]];
		int u = t->family == TOPOML_DRAGONFLY ? nd->group : nd->leaf;

		if (u >= 0)
			hwloc_bitmap_set(r, u);
	}
	if (hwloc_bitmap_weight(r) < 2) {
		hwloc_bitmap_free(r);
		return NULL;
	}
	return r;
}

static void _share_inc(struct state *s, int job)
{
	if (s->runs[job].nshared++ == 0)
		s->runs[job].shared_since = s->now;
}

static void _share_dec(struct state *s, int job)
{
	struct run *r = &s->runs[job];

	if (--r->nshared == 0)
		s->sharing += r->n * (s->now - r->shared_since);
}

/* ---- fragmentation ------------------------------------------------- */


static void _frag_update(struct state *s)
{
	double v = 0;

	s->frag_int += s->frag_val * (s->now - s->frag_t);
	s->frag_t = s->now;
	if ((s->o && s->o->no_fragmentation) || !s->dirty)
		return;
	s->dirty = false;
	if (s->nfree > 0) {
		/* the engine's own figure, as select/topoml reports it */
		int l = topoml_largest_free(s->t, s->avail);

		if (l > s->nfree)
			l = s->nfree;
		if (l < 0)
			l = 0;
		v = 1.0 - (double)l / s->nfree;
	}
	s->frag_val = v;
}

/* ---- torus: could an exact box be had? ----------------------------- */

/*
 * Is there a box of exactly n nodes (any extents a x b x c = n that fit
 * the dimensions, wrapping where the torus wraps) all of whose nodes are
 * free now?  (place/torus/torus_grid.c: prefix sums, every shape at
 * every origin.)
 */
static bool _free_box_exists(const struct state *s, int n)
{
	return topoml__torus_free_box(s->t, s->avail, n) > 0;
}

/* ---- jobs that share nodes: Slurm's node choice by CPUs ------------ */

enum sl_mode { SL_LINEAR, SL_HILBERT, SL_TREE, SL_DFLY };

/* One _eval_nodes_* call: what is left and what was taken. */
struct slj {
	struct state *s;
	uint32_t *a;		/* avail_cpu_per_node */
	hwloc_bitmap_t map;	/* node_map: taken */
	long rem_cpus;
	int rem_nodes;
	int n;			/* taken: s->snodes/s->sunits */
};

/* _eval_nodes() without topology: best fit over consecutive runs, in
 * node index order, or with topology/3d_torus along its Hilbert curve
 * (the node table's order there; place/place_linear.c). */
static int _sl_linear(struct slj *j, hwloc_const_bitmap_t cand,
		      bool hilbert)
{
	struct state *s = j->s;
	int nn = s->t->nnodes, rc = -1;
	int *ident = malloc((nn ? nn : 1) * sizeof(int));
	const int *curve = hilbert ? topoml__torus_curve(s->t, NULL) : NULL;
	struct topoml_eval_nodes e = {
		.order = curve ? curve : ident,
		.nn = nn,
		.avail = cand,
		.weight = s->weight,
		.cpus = j->a,
		.rem_cpus = j->rem_cpus,
		.rem_nodes = j->rem_nodes,
		.nodes = s->snodes + j->n,
		.units = s->sunits + j->n,
	};

	e.inmap = calloc(nn ? nn : 1, 1);
	for (int i = 0; ident && i < nn; i++)
		ident[i] = i;
	if (ident && e.inmap)
		rc = topoml__eval_nodes(&e);
	free(ident);
	free(e.inmap);
	j->n += e.n;
	j->rem_cpus = e.rem_cpus;
	j->rem_nodes = e.rem_nodes;
	return rc ? -1 : 0;
}

/*
 * _eval_nodes_topo() and _eval_nodes_dfly() for a job with no required
 * nodes, by CPUs (see the comment in sim.h; slurm_switch.c).
 */
static int _sl_switch(struct slj *j, hwloc_const_bitmap_t cand, bool dfly)
{
	struct state *s = j->s;
	struct topoml_sl_eval e = {
		.st = s->st,
		.avail = cand,
		.weight = s->weight,
		.cpus = j->a,
		.rem_cpus = j->rem_cpus,
		.rem_nodes = j->rem_nodes,
		.map = j->map,
		.nodes = s->snodes + j->n,
		.units = s->sunits + j->n,
	};
	char why[128];
	int rc = topoml__sl_eval_switch(&e, dfly, why, sizeof(why));

	j->n += e.n;
	j->rem_cpus = e.rem_cpus;
	j->rem_nodes = e.rem_nodes;
	return rc;
}

/*
 * Slurm's choice of nodes and CPUs for a job of units CPUs among the
 * nodes of cand: the job's nodes and units in s->snodes/s->sunits, their
 * count returned, -1 when they do not fit.
 */
static int _slurm_shared(struct state *s, hwloc_const_bitmap_t cand,
			 long units, enum sl_mode mode)
{
	struct slj j = { .s = s, .rem_cpus = units, .rem_nodes = 1 };
	int rc, v;

	j.a = calloc(s->t->nnodes + 1, sizeof(uint32_t));
	j.map = hwloc_bitmap_alloc();
	if (!j.a || !j.map) {
		free(j.a);
		if (j.map)
			hwloc_bitmap_free(j.map);
		return -1;
	}
	hwloc_bitmap_foreach_begin(v, cand)
		if (v < s->t->nnodes)
			j.a[v] = s->fu[v];
	hwloc_bitmap_foreach_end();
	if (mode == SL_LINEAR || mode == SL_HILBERT || !s->st)
		rc = _sl_linear(&j, cand, mode == SL_HILBERT);
	else
		rc = _sl_switch(&j, cand, mode == SL_DFLY);
	free(j.a);
	hwloc_bitmap_free(j.map);
	return rc ? -1 : j.n;
}

/* Free units changed on node v: its idle / partial state. */
static void _node_state(struct state *s, int v)
{
	bool idle = s->fu[v] == (uint32_t)s->upn;

	if (idle && !hwloc_bitmap_isset(s->avail, v)) {
		hwloc_bitmap_set(s->avail, v);
		s->nfree++;
		s->dirty = true;
	} else if (!idle && hwloc_bitmap_isset(s->avail, v)) {
		hwloc_bitmap_clr(s->avail, v);
		s->nfree--;
		s->dirty = true;
	}
	if (!idle && s->fu[v] > 0)
		hwloc_bitmap_set(s->partial, v);
	else
		hwloc_bitmap_clr(s->partial, v);
	if (idle)
		s->owner[v] = 0;
}

/* Units a job needs: its cores, or its whole nodes' units. */
static long _demand(const struct state *s, const struct topoml_job *j)
{
	return j->cores > 0 && s->upn > 1 ? j->cores :
		(long)j->nodes * s->upn;
}

static bool _is_shared(const struct state *s, const struct topoml_job *j)
{
	return j->cores > 0 && s->upn > 1;
}

/* Enough free units, and idle nodes for a whole-node job. */
static bool _fits_count(const struct state *s, const struct topoml_job *j)
{
	return _demand(s, j) <= s->ufree &&
		(_is_shared(s, j) || j->nodes <= s->nfree);
}

/*
 * A shared job under Kueue TAS: j->cores pods of one core, as many on a
 * node as it has free cores (sim/baselines/kueue_tas.c), among the nodes
 * of s->cand.  Its nodes and cores into s->snodes/s->sunits, the scored
 * placement into s->pl.  0 or -1 (Kueue finds no domain: the job waits).
 */
static int _place_kueue(struct state *s, const struct topoml_job *j)
{
	struct topoml_place_req req = {
		.nnodes = j->nodes,
		.avail = s->cand,
		.owner = s->owner,
		.units = (uint32_t)j->cores,
		.free_units = s->fu,
		.partial = s->partial,
	};
	hwloc_bitmap_t none = hwloc_bitmap_alloc();
	struct place_in in = {
		.t = s->t, .req = &req, .avail = s->cand, .required = none,
		.n = j->nodes, .k = 1,
	};
	enum topoml_kueue_algo algo =
		s->policy == TOPOML_POLICY_KUEUE_LEASTFREE ?
		TOPOML_KUEUE_LEASTFREE :
		s->policy == TOPOML_POLICY_KUEUE_BALANCED ?
		TOPOML_KUEUE_BALANCED : TOPOML_KUEUE_BESTFIT;
	char why[256];
	int rc;

	if (!none)
		return -1;
	s->placements++;
	rc = topoml__place_kueue_units(&in, algo, &s->pl, s->sunits, why,
				       sizeof(why));
	hwloc_bitmap_free(none);
	if (rc || s->pl.n <= 0)
		return -1;
	memcpy(s->snodes, s->pl.nodes, s->pl.n * sizeof(int));
	topoml_ring_order(s->t, s->pl.nodes, s->pl.n);
	topoml_score(s->t, s->cand, &s->pl);
	return 0;
}

/*
 * Place a shared job, off the nodes of off (NULL: none): its nodes and
 * units into s->snodes/s->sunits, the scored placement (engine ring
 * order) into s->pl.  0 or -1.
 */
static int _place_shared(struct state *s, const struct topoml_job *j,
			 hwloc_const_bitmap_t off)
{
	const topoml_topo_t *t = s->t;
	enum sl_mode mode = SL_LINEAR;
	hwloc_bitmap_t set = NULL;
	char why[256];
	int n;

	hwloc_bitmap_or(s->cand, s->avail, s->partial);
	if (off)
		hwloc_bitmap_andnot(s->cand, s->cand, off);
	switch ((int)s->policy) {
	case TOPOML_POLICY_SLURM_TREE:
		mode = SL_TREE;
		break;
	case TOPOML_POLICY_SLURM_DRAGONFLY:
		mode = SL_DFLY;
		break;
	case TOPOML_POLICY_SLURM_HILBERT:
		if (t->family == TOPOML_TORUS)
			mode = SL_HILBERT;
		break;
	case TOPOML_POLICY_KUEUE_BESTFIT:
	case TOPOML_POLICY_KUEUE_LEASTFREE:
	case TOPOML_POLICY_KUEUE_BALANCED:
		return _place_kueue(s, j);
	case TOPOML_POLICY_TOPOML:
		/* cons_tres behind the plugin, with Slurm's topology kept */
		mode = t->family == TOPOML_FAT_TREE ? SL_TREE :
			t->family == TOPOML_DRAGONFLY ? SL_DFLY : SL_LINEAR;
		break;
	default:
		break;
	}
	if (s->policy == TOPOML_POLICY_TOPOML) {
		struct topoml_place_req req = {
			.nnodes = 1,
			.avail = s->cand,
			.hint = j->hint,
			.owner = s->owner,
			.df_spread_alltoall = s->o && s->o->df_spread_alltoall,
			.torus_curve = s->o && s->o->torus_curve,
			.units = (uint32_t)j->cores,
			.free_units = s->fu,
			.partial = s->partial,
		};

		s->placements++;
		if (topoml_place(t, s->policy, &req, &s->pl, why,
				 sizeof(why)))
			return -1;
		set = hwloc_bitmap_alloc();
		if (!set)
			return -1;
		for (int i = 0; i < s->pl.n; i++)
			hwloc_bitmap_set(set, s->pl.nodes[i]);
		topoml_placement_clear(&s->pl);
	} else {
		s->placements++;
	}
	n = _slurm_shared(s, set ? set : s->cand, j->cores, mode);
	if (set)
		hwloc_bitmap_free(set);
	if (n <= 0)
		return -1;
	s->pl.n = n;
	s->pl.nodes = malloc(n * sizeof(int));
	if (!s->pl.nodes)
		return -1;
	memcpy(s->pl.nodes, s->snodes, n * sizeof(int));
	topoml_ring_order(t, s->pl.nodes, n);
	topoml_score(t, s->cand, &s->pl);
	return 0;
}

/* ---- start and end ------------------------------------------------- */

/* The site's locality wait, as select/topoml reads topoml.conf. */
static void _wait_policy(const struct state *s, struct topoml_wait_policy *p)
{
	*p = (struct topoml_wait_policy){
		.box_wait = s->o->box_wait,
		.box_span = s->o->box_wait_span,
		.hybrid_wait = s->o->hold_wait,
		.torus_curve = s->o->torus_curve,
		.weights = s->o->hybrid_weights,
	};
}

/*
 * Whether topoml's placement of job in s->pl waits for a better one: the
 * decision select/topoml takes (topoml_wait_decide), the whole machine
 * being the job's partition; the clock starts the first time the job
 * could start.  A job held for a box or an aligned group of blocks is
 * s->held (its reservation).
 */
static bool _waits(struct state *s, int job, struct run *r)
{
	const struct topoml_job *j = &s->tr->jobs[job];
	struct topoml_wait_job wj = { .nnodes = j->nodes,
				      .owner = s->owner };
	struct topoml_wait_verdict_info v;
	struct topoml_wait_policy p;
	struct topoml_parallel par;
	double since;

	_wait_policy(s, &p);
	if (!(p.box_wait > 0) && !(p.hybrid_wait > 0))
		return false;
	if (s->o->wait_job &&
	    s->o->wait_job(s->o->place_arg, j->nodes, &par, &wj.tpn))
		wj.par = &par;
	if (!s->wmemo) {
		s->wmemo = malloc((s->t->nnodes + 1) * sizeof(*s->wmemo));
		if (!s->wmemo)
			return false;
		for (int n = 0; n <= s->t->nnodes; n++)
			s->wmemo[n] = (struct topoml_wait_memo)
				      TOPOML_WAIT_MEMO_INIT;
	}
	since = r->box_since > 0 ? r->box_since : s->now + 1e-9;
	if (!(topoml_wait_decide(s->t, &p, &wj, &s->pl, s->all,
				 &s->wmemo[j->nodes], since, s->now, &v) > 0))
		return false;
	r->box_since = since;
	if (v.kind == TOPOML_WAIT_BOX || v.kind == TOPOML_WAIT_BLOCK) {
		s->held = job;
		s->held_kind = v.kind;
	}
	return true;
}

/*
 * box_wait: when an exact box of j's size (or an aligned group of blocks
 * that holds j) frees, by the running jobs' limits (est_end), and in
 * `then' the nodes free by then; -1: never.
 */
static double _box_then(struct state *s, const struct topoml_job *j,
			hwloc_bitmap_t then)
{
	int64_t *at = malloc(s->t->nnodes * sizeof(*at)), w = -1;
	hwloc_bitmap_t all = hwloc_bitmap_alloc();

	if (at && all) {
		for (int v = 0; v < s->t->nnodes; v++) {
			double e = s->owner[v] ?
				   s->runs[s->owner[v] - 1].est_end : 0;

			at[v] = e > s->now ? (int64_t)ceil(e) : 0;
		}
		struct topoml_wait_verdict_info v = {
			.kind = s->held_kind
		};
		struct topoml_wait_job wj = { .nnodes = j->nodes };
		struct topoml_wait_policy p;

		_wait_policy(s, &p);
		hwloc_bitmap_set_range(all, 0, s->t->nnodes - 1);
		w = topoml_wait_plan(s->t, &p, &wj, &v, all, at, INT64_MAX,
				     then);
	}
	free(at);
	hwloc_bitmap_free(all);
	return w < 0 ? -1 : w > s->now ? (double)w : s->now;
}

/* Start job now if it can, off the nodes of off (NULL: none). */
static bool _try_start(struct state *s, int job, bool backfill,
		       hwloc_const_bitmap_t off)
{
	const struct topoml_job *j = &s->tr->jobs[job];
	struct topoml_place_req req = {
		.nnodes = j->nodes,
		.avail = s->avail,
		.hint = j->hint,
		.owner = s->owner,
		.df_spread_alltoall = s->o && s->o->df_spread_alltoall,
		.torus_curve = s->o && s->o->torus_curve,
	};
	struct run *r = &s->runs[job];
	const struct topoml_score *sc;
	char why[256];
	bool exact, possible = false, shared = _is_shared(s, j);

	if (s->t->family == TOPOML_TORUS && j->nodes > 1 && s->t->coord_node &&
	    !shared)
		possible = _free_box_exists(s, j->nodes);
	if (s->weight) {
		/* slurmctld's _set_sched_weight(): boot required */
		for (int v = 0; v < s->t->nnodes; v++)
			s->weight[v] = s->used[v] ? 0 : 1;
		req.weight = s->weight;
	}
	if (shared) {
		if (_place_shared(s, j, off)) {
			topoml_placement_clear(&s->pl);
			return false;
		}
		r->n = s->pl.n;
	} else {
		if (off) {
			hwloc_bitmap_andnot(s->cand, s->avail, off);
			req.avail = s->cand;
		}
		s->placements++;
		if (s->policy == TOPOML_POLICY_TOPOML && s->o && s->o->place ?
		    s->o->place(s->o->place_arg, s->t, job, &req, &s->pl, why,
				sizeof(why)) :
		    topoml_place(s->t, s->policy, &req, &s->pl, why,
				 sizeof(why))) {
			s->refused = job;
			return false;
		}
		if (s->pl.n != j->nodes) {
			s->refused = job;
			topoml_placement_clear(&s->pl);
			return false;
		}
		/* the locality wait (site choice): a job whose placement
		 * misses its locality criterion waits for it, up to the
		 * site's seconds from the first time it could start */
		if (s->o && s->policy == TOPOML_POLICY_TOPOML &&
		    _waits(s, job, r)) {
			topoml_placement_clear(&s->pl);
			return false;
		}
		r->n = j->nodes;
	}
	r->nodes = malloc(r->n * sizeof(int));
	r->units = malloc(r->n * sizeof(int));
	if (!r->nodes || !r->units) {
		free(r->nodes);
		free(r->units);
		r->nodes = r->units = NULL;
		topoml_placement_clear(&s->pl);
		return false;
	}
	if (shared) {
		memcpy(r->nodes, s->snodes, r->n * sizeof(int));
		memcpy(r->units, s->sunits, r->n * sizeof(int));
	} else {
		memcpy(r->nodes, s->pl.nodes, r->n * sizeof(int));
		for (int i = 0; i < r->n; i++)
			r->units[i] = s->upn;
	}
	sc = &s->pl.score;
	r->u = 0;
	for (int i = 0; i < r->n; i++) {
		int v = r->nodes[i];

		s->fu[v] -= r->units[i];
		s->ufree -= r->units[i];
		r->u += r->units[i];
		s->owner[v] = job + 1;
		if (s->used)
			s->used[v] = 1;
		_node_state(s, v);
	}
	r->start = s->now;
	r->end = s->now + j->runtime;
	r->est_end = s->now + j->walltime;
	r->backfilled = backfill;
	r->span = sc->span;
	r->ring_cost = sc->ring_cost;
	s->backfilled += backfill;

	s->waits[s->started++] = s->now - j->submit;
	/* node-seconds; core-seconds / cores per node for shared nodes */
	s->busy += (double)r->u / s->upn * j->runtime;
	s->span_sum += sc->span;
	s->span_ratio += sc->span_lower_bound > 0 ?
		(double)sc->span / sc->span_lower_bound : 1.0;
	s->ring += sc->ring_cost * j->runtime;
	s->ring_lb += sc->ring_lower_bound * j->runtime;
	s->span_ratio_free += sc->span_lower_bound_free > 0 ?
		(double)sc->span / sc->span_lower_bound_free : 1.0;
	s->ring_lb_free += sc->ring_lower_bound_free * j->runtime;
	s->global += (double)sc->global_hops * j->runtime;
	if (r->n > 1) {
		s->pair_hops += sc->mean_pair_hops;
		s->multi_node_jobs++;
	}

	r->region = _region(s, r->nodes, r->n, &exact);
	if (r->region) {
		for (int i = 0; i < s->nmulti; i++) {
			int k = s->multi[i];

			if (hwloc_bitmap_intersects(r->region,
						    s->runs[k].region)) {
				_share_inc(s, k);
				_share_inc(s, job);
			}
		}
		s->multi[s->nmulti++] = job;
	}
	if (s->t->family == TOPOML_TORUS && exact && !r->nshared) {
		s->isolated_boxes++;
		s->isolated_when_possible += possible;
	}
	s->box_possible += possible;
	_heap_push(s, job);
	_est_insert(s, job);
	topoml_placement_clear(&s->pl);
	return true;
}

static void _end(struct state *s, int job)
{
	struct run *r = &s->runs[job];

	for (int i = 0; i < r->n; i++) {
		s->fu[r->nodes[i]] += r->units[i];
		s->ufree += r->units[i];
		_node_state(s, r->nodes[i]);
	}
	_est_remove(s, job);
	if (r->region) {
		int self = -1;

		for (int i = 0; i < s->nmulti; i++) {
			int k = s->multi[i];

			if (k == job) {
				self = i;
				continue;
			}
			if (hwloc_bitmap_intersects(r->region,
						    s->runs[k].region))
				_share_dec(s, k);
		}
		if (r->nshared)
			s->sharing += r->n * (s->now - r->shared_since);
		if (self >= 0)
			s->multi[self] = s->multi[--s->nmulti];
		hwloc_bitmap_free(r->region);
		r->region = NULL;
	}
	if (s->o && s->o->record_nodes && s->jobout) {
		struct topoml_sim_jobout *jo = &s->jobout[job];

		jo->nodes = hwloc_bitmap_alloc();
		jo->units = calloc(r->n + 1, sizeof(int));
		for (int i = 0; jo->nodes && i < r->n; i++)
			hwloc_bitmap_set(jo->nodes, r->nodes[i]);
		/* units in node index order */
		for (int i = 0, k = 0; jo->nodes && jo->units &&
		     i < s->t->nnodes; i++)
			for (int x = 0; x < r->n; x++)
				if (r->nodes[x] == i)
					jo->units[k++] = r->units[x];
	}
	free(r->nodes);
	free(r->units);
	r->nodes = NULL;
	r->units = NULL;
	if (r->end > s->last_end)
		s->last_end = r->end;
}

/* ---- scheduling ---------------------------------------------------- */

/* Reservation of the head job: shadow time and extra nodes. */
static void _shadow(struct state *s, long need, double *shadow, long *extra)
{
	long free = s->ufree;

	if (free >= need) {
		/* blocked by the topology, not by the count */
		*shadow = s->now;
		*extra = free - need;
		return;
	}
	for (int i = 0; i < s->nest; i++) {
		int k = s->by_est[i];

		free += s->runs[k].u;
		if (free >= need) {
			*shadow = s->runs[k].est_end;
			*extra = free - need;
			return;
		}
	}
	*shadow = INFINITY;
	*extra = 0;
}

/* Does the policy place job on the nodes free by `when' (by the running
 * jobs' limits)?  Its nodes in box when it does. */
static bool _placed_by(struct state *s, int job, double when,
		       hwloc_bitmap_t then, hwloc_bitmap_t box)
{
	const struct topoml_job *j = &s->tr->jobs[job];
	struct topoml_place_req req = {
		.nnodes = j->nodes,
		.avail = then,
		.hint = j->hint,
		.unscored = true,
		.weight = s->weight,
		.df_spread_alltoall = s->o && s->o->df_spread_alltoall,
		.torus_curve = s->o && s->o->torus_curve,
	};
	struct topoml_placement pl = { 0 };
	char why[256];
	bool ok;

	/* a plan, as a held job's: not counted in placement calls */
	hwloc_bitmap_zero(then);
	for (int v = 0; v < s->t->nnodes; v++)
		if (!s->owner[v] || s->runs[s->owner[v] - 1].est_end <= when)
			hwloc_bitmap_set(then, v);
	ok = !(s->policy == TOPOML_POLICY_TOPOML && s->o && s->o->place ?
	       s->o->place(s->o->place_arg, s->t, job, &req, &pl, why,
			   sizeof(why)) :
	       topoml_place(s->t, s->policy, &req, &pl, why, sizeof(why))) &&
	     pl.n == j->nodes;
	if (ok) {
		hwloc_bitmap_zero(box);
		for (int k = 0; k < pl.n; k++)
			hwloc_bitmap_set(box, pl.nodes[k]);
	}
	topoml_placement_clear(&pl);
	return ok;
}

/*
 * A head job the policy cannot place although enough nodes are free
 * (torus3d without a free box of its shape, Slurm's topology/block
 * outside an aligned group, ...): Slurm's backfill reserves where the
 * select plugin's will-run places it as running jobs end by their limits
 * (cons_tres's will-run test adds their nodes in end-time order and asks
 * the topology's placement each time), not a count of nodes at once.
 * The soonest such end (bisected: more free nodes never lose a
 * placement) and, in box, the nodes placed then; -1: none.
 */
static double _refused_then(struct state *s, int job, hwloc_bitmap_t box)
{
	hwloc_bitmap_t then = hwloc_bitmap_alloc();
	double when = -1;
	int lo = 0, hi = s->nest - 1;

	if (!then || hi < 0 ||
	    !_placed_by(s, job, s->runs[s->by_est[hi]].est_end, then, box))
		goto out;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (_placed_by(s, job, s->runs[s->by_est[mid]].est_end, then,
			       box))
			hi = mid;
		else
			lo = mid + 1;
	}
	when = s->runs[s->by_est[lo]].est_end;
	if (!_placed_by(s, job, when, then, box))
		when = -1;
out:
	hwloc_bitmap_free(then);
	return when;
}

/* One scheduling pass at s->now; true when a job started. */
static bool _schedule(struct state *s)
{
	const struct topoml_job *jobs = s->tr->jobs;
	bool any = false;
	int head = 0, kept;
	hwloc_bitmap_t box = NULL;

	s->held = -1;
	s->refused = -1;
	while (head < s->nqueue) {
		int job = s->queue[head];

		if (!_fits_count(s, &jobs[job]) ||
		    !_try_start(s, job, false, NULL))
			break;
		s->queue[head++] = -1;
		any = true;
	}
	if (head < s->nqueue && !(s->o && s->o->no_backfill)) {
		double shadow;
		long extra;

		/* in units: cores on shared nodes, else nodes */
		_shadow(s, _demand(s, &jobs[s->queue[head]]), &shadow, &extra);
		/*
		 * box_wait: the reservation of a head job held for a box is
		 * the box that frees first by the running jobs' limits (what
		 * select/topoml answers backfill's will-run); later jobs that
		 * would outlast it keep off its nodes, so that it does free.
		 * A count-only reservation (now, on any nodes) lets only what
		 * fits beside the job's size start and fills the box anyway.
		 */
		if (s->held == s->queue[head]) {
			const struct topoml_job *h = &jobs[s->held];
			struct topoml_place_req req = {
				.nnodes = h->nodes, .unscored = true,
			};
			struct topoml_placement pl = { 0 };
			double at = -1;
			char why[128];

			box = hwloc_bitmap_alloc();
			if (box)
				at = _box_then(s, h, box);
			req.avail = box;
			if (at < 0 || topoml_place(s->t, s->policy, &req, &pl,
						   why, sizeof(why))) {
				hwloc_bitmap_free(box);
				box = NULL;
			} else {
				hwloc_bitmap_zero(box);
				for (int k = 0; k < pl.n; k++)
					hwloc_bitmap_set(box, pl.nodes[k]);
				shadow = at;
				extra = LONG_MAX;
			}
			topoml_placement_clear(&pl);
		} else if (s->refused == s->queue[head] &&
			   shadow <= s->now) {
			/* refused with enough nodes free: its will-run plan */
			double at = -1;

			box = hwloc_bitmap_alloc();
			if (box)
				at = _refused_then(s, s->queue[head], box);
			if (at < 0) {
				hwloc_bitmap_free(box);
				box = NULL;
			} else {
				shadow = at;
				extra = LONG_MAX;
			}
		}
		for (int i = head + 1; i < s->nqueue && s->ufree > 0; i++) {
			int job = s->queue[i];
			const struct topoml_job *j = &jobs[job];
			bool before = s->now + j->walltime <= shadow;

			if (!_fits_count(s, j) ||
			    (!before && _demand(s, j) > extra))
				continue;
			if (!_try_start(s, job, true, before ? NULL : box))
				continue;
			s->queue[i] = -1;
			any = true;
			if (!before)
				extra -= _demand(s, j);
		}
		hwloc_bitmap_free(box);
	}
	kept = 0;
	for (int i = 0; i < s->nqueue; i++)
		if (s->queue[i] >= 0)
			s->queue[kept++] = s->queue[i];
	s->nqueue = kept;
	return any;
}

static int _cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void _metrics(struct state *s, struct topoml_sim_metrics *m)
{
	int n = s->started;

	m->jobs = n;
	m->unplaced = s->unplaced;
	m->backfilled = s->backfilled;
	m->placements = s->placements;
	if (n) {
		double sum = 0;

		qsort(s->waits, n, sizeof(double), _cmp_double);
		for (int i = 0; i < n; i++)
			sum += s->waits[i];
		m->mean_wait_s = sum / n;
		/* nearest rank */
		m->p95_wait_s = s->waits[(95L * n + 99) / 100 - 1];
		m->max_wait_s = s->waits[n - 1];
		m->span_over_lower_bound = s->span_ratio / n;
		m->span_over_free_lower_bound = s->span_ratio_free / n;
		m->mean_span = s->span_sum / n;
	}
	m->makespan_s = s->last_end;
	if (s->last_end > 0 && s->t->nnodes > 0) {
		m->utilization = s->busy / ((double)s->t->nnodes *
					    s->last_end);
		m->fragmentation = s->frag_int / s->last_end;
	}
	m->ring_cost = s->ring;
	m->ring_lower_bound = s->ring_lb;
	m->ring_cost_over_lower_bound = s->ring_lb > 0 ? s->ring / s->ring_lb :
		1.0;
	m->ring_cost_over_free_lower_bound = s->ring_lb_free > 0 ?
		s->ring / s->ring_lb_free : 1.0;
	m->global_ring_hops = s->global;
	m->mean_pair_hops = s->multi_node_jobs ?
		s->pair_hops / s->multi_node_jobs : 0;
	m->sharing = s->sharing / 3600.0;
	m->sharing_fraction = s->busy > 0 ? s->sharing / s->busy : 0;
	m->box_possible = s->box_possible;
	m->contiguous_isolated_when_possible = s->box_possible ?
		(double)s->isolated_when_possible / s->box_possible : 0;
	m->contiguous_isolated = s->t->family == TOPOML_TORUS &&
		s->multi_node_jobs ?
		(double)s->isolated_boxes / s->multi_node_jobs : 0;
}

static void _state_free(struct state *s)
{
	if (s->runs)
		for (int i = 0; i < s->tr->njobs; i++) {
			free(s->runs[i].nodes);
			free(s->runs[i].units);
			if (s->runs[i].region)
				hwloc_bitmap_free(s->runs[i].region);
		}
	free(s->runs);
	free(s->heap);
	free(s->by_est);
	free(s->queue);
	free(s->multi);
	free(s->waits);
	free(s->owner);
	free(s->fu);
	free(s->used);
	free(s->weight);
	free(s->snodes);
	free(s->sunits);
	free(s->wmemo);
	if (s->all)
		hwloc_bitmap_free(s->all);
	topoml__sl_switches_free(s->st);
	if (s->partial)
		hwloc_bitmap_free(s->partial);
	if (s->cand)
		hwloc_bitmap_free(s->cand);
	if (s->avail)
		hwloc_bitmap_free(s->avail);
	topoml_placement_clear(&s->pl);
}

int topoml_sim_run(const topoml_topo_t *t, const struct topoml_trace *tr,
		   enum topoml_policy policy,
		   const struct topoml_sim_opts *o,
		   struct topoml_sim_metrics *m,
		   struct topoml_sim_jobout *jobout, topoml_errors_t *err)
{
	struct state s = { .t = t, .tr = tr, .policy = policy, .o = o,
			   .jobout = jobout };
	int nj = tr->njobs, next = 0, rc = -1;
	struct timespec t0, t1;

	topoml_sim_register_baselines();

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(m, 0, sizeof(*m));
	m->policy = policy;
	s.runs = calloc(nj ? nj : 1, sizeof(*s.runs));
	s.heap = malloc((nj ? nj : 1) * sizeof(int));
	s.by_est = malloc((nj ? nj : 1) * sizeof(int));
	s.queue = malloc((nj ? nj : 1) * sizeof(int));
	s.multi = malloc((nj ? nj : 1) * sizeof(int));
	s.waits = malloc((nj ? nj : 1) * sizeof(double));
	s.owner = calloc(t->nnodes ? t->nnodes : 1, sizeof(uint32_t));
	s.avail = hwloc_bitmap_alloc();
	s.all = hwloc_bitmap_alloc();
	if (s.all && t->nnodes)
		hwloc_bitmap_set_range(s.all, 0, t->nnodes - 1);
	s.upn = tr->shared && tr->cores_per_node > 1 ? tr->cores_per_node : 1;
	s.fu = calloc(t->nnodes + 1, sizeof(uint32_t));
	s.partial = hwloc_bitmap_alloc();
	s.cand = hwloc_bitmap_alloc();
	s.snodes = malloc((t->nnodes + 1) * sizeof(int));
	s.sunits = malloc((t->nnodes + 1) * sizeof(int));
	if (o && o->cloud_power) {
		s.used = calloc(t->nnodes + 1, 1);
		s.weight = calloc(t->nnodes + 1, sizeof(uint64_t));
	}
	if (s.upn > 1 && t->family != TOPOML_TORUS)
		s.st = topoml__sl_switches(t);
	if (jobout)
		for (int i = 0; i < nj; i++)
			memset(&jobout[i], 0, sizeof(jobout[i]));
	if (!s.fu || !s.partial || !s.cand || !s.snodes || !s.sunits ||
	    (o && o->cloud_power && (!s.used || !s.weight)) ||
	    (s.upn > 1 && t->family != TOPOML_TORUS && !s.st)) {
		topoml_errors_add(err, "simulator: out of memory");
		goto out;
	}
	if (!s.runs || !s.heap || !s.by_est || !s.queue || !s.multi ||
	    !s.waits || !s.owner || !s.avail) {
		topoml_errors_add(err, "simulator: out of memory");
		goto out;
	}
	if (t->nnodes > 0)
		hwloc_bitmap_set_range(s.avail, 0, t->nnodes - 1);
	s.nfree = t->nnodes;
	for (int v = 0; v < t->nnodes; v++)
		s.fu[v] = s.upn;
	s.ufree = (long)t->nnodes * s.upn;
	s.dirty = true;
	_frag_update(&s);

	while (next < nj || s.nheap || s.nqueue) {
		double tn = INFINITY;

		if (next < nj)
			tn = tr->jobs[next].submit;
		if (s.nheap && s.runs[s.heap[0]].end < tn)
			tn = s.runs[s.heap[0]].end;
		if (tn == INFINITY) {
			/* nothing runs or arrives: the head never fits */
			s.unplaced++;
			if (jobout)
				jobout[s.queue[0]].start = -1;
			memmove(&s.queue[0], &s.queue[1],
				(--s.nqueue) * sizeof(int));
			_schedule(&s);
			_frag_update(&s);
			continue;
		}
		s.now = tn;
		while (s.nheap && s.runs[s.heap[0]].end <= tn)
			_end(&s, _heap_pop(&s));
		while (next < nj && tr->jobs[next].submit <= tn) {
			/* torus3d refuses a size it lists no box for at
			 * submission: never queued
			 * (place/torus/place_torus3d.c) */
			if (policy == TOPOML_POLICY_SLURM_TORUS3D &&
			    !topoml_torus3d_size_ok(t->torus3d,
						    tr->jobs[next].nodes)) {
				s.unplaced++;
				next++;
				continue;
			}
			s.queue[s.nqueue++] = next++;
		}
		_schedule(&s);
		_frag_update(&s);
		if (o && o->progress)
			o->progress(o->progress_arg, next, s.nqueue, nj);
	}
	s.now = s.last_end;
	_frag_update(&s);
	_metrics(&s, m);
	if (jobout)
		for (int i = 0; i < nj; i++) {
			struct run *r = &s.runs[i];

			jobout[i].start = r->n ? r->start : -1;
			jobout[i].backfilled = r->backfilled;
			jobout[i].span = r->span;
			jobout[i].ring_cost = r->ring_cost;
			jobout[i].nnodes = r->n;
		}
	rc = 0;
out:
	_state_free(&s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	m->cpu_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return rc;
}

void topoml_sim_jobout_free(struct topoml_sim_jobout *jo, int n)
{
	for (int i = 0; jo && i < n; i++) {
		if (jo[i].nodes)
			hwloc_bitmap_free(jo[i].nodes);
		free(jo[i].units);
		jo[i].nodes = NULL;
		jo[i].units = NULL;
	}
}

bool topoml_sim_hybrid_shape(int nodes, int per_node, int tp,
			     struct topoml_parallel *p)
{
	static const int pps[] = { 8, 4, 2, 1 };
	long world = (long)nodes * per_node;
	char err[128];

	if (nodes < 1 || per_node < 1 || world > INT_MAX)
		return false;
	if (tp < 1 || world % tp)
		tp = per_node;
	for (size_t i = 0; i < sizeof(pps) / sizeof(pps[0]); i++) {
		*p = (struct topoml_parallel){ tp, pps[i], 0, 1, 1 };
		if (world % ((long)tp * pps[i]) == 0 &&
		    (world / tp / pps[i] >= 2 || pps[i] == 1) &&
		    !topoml_parallel_resolve(p, (int)world, err, sizeof(err)))
			return true;
	}
	return false;
}
