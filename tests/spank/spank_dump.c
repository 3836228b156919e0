/*
 * spank_dump: what topoml.so would do on a machine, from its hwloc XML.
 * Prints the node model and each local task's binding (the format of
 * tests/fixtures/spank/expected/), or the NCCL topology XML.
 *
 *   spank_dump [-n NVML_LIB] [-s SYSFS_ROOT] [-x] [-e] XML NTASKS MODE
 *   -x  print the NCCL_TOPO_FILE content instead
 *   -e  also print the NCCL environment of every task
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ml.h"

int main(int argc, char **argv)
{
	const char *nvml = NULL, *sysfs = NULL;
	bool topo_xml = false, env = false;
	struct ml_task_bind *b;
	struct hw_node *n;
	hwloc_topology_t topo;
	struct ml_conf conf;
	char err[1024];
	int c, ntasks, mode;

	while ((c = getopt(argc, argv, "n:s:xe")) != -1) {
		switch (c) {
		case 'n': nvml = optarg; break;
		case 's': sysfs = optarg; break;
		case 'x': topo_xml = true; break;
		case 'e': env = true; break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: spank_dump [-n NVML] [-s SYSFS] [-x] "
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
