/*
 * libFuzzer target: the cost of what select/topoml computes inside
 * slurmctld for one job (tests/place/job_cost.c: ranked placement,
 * --ml-parallel pricing and ranking, HybridWait's localities, the order
 * it publishes), for any shape a user can ask for, on every fabric at
 * 1024 nodes.  The finding is the cost: an input whose CPU time exceeds
 * the bound aborts (issue 28).  The bound is 10 ms uninstrumented;
 * sanitizers and coverage make the code about 8x slower, so this build
 * allows FUZZ_COST_MS (default 80).
 * Input: byte 0 fabric, 1-2 nodes, 3-4 tasks per node, 5 spares, 6 hint,
 * 7 --switches, 8 required nodes, 9 busy %, then the --ml-parallel text.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "job_cost.h"

static topoml_topo_t *fabrics[JC_FABRICS];
static double bound_ms = 80;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *b = getenv("FUZZ_COST_MS");

	(void)argc;
	(void)argv;
	if (b && atof(b) > 0)
		bound_ms = atof(b);
	for (int f = 0; f < JC_FABRICS; f++)
		if (!(fabrics[f] = job_cost_fabric(f, 1024)))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_cost_in in = { 0 };
	const topoml_topo_t *t;
	char *spec;
	double ms;

	if (size < 10)
		return 0;
	t = fabrics[data[0] % JC_FABRICS];
	in.nnodes = 1 + (data[1] | data[2] << 8) % t->nnodes;
	in.tpn = 1 + (data[3] | data[4] << 8);	/* Slurm's 16 bits */
	in.spares = data[5] % 2 ? data[5] * 4 : 0;
	in.hint = data[6] % 3;
	in.max_leaves = data[7] % 4;
	in.nrequired = data[8] % 2 ? data[8] * 4 : 0;
	in.busy_pct = data[9] % 90;
	in.seed = data[9];
	spec = fuzz_str(data + 10, size - 10);
	in.parallel = spec[0] ? spec : NULL;
	ms = job_cost_ms(t, &in);
	if (ms > bound_ms) {
		fprintf(stderr, "fuzz_cost: %.1f ms > %.0f ms: fabric %d, -N %d, "
			"%d tasks per node, spares %d, hint %d, switches %d, "
			"%d required, %d%% busy, parallel '%s'\n", ms,
			bound_ms, data[0] % JC_FABRICS, in.nnodes, in.tpn,
			in.spares, in.hint, in.max_leaves, in.nrequired,
			in.busy_pct, spec);
		abort();
	}
	free(spec);
	return 0;
}
