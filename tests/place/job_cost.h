/*
 * What select/topoml computes inside slurmctld for one job in one call,
 * driven from outside (issue 28): the engine's ranked choices, the
 * --ml-parallel ranking, HybridWait's localities and the ring order it
 * publishes, for a job shape a user chooses.  bench_job_cost reports the
 * worst; fuzz_cost fails on any input over the bound.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_TEST_JOB_COST_H
#define TOPOML_TEST_JOB_COST_H

#include "topoml.h"

/* The fabrics: NVLink-domain fat tree, dragonfly, torus, and a fat tree
 * of many two-node NVLink domains (where _even_domains works hardest). */
enum job_cost_fabric {
	JC_FATTREE_NVL, JC_DRAGONFLY, JC_TORUS, JC_SMALL_DOMAINS,
	JC_FABRICS
};

struct job_cost_in {
	int nnodes;		/* -N */
	int tpn;		/* --ntasks-per-node (16-bit in Slurm) */
	const char *parallel;	/* --ml-parallel, or NULL */
	int spares;		/* --ml-spares */
	enum topoml_hint hint;	/* --ml-comm */
	int max_leaves;		/* --switches */
	int nrequired;		/* -w: that many nodes named */
	int busy_pct;		/* of the machine, in job-shaped runs */
	unsigned seed;
};

/* One fabric of about nnodes nodes (built anew; topoml_free it). */
topoml_topo_t *job_cost_fabric(enum job_cost_fabric f, int nnodes);
/* CPU milliseconds of what select/topoml computes for the job in one
 * job_test (or will_run); -1 when the engine has no placement. */
double job_cost_ms(const topoml_topo_t *t, const struct job_cost_in *in);

#endif
