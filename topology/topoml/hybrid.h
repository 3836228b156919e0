/*
 * libtopoml's public API (topoml.h), hybrid parallelism: --ml-parallel's
 * group sizes, the cost of a training step by traffic kind, and the
 * engine's placement and rank order of a hybrid job.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_HYBRID_H
#define TOPOML_HYBRID_H

#include <stdbool.h>
#include <stddef.h>

#include "topoml/model.h"
#include "topoml/contract.h"
#include "topoml/place.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- hybrid parallelism (issue 14 items 1, 2: contract/parallel.c) -- */

/* Syntax only: sizes 1..65536, each key once.  0, or -1 with err. */
int topoml_parallel_parse(const char *s, struct topoml_parallel *p,
			  char *err, size_t errlen);
/* Against the task count: the product divides it, dp is the rest (an
 * explicit dp must match), ep divides cp * dp.  0, or -1 with err. */
int topoml_parallel_resolve(struct topoml_parallel *p, int ntasks,
			    char *err, size_t errlen);
/* "tp=8,pp=2,dp=4,ep=1,cp=1" */
void topoml_parallel_format(const struct topoml_parallel *p, char *buf,
			    size_t len);
/* Coordinates of a rank (any pointer may be NULL). */
void topoml_parallel_coords(const struct topoml_parallel *p, int rank,
			    int *tp, int *cp, int *dp, int *pp);
/* The rank of coordinates: the inverse of topoml_parallel_coords. */
int topoml_parallel_rank(const struct topoml_parallel *p, int tp, int cp,
			 int dp, int pp);

/*
 * Cost of one training step by traffic kind (cost/cost_hybrid.c): TP and CP
 * ring all-reduce within their groups, EP all-to-all, DP ring all-reduce,
 * PP point-to-point between neighbouring stages.  Ranks sit on nodes in
 * ring order, tasks_per_node each (rank r on nodes[r / tasks_per_node]).
 */
enum topoml_kind {
	TOPOML_KIND_TP = 0, TOPOML_KIND_CP, TOPOML_KIND_EP, TOPOML_KIND_DP,
	TOPOML_KIND_PP, TOPOML_KIND_COUNT
};

struct topoml_kind_cost {
	long steps;		/* transfers between two ranks, per step */
	long off_node;		/* of those: between nodes */
	long cross_leaf;	/* between leaves / routers */
	long cross_top;		/* through the top level (fat tree) or
				 * between dragonfly groups */
	long cross_nvl;		/* between NVLink domains (or to none) */
	long hops;		/* links crossed, summed */
};

struct topoml_hybrid_cost {
	struct topoml_kind_cost kind[TOPOML_KIND_COUNT];
	double weighted;	/* sum of weight[kind] * hops[kind] */
};

/* Relative traffic per kind; the defaults (tp=16,cp=4,ep=4,dp=1,pp=2). */
void topoml_kind_weights_default(double w[TOPOML_KIND_COUNT]);
/* "tp=16,cp=4,ep=4,dp=1,pp=2": every kind, as the parser reads it back. */
void topoml_kind_weights_format(const double w[TOPOML_KIND_COUNT], char *buf,
				size_t len);
/* "tp=16,dp=1": the named weights (>= 0) replace those in w. */
int topoml_kind_weights_parse(const char *s, double w[TOPOML_KIND_COUNT],
			      char *err, size_t errlen);
const char *topoml_kind_name(enum topoml_kind k);
/* Tensor groups whose ranks are not all in one NVLink domain (0 without
 * domains). */
long topoml_hybrid_tp_split(const topoml_topo_t *t, const int *nodes, int n,
			    int tasks_per_node,
			    const struct topoml_parallel *p);
/* Tensor groups whose nodes are not all below one top-level switch
 * (fat-tree spine pod, dragonfly group); 0 where there is no top. */
long topoml_hybrid_tp_over_top(const topoml_topo_t *t, const int *nodes,
			       int n, int tasks_per_node,
			       const struct topoml_parallel *p);
/*
 * The engine's placement of a hybrid job (hybrid/place_hybrid.c; p resolved for
 * req->nnodes * tasks_per_node): of the engine's best candidates
 * (topoml_place_ranked), each with the job's count in every NVLink domain
 * evened out to whole tensor groups where free nodes allow, and one
 * built for the pipeline stages, the first by topoml_hybrid_rank; nodes
 * in the order its ranks take (topoml_hybrid_order), scored; its cost in
 * *cost (may be NULL).
 */
