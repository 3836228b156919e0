/*
 * libFuzzer target: what root in slurmstepd parses from the job's
 * environment, which a user's own srun can fill with anything
 * (spank/node/env.c): host lists (ml_hosts: SLURM_STEP_NODELIST,
 * SLURM_JOB_NODELIST), task counts per node (SLURM_STEP_TASKS_PER_NODE),
 * the reserved ports (SLURM_STEP_RESV_PORTS) and a GPU list
 * (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES).  The first byte picks the
 * parser.  Checked: what comes out stays in its bounds; run.sh's limits
 * (1 s, 2 GB an input) catch a list that expands without bound, as
 * libslurm's parser does on "a[0-9]b[0-9]..." (seed 'product').
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "ml.h"

#define HOSTS_MAX 4096

static void _hosts(const char *s)
{
	int n = -1;
	char **h = ml_hosts(s, HOSTS_MAX, &n);

	if (!h != !n || n < 0 || n > HOSTS_MAX)
		abort();
	for (int i = 0; i < n; i++)
		if (!h[i])
			abort();
	ml_hosts_free(h, n);
}

static void _tasks(const char *s)
{
	int c[64], n = ml_parse_tasks_per_node(s, c, 64);

	if (n > 64)
		abort();
	for (int i = 0; i < n; i++)
		if (c[i] < 0 || c[i] > 65535)
			abort();
}

static void _ports(const char *s, uint32_t job, uint32_t step)
{
	struct ml_conf c;
	int p = ml_resv_port(s);

	if (p != -1 && (p < 1 || p > 65535))
		abort();
	ml_conf_init(&c);
	p = ml_master_port(&c, job, step, s);
	if (p < 1 || p > 65535)
		abort();
}

static void _gpus(const char *s)
{
	struct hw_node n = { .ngpus = 8 };
	int pool[8], k = ml_parse_gpu_list(&n, s, pool, 8);

	if (k > 8)
		abort();
	for (int i = 0; i < k; i++)
		if (pool[i] < 0 || pool[i] >= 8)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
		_hosts(s);
		break;
	case 1:
		_tasks(s);
		break;
	case 2:
		_ports(s, (uint32_t)size * 2654435761u, data[0]);
		break;
	default:
		_gpus(s);
		break;
	}
	free(s);
	return 0;
}
