/*
 * A job as placement sees it, built once per scheduling call from its
 * SPANK job environment and plain numbers: select/topoml's job_test and a
 * slurmctld-side topology plugin read the same view.  Pure (no Slurm
 * headers); the environment parsers are jobcomment.h's.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_POLICY_JOBVIEW_H
#define TOPOML_POLICY_JOBVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/model.h"
#include "topoml/contract.h"

struct topoml_job_view {
	enum topoml_hint hint;	/* --ml-comm, else --ml-parallel's
				 * allreduce, else the default */
	const char *bad_hint;	/* an unknown --ml-comm value (in env), for
				 * the caller's log; NULL */
	bool has_comm;		/* --ml-comm given (valid or not) */
	const char *parallel;	/* --ml-parallel spec (in env), or NULL */
	int spares;		/* --ml-spares, 0 without or bad */
	uint32_t tasks_per_node;	/* --ntasks-per-node, 0 unknown */
};

/*
 * One pass over env[0..n) (entries "NAME=VALUE", with or without the
 * SPANK_ prefix; the last valid one of each option wins), dflt the
 * partition's or site's hint, tpn the job's tasks a node (0 or a
 * no-value marker the caller maps to 0: unknown).
 */
void topoml_job_view_init(struct topoml_job_view *v, enum topoml_hint dflt,
			  const char *const *env, uint32_t n, uint32_t tpn);

/*
 * The job's --ml-parallel sizes on nnodes worker nodes and its tasks a
 * node: false when it has none, or no tasks a node, or more ranks than
 * the engine prices on t (topoml_hybrid_max_ranks: slurmctld's cost
 * stays the machine's, not the request's), or a shape that does not
 * resolve.
 */
bool topoml_job_view_parallel(const struct topoml_job_view *v,
			      const topoml_topo_t *t, int nnodes,
			      struct topoml_parallel *p, int *tpn);

/*
 * The --ml-parallel shape of the job on nnodes nodes: its workers, the
 * nodes less its spares (*spares; none when they would leave no worker,
 * as topoml_spares_last decides).
 */
bool topoml_job_view_workers(const struct topoml_job_view *v,
			     const topoml_topo_t *t, int nnodes, int *spares,
			     struct topoml_parallel *p, int *tpn);

#endif
