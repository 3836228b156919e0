/*
 * select/topoml's pure helpers: what the engine is asked for a job (node
 * count, --ml-comm hint), from plain values, so that they link and are
 * tested without slurmctld (tests/select/check_job_req.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_JOB_REQ_H
#define TOPOML_JOB_REQ_H

#include <stdbool.h>
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

/* The locality wait's clocks and verdicts, the free-by planners: the
 * pure policy module, shared with the simulator. */
#include "topoml/wait.h"

#endif
