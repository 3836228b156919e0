/*
 * Slurm 22.05's own node choice, reproduced as baselines: what cons_tres
 * (src/plugins/select/cons_tres/job_test.c) does for a job of N whole
 * nodes (-N N --exclusive, every node with the same CPUs, no GRES):
 *
 *   slurm-tree       _eval_nodes_topo()   TopologyPlugin=topology/tree
 *   slurm-dragonfly  _eval_nodes_dfly()   ... with TopologyParam=dragonfly
 *
 * (linear and slurm-hilbert, _eval_nodes(), are in the core library:
 * place/place_linear.c, because topoml's torus engine uses them.)
 *
 * The code follows Slurm's step by step (same loops, same tie-breaks, same
 * quirks such as the parent index 0 of a root switch), with CPU counts
 * reduced to node counts, which is exact for whole equal nodes.  Slurm
 * walks nodes in node index order (slurm.conf order): here the model's node
 * index, which is the topology file's order; the job's node list, hence
 * its rank order, is that order.
 *
 * Slurm's switch table (slurm_switch.c, shared with sim.c's jobs by
 * CPUs) is the topology file's switch list in file order; on a dragonfly
 * model it is built as the topology.conf a site writes for
 * TopologyParam=dragonfly: routers (leaves), then one switch per group,
 * then one root.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim/baselines/baselines.h"
#include "sim/baselines/slurm_switch.h"

/* _eval_nodes_topo() or _eval_nodes_dfly() by nodes (slurm_switch.c). */
static int _slurm_switch_eval(const struct place_in *in, bool dfly,
			      hwloc_bitmap_t result, char *why,
			      size_t whylen)
{
	struct topoml_sl_eval e = {
		.avail = in->avail,
		.required = in->nreq > 0 ? in->required : NULL,
		.weight = in->req->weight,
		.rem_cpus = in->n,
		.rem_nodes = in->n,
	};
	struct topoml_sl_switches *st = topoml__sl_switches(in->t);
	int rc = -1;

	e.st = st;
	e.map = hwloc_bitmap_alloc();
	if (!st || !e.map)
		snprintf(why, whylen, "out of memory");
	else if (!(rc = topoml__sl_eval_switch(&e, dfly, why, whylen)))
		hwloc_bitmap_copy(result, e.map);
	topoml__sl_switches_free(st);
	if (e.map)
		hwloc_bitmap_free(e.map);
	return rc;
}

/* Nodes of a set in index order: Slurm's node list and rank order. */
static int _index_order(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			struct topoml_placement *out)
{
	int n = hwloc_bitmap_weight(set), i = 0, v;

	(void)t;
	out->nodes = malloc((n > 0 ? n : 1) * sizeof(int));
	if (!out->nodes)
		return -1;
	hwloc_bitmap_foreach_begin(v, set)
		out->nodes[i++] = v;
	hwloc_bitmap_foreach_end();
	out->n = i;
	return 0;
}

int topoml__place_slurm_tree(const struct place_in *in, bool dragonfly,
			     struct topoml_placement *out, char *why,
			     size_t whylen)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int rc = -1;

	if (!set)
		return -1;
	if (in->req->attempt > 0) {
		/* Slurm has one answer per state. */
		snprintf(why, whylen, "%s has no alternative placements",
			 dragonfly ? "slurm-dragonfly" : "slurm-tree");
		goto out;
	}
	if (_slurm_switch_eval(in, dragonfly, set, why, whylen))
		goto out;
	rc = _index_order(in->t, set, out);
out:
	hwloc_bitmap_free(set);
	return rc;
}
