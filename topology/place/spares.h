/*
 * Placement rules of --ml-spares (the contract's number, contract.h; the
 * codec's spares=K, jobcomment.h): which nodes of a placement are a job's
 * hot spares.  select/topoml applies them when it publishes a placement;
 * the SystemComment only records the outcome (the last K of order=).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPARES_H
#define TOPOML_SPARES_H

struct topoml_topo;
struct topoml_place_req;
struct topoml_parallel;
struct topoml_placement;

/*
 * Spares of a job placed with its workers: nodes[0..n) in ring order is
 * reordered so that k nodes come last, taken from the leaf (dragonfly
 * group; torus: the ring's end) that holds most of the job's nodes, then
 * the next fullest, the latest in ring order first; the workers keep
 * their ring order (a subsequence of a ring is a ring).  A spare then
 * tends to share a leaf with the worker it replaces.  Returns k, or 0
 * (nothing moved) when k < 1 or k >= n.
 */
int topoml_spares_last(const struct topoml_topo *t, int *nodes, int n, int k);

/*
 * The workers of a placement of n nodes, k of them spares, as
 * select/topoml's _publish finds them: nodes[0..n) put in ring order,
 * then topoml_spares_last.  The workers are nodes[0..return value), in
 * ring order; the spares follow.
 */
int topoml_spares_workers(const struct topoml_topo *t, int *nodes, int n,
			  int k);

/*
 * topoml_hybrid_rank (topoml.h) for a job with `spares` spares among
 * its req->nnodes nodes: p is sized for the workers (nnodes - spares
 * nodes), and each of the k candidates is priced on the workers that
 * topoml_spares_workers keeps of it; they come back first, in the order
 * their ranks should take, the spares last.  No candidate built for the
 * pipeline stages is added when spares > 0.  spares == 0 is
 * topoml_hybrid_rank; spares >= nnodes leaves cand as it is.  w: the
 * TOPOML_KIND_COUNT weights.  0, or -1 out of memory.
 * (place_hybrid.c)
 */
int topoml_hybrid_rank_spares(const struct topoml_topo *t,
			      const struct topoml_place_req *req,
			      const struct topoml_parallel *p,
			      int tasks_per_node, const double *w,
			      struct topoml_placement *cand, int k, int spares);

#endif
