/*
 * libFuzzer target: the cost of what select/topoml computes inside
 * slurmctld for one job (tests/place/job_cost.c: ranked placement,
 * --ml-parallel pricing and ranking, HybridWait's localities, the order
 * it publishes), for any shape a user can ask for, on every fabric at
 * 1024 nodes.  The finding is the cost: an input whose CPU time exceeds
 * the bound aborts (issue 28).  Sanitizers and coverage slow this build
 * 40-75x, unevenly, so the bound is relative, measured at start in the
 * same build: 4x what the largest job priced costs on the same fabric
 * (half the machine at the most ranks priced, tp=8,pp=4; make bench's
 * bench_job_cost holds every shape, that one included, under 10 ms
 * uninstrumented).  A smaller reference (8 tasks per node) failed
 * legitimately capped shapes: pricing grows with ranks up to the cap.
 * An input over the bound is measured twice more and fails only if the
 * fastest of the three is over it too: CPU time still counts a
 * preempted thread's cache misses, and CI shares 2 cores.
 * FUZZ_COST_MS sets an absolute bound instead.
 * Input: byte 0 fabric, 1-2 nodes, 3-4 tasks per node, 5 spares, 6 hint,
 * 7 --switches, 8 required nodes, 9 busy %, then the --ml-parallel text.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "job_cost.h"

static topoml_topo_t *fabrics[JC_FABRICS];
static double bound[JC_FABRICS];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *b = getenv("FUZZ_COST_MS");

	(void)argc;
	(void)argv;
	for (int f = 0; f < JC_FABRICS; f++) {
		struct job_cost_in ref = { .parallel = "tp=8,pp=4",
					   .busy_pct = 25, .seed = 7 };
		double best = -1;

		if (!(fabrics[f] = job_cost_fabric(f, 1024)))
			abort();
		ref.nnodes = fabrics[f]->nnodes / 2 & ~7;
		ref.tpn = (int)(topoml_hybrid_max_ranks(fabrics[f]) /
				ref.nnodes);
		for (int r = 0; r < 3; r++) {
			double ms = job_cost_ms(fabrics[f], &ref);

			if (ms >= 0 && (best < 0 || ms < best))
				best = ms;
		}
		if (best <= 0)
			abort();	/* the reference must place */
		bound[f] = b && atof(b) > 0 ? atof(b) : 4 * best;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_cost_in in = { 0 };
	const topoml_topo_t *t;
	char *spec;
	double ms;
	int f;

	if (size < 10)
		return 0;
	f = data[0] % JC_FABRICS;
	t = fabrics[f];
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
	for (int r = 0; r < 2 && ms > bound[f]; r++) {
		double again = job_cost_ms(t, &in);

		if (again < ms)
			ms = again;
	}
	if (ms > bound[f]) {
		fprintf(stderr, "fuzz_cost: %.1f ms > %.1f ms: fabric %d, -N "
			"%d, %d tasks per node, spares %d, hint %d, switches "
			"%d, %d required, %d%% busy, parallel '%s'\n", ms,
			bound[f], f, in.nnodes, in.tpn,
			in.spares, in.hint, in.max_leaves, in.nrequired,
			in.busy_pct, spec);
		abort();
	}
	free(spec);
	return 0;
}
