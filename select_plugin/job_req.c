/*
 * select/topoml's pure helpers (see job_req.h): no Slurm headers, so that
 * the unit tests link them without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "job_req.h"

uint32_t topoml_job_nodes_wanted(uint32_t min_nodes, uint32_t max_nodes,
				 uint32_t req_nodes, uint32_t min_cpus,
				 uint16_t max_cpus)
{
	uint32_t n = min_nodes > req_nodes ? min_nodes : req_nodes;

	if (min_cpus && max_cpus) {
		/* 64-bit: min_cpus near UINT32_MAX must not wrap */
		uint64_t c = ((uint64_t)min_cpus + max_cpus - 1) / max_cpus;

		if (c > n)
			n = (uint32_t)c;
	}
	if (n < 1)
		n = 1;
	if (max_nodes && n > max_nodes)
		n = max_nodes;
	return n;
}

enum topoml_hint topoml_job_hint(enum topoml_hint dflt,
				 const char *const *env, uint32_t n,
				 const char **bad)
{
	enum topoml_hint hint = dflt;

	if (bad)
		*bad = NULL;
	for (uint32_t i = 0; env && i < n; i++) {
		const char *v = topoml_comm_job_env(env[i]);

		if (v && topoml_hint_parse(v, &hint) && bad)
			*bad = v;
	}
	return hint;
}
