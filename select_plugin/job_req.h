/*
 * select/topoml's pure helpers: what the engine is asked for a job (node
 * count, --ml-comm hint), from plain values, so that they link and are
 * tested without slurmctld (tests/select/check_job_req.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_JOB_REQ_H
#define TOPOML_JOB_REQ_H

#include <stdint.h>

#include "topoml.h"

/*
 * Nodes to ask the engine for: the job's node count (the larger of
 * min_nodes and req_nodes, at least 1), or, for jobs sized by tasks or
 * CPUs (sbatch -n 8 without -N), the fewest nodes of max_cpus CPUs that
 * hold min_cpus, so that cons_tres is not handed too few nodes; never
 * more than max_nodes (0 = no limit).  min_cpus or max_cpus 0: unknown.
 */
uint32_t topoml_job_nodes_wanted(uint32_t min_nodes, uint32_t max_nodes,
				 uint32_t req_nodes, uint32_t min_cpus,
				 uint16_t max_cpus);

/*
 * The job's --ml-comm hint from its SPANK job environment (env[0..n),
 * "TOPOML_COMM=..." with or without the SPANK_ prefix; the last valid
 * one wins), else dflt.  An unknown value leaves the hint as it was and
 * is returned in *bad (may be NULL) for the caller to log.
 */
enum topoml_hint topoml_job_hint(enum topoml_hint dflt,
				 const char *const *env, uint32_t n,
				 const char **bad);

/*
 * Will-run (backfill's plan, sbatch --test-only): the nodes of avail that
 * are free soonest, enough for n.  free_at[i] is when node i's jobs end
 * (0 = idle now).  With T the n-th smallest free_at over avail, out gets
 * every node of avail free by T: those the job can start on at the time
 * cons_tres's will-run finds by letting jobs end in end-time order.
 * Returns T, or -1 (out empty) when avail holds fewer than n nodes.
 */
int64_t topoml_job_free_by(const int64_t *free_at, hwloc_const_bitmap_t avail,
			   int n, hwloc_bitmap_t out);

#endif
