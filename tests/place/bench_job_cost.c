/*
 * bench_job_cost: select/topoml's worst user-controlled cost per call
 * (issue 28).  For each fabric at 1024 and about 100k nodes, the job
 * shapes a user can make dearest (every --ml-* option, node counts,
 * required nodes; tests/place/job_cost.c runs what the plugin runs) are
 * timed on a machine a quarter busy beside the plain job of the same size;
 * prints per fabric the worst shape, its CPU time and its ratio to the
 * plain job.  Exit 1 when a shape at 1024 nodes costs over 10 ms.
 *
 *   bench_job_cost [--quick]    (--quick: 1024 nodes only)
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_cost.h"

#define BOUND_MS 10.0	/* topoml's share of a call at 1024 nodes */

static const char *const fabric_name[JC_FABRICS] = {
	"fat-tree+nvl8", "dragonfly+nvl4", "torus", "fat-tree+nvl2"
};

/* Best of 3: CPU time, so preemption on a shared machine does not count. */
static double _best(const topoml_topo_t *t, const struct job_cost_in *in)
{
	double best = -1;

	for (int r = 0; r < 3; r++) {
		double ms = job_cost_ms(t, in);

		if (ms >= 0 && (best < 0 || ms < best))
			best = ms;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1024, 100000 };
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	int over = 0;

	printf("%-16s %7s %-44s %9s %9s %7s\n", "fabric", "nodes",
	       "worst shape", "ms", "plain ms", "ratio");
	for (int si = 0; si < (quick ? 1 : 2); si++)
		for (int f = 0; f < JC_FABRICS; f++) {
			topoml_topo_t *t = job_cost_fabric(f, sizes[si]);
			int N, half, tpn;
			char shapes[8][64], worst[160] = "";
			struct job_cost_in in = { .busy_pct = 25,
						  .seed = 7 };
			double plain, wms = 0;

			if (!t) {
				fprintf(stderr, "bench_job_cost: no %s\n",
					fabric_name[f]);
				return 1;
			}
			N = t->nnodes;
			half = N / 2 & ~7;
			/* the most ranks priced, then the option's limits */
			tpn = (int)(topoml_hybrid_max_ranks(t) / half);
			snprintf(shapes[0], 64, "tp=1,pp=1,ep=%d",
				 half * tpn > 65536 ? 65536 : half * tpn);
			snprintf(shapes[1], 64, "tp=%d,pp=1", 8 * tpn);
			snprintf(shapes[2], 64, "tp=1,pp=%d", half);
			snprintf(shapes[3], 64, "tp=%d,pp=2,cp=2", 2 * tpn);
			snprintf(shapes[4], 64, "tp=1,pp=1,cp=%d", half);
			snprintf(shapes[5], 64, "tp=%d,pp=4,ep=8", tpn * 2);
			in.nnodes = half;
			in.tpn = tpn;
			plain = _best(t, &in);
			for (int k = 0; k < 6 + 3; k++) {
				double ms;
				char what[160];

				in = (struct job_cost_in){ .busy_pct = 25,
							   .seed = 7,
							   .nnodes = half,
							   .tpn = tpn };
				if (k < 6) {
					in.parallel = shapes[k];
					snprintf(what, sizeof(what), "%.63s",
						 shapes[k]);
				} else if (k == 6) {
					in.parallel = shapes[1];
					in.spares = half / 2;
					snprintf(what, sizeof(what),
						 "%.63s spares=%d", shapes[1],
						 in.spares);
				} else if (k == 7) {
					in.nrequired = half / 2;
					in.busy_pct = 0;
					snprintf(what, sizeof(what), "-w %d nodes",
						 in.nrequired);
				} else {
					in.hint = TOPOML_HINT_ALLTOALL;
					in.max_leaves = 1;
					snprintf(what, sizeof(what),
						 "--ml-comm=alltoall "
						 "--switches=1");
				}
				ms = _best(t, &in);
				if (ms > wms) {
					wms = ms;
					snprintf(worst, sizeof(worst), "%s",
						 what);
				}
			}
			printf("%-16s %7d %-44s %9.3f %9.3f %7.2f\n",
			       fabric_name[f], N, worst, wms, plain,
			       plain > 0 ? wms / plain : 0);
			fflush(stdout);
			if (N <= 1024 && wms > BOUND_MS)
				over++;
			topoml_free(t);
		}
	if (over)
		printf("bench_job_cost: %d fabric(s) over %.0f ms at 1024 "
		       "nodes\n", over, BOUND_MS);
	return over ? 1 : 0;
}
