/*
 * spank_dump: what topoml.so would do on a machine, from its hwloc XML.
 * Prints the node model and each local task's binding (the format of
 * tests/fixtures/spank/expected/), or the NCCL topology XML.
 *
 *   spank_dump [-n NVML_LIB] [-r RSMI_LIB] [-s SYSFS_ROOT] [-x] [-e] XML
 *              NTASKS MODE
 *   spank_dump -b ITERATIONS MODEL NTASKS MODE
 *   -x  print the NCCL_TOPO_FILE content instead
 *   -e  also print the NCCL environment of every task
 *   -b  time the launch path of topoml.so on a cached node model (what
 *       slurmstepd does once per step, then once per task)
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ml.h"

static double _now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The remote context's work: per step (model + bindings), per task (env). */
static int _bench(const char *model, int ntasks, int mode, int iters)
{
	struct ml_conf conf;
	struct ml_job job = { .jobid = 7, .nnodes = 2, .local_size = ntasks,
			      .world_size = 2 * ntasks,
			      .master_addr = "n1", .master_port = 29507 };
	double t0, step = 0, task = 0;
	char err[1024];
	int vars = 0;

	ml_conf_init(&conf);
	for (int i = 0; i < iters; i++) {
		struct hw_node *n = hw_node_new();
		struct ml_task_bind *b = calloc(ntasks, sizeof(*b));

		t0 = _now();
		if (hw_node_load(n, model, err, sizeof(err)) ||
		    ml_bind_compute(n, mode, ntasks, NULL, 0, b, err,
				    sizeof(err))) {
			fprintf(stderr, "spank_dump: %s\n", err);
			return 1;
		}
		step += _now() - t0;
		t0 = _now();
		for (int t = 0; t < ntasks; t++) {
			struct ml_env e = { 0 };

			job.local_rank = job.rank = t;
			ml_env_gpu(&b[t], &e);
			ml_env_torch(&job, &e);
			ml_env_nccl(&conf, n, &b[t], true, NULL, &e);
			vars = e.n;
			ml_env_clear(&e);
		}
		task += (_now() - t0) / ntasks;
		ml_bind_free(b, ntasks);
		free(b);
		hw_node_free(n);
	}
	printf("per step (model + %d bindings): %.1f us\n", ntasks,
	       step / iters * 1e6);
	printf("per task (%d variables): %.1f us\n", vars, task / iters * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	const char *nvml = NULL, *sysfs = NULL, *rsmi = NULL;
	bool topo_xml = false, env = false;
	struct ml_task_bind *b;
	struct hw_node *n;
	hwloc_topology_t topo;
	struct ml_conf conf;
	char err[1024];
	int c, ntasks, mode, iters = 0;

	while ((c = getopt(argc, argv, "n:r:s:xeb:")) != -1) {
		switch (c) {
		case 'b': iters = atoi(optarg); break;
		case 'n': nvml = optarg; break;
		case 'r': rsmi = optarg; break;
		case 's': sysfs = optarg; break;
		case 'x': topo_xml = true; break;
		case 'e': env = true; break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: spank_dump [-n NVML] [-r RSMI] [-s SYSFS] [-x] "
			"[-e] XML NTASKS auto|nvlink|none\n");
		return 2;
	}
	ml_conf_init(&conf);
	ntasks = atoi(argv[optind + 1]);
	if (ntasks < 1 || ml_opt_parse(&conf, ML_OPT_GPU_BIND, argv[optind + 2],
				       &mode, err, sizeof(err))) {
		fprintf(stderr, "spank_dump: bad task count or mode: %s\n", err);
		return 2;
	}
	if (iters > 0)
		return _bench(argv[optind], ntasks, mode, iters);
	if (!(topo = hw_hwloc_load(argv[optind], err, sizeof(err)))) {
		fprintf(stderr, "spank_dump: %s\n", err);
		return 1;
	}
	n = hw_node_new();
	if (hw_node_from_hwloc(n, topo, err, sizeof(err))) {
		fprintf(stderr, "spank_dump: %s\n", err);
		return 1;
	}
	if (nvml && hw_nvml_islands(n, nvml, err, sizeof(err)))
		printf("# nvml: %s\n", err);
	if (rsmi && hw_rsmi_islands(n, rsmi, err, sizeof(err)))
		printf("# rsmi: %s\n", err);
	if (sysfs)
		hw_ib_sysfs(n, sysfs, err, sizeof(err));
	hw_ib_default_ports(n);
	if (topo_xml) {
		hw_write_nccl_topo(topo, n, stdout);
		goto out;
	}
	b = calloc(ntasks, sizeof(*b));
	if (ml_bind_compute(n, mode, ntasks, NULL, 0, b, err, sizeof(err))) {
		fprintf(stderr, "spank_dump: %s\n", err);
		return 1;
	}
	hw_node_print(n, stdout);
	ml_bind_print(n, b, ntasks, stdout);
	for (int t = 0; env && t < ntasks; t++) {
		struct ml_env e = { 0 };

		ml_env_gpu(&b[t], &e);
		ml_env_nccl(&conf, n, &b[t], !hwloc_bitmap_iszero(b[t].cpuset),
			    NULL, &e);
		for (int i = 0; i < e.n; i++)
			printf("task %d: %s=%s\n", t, e.name[i], e.value[i]);
		ml_env_clear(&e);
	}
	ml_bind_free(b, ntasks);
	free(b);
out:
	hw_node_free(n);
	hwloc_topology_destroy(topo);
	return 0;
}
