/*
 * Internal interface between the placement dispatcher (place.c), the
 * per-family engines (place_fattree.c, place_dragonfly.c, place_torus.c),
 * Slurm's baselines (sim/: libtopoml_sim) and the shared helpers below
 * the engines (common/candidates.c, common/ring.c).
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_PLACE_INT_H
#define TOPOML_PLACE_INT_H

#include "topoml.h"
#include "model/model_int.h"

/*
 * What every engine gets: the request, checked and normalised by
 * topoml_place() (avail includes required; required may be empty, never
 * NULL).
 */
struct place_in {
	const topoml_topo_t *t;
	const struct topoml_place_req *req;
	hwloc_const_bitmap_t avail;
	hwloc_const_bitmap_t required;
	int nreq;			/* weight of required */
	int n;				/* nodes wanted */
	int k;				/* ranked engines: placements wanted */
};

/*
 * Engines: 0 and out->nodes (ring order) filled, or -1 with why.  The
 * ranked ones (fat tree, dragonfly, block) instead fill out[0..in->k)
 * with distinct placements, best first, from one pass over their
 * candidates, and return how many (>= 1), or -1 with why.
 */
int topoml__place_fat_tree(const struct place_in *in,
			   struct topoml_placement *out, char *why,
			   size_t whylen);
int topoml__place_dragonfly(const struct place_in *in,
			    struct topoml_placement *out, char *why,
			    size_t whylen);
int topoml__place_torus(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen);
/* Slurm's _eval_nodes() in node index order or along topology/3d_torus's
 * Hilbert curve (place_linear.c): the linear and slurm-hilbert policies,
 * and a fallback of topoml's torus engine. */
int topoml__place_slurm_linear(const struct place_in *in, bool hilbert,
			       struct topoml_placement *out, char *why,
			       size_t whylen);
/*
 * The one _eval_nodes() (place_linear.c) behind them and the simulator's
 * jobs by CPUs (sim/sim.c): over the nodes in order[0..nn), by nodes
 * (cpus NULL: one CPU a node) or by CPUs (cpus: avail_cpu_per_node).
 * The caller sets all but n; inmap (by position, nn entries, zeroed)
 * gets the nodes taken, required ones first; nodes/units (or NULL) the
 * nodes in the order taken and their CPUs.  0 when they fit, 1 when
 * not, -1 when out of memory.
 */
struct topoml_eval_nodes {
	const int *order;
	int nn;
	hwloc_const_bitmap_t avail;
	hwloc_const_bitmap_t required;	/* NULL or empty: none */
	const uint64_t *weight;		/* NULL: equal */
	const uint32_t *cpus;
	long rem_cpus;
	int rem_nodes;
	char *inmap;
	int *nodes;
	int *units;
	int n;
};
int topoml__eval_nodes(struct topoml_eval_nodes *e);
/*
 * The same from the runs of usable nodes the caller found: run[2k] ..
 * run[2k + 1], the positions of the k-th (first to last, inclusive, in
 * order), nr of them; no node required nor weighed.  order may be NULL
 * (node index order) and inmap too (runs are taken once each).
 */
int topoml__eval_runs(struct topoml_eval_nodes *e, const int *run, int nr);
/*
 * The runs of set bits among the first n of w (a bit a position, bit b
 * of word b / bits-per-long): their first and last bits into run, two
 * ints a run (room for n / 2 + 1 runs); how many.
 */
int topoml__bit_runs(const unsigned long *w, int n, int *run);
/* cons_tres's _cpus_to_use() for one node wanted: its avail CPUs, no
 * more than the job's rem still needs, one at least. */
static inline long topoml__cpus_to_use(long avail, long rem)
{
	return avail > rem ? (rem > 1 ? rem : 1) : avail;
}
/* TorusPlacement=curve (place_linear.c): a power-of-two size in the
 * smallest all-free aligned window of the Hilbert curve that holds it,
 * else Slurm's best-fit run along the curve. */
int topoml__place_curve(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen);
/*
 * Slurm 26.05 topology/torus3d's boxes (t->torus3d's shapes, or a box of
 * every size): place_torus3d.c.  ml: topoml's ranking of the free boxes
 * (in->k of them); else torus3d's own choice (the slurm-torus3d baseline).
 */
int topoml__torus3d_boxes(const struct place_in *in, bool ml,
			  struct topoml_placement *out, char *why,
			  size_t whylen);
/* topoml's engine on a torus bound to torus3d (t->torus3d_only):
 * topoml__torus3d_boxes() with ml. */
int topoml__place_torus3d_topoml(const struct place_in *in,
				 struct topoml_placement *out, char *why,
				 size_t whylen);
/* Block topologies (t->nblocks): topoml's engine, place_block.c. */
int topoml__place_block(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen);
/* Slurm's _get_block_level(): the job's BlockSizes level (-1: the whole
 * row), and in *ll (may be NULL) the level below. */
int topoml__block_level(const topoml_topo_t *t, int n, int *ll);

/*
 * The Slurm baselines (slurm-tree, slurm-dragonfly, slurm-torus3d,
 * slurm-block) are in libtopoml_sim, which the plugins do not link:
 * topoml_place() calls them through fn, which
 * topoml_sim_register_baselines() (sim/baselines/baselines.c) sets.
 */
