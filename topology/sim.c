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
 * a job that does not fit; a job that can never be placed (nothing runs,
 * nothing arrives) is dropped and counted as unplaced.
 *
 * Cost: each event is O(running + queued) plus the placement calls; the
 * running set is kept in an end-time heap and a wall-time ordered array,
 * node state (free set, owners) is updated incrementally.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

struct run {
	double start;
	double end;		/* actual */
	double est_end;		/* by wall time */
	int n;
	int *nodes;
	int span;
	double ring_cost;
	hwloc_bitmap_t region;	/* units of a multi-unit job, else NULL */
	int nshared;		/* running multi-unit jobs overlapping */
	double shared_since;
	bool backfilled;
};

struct state {
	const topoml_topo_t *t;
	const struct topoml_trace *tr;
	enum topoml_policy policy;
	const struct topoml_sim_opts *o;

	hwloc_bitmap_t avail;
	uint32_t *owner;	/* job index + 1, 0 = idle */
	int nfree;

	struct run *runs;	/* by job index */
	int *heap;		/* running jobs, min actual end */
	int nheap;
	int *by_est;		/* running jobs by estimated end */
	int nest;
	int *queue;		/* pending jobs, FCFS order */
	int nqueue;
	int *multi;		/* running multi-unit jobs */
	int nmulti;

	struct topoml_placement pl;
	unsigned char *occ;	/* torus bounding boxes */
	int *prefix;		/* torus: busy counts (_free_box_exists) */
	unsigned char *busy_at;	/* torus, by position: busy or no node */

	double now;
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

static int _coord_index(const topoml_topo_t *t, const int c[3])
{
	return c[0] + t->dims[0] * (c[1] + t->dims[1] * c[2]);
}

/*
 * Bounding box of nodes along each torus dimension: the shortest (cyclic
 * when the dimension wraps) interval covering every coordinate.
 */
static void _torus_box(struct state *s, const int *nodes, int n, int lo[3],
		       int ext[3])
{
	const topoml_topo_t *t = s->t;

	for (int d = 0; d < 3; d++) {
		int len = t->dims[d] > 0 ? t->dims[d] : 1;
		int gap = 0, gap_end = -1, run = 0, first = -1, last = -1;

		memset(s->occ, 0, len);
		for (int i = 0; i < n; i++) {
			int c = t->nodes[nodes[i]].coord[d];

			if (c >= 0 && c < len)
				s->occ[c] = 1;
		}
		for (int c = 0; c < len; c++)
			if (s->occ[c]) {
				if (first < 0)
					first = c;
				last = c;
			}
		if (first < 0) {
			lo[d] = 0;
			ext[d] = 1;
			continue;
		}
		lo[d] = first;
		ext[d] = last - first + 1;
		if (!t->wrap[d])
			continue;
		/* largest run of empty positions, going round twice */
		for (int k = 0; k < 2 * len; k++) {
			if (s->occ[k % len]) {
				run = 0;
				continue;
			}
			if (++run > gap && run <= len) {
				gap = run;
				gap_end = k % len;
			}
		}
		if (gap > len - ext[d]) {
			lo[d] = (gap_end + 1) % len;
			ext[d] = len - gap;
		}
	}
}

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

