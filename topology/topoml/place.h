/*
 * libtopoml's public API (topoml.h), placement: the policies the core
 * places, a job's request, the placement and its score, the hot spares
 * rule of --ml-spares.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_PLACE_H
#define TOPOML_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topoml/model.h"
#include "topoml/contract.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- placement (issue "Placement engine") -------------------------- */

/*
 * The policies the core places: topoml's engine and two of Slurm's
 * algorithms it shares its code with.  The ids between them (1, 2, 5, 6)
 * are the Slurm baselines of libtopoml_sim (sim.h), which
 * topoml_sim_register_baselines() hands topoml_place(), names included.
 */
enum topoml_policy {
	TOPOML_POLICY_TOPOML = 0,	/* the engine */
	TOPOML_POLICY_SLURM_HILBERT = 3,	/* topology/3d_torus + best fit */
	TOPOML_POLICY_LINEAR = 4,	/* plain linear best fit */
};

struct topoml_place_req {
	int nnodes;
	hwloc_const_bitmap_t avail;	/* nodes the job may use now */
	hwloc_const_bitmap_t required;	/* must be included, or NULL */
	enum topoml_hint hint;
	/* job id using each node (0 = idle), or NULL: for isolate/sharing */
	const uint32_t *owner;
	int max_leaves;			/* --switches=N, 0 = no limit */
	bool df_spread_alltoall;	/* site choice for dragonfly */
	/* blocks: only aligned groups of the job's level, as Slurm's
	 * topology/block, which refuses the others (select/topoml under
	 * it); false: a larger group rather than a wait */
	bool block_aligned;
	/* the nodes the job may ever use (its partition), or NULL: every
	 * node.  Blocks: a crowded row holds a job for an aligned group
	 * only where the partition has one (place/place_block.c) */
	hwloc_const_bitmap_t universe;
	/* site choice for tori (TorusPlacement=curve): every job along
	 * Slurm's Hilbert curve, power-of-two sizes by buddy best fit over
	 * the curve's aligned windows (place/place_linear.c) */
	bool torus_curve;
	/* a share of a job the caller has already admitted (a hybrid
	 * job's part): blocks: no crowded row's hold, and more blocks than
	 * the fewest that hold it where those have no room */
	bool admitted;
	/* topoml_place: 0 = best, 1 = next best, ... (topoml_place_ranked
	 * gives them all in one call and ignores it) */
	int attempt;
	/* the caller reads no score (select/topoml): skip the scoring */
	bool unscored;
	/*
	 * Slurm's scheduling weight per node (Weight= and the penalty of
	 * powered-down nodes), lower used first; only the Slurm baselines
	 * read it.  NULL = all equal.
	 */
	const uint64_t *weight;
	/*
	 * Jobs that share nodes (issue 18).  units > 0: the job needs units
	 * (CPUs, or GPUs) in all on at least nnodes nodes, not whole nodes;
	 * free_units[i] is what node i still offers (0: the node cannot
	 * take the job).  partial: nodes of avail that other jobs already
	 * use in part (NULL = none).  Such a job goes onto partly used
	 * nodes first (best fit), then onto the fewest and most used
	 * leaves, keeping whole idle nodes and leaves for jobs that need
	 * them.  units 0: whole nodes, as before.
	 */
	uint32_t units;
	const uint32_t *free_units;
	hwloc_const_bitmap_t partial;
};

struct topoml_score {
	double ring_cost;		/* sum of hops, ring closed */
	double ring_lower_bound;
	int span;			/* leaves, groups, or box volume */
	int span_lower_bound;
	int global_hops;		/* dragonfly ring global-link hops */
	double mean_pair_hops;		/* mean over all rank pairs */
	int largest_free_after;		/* fragmentation: cost/cost.c */
	/* The same bounds for the nodes of avail only: what the best
	 * placement possible now reaches (= the above without avail). */
	double ring_lower_bound_free;
	int span_lower_bound_free;
	/* Leaves (routers) that were whole and idle (every node in avail,
	 * none partial) and that the placement uses only in part: they no
	 * longer hold a job of a whole leaf.  Set by topoml_place. */
	int idle_leaves_broken;
	/* NVLink domains (blocks) used, their lower bound for the job's
	 * size, and ring steps that cross from one domain to another (or
	 * to a node of none); 0 without domains. */
	int nvl_span;
	int nvl_span_lower_bound;
	int nvl_crossings;
};

struct topoml_placement {
	int n;
	int *nodes;			/* ring order */
	struct topoml_score score;
};

/* 0 on success; -1 with the reason in why when the job cannot be placed. */
int topoml_place(const topoml_topo_t *t, enum topoml_policy policy,
		 const struct topoml_place_req *req,
		 struct topoml_placement *out, char *why, size_t whylen);
/*
 * Up to k distinct placements, best first (out[0] is topoml_place's
 * choice, out[i] its attempt i), from one pass over the engine's
 * candidates.  Returns how many were filled (out[n..k) zeroed; clear
 * each), or -1 with the reason in why when the job cannot be placed.
 */
int topoml_place_ranked(const topoml_topo_t *t, enum topoml_policy policy,
			const struct topoml_place_req *req, int k,
			struct topoml_placement *out, char *why,
			size_t whylen);
void topoml_placement_clear(struct topoml_placement *p);
/* Idle leaves broken by nodes (see struct topoml_score); partial may be
 * NULL. */
int topoml_idle_leaves_broken(const topoml_topo_t *t,
			      hwloc_const_bitmap_t avail,
			      hwloc_const_bitmap_t partial, const int *nodes,
			      int n);
/* Fill p->score for p->nodes (in their order) against avail. */
void topoml_score(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		  struct topoml_placement *p);
/* Fragmentation of a free set: the largest job placeable at the best level
 * (one leaf / subtree / group / box) on the nodes of avail. */
int topoml_largest_free(const topoml_topo_t *t, hwloc_const_bitmap_t avail);
/* Reorder nodes into the engine's ring order (used by rank ordering). */
void topoml_ring_order(const topoml_topo_t *t, int *nodes, int n);

const char *topoml_hint_name(enum topoml_hint h);
int topoml_hint_parse(const char *s, enum topoml_hint *h);

/* Names of the core's policies, and of the baselines once registered
 * ("unknown", -1 otherwise). */
const char *topoml_policy_name(enum topoml_policy p);
int topoml_policy_parse(const char *s, enum topoml_policy *p);

/*
 * Placement rules of --ml-spares (the contract's number, contract.h; the
 * codec's spares=K, jobcomment.h): which nodes of a placement are a job's
 * hot spares.  select/topoml applies them when it publishes a placement;
 * the SystemComment only records the outcome (the last K of order=).
 */
/*
 * Spares of a job placed with its workers: nodes[0..n) in ring order is
 * reordered so that k nodes come last, taken from the leaf (dragonfly
 * group; torus: the ring's end) that holds most of the job's nodes, then
 * the next fullest, the latest in ring order first; the workers keep
 * their ring order (a subsequence of a ring is a ring).  A spare then
 * tends to share a leaf with the worker it replaces.  Returns k, or 0
 * (nothing moved) when k < 1 or k >= n.
 */
int topoml_spares_last(const topoml_topo_t *t, int *nodes, int n, int k);

/*
 * The workers of a placement of n nodes, k of them spares, as
 * select/topoml's _publish finds them: nodes[0..n) put in ring order,
 * then topoml_spares_last.  The workers are nodes[0..return value), in
 * ring order; the spares follow.
 */
int topoml_spares_workers(const topoml_topo_t *t, int *nodes, int n,
			  int k);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_PLACE_H */
