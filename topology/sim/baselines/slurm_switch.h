/*
 * Slurm's switch table, one copy for every Slurm baseline of
 * libtopoml_sim (whole nodes, place_slurm.c; cores of shared nodes,
 * sim.c): switch_record_table as topology/tree builds it from
 * topology.conf (src/plugins/topology/tree/switch_record.c of Slurm
 * 22.05), and cons_tres's node choice on it (job_test.c:
 * _eval_nodes_topo(), _eval_nodes_dfly() and their helpers), by nodes
 * or by CPUs.
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SIM_SLURM_SWITCH_H
#define TOPOML_SIM_SLURM_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
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

/*
 * One _eval_nodes_topo() or _eval_nodes_dfly() call of cons_tres 22.05,
 * by nodes (cpus NULL: whole equal nodes, one CPU each: the job's
 * -N N --exclusive) or by CPUs (cpus: avail_cpu_per_node, the job's
 * -n CPUS on shared nodes).  The caller sets st, avail, required,
 * weight, cpus, rem_cpus, rem_nodes and map (empty); the nodes taken
 * are added to map (required ones first) and, when nodes is not NULL,
 * listed in the order taken in nodes[0..n) with their CPUs in units.
 */
struct topoml_sl_eval {
	const struct topoml_sl_switches *st;
	hwloc_const_bitmap_t avail;	/* the nodes it may use */
	hwloc_const_bitmap_t required;	/* NULL or empty: none */
	const uint64_t *weight;		/* node weights, NULL: equal */
	const uint32_t *cpus;		/* per node, or NULL */
	long rem_cpus;
	int rem_nodes;
	hwloc_bitmap_t map;		/* node_map */
	int *nodes;
	int *units;
	int n;
};

/* 0 when the job fits, else -1 with why. */
int topoml__sl_eval_switch(struct topoml_sl_eval *e, bool dfly, char *why,
			   size_t whylen);

#endif
