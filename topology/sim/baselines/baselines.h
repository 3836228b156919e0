/*
 * The Slurm baselines' engines inside libtopoml_sim (see
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

#endif
