/*
 * libFuzzer target: the torus3d section of topology.yaml
 * (topoml_torus3d_load, topology/load/load_yaml.c: slurmctld
 * reads it beside topoml.conf with topology/torus3d, and topoml sim
 * --torus3d), then the torus it describes (topoml_torus3d_topology) and
 * the binding check against that torus.  What loads has every shape inside
 * the torus and no cell named twice.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "topoml.h"
#include "util/util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* as the other loaders: large expansions are slow, not interesting */
	topoml__hostlist_max_hosts = 4096;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topoml_errors_t err = { 0 };
	struct topoml_torus3d *c;
	topoml_topo_t *t;
	char why[256];
	const char *path = fuzz_file(data, size);
	int mark = fuzz_fd_mark();

	c = topoml_torus3d_load(path, &err);
	fuzz_check_fds(mark);
	if (!c) {
		if (!err.n)
			abort();	/* a refusal says why */
		topoml_errors_clear(&err);
		return 0;
	}
	for (int i = 0; i < c->nshapes; i++) {
		const struct topoml_t3d_shape *s = &c->shapes[i];

		if (s->size != s->dims[0] * s->dims[1] * s->dims[2] ||
		    (i && s->size < c->shapes[i - 1].size))
			abort();
		for (int d = 0; d < 3; d++)
			if (s->dims[d] < 1 || s->dims[d] > c->dims[d] ||
			    s->spacing[d] < 1 || s->spacing[d] > c->dims[d] ||
			    s->seed[d] < 0 || s->seed[d] >= c->dims[d])
				abort();
	}
	t = topoml_torus3d_topology(c, &err);
	if (t) {
		/* t->torus3d is not owned: c is freed below */
		if (topoml_torus3d_bind(t, c, why, sizeof(why)))
			abort();	/* its own torus binds */
		topoml_free(t);
	}
	topoml_errors_clear(&err);
	topoml_torus3d_free(c);
	return 0;
}
