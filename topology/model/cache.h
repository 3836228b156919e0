/*
 * The query tables topoml_finalize() derives (finalize.c) and the queries
 * read (query.c); private to model/.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_MODEL_CACHE_H
#define TOPOML_MODEL_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml.h"

/* Query tables derived by topoml_finalize(). */
struct topoml_cache {
	/* fat-tree: per leaf, its ancestors sorted by level (self excluded) */
	int *anc_off;		/* nswitches + 1 offsets into anc */
	int *anc;
	hwloc_bitmap_t *anc_set; /* per leaf: self and ancestors */
	int nroots;
	int nparts;		/* connected parts of the switch graph */
	int nleaves;
	/*
	 * fat-tree: per level l and leaf a, cls[l * nswitches + a] names the
	 * leaves a reaches through switches of level <= l; cls_ok[l] when
	 * one switch covers each such class, so that two leaves' common
	 * level is <= l exactly when their classes agree (cost/cost_hybrid.c
	 * prices all-to-all traffic by class counts, not by pairs).
	 */
	int *cls;
	bool *cls_ok;
	/* dragonfly: global hops between groups (ngroups x ngroups); the
	 * one value between any two groups, or 0 when they differ */
	int *gdist;
	int gdist_uniform;
	double gdist_mean;
	/* torus: nodes along Slurm's Hilbert curve and their positions, so
	 * that no placement sorts every node */
	int *curve_node;
	uint64_t *curve_pos;
};

/* Free t's tables (t->cache NULL after). */
void topoml__cache_free(topoml_topo_t *t);

#endif
