/*
 * Slurm's switch table, one copy for every Slurm baseline of
 * libtopoml_sim (whole nodes, place_slurm.c; cores of shared nodes,
 * sim.c): switch_record_table as topology/tree builds it from
 * topology.conf (src/plugins/topology/tree/switch_record.c of Slurm
 * 22.05), and the helpers of cons_tres's job_test.c that read it.
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SIM_SLURM_SWITCH_H
#define TOPOML_SIM_SLURM_SWITCH_H

#include <stdint.h>

#include "topoml.h"

/* switches_dist's "no path" */
#define TOPOML_SL_INFINITE 0xffffffffu

/*
 * The topology file's switch list in file order; on a dragonfly model
 * the topology.conf a site writes for TopologyParam=dragonfly: routers
 * (leaves), then one switch per group, then one root.  Arrays of n + 1
 * entries (callers index n + 1 wide scratch arrays the same way).
 */
struct topoml_sl_switches {
	int n;
	int *level;
	int *parent;		/* Slurm's: 0 for a root (its quirk) */
	hwloc_bitmap_t *nodes;	/* nodes below */
	int **adj;		/* parents and children: for distances */
	int *nadj;
};

/* NULL when out of memory. */
struct topoml_sl_switches *topoml__sl_switches(const topoml_topo_t *t);
void topoml__sl_switches_free(struct topoml_sl_switches *st);

/* _topo_add_dist(): add to dist the hop distances from switch i (queue:
 * n + 1 ints, d: n + 1 scratch). */
void topoml__sl_add_dist(const struct topoml_sl_switches *st,
			 uint32_t *dist, int i, int *queue, uint32_t *d);

/* _topo_choose_best_switch(): may leaf i replace *best (-1: none yet)
 * for rem more nodes, cnt[] usable nodes per switch? */
void topoml__sl_choose_best(const struct topoml_sl_switches *st,
			    const uint32_t *dist, const int *cnt, int rem,
			    int i, int *best);

#endif