/*
 * The same choice over the k candidates of topoml_place_ranked: cand[0]
 * becomes the best, the rest follow by split tensor groups (one over the
 * top level counts twice), tensor and data-parallel transfers through the
 * top level, weighted cost, then the engine's rank.
 * Each candidate comes back evened out (its nodes may differ) and in the
 * order its ranks should take: the ring, or pipeline stages kept inside
 * top-level parts (topoml_hybrid_order).  cand[k - 1] may come back as a
 * different placement, built for the stages, its old nodes freed; the
 * caller owns and clears cand[0..k) as before.  Deterministic.  0, or -1
 * out of memory (cand unchanged).
 */
int topoml_hybrid_rank(const topoml_topo_t *t,
		       const struct topoml_place_req *req,
		       const struct topoml_parallel *p, int tasks_per_node,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_placement *cand, int k);
/*
 * topoml_hybrid_rank (above) for a job with `spares` spares among
 * its req->nnodes nodes: p is sized for the workers (nnodes - spares
 * nodes), and each of the k candidates is priced on the workers that
 * topoml_spares_workers keeps of it; they come back first, in the order
 * their ranks should take, the spares last.  No candidate built for the
 * pipeline stages is added when spares > 0.  spares == 0 is
 * topoml_hybrid_rank; spares >= nnodes leaves cand as it is.  w: the
 * TOPOML_KIND_COUNT weights.  0, or -1 out of memory.
 * (hybrid/place_hybrid.c)
 */
int topoml_hybrid_rank_spares(const topoml_topo_t *t,
			      const struct topoml_place_req *req,
			      const struct topoml_parallel *p,
			      int tasks_per_node, const double *w,
			      struct topoml_placement *cand, int k, int spares);
int topoml_place_hybrid(const topoml_topo_t *t,
			const struct topoml_place_req *req,
			const struct topoml_parallel *p, int tasks_per_node,
			const double w[TOPOML_KIND_COUNT],
			struct topoml_placement *out,
			struct topoml_hybrid_cost *cost, char *why,
			size_t whylen);
/*
 * A placed job's nodes in the order topoml_hybrid_rank gives a candidate
 * of exactly these nodes (select/topoml's order=, the simulator's
 * --hybrid figures); the set is unchanged.  0, or -1 (shape not fitting
 * n * tasks_per_node; nodes ring-ordered then).
 */
int topoml_hybrid_order(const topoml_topo_t *t, int *nodes, int n,
			int tasks_per_node, const struct topoml_parallel *p,
			const double w[TOPOML_KIND_COUNT]);
/*
 * The most ranks (nodes x tasks per node) of a job the engine prices by
 * traffic kind on t: 8 per node of the machine (a GPU each), at least
 * 65536 (1024 nodes of 64).  Each pricing pass is linear in the ranks
 * and a placement prices a few candidates, so this bounds what a user's
 * --ntasks-per-node (a 16-bit count) can make slurmctld spend; a larger
 * job keeps the engine's ring (topoml_hybrid_rank leaves it,
 * select/topoml treats it as no hybrid job).
 */
long topoml_hybrid_max_ranks(const topoml_topo_t *t);
/* -1 when nodes * tasks_per_node is not the job's rank count. */
int topoml_hybrid_cost(const topoml_topo_t *t, const int *nodes, int n,
		       int tasks_per_node, const struct topoml_parallel *p,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_hybrid_cost *out);

/*
 * What a site's bounded wait for a better hybrid placement (LocalityWait=
 * in topoml.conf, topoml sim --hybrid-wait) looks at: tensor groups split
 * over NVLink domains, and data-parallel transfers per step through the
 * top level (fat-tree core, between dragonfly groups).
 */
struct topoml_hybrid_locality {
	long tp_split;
	long dp_top;
};

/* Of nodes[0..n) in rank order.  0, or -1 (shape not fitting). */
int topoml_hybrid_locality(const topoml_topo_t *t, const int *nodes, int n,
			   int tasks_per_node, const struct topoml_parallel *p,
			   const double w[TOPOML_KIND_COUNT],
			   struct topoml_hybrid_locality *out);
/*
 * Of topoml_place_hybrid's placement of n nodes of this shape on `all`
 * (e.g. a partition's nodes, busy or not): the best the job can wait
 * for.  0, or -1 (no placement there).
 */
int topoml_hybrid_best_locality(const topoml_topo_t *t,
				hwloc_const_bitmap_t all, int n,
				const struct topoml_parallel *p,
				int tasks_per_node,
				const double w[TOPOML_KIND_COUNT],
				struct topoml_hybrid_locality *out);
/* Whether `now' splits more tensor groups or sends more DP traffic
 * through the top than `best': worth waiting for. */
bool topoml_hybrid_falls_short(const struct topoml_hybrid_locality *now,
			       const struct topoml_hybrid_locality *best);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_HYBRID_H */
