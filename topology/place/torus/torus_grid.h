/*
 * The cells of a 3D torus (or mesh) for its box searches: topoml's own
 * boxes (place_torus.c), Slurm 26.05 torus3d's listed shapes
 * (place_torus3d.c) and the simulator's "could a free box have been
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
};

/* required may be NULL when nreq is 0.  0, or -1 when out of memory. */
int topoml__torus_cells(struct topoml_torus_cells *c, const topoml_topo_t *t,
			hwloc_const_bitmap_t avail,
			hwloc_const_bitmap_t required, int nreq);
void topoml__torus_cells_free(struct topoml_torus_cells *c);

/* Is the box at o of sides s all free nodes, with every required node? */
static inline bool topoml__torus_box_free(const struct topoml_torus_cells *c,
					  const int o[3], const int s[3])
{
	return !topoml__psum_wrap(&c->busy, o, s) &&
	       (!c->nreq || topoml__psum_wrap(&c->req, o, s) == c->nreq);
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
 * How tightly the box (o, s) fits: busy cells (busy: the prefix sums of
 * the not-free cells, holes included) on the six faces just outside it,
 * a mesh edge counting as busy (a side that wraps onto itself has no
 * face).  The more, the fewer free cells the box cuts off.  d: the dims,
 * w: which axes wrap.
 */
int topoml__torus_contact(const struct topoml_psum *busy, const int d[3],
			  const bool w[3], const int o[3], const int s[3]);

/*
 * The opposite view, for the box chosen among torus3d's shapes: the
 * box's nodes that have a torus neighbour outside the box whose node is
 * not in avail (the jobs that would share links with this one; wrapping
 * on every axis, a side of the whole axis has no neighbour outside).
 */
int topoml__torus_touching(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			   const int o[3], const int s[3]);

#endif