typedef int (*topoml__baseline_fn)(const struct place_in *in,
				   enum topoml_policy policy,
				   struct topoml_placement *out, char *why,
				   size_t whylen);
struct topoml__baselines {
	topoml__baseline_fn place;
	/* the name of policy p, NULL when p is no baseline */
	const char *(*name)(enum topoml_policy p);
	/* a baseline's name (or Slurm's for it) as its id: 0, or -1 */
	int (*parse)(const char *s, enum topoml_policy *p);
};
void topoml__register_baselines(const struct topoml__baselines *b);
/* Jobs that share nodes (req->units > 0), any family: place_shared.c. */
int topoml__place_shared(const struct place_in *in,
			 struct topoml_placement *out, char *why,
			 size_t whylen);
/* Last resort of every engine: the most compact free set. */
int topoml__place_compact(const struct place_in *in,
			  struct topoml_placement *out, char *why,
			  size_t whylen);

/* |a & b| without allocating. */
int topoml__and_weight(hwloc_const_bitmap_t a, hwloc_const_bitmap_t b);
/* Growing arrays: topoml__grow() in util/util.h. */

/* Free nodes per leaf, fewest items holding a need: model/model_int.h. */

/*
 * Distinct candidates for a ranked list: returns true when set differs from
 * every set seen before (and remembers it).
 */
/*
 * A busy node's job and its unit (leaf, group): mark[unit] |= bit for
 * every unit holding a job that other units hold too.  Open addressing
 * on the job id (no sort: thousands of pairs on a large machine).  0, or
 * -1 when out of memory.
 */
struct topoml_job_unit {
	uint32_t job;
	int unit;
};
int topoml__mark_multi_unit(const struct topoml_job_unit *p, int np,
			    unsigned char *mark, unsigned char bit);
int topoml__df_shared_groups(const topoml_topo_t *t, const uint32_t *owner,
			     hwloc_const_bitmap_t avail, unsigned char *mark,
			     unsigned char bit);

struct place_seen {
	int n;
	hwloc_bitmap_t *sets;
};
bool topoml__seen_add(struct place_seen *s, hwloc_const_bitmap_t set);
void topoml__seen_clear(struct place_seen *s);

/* Fill out->nodes from a set, in the engine's ring order. */
int topoml__placement_from_set(const topoml_topo_t *t,
			       hwloc_const_bitmap_t set,
			       struct topoml_placement *out);

/*
 * Tight choice of exactly k items (free counts sorted by decreasing free)
 * that together hold need: each step takes the smallest item that still
 * lets the largest remaining ones finish, so that the big (whole, empty)
 * items stay free for later jobs.  take[i] gets the count used from item
 * i (0 = unused).  Returns 0, -1 when k items cannot hold need.
 */
int topoml__tight_pick(const int *freev, int nitems, int k, int need,
		       int *take);

/*
 * Choose among items (leaves, routers, groups) for need nodes beyond the
 * required ones: items holding required nodes (reqc > 0) are always used
 * and filled first; then the fewest other allowed items (ok[i] nonzero,
 * NULL = all), picked tightly; among items of equal free count those with
 * ok[i] == 2 are taken first.  maxv bounds freev (for a counting sort).  Returns the
 * number of items used, or -1; take (may be NULL: count only) gets the
 * nodes used per item, required ones included.
 */
int topoml__choose(const int *freev, const int *reqc,
		   const unsigned char *ok, int n, int need, int maxv,
		   int *take);

/*
 * Up to WANT of switch SW's nodes that IN allows and SET lacks, in the
 * switch's order, added to SET (after topoml__choose said how many per
 * switch).  Returns how many are still wanted.
 */
int topoml__take_switch(const struct place_in *in, int sw, int want,
			hwloc_bitmap_t set);

/* Torus geometry: model/model_int.h (model/geom.c). */

/*
 * The node-sharing torus search (place_shared.c) foresees a box of this
 * many positions or more from sums, listing its nodes only if it is
 * scored: the same placements, faster (tests set it to compare).
 */
extern int topoml__shared_lazy_vol;
/*
 * Its rows of box sums mod 2^16 (place_shared.c; p16: its unit sums mod
 * 2^16, topoml_psum's layout, padded by 16): hits' bit y (of ny rows of
 * the plane z) set where a box of sides sd at one of the first n origins
 * of row (y, z), wrapped or not, holds units with less than w spare, its
 * boxes holding fewer than 2^16.  wide: 16 sums to a vector where the
 * CPU has AVX2 (else 8, as without); topoml__shared_wide false: the
 * search reads 8.  -1: out of memory.
 */
int topoml__shared_rows16(const struct topoml_psum *g, const uint16_t *p16,
			  int z, const int sd[3], int n, int ny, long units,
			  long w, uint64_t *hits, bool wide);
extern bool topoml__shared_wide;

/* ---- ring order (ring.c) -------------------------------------------- */

/*
 * Ring order of torus nodes: a closed tour of their box (snake rows, a
 * Hamiltonian cycle where a side is even), 2-opt over holes.  In place.
 */
void topoml__torus_ring_order(const topoml_topo_t *t, int *nodes, int n);
/*
 * Its 2-opt on torus nodes in ring order: a segment reversed where that
 * shortens the ring, the first such in a window of 64 positions, until
 * none does or 2^17 pair tests are spent.  In place.
 */
void topoml__ring_two_opt(const topoml_topo_t *t, int *nodes, int n);

#endif
