/*
 * The baselines' engines (Slurm's, Kueue's) inside libtopoml_sim (see
 * place/common/place_int.h for what every engine gets).  Not part of the
 * public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SIM_BASELINES_H
#define TOPOML_SIM_BASELINES_H

#include "place/common/place_int.h"

/* Slurm 22.05 cons_tres _eval_nodes_topo() / _eval_nodes_dfly():
 * place_slurm.c. */
int topoml__place_slurm_tree(const struct place_in *in, bool dragonfly,
			     struct topoml_placement *out, char *why,
			     size_t whylen);
/* Slurm 26.05 topology/block's eval_nodes_block(): slurm_block.c. */
int topoml__place_slurm_block(const struct place_in *in,
			      struct topoml_placement *out, char *why,
			      size_t whylen);
/* Volcano's network-topology-aware scheduling: volcano.c. */
int topoml__place_volcano(const struct place_in *in,
			  struct topoml_placement *out, char *why,
			  size_t whylen);
/* The job's highestTierAllowed there for n nodes (*hard: mode hard,
 * else soft: the cluster top's tier), or -1 when out of memory. */
int topoml__volcano_tier(const topoml_topo_t *t, int n, bool *hard);

/*
 * Kueue's Topology Aware Scheduling (kueue_tas.c): kueue-bestfit,
 * kueue-leastfree, kueue-balanced.  A request as a Kueue PodSet writes
 * it: its kind, its level counted up from hostname (1: rack, 2: block),
 * and whether the TASBalancedPlacement gate is on (it acts on preferred
 * requests only).
 */
enum topoml_kueue_algo {
	TOPOML_KUEUE_BESTFIT,
	TOPOML_KUEUE_LEASTFREE,
	TOPOML_KUEUE_BALANCED,
};
enum topoml_kueue_kind {
	TOPOML_KUEUE_PREFERRED,
	TOPOML_KUEUE_REQUIRED,
	TOPOML_KUEUE_UNCONSTRAINED,
};
struct topoml_kueue_req {
	enum topoml_kueue_kind kind;
	int level;
	bool balanced;
};
/* The policy's request for the job (see kueue_tas.c), then Kueue's. */
int topoml__place_kueue(const struct place_in *in,
			enum topoml_kueue_algo algo,
			struct topoml_placement *out, char *why,
			size_t whylen);
/* The same for a job that shares nodes (in->req->units > 0): the pods
 * (units) Kueue gives each node of out->nodes into units[0..out->n)
 * (room for every node of the topology). */
int topoml__place_kueue_units(const struct place_in *in,
			      enum topoml_kueue_algo algo,
			      struct topoml_placement *out, int *units,
			      char *why, size_t whylen);
/* Kueue's assignment for request rq (the unit tests' entry). */
int topoml__kueue_place(const struct place_in *in,
			const struct topoml_kueue_req *rq,
			struct topoml_placement *out, char *why,
			size_t whylen);

#endif
