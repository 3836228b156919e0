/*
 * The job view (topoml/jobview.h): one pass over the job's SPANK environment.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "topoml/jobview.h"
#include "topoml/contract.h"
#include "topoml/hybrid.h"
#include "topoml/place.h"

void topoml_job_view_init(struct topoml_job_view *v, enum topoml_hint dflt,
			  const char *const *env, uint32_t n, uint32_t tpn)
{
	memset(v, 0, sizeof(*v));
	v->hint = dflt;
	v->tasks_per_node = tpn;
	for (uint32_t i = 0; env && i < n; i++) {
		const char *e = env[i], *val;

		if (!e)
			continue;
		if ((val = topoml_comm_job_env(e))) {
			v->has_comm = true;
			/* an unknown value leaves the hint as it was */
			if (topoml_hint_parse(val, &v->hint))
				v->bad_hint = val;
		} else if ((val = topoml_parallel_job_env(e))) {
			v->parallel = val;
		} else if ((val = topoml_spares_job_env(e))) {
			if (topoml_spares_parse(val, &v->spares))
				v->spares = 0;
		}
	}
	/*
	 * --ml-parallel without --ml-comm: an allreduce job.  Its ring order
	 * keeps leaves (blocks) together, and Megatron's order puts each
	 * pipeline stage on consecutive ranks.
	 */
	if (!v->has_comm && v->parallel)
		v->hint = TOPOML_HINT_ALLREDUCE;
}

bool topoml_job_view_parallel(const struct topoml_job_view *v,
			      const topoml_topo_t *t, int nnodes,
			      struct topoml_parallel *p, int *tpn)
{
	uint32_t k = v->tasks_per_node;
	char err[256];

	*tpn = (int)k;
	return v->parallel && nnodes > 0 && k &&
	       (long)nnodes * k <= topoml_hybrid_max_ranks(t) &&
	       !topoml_parallel_parse(v->parallel, p, err, sizeof(err)) &&
	       !topoml_parallel_resolve(p, (int)(nnodes * k), err,
					sizeof(err));
}

bool topoml_job_view_workers(const struct topoml_job_view *v,
			     const topoml_topo_t *t, int nnodes, int *spares,
			     struct topoml_parallel *p, int *tpn)
{
	*spares = v->spares;
	if (*spares >= nnodes)
		*spares = 0;
	return topoml_job_view_parallel(v, t, nnodes - *spares, p, tpn);
}
