/*
 * The cells of a 3D torus (or mesh) for its box searches: topoml's own
 * boxes (place_torus.c), Slurm 26.05 torus3d's listed shapes
 * (place_torus3d.c), both chosen by one search with one tight-fit metric
 * (topoml__torus_pick), and the simulator's "could a free box have been
 * taken" (sim/sim.c), one prefix sum and one box walk for all of them.
 * Cells are x fastest (topoml__grid_pos); boxes wrap where the torus does.
 * Internal to libtopoml.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_TORUS_GRID_H
#define TOPOML_TORUS_GRID_H

#include "topoml.h"
#include "model/model_int.h"

/*
 * Prefix sums (topoml_psum) over t's cells: a cell whose node is in set
 * counts in, one whose node is not counts out, one without a node hole
 * (set NULL: every node is in).  0, or -1 when out of memory.
 */
int topoml__torus_psum(const topoml_topo_t *t, hwloc_const_bitmap_t set,
		       char in, char out, char hole, struct topoml_psum *ps);

/* The same marks per cell (x fastest), into cell (room for every cell). */
void topoml__torus_marks(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			 char in, char out, char hole, char *cell);
/* topoml__psum_build's sums, built faster.  0, or -1 when out of memory. */
int topoml__torus_psum_cells(struct topoml_psum *g, const int d[3],
			     const char *cell);

/*
 * topoml__psum_wrap inline: most boxes wrap round no end, one box of
 * eight reads then; the searches call it for every origin.
 */
static inline int topoml__torus_wrap(const struct topoml_psum *g,
				     const int o[3], const int s[3])
{
	if (o[0] + s[0] <= g->d[0] && o[1] + s[1] <= g->d[1] &&
	    o[2] + s[2] <= g->d[2]) {
		int lo[3] = { o[0], o[1], o[2] };
		int hi[3] = { o[0] + s[0], o[1] + s[1], o[2] + s[2] };

		return topoml__psum_box(g, lo, hi);
	}
	return topoml__psum_wrap(g, o, s);
}

/*
 * One box search's view of the torus, for the O(1) box tests of every
 * source of candidates: topoml's shapes at every origin (place_torus.c),
 * torus3d's listed shapes at their anchors (place_torus3d.c), any box of
 * n (the simulator).
 */
struct topoml_torus_cells {
	struct topoml_psum busy;	/* not a free node: busy or a hole */
	struct topoml_psum req;		/* the job's required nodes */
	int nreq;			/* 0: none (req unused) */
	/* busy's cells themselves (1: not a free node), or NULL: the fit
	 * of a small box from them (topoml__torus_fit) */
	const char *cell;
};

/* required may be NULL when nreq is 0.  0, or -1 when out of memory. */
int topoml__torus_cells(struct topoml_torus_cells *c, const topoml_topo_t *t,
			hwloc_const_bitmap_t avail,
			hwloc_const_bitmap_t required, int nreq);
/* The same from the torus' cells, 1 where not a free node (busy: a cell
 * per torus position, topoml__torus_marks(t, avail, 0, 1, 1, busy)). */
int topoml__torus_cells_of(struct topoml_torus_cells *c,
			   const topoml_topo_t *t, const char *busy,
			   hwloc_const_bitmap_t required, int nreq);
void topoml__torus_cells_free(struct topoml_torus_cells *c);

/* Is the box at o of sides s all free nodes, with every required node? */
static inline bool topoml__torus_box_free(const struct topoml_torus_cells *c,
					  const int o[3], const int s[3])
{
	return !topoml__torus_wrap(&c->busy, o, s) &&
	       (!c->nreq || topoml__torus_wrap(&c->req, o, s) == c->nreq);
}

/* torus3d's anchors along one axis of size cells: seed, seed + stride,
 * ... (mod size) until back at seed, as _build_axis_positions() walks
 * them (stride 0: seed only); how many (pos: room for size). */
int topoml__torus_anchors(int size, int stride, int seed, int *pos);

/*
 * The nodes of the box at o of sides s (s[d] <= t->dims[d]), z, then y,
 * then x outermost first; only those in set unless set is NULL.  nodes
 * has room for the box's volume; returns how many.
 */
int topoml__torus_box_nodes(const topoml_topo_t *t, const int o[3],
			    const int s[3], hwloc_const_bitmap_t set,
			    int *nodes);

/*
 * Is some box of exactly n cells all free nodes of avail (any sides
 * a x b x c = n within the dims, any origin, wrapping where the torus
 * wraps)?  1 or 0; -1 when out of memory.
 */
int topoml__torus_free_box(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			   int n);

/*
 * The tight fit of the box (o, s), the one metric of every box search:
 * busy cells (busy: the prefix sums of the not-free cells, holes
 * included) on the six faces just outside it, a mesh edge counting as
 * busy (a side that wraps onto itself has no face).  The more, the fewer
 * free cells the box cuts off from the rest.  d: the dims, w: which axes
 * wrap.
 */
int topoml__torus_contact(const struct topoml_psum *busy, const int d[3],
			  const bool w[3], const int o[3], const int s[3]);

/* The largest fit a box of sides s can have: busy all round. */
static inline int topoml__torus_fit_max(const int d[3], const bool w[3],
					const int s[3])
{
	int m = 0;

	/* two faces an axis, of the other two sides (no division: the
	 * searches ask it per candidate) */
	for (int k = 0; k < 3; k++)
		if (!w[k] || s[k] < d[k])
			m += 2 * s[k ? 0 : 1] * s[k == 2 ? 1 : 2];
	return m;
}

/* topoml__torus_contact on c's busy cells: the same count, cell by cell
 * for a small box when c has its cells. */
int topoml__torus_fit(const struct topoml_torus_cells *c, const int d[3],
		      const bool w[3], const int o[3], const int s[3]);
/*
 * The same when it is above floor, else -1: a small box's faces read
 * only until too few busy cells are left to pass floor (floor
 * topoml__torus_fit_max() - 1: is the box busy all round?).
 */
int topoml__torus_fit_above(const struct topoml_torus_cells *c,
			    const int d[3], const bool w[3], const int o[3],
			    const int s[3], int floor);

/*
 * One candidate box of a search, from either source of shapes: topoml's
 * own enumeration (place_torus.c) or torus3d's listed shapes at their
 * anchors (place_torus3d.c).  The first member of each source's own
 * candidate struct, which holds the source's other keys.
 */
struct topoml_torus_cand {
	int o[3];
	const int *s;		/* its sides */
	int fit;		/* topoml__torus_contact(); -1: not yet */
	bool taken;		/* picked already */
};

/*
 * The source's keys, compared as qsort's (lower first) on two of its
 * candidates: before the fit, and after it to break ties (NULL: none);
 * the list's order last.
 */
struct topoml_torus_rank {
	int (*before)(const void *a, const void *b);
	int (*after)(const void *a, const void *b);
};

/*
 * The box search's choice: the best candidate not taken yet of the nc in
 * cv (each size bytes, starting with a struct topoml_torus_cand) on t
 * with cells, by r's keys before the fit, then the tightest fit, then
 * r's keys after it, then the list's order; marked taken.  The fit is
 * computed only for the candidates best by the keys before it.  Its
 * index, or -1 when every candidate is taken.  Called again for the next
 * best (later attempts, several proposals).
 */
int topoml__torus_pick(const topoml_topo_t *t,
		       const struct topoml_torus_cells *cells, void *cv,
		       size_t size, int nc, const struct topoml_torus_rank *r);

#endif
