/*
 * select_score: score a job's nodes the way select/topoml does, for the
 * integration tests that compare select/topoml with stock cons_tres.
 *
 *   select_score TOPOLOGY_FILE NODES [BUSY]
 *
 * NODES is the job's host list, BUSY the nodes other jobs held when it was
 * placed ("" = none).  Prints one line, the ring in the engine's ring
 * order and the lower bounds for the free nodes (every topology node not
 * in BUSY):
 *   span=S span_lb=L ring=R ring_lb=RL global_hops=G pair_hops=P shared=K
 * shared: leaves (routers) the job shares with BUSY nodes; on a torus the
 * job's nodes next to a BUSY node (links other jobs' traffic may cross).
 *
 * The engine's own choice for a job comes from `topoml place --job
 * ID=NODES ...` (owners included), as tests/select/lib.sh's sel_expected
 * asks it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"

static int _shared(const topoml_topo_t *t, hwloc_const_bitmap_t set,
		   hwloc_const_bitmap_t busy)
{
	int i, d, k = 0;

	if (t->family != TOPOML_TORUS) {
		char *mine = calloc(t->nswitches + 1, 1);
		char *other = calloc(t->nswitches + 1, 1);

		hwloc_bitmap_foreach_begin(i, set)
			if (t->nodes[i].leaf >= 0)
				mine[t->nodes[i].leaf] = 1;
		hwloc_bitmap_foreach_end();
		hwloc_bitmap_foreach_begin(i, busy)
			if (t->nodes[i].leaf >= 0)
				other[t->nodes[i].leaf] = 1;
		hwloc_bitmap_foreach_end();
		for (i = 0; i < t->nswitches; i++)
			k += mine[i] && other[i];
		free(mine);
		free(other);
		return k;
	}
	hwloc_bitmap_foreach_begin(i, set) {
		bool near = false;

		for (d = 0; d < 3 && !near; d++) {
			int s;

			for (s = -1; s <= 1; s += 2) {
				int c[3], j;

				memcpy(c, t->nodes[i].coord, sizeof(c));
				c[d] += s;
				if (c[d] < 0 || c[d] >= t->dims[d]) {
					if (!t->wrap[d])
						continue;
					c[d] = (c[d] + t->dims[d]) % t->dims[d];
				}
				j = t->coord_node[c[0] + t->dims[0] *
						  (c[1] + t->dims[1] * c[2])];
				if (j >= 0 && hwloc_bitmap_isset(busy, j))
					near = true;
			}
		}
		k += near;
	} hwloc_bitmap_foreach_end();
	return k;
}

int main(int argc, char **argv)
{
	topoml_errors_t err = { 0 };
	struct topoml_placement p = { 0 };
	hwloc_bitmap_t set = NULL, busy = NULL, avail = NULL;
	topoml_topo_t *t;
	int rc = 2, i, k = 0;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s TOPOLOGY NODES [BUSY]\n", argv[0]);
		return 2;
	}
	t = topoml_load(argv[1], TOPOML_FMT_AUTO, &err);
	if (!t)
		goto out;
	set = topoml_nodeset_parse(t, argv[2], &err);
	busy = (argc == 4 && argv[3][0]) ?
		topoml_nodeset_parse(t, argv[3], &err) : hwloc_bitmap_alloc();
	if (err.n || !set || !busy)
		goto out;
	avail = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	hwloc_bitmap_andnot(avail, avail, busy);
	p.n = hwloc_bitmap_weight(set);
	p.nodes = calloc(p.n + 1, sizeof(int));
	hwloc_bitmap_foreach_begin(i, set)
		p.nodes[k++] = i;
	hwloc_bitmap_foreach_end();
	topoml_ring_order(t, p.nodes, p.n);
	topoml_score(t, avail, &p);
	printf("span=%d span_lb=%d ring=%.0f ring_lb=%.0f global_hops=%d pair_hops=%.3f shared=%d\n",
	       p.score.span, p.score.span_lower_bound, p.score.ring_cost,
	       p.score.ring_lower_bound, p.score.global_hops,
	       p.score.mean_pair_hops, _shared(t, set, busy));
	rc = 0;
out:
	topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
	topoml_placement_clear(&p);
	if (set)
		hwloc_bitmap_free(set);
	if (busy)
		hwloc_bitmap_free(busy);
	if (avail)
		hwloc_bitmap_free(avail);
	if (t)
		topoml_free(t);
	return rc;
}
