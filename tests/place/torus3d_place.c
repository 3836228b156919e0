/*
 * The engine's answer for one job on a torus described by a Slurm 26.05
 * topology.yaml (torus3d section), for tests/select/test_select_torus3d.sh:
 *
 *   torus3d_place TOPOLOGY.yaml N [POLICY] [BUSY] [POWERED_DOWN] [REQUIRED]
 *
 * POLICY: slurm-torus3d (default) or topoml; host lists may be "" (none).
 * Prints "nodes: HOSTLIST" (exit 0), "wait: WHY" when no box is free
 * (exit 3) or "refused: WHY" when no placement of N nodes is listed
 * (exit 4, Slurm refuses such a job at submission).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim.h"

static hwloc_bitmap_t _set(const topoml_topo_t *t, const char *hl,
			   const char *what)
{
	topoml_errors_t err = { 0 };
	hwloc_bitmap_t s;

	if (!hl || !*hl)
		return hwloc_bitmap_alloc();
	s = topoml_nodeset_parse(t, hl, &err);
	if (!s || err.n) {
		fprintf(stderr, "torus3d_place: %s: ", what);
		topoml_errors_print(&err, stderr);
		exit(2);
	}
	return s;
}

int main(int argc, char **argv)
{
	topoml_errors_t err = { 0 };
	struct topoml_torus3d *c;
	topoml_topo_t *t;
	enum topoml_policy pol = TOPOML_POLICY_SLURM_TORUS3D;
	hwloc_bitmap_t busy, down, req, avail;
	struct topoml_placement p = { 0 };
	uint64_t *w;
	char why[256], *s;
	int n, v, rc;

	topoml_sim_register_baselines();
	if (argc < 3) {
		fprintf(stderr, "usage: %s TOPOLOGY.yaml N [POLICY] [BUSY] "
			"[POWERED_DOWN] [REQUIRED]\n", argv[0]);
		return 2;
	}
	if (!(c = topoml_torus3d_load(argv[1], &err)) ||
	    !(t = topoml_torus3d_topology(c, &err))) {
		topoml_errors_print(&err, stderr);
		return 1;
	}
	n = atoi(argv[2]);
	if (argc > 3 && *argv[3] && topoml_policy_parse(argv[3], &pol)) {
		fprintf(stderr, "torus3d_place: unknown policy %s\n", argv[3]);
		return 2;
	}
	busy = _set(t, argc > 4 ? argv[4] : NULL, "busy");
	down = _set(t, argc > 5 ? argv[5] : NULL, "powered down");
	req = _set(t, argc > 6 ? argv[6] : NULL, "required");
	avail = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	hwloc_bitmap_andnot(avail, avail, busy);
	/* slurmctld's sched_weight: a powered-down node must boot */
	w = calloc(t->nnodes, sizeof(*w));
	hwloc_bitmap_foreach_begin(v, down)
		w[v] = 0x20000000000ULL;
	hwloc_bitmap_foreach_end();
	struct topoml_place_req r = {
		.nnodes = n,
		.avail = avail,
		.required = hwloc_bitmap_iszero(req) ? NULL : req,
		.weight = w,
	};
	if (pol == TOPOML_POLICY_SLURM_TORUS3D &&
	    !topoml_torus3d_size_ok(c, n)) {
		printf("refused: no torus3d placement of %d nodes\n", n);
		return 4;
	}
	if (topoml_place(t, pol, &r, &p, why, sizeof(why))) {
		printf("wait: %s\n", why);
		return 3;
	}
	s = topoml_nodes_format(t, p.nodes, p.n);
	printf("nodes: %s\n", s ? s : "?");
	rc = s ? 0 : 1;
	free(s);
	free(w);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(busy);
	hwloc_bitmap_free(down);
	hwloc_bitmap_free(req);
	hwloc_bitmap_free(avail);
	topoml_free(t);
	topoml_torus3d_free(c);
	return rc;
}
