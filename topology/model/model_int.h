/*
 * Internal helpers shared by the model, generators, JSON loader and writers.
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_MODEL_INT_H
#define TOPOML_MODEL_INT_H

#include <stdint.h>

#include "topoml.h"
#include "util/util.h"

/* "FILE:LINE" or "FILE" when line is 0, into buf. */
const char *topoml__where(const topoml_topo_t *t, int line, char *buf,
			 size_t len);

/* Dragonfly groups a topology may have (matrices are ngroups^2). */
#define TOPOML_MAX_GROUPS 4096

/*
 * Free nodes of every leaf / router (indexed by switch; 0 for upper
 * switches), counted from one pass over the words of avail.  Caller frees.
 */
int *topoml__leaf_free(const topoml_topo_t *t, hwloc_const_bitmap_t avail);
/* Fewest of the items (sorted by decreasing free) holding need, or -1. */
int topoml__min_items(const int *freev, int nitems, int need);

/* ---- torus geometry (geom.c) ---------------------------------------- */

/*
 * Position of (x, y, z) in a grid of dims stored x fastest (a torus's
 * coord_node, Slurm torus3d's cells), and back.
 */
static inline int topoml__grid_pos(const int dims[3], int x, int y, int z)
{
	return x + dims[0] * (y + dims[1] * z);
}

static inline void topoml__grid_coord(const int dims[3], long p, int c[3])
{
	c[0] = (int)(p % dims[0]);
	c[1] = (int)(p / dims[0] % dims[1]);
	c[2] = (int)(p / ((long)dims[0] * dims[1]));
}

/* Position of coordinates c in t->coord_node. */
static inline int topoml__torus_pos(const topoml_topo_t *t, const int c[3])
{
	return topoml__grid_pos(t->dims, c[0], c[1], c[2]);
}

/*
 * Smallest interval of one axis of size coordinates holding every used
 * one (occ[c] nonzero), cyclic when wrap: its length, and its first
 * coordinate in *start.  An empty set has extent 0 and start 0.  The
 * interval skips the largest gap of unused coordinates (the lowest of
 * equal inner gaps).  Where an inner gap ties with the gap round the end
 * of the axis (a full axis: both 0), the extent is the same either way
 * and tie_wraps says where it starts: after the inner gap (true: what the
 * placement engine's ring order and box checks use) or at the lowest used
 * coordinate (false: the simulator's sharing regions).  Two callers, two
 * answers, kept so that no figure moves; one rule would change one of
 * them (see tests/model/check_geom.c).
 */
int topoml__axis_extent(const char *occ, int size, bool wrap,
		       bool tie_wraps, int *start);
/*
 * Smallest wrap-aware box around nodes[0..n) (or the nodes of set): its
 * volume (0 for no nodes), start and extent per dimension as
 * topoml__axis_extent() gives them; -1 when out of memory.
 */
long topoml__torus_box(const topoml_topo_t *t, const int *nodes, int n,
		      bool tie_wraps, int start[3], int ext[3]);
long topoml__torus_box_set(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			  bool tie_wraps, int start[3], int ext[3]);
/* The bounds of n nodes on torus t: the smallest box of at least n
 * positions, and the shortest ring (n hops, one more for an odd ring on a
 * bipartite torus). */
int topoml__torus_span_lb(const topoml_topo_t *t, int n);
int topoml__torus_ring_lb(const topoml_topo_t *t, int n);
/*
 * Slurm's Hilbert curve (topology/3d_torus's nodes_to_hilbert_curve()):
 * every node of torus t with its position on the curve, in curve order
 * (pos ascending; node[] of t->nnodes each).  Slurm reads the coordinates
 * from the names' last three characters with 5 bits (coordinates < 32);
 * here they come from the model, with as many bits as the largest
 * dimension needs (5 for anything Slurm accepts: the same positions).
 * -1: out of memory.
 */
int topoml__hilbert_curve(const topoml_topo_t *t, uint64_t *pos, int *node);
/*
 * The same, computed once by topoml_finalize(): the nodes in curve order,
 * their positions in *pos when pos is not NULL; NULL if t is no torus.
 */
const int *topoml__torus_curve(const topoml_topo_t *t, const uint64_t **pos);

/*
 * Fat-tree: the class of leaf switch `leaf` at `level` (see model.c's
 * struct topoml_cache), -1 if t is no fat-tree.  *exact: two leaves'
 * common level is <= level exactly when their classes are equal; else
 * the switches do not nest that way at that level, and equal classes
 * only bound it.
 */
int topoml__leaf_class(const topoml_topo_t *t, int leaf, int level,
		       bool *exact);
/*
 * Dragonfly: the global hops between any two distinct groups when they
 * are all the same, else 0; *mean (if not NULL) their mean.
 */
int topoml__gdist_uniform(const topoml_topo_t *t, double *mean);

/*
 * 3D prefix sums of a 0/1 grid of d[0] x d[1] x d[2] cells (x fastest,
 * as topoml__grid_pos): the count inside any box in O(1), for the box
 * searches of the torus engines.  topoml__psum_box: cells in [lo, hi) per
 * axis, inside the grid; topoml__psum_wrap: the box at o (o[d] < d[d]) of
 * sides s (s[d] <= d[d]) that wraps round the grid's ends (split into up
 * to 8 inner boxes).
 */
struct topoml_psum {
	int d[3];
	int *p;		/* (d[0]+1) x (d[1]+1) x (d[2]+1); NULL: none */
};

int topoml__psum_build(struct topoml_psum *g, const int d[3],
		      const char *cell);
/* The same in two steps, for cells the caller adds itself (ints whose
 * sum stays an int): zeroed sums, the value of cell (x, y, z) added at
 * topoml__psum_at(g, x + 1, y + 1, z + 1), then the sums made. */
int topoml__psum_alloc(struct topoml_psum *g, const int d[3]);
void topoml__psum_finish(struct topoml_psum *g);
/* The same where each row already holds its running sum along x (made
 * while the cells are added); p16 (if not NULL, as many cells) gets the
 * sums mod 2^16 too. */
void topoml__psum_finish_yz(struct topoml_psum *g, uint16_t *p16);
void topoml__psum_free(struct topoml_psum *g);

static inline size_t topoml__psum_at(const struct topoml_psum *g, int x,
				     int y, int z)
{
	return ((size_t)z * (g->d[1] + 1) + y) * (g->d[0] + 1) + x;
}

static inline int topoml__psum_box(const struct topoml_psum *g,
				  const int lo[3], const int hi[3])
{
	const int *p = g->p;

	return p[topoml__psum_at(g, hi[0], hi[1], hi[2])] -
	       p[topoml__psum_at(g, lo[0], hi[1], hi[2])] -
	       p[topoml__psum_at(g, hi[0], lo[1], hi[2])] -
	       p[topoml__psum_at(g, hi[0], hi[1], lo[2])] +
	       p[topoml__psum_at(g, lo[0], lo[1], hi[2])] +
	       p[topoml__psum_at(g, lo[0], hi[1], lo[2])] +
	       p[topoml__psum_at(g, hi[0], lo[1], lo[2])] -
	       p[topoml__psum_at(g, lo[0], lo[1], lo[2])];
}

int topoml__psum_wrap(const struct topoml_psum *g, const int o[3],
		     const int s[3]);

#endif