		_torus_box(s, nodes, n, lo, ext);
		*exact_box = ext[0] * ext[1] * ext[2] == n;
		for (int z = 0; z < ext[2]; z++)
			for (int y = 0; y < ext[1]; y++)
				for (int x = 0; x < ext[0]; x++) {
					c[0] = (lo[0] + x) % t->dims[0];
					c[1] = (lo[1] + y) % t->dims[1];
					c[2] = (lo[2] + z) % t->dims[2];
					hwloc_bitmap_set(r,
							 _coord_index(t, c));
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

static void _mark_busy(struct state *s, const int *nodes, int n, int busy)
{
	if (!s->busy_at)
		return;
	for (int i = 0; i < n; i++)
		s->busy_at[_coord_index(s->t, s->t->nodes[nodes[i]].coord)] =
			busy;
}

/* Busy positions in the box [x, x+a) x [y, y+b) x [z, z+c). */
static int _box_busy(const int *p, const int e[3], int x, int y, int z,
		     int a, int b, int c)
{
#define P(x, y, z) p[((size_t)(z) * (e[1] + 1) + (y)) * (e[0] + 1) + (x)]
	return P(x + a, y + b, z + c) - P(x, y + b, z + c) -
		P(x + a, y, z + c) - P(x + a, y + b, z) + P(x, y, z + c) +
		P(x, y + b, z) + P(x + a, y, z) - P(x, y, z);
#undef P
}

/*
 * Is there a box of exactly n nodes (any extents a x b x c = n that fit
 * the dimensions, wrapping where the torus wraps) all of whose nodes are
 * free now?  3D prefix sums of busy positions over the grid doubled along
 * wrapping dimensions, then every shape at every origin: O(volume x
 * shapes).
 */
static bool _free_box_exists(struct state *s, int n)
{
	const topoml_topo_t *t = s->t;
	int e[3], d0 = t->dims[0], d1 = t->dims[1], d2 = t->dims[2];
	int *p = s->prefix;
	bool found = false;

	for (int d = 0; d < 3; d++)
		e[d] = t->wrap[d] && t->dims[d] > 1 ? 2 * t->dims[d] :
			t->dims[d];
#define P(x, y, z) p[((size_t)(z) * (e[1] + 1) + (y)) * (e[0] + 1) + (x)]
	memset(p, 0, (size_t)(e[0] + 1) * (e[1] + 1) * sizeof(int));
	for (int z = 1; z <= e[2]; z++) {
		int cz = (z - 1) % d2;

		for (int x = 0; x <= e[0]; x++)
			P(x, 0, z) = 0;
		for (int y = 1; y <= e[1]; y++) {
			const unsigned char *row = &s->busy_at[d0 *
				((y - 1) % d1 + d1 * cz)];
			int line = 0;

			P(0, y, z) = 0;
			/* running sum along x, then add the (y, z) planes */
			for (int x = 1; x <= e[0]; x++) {
				line += row[(x - 1) % d0];
				P(x, y, z) = line + P(x, y - 1, z) +
					P(x, y, z - 1) - P(x, y - 1, z - 1);
			}
		}
	}
	for (int a = 1; a <= d0 && a <= n && !found; a++) {
		if (n % a)
			continue;
		for (int b = 1; b <= d1 && a * b <= n && !found; b++) {
			int c = n / (a * b);

			if ((n / a) % b || c > d2)
				continue;
			for (int z = 0; z + c <= e[2] && z < d2 && !found; z++)
				for (int y = 0; y + b <= e[1] && y < d1 &&
				     !found; y++)
					for (int x = 0; x + a <= e[0] &&
					     x < d0; x++) {
						if (!_box_busy(p, e, x, y, z,
							       a, b, c)) {
							found = true;
							break;
						}
					}
		}
	}
#undef P
	return found;
}

/* ---- start and end ------------------------------------------------- */

static bool _try_start(struct state *s, int job, bool backfill)
{
	const struct topoml_job *j = &s->tr->jobs[job];
	struct topoml_place_req req = {
		.nnodes = j->nodes,
		.avail = s->avail,
		.hint = j->hint,
		.owner = s->owner,
		.df_spread_alltoall = s->o && s->o->df_spread_alltoall,
	};
	struct run *r = &s->runs[job];
	const struct topoml_score *sc;
	char why[256];
	bool exact, possible = false;

	if (s->t->family == TOPOML_TORUS && j->nodes > 1 && s->prefix)
		possible = _free_box_exists(s, j->nodes);
	s->placements++;
	if (topoml_place(s->t, s->policy, &req, &s->pl, why, sizeof(why)))
		return false;
	if (s->pl.n != j->nodes) {
		topoml_placement_clear(&s->pl);
		return false;
	}
	r->n = j->nodes;
	r->nodes = malloc(r->n * sizeof(int));
	if (!r->nodes) {
		topoml_placement_clear(&s->pl);
		return false;
	}
	memcpy(r->nodes, s->pl.nodes, r->n * sizeof(int));
	sc = &s->pl.score;
	for (int i = 0; i < r->n; i++) {
		hwloc_bitmap_clr(s->avail, r->nodes[i]);
		s->owner[r->nodes[i]] = job + 1;
	}
	_mark_busy(s, r->nodes, r->n, 1);
	s->nfree -= r->n;
	s->dirty = true;
	r->start = s->now;
	r->end = s->now + j->runtime;
	r->est_end = s->now + j->walltime;
	r->backfilled = backfill;
	r->span = sc->span;
	r->ring_cost = sc->ring_cost;
	s->backfilled += backfill;

	s->waits[s->started++] = s->now - j->submit;
	s->busy += (double)r->n * j->runtime;
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
		hwloc_bitmap_set(s->avail, r->nodes[i]);
		s->owner[r->nodes[i]] = 0;
	}
	_mark_busy(s, r->nodes, r->n, 0);
	s->nfree += r->n;
	s->dirty = true;
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
	free(r->nodes);
	r->nodes = NULL;
	if (r->end > s->last_end)
		s->last_end = r->end;
}

/* ---- scheduling ---------------------------------------------------- */

/* Reservation of the head job: shadow time and extra nodes. */
static void _shadow(struct state *s, int need, double *shadow, int *extra)
{
	int free = s->nfree;

	if (free >= need) {
		/* blocked by the topology, not by the count */
		*shadow = s->now;
		*extra = free - need;
		return;
	}
	for (int i = 0; i < s->nest; i++) {
		int k = s->by_est[i];

		free += s->runs[k].n;
		if (free >= need) {
			*shadow = s->runs[k].est_end;
			*extra = free - need;
			return;
		}
	}
	*shadow = INFINITY;
	*extra = 0;
}

/* One scheduling pass at s->now; true when a job started. */
static bool _schedule(struct state *s)
{
	const struct topoml_job *jobs = s->tr->jobs;
	bool any = false;
	int head = 0, kept;

	while (head < s->nqueue) {
		int job = s->queue[head];

		if (jobs[job].nodes > s->nfree || !_try_start(s, job, false))
			break;
		s->queue[head++] = -1;
		any = true;
	}
	if (head < s->nqueue && !(s->o && s->o->no_backfill)) {
		double shadow;
		int extra;

		_shadow(s, jobs[s->queue[head]].nodes, &shadow, &extra);
		for (int i = head + 1; i < s->nqueue && s->nfree > 0; i++) {
			int job = s->queue[i];
			const struct topoml_job *j = &jobs[job];
			bool before = s->now + j->walltime <= shadow;

			if (j->nodes > s->nfree ||
			    (!before && j->nodes > extra))
				continue;
			if (!_try_start(s, job, true))
				continue;
			s->queue[i] = -1;
			any = true;
			if (!before)
				extra -= j->nodes;
		}
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
	free(s->occ);
	free(s->prefix);
	free(s->busy_at);
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
	struct state s = { .t = t, .tr = tr, .policy = policy, .o = o };
	int nj = tr->njobs, next = 0, rc = -1;
	struct timespec t0, t1;
	int occlen = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(m, 0, sizeof(*m));
	m->policy = policy;
	for (int d = 0; d < 3; d++)
		if (t->dims[d] > occlen)
			occlen = t->dims[d];
	s.runs = calloc(nj ? nj : 1, sizeof(*s.runs));
	s.heap = malloc((nj ? nj : 1) * sizeof(int));
	s.by_est = malloc((nj ? nj : 1) * sizeof(int));
	s.queue = malloc((nj ? nj : 1) * sizeof(int));
	s.multi = malloc((nj ? nj : 1) * sizeof(int));
	s.waits = malloc((nj ? nj : 1) * sizeof(double));
	s.owner = calloc(t->nnodes ? t->nnodes : 1, sizeof(uint32_t));
	s.occ = malloc(occlen);
	if (t->family == TOPOML_TORUS && t->coord_node) {
		size_t vol = (size_t)t->dims[0] * t->dims[1] * t->dims[2];

		s.prefix = malloc((size_t)(2 * t->dims[0] + 1) *
				  (2 * t->dims[1] + 1) *
				  (2 * t->dims[2] + 1) * sizeof(int));
		s.busy_at = malloc(vol ? vol : 1);
		/* positions without a node are never free */
		for (size_t i = 0; s.busy_at && i < vol; i++)
			s.busy_at[i] = t->coord_node[i] < 0;
	}
	s.avail = hwloc_bitmap_alloc();
	if (!s.runs || !s.heap || !s.by_est || !s.queue || !s.multi ||
	    !s.waits || !s.owner || !s.occ || !s.avail ||
	    (t->family == TOPOML_TORUS && t->coord_node &&
	     (!s.prefix || !s.busy_at))) {
		topoml_errors_add(err, "simulator: out of memory");
		goto out;
	}
	if (t->nnodes > 0)
		hwloc_bitmap_set_range(s.avail, 0, t->nnodes - 1);
	s.nfree = t->nnodes;
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
		while (next < nj && tr->jobs[next].submit <= tn)
			s.queue[s.nqueue++] = next++;
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
		}
	rc = 0;
out:
	_state_free(&s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	m->cpu_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return rc;
}
