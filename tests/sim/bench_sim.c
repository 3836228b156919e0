/*
 * Simulator throughput: jobs replayed per second (FCFS + EASY backfill,
 * every start through topoml_place, fragmentation measured at each event)
 * on 4096-node machines of each family with each applicable policy, on a
 * synthetic ML-like trace and, when REALDATA is set, the ANL Theta trace.
 *
 * usage: bench_sim [JOBS]   (default 20000; a tenth of that on the torus,
 *                          whose placements each score the largest free box)
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/*
 * Power-of-two sizes (1 .. 512 nodes, small ones most frequent), log-
 * uniform run times of 1 min .. 1 day, wall time 1-3x the run time, and
 * arrivals paced to offer about 90 % of the machine.
 */
static struct topoml_trace *_synthetic(int njobs, int nnodes)
{
	struct topoml_trace *tr = calloc(1, sizeof(*tr));
	unsigned int seed = 42;
	double work = 0, t = 0, gap;

	tr->source = strdup("synthetic");
	tr->njobs = njobs;
	tr->scale = 1;
	tr->jobs = calloc(njobs, sizeof(*tr->jobs));
	for (int i = 0; i < njobs; i++) {
		struct topoml_job *j = &tr->jobs[i];
		int e = 0;

		while (e < 9 && rand_r(&seed) % 3)
			e++;
		j->id = i + 1;
		j->line = i + 1;
		j->nodes = j->size = 1 << e;
		j->runtime = 60 * pow(1440, rand_r(&seed) / (double)RAND_MAX);
		j->walltime = j->runtime * (1 + 2 * (rand_r(&seed) /
						     (double)RAND_MAX));
		work += j->nodes * j->runtime;
	}
	gap = work / (0.9 * nnodes) / njobs;
	for (int i = 0; i < njobs; i++) {
		tr->jobs[i].submit = t;
		t += gap * 2 * (rand_r(&seed) / (double)RAND_MAX);
	}
	return tr;
}

static void _bench(const char *name, const topoml_topo_t *t,
		   const struct topoml_trace *tr, const enum topoml_policy *p,
		   int np)
{
	for (int i = 0; i < np; i++) {
		struct topoml_sim_metrics m;
		topoml_errors_t err = { 0 };

		if (topoml_sim_run(t, tr, p[i], NULL, &m, NULL, &err)) {
			topoml_errors_print(&err, stderr);
			topoml_errors_clear(&err);
			continue;
		}
		printf("%-30s %-16s %7d %9.3f %11.0f %8.1f %6.3f\n", name,
		       topoml_policy_name(p[i]), m.jobs, m.cpu_s,
		       m.cpu_s > 0 ? m.jobs / m.cpu_s : 0,
		       m.cpu_s > 0 ? m.placements / m.cpu_s / 1000 : 0,
		       m.utilization);
	}
}

int main(int argc, char **argv)
{
	static const enum topoml_policy ft[] = {
		TOPOML_POLICY_TOPOML, TOPOML_POLICY_SLURM_TREE,
		TOPOML_POLICY_LINEAR,
	};
	static const enum topoml_policy df[] = {
		TOPOML_POLICY_TOPOML, TOPOML_POLICY_SLURM_DRAGONFLY,
		TOPOML_POLICY_LINEAR,
	};
	static const enum topoml_policy to[] = {
		TOPOML_POLICY_TOPOML, TOPOML_POLICY_SLURM_HILBERT,
		TOPOML_POLICY_LINEAR, TOPOML_POLICY_SLURM_TORUS3D,
	};
	struct topoml_torus3d *t3d;
	int njobs = argc > 1 ? atoi(argv[1]) : 20000;
	const char *realdata = getenv("REALDATA");
	topoml_topo_t *topo[3] = {
		topoml_gen_fat_tree(NULL, 4096, 32, 16, 3),
		topoml_gen_dragonfly(NULL, 16, 16, 16, TOPOML_DF_ALL_TO_ALL),
		topoml_gen_torus(NULL, 16, 16, 16, true),
	};
	const char *names[3] = { "fat-tree 4096", "dragonfly 16x16x16",
				 "torus 16x16x16" };
	const enum topoml_policy *pols[3] = { ft, df, to };
	struct topoml_trace *syn, *syn_torus, *real = NULL;
	char path[4096], label[64];

	if (njobs < 1)
		njobs = 20000;
	for (int i = 0; i < 3; i++)
		if (!topo[i]) {
			fprintf(stderr, "bench_sim: cannot build %s\n",
				names[i]);
			return 1;
		}
	/* slurm-torus3d on the torus: a box shape for every size */
	t3d = topoml_torus3d_every_size(topo[2]);
	topo[2]->torus3d = t3d;
	syn = _synthetic(njobs, 4096);
	syn_torus = _synthetic(njobs / 10 > 0 ? njobs / 10 : 1, 4096);
	if (realdata) {
		struct topoml_trace_opts o = { .machine_nodes = 4096 };
		topoml_errors_t err = { 0 };

		snprintf(path, sizeof(path), "%s/swf/"
			 "MTech-Thesis_JobLogs_theta.swf.txt", realdata);
		real = topoml_trace_read(path, &o, &err);
		topoml_errors_clear(&err);
	}
	printf("simulator throughput: FCFS + EASY backfill, fragmentation at "
	       "every event\n");
	printf("%-30s %-16s %7s %9s %11s %8s %6s\n", "machine", "policy",
	       "jobs", "seconds", "jobs/s", "kplace/s", "util");
	for (int i = 0; i < 3; i++) {
		snprintf(label, sizeof(label), "%s, synthetic", names[i]);
		_bench(label, topo[i], i == 2 ? syn_torus : syn, pols[i],
		       i == 2 && t3d ? 4 : 3);
		if (real) {
			snprintf(label, sizeof(label), "%s, Theta", names[i]);
			_bench(label, topo[i], real, pols[i],
			       i == 2 && t3d ? 4 : 3);
		}
	}
	if (!real)
		printf("(REALDATA not set or unreadable: Theta trace "
		       "skipped)\n");
	topoml_trace_free(syn);
	topoml_trace_free(syn_torus);
	topoml_trace_free(real);
	for (int i = 0; i < 3; i++)
		topoml_free(topo[i]);
	topoml_torus3d_free(t3d);
	return 0;
}
