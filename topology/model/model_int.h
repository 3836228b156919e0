/*
 * Internal helpers shared by the model, generators, JSON loader and writers.
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_MODEL_INT_H
#define TOPOML_MODEL_INT_H

#include <stdint.h>

#include "topoml.h"

/*
 * Grow *arr (element size sz) so that index n fits, doubling at powers of
 * two: no capacity field needed.  Returns 0, or -1 when out of memory
 * (*arr unchanged).  The engine's one array-growth helper: *arr starts
 * NULL (or from an earlier call) and n is the count before appending.
 */
int topoml_grow(void **arr, int n, size_t sz);

/* "FILE:LINE" or "FILE" when line is 0, into buf. */
const char *topoml_where(const topoml_topo_t *t, int line, char *buf,
			 size_t len);

/* Slurm's hostlist parser refuses ranges of more than 64k hosts. */
#define TOPOML_HOSTLIST_MAX_RANGE 65536

/* Names as a compact Slurm host list, in chunks Slurm can read back;
 * sort = order does not matter (a set).  Caller frees. */
char *topoml_names_format(const char *const *names, int n, bool sort);

/*
 * What the host lists of one file (or one command line) may expand to:
 * "n[1-65536]" is 10 bytes for 64k names, so a bound on the input alone
 * bounds nothing.  Real sites stay far below (100k nodes, short names).
 */
#define TOPOML_HOSTLIST_MAX_HOSTS (1L << 18)
#define TOPOML_HOSTLIST_MAX_BYTES (16L << 20)
/* Bracket groups in one host name ("rack[1-4]-n[1-8]" has 2). */
/* Dragonfly groups a topology may have (matrices are ngroups^2). */
#define TOPOML_MAX_GROUPS 4096
#define TOPOML_HOSTLIST_MAX_GROUPS 16
struct topoml_hl_budget {
	long hosts;		/* host names left */
	long bytes;		/* bytes of host names left */
};
/* TOPOML_HOSTLIST_MAX_HOSTS; fuzz targets lower it to stay fast. */
extern long topoml_hostlist_max_hosts;
void topoml_hl_budget_init(struct topoml_hl_budget *b);

/* Slurm ranges one host name may expand to (see nodeset.c). */
#define TOPOML_HOSTLIST_MAX_TOKEN_RANGES 16384

/*
 * Call fn for every host of a Slurm host list string, in order, as
 * slurm_hostlist_create() and slurm_hostlist_shift() would give them, but
 * linear in the string, never leaking and never reaching libslurm's
 * fatal(); see nodeset.c.  b (NULL: a fresh budget) is charged.  -1 when
 * the string is refused (nothing called), with errno EINVAL (not a host
 * list Slurm accepts), EDOM (one Slurm would take only partly, dropping
 * hosts without a word), E2BIG (over the budget, TOPOML_HOSTLIST_MAX_GROUPS
 * or TOPOML_HOSTLIST_MAX_TOKEN_RANGES), ERANGE (a number of ULONG_MAX or
 * more, on which Slurm loops), EILSEQ (a line break or other white space
 * but blank and tab in a name: Slurm may merge such a name with the one
 * before) or ENOMEM; else 0 or the first non-zero value fn returned.
 */
int topoml_hostlist_foreach(const char *hostlist, struct topoml_hl_budget *b,
			    int (*fn)(const char *host, void *arg), void *arg);
/* "" or " (why)" for an errno of topoml_hostlist_foreach(), for messages. */
const char *topoml_hostlist_why(int e);

/* ---- name -> index maps (model.c) ---------------------------------- */

/* FNV-1a of a string: the hash of every name map of the engine. */
uint32_t topoml_hash(const char *s);
/* Open addressing; keys are not copied (they must outlive the map). */
struct topoml_name_index *topoml_index_new(void);
void topoml_index_free(struct topoml_name_index *ix);
/* The value put for name, or -1 (also for a NULL map or name). */
int topoml_index_find(const struct topoml_name_index *ix,
		      const char *name);
/* 0, or -1 when out of memory (the map unchanged). */
int topoml_index_put(struct topoml_name_index *ix, const char *key,
		     int val);

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
static inline int topoml_grid_pos(const int dims[3], int x, int y, int z)
{
	return x + dims[0] * (y + dims[1] * z);
}

static inline void topoml_grid_coord(const int dims[3], long p, int c[3])
{
	c[0] = (int)(p % dims[0]);
	c[1] = (int)(p / dims[0] % dims[1]);
	c[2] = (int)(p / ((long)dims[0] * dims[1]));
}

/* Position of coordinates c in t->coord_node. */
static inline int topoml__torus_pos(const topoml_topo_t *t, const int c[3])
{
	return topoml_grid_pos(t->dims, c[0], c[1], c[2]);
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
 * them (see tests/topology/check_geom.c).
 */
int topoml_axis_extent(const char *occ, int size, bool wrap,
		       bool tie_wraps, int *start);
/*
 * Smallest wrap-aware box around nodes[0..n) (or the nodes of set): its
 * volume (0 for no nodes), start and extent per dimension as
 * topoml_axis_extent() gives them; -1 when out of memory.
 */
long topoml_torus_box(const topoml_topo_t *t, const int *nodes, int n,
		      bool tie_wraps, int start[3], int ext[3]);
long topoml_torus_box_set(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			  bool tie_wraps, int start[3], int ext[3]);
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
 * Ring order of torus nodes: a closed tour of their box (snake rows, a
 * Hamiltonian cycle where a side is even), 2-opt over holes.  In place.
 */
void topoml__torus_ring_order(const topoml_topo_t *t, int *nodes, int n);

/*
 * 3D prefix sums of a 0/1 grid of d[0] x d[1] x d[2] cells (x fastest,
 * as topoml_grid_pos): the count inside any box in O(1), for the box
 * searches of the torus engines.  topoml_psum_box: cells in [lo, hi) per
 * axis, inside the grid; topoml_psum_wrap: the box at o (o[d] < d[d]) of
 * sides s (s[d] <= d[d]) that wraps round the grid's ends (split into up
 * to 8 inner boxes).
 */
struct topoml_psum {
	int d[3];
	int *p;		/* (d[0]+1) x (d[1]+1) x (d[2]+1); NULL: none */
};

int topoml_psum_build(struct topoml_psum *g, const int d[3],
		      const char *cell);
void topoml_psum_free(struct topoml_psum *g);

static inline size_t topoml__psum_at(const struct topoml_psum *g, int x,
				     int y, int z)
{
	return ((size_t)z * (g->d[1] + 1) + y) * (g->d[0] + 1) + x;
}

static inline int topoml_psum_box(const struct topoml_psum *g,
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

int topoml_psum_wrap(const struct topoml_psum *g, const int o[3],
		     const int s[3]);

#endif
