/*
 * select/topoml's publication: the job's SystemComment at job_begin, its
 * nodes scored in the engine's ring order (topoml/jobcomment.h has the format,
 * writer and parser; topoml.so reads order= in every step).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topoml/jobcomment.h"
#include "select_int.h"

/* The last run-now decision, for the job's SystemComment at job_begin. */
static struct {
	uint32_t job_id;
	int choice;		/* engine choices cons_tres could not fit
				 * before the one used, -1 = plain cons_tres */
	enum topoml_hint hint;
	char why[256];
} g_last;

void sel_publish_note(uint32_t job_id, int choice, enum topoml_hint hint,
		      const char *why)
{
	g_last.job_id = job_id;
	g_last.choice = choice;
	g_last.hint = hint;
	snprintf(g_last.why, sizeof(g_last.why), "%s", why);
}

/*
 * The job's engine nodes in the order its tasks get: the ring, spares
 * last (--ml-spares), the workers by pipeline and tensor groups
 * (--ml-parallel); returns how many spares.
 */
int sel_job_order(const struct sel_job *j, int *nodes, int n)
{
	struct topoml_parallel par;
	int spares, tpn;

	topoml_ring_order(g_topo, nodes, n);
	/*
	 * --ml-spares=K: the job asked -N workers+K and the engine placed
	 * them together; its spares go last in order= (jobcomment.h), so
	 * that both plugins and topoml-run agree which nodes they are.
	 */
	spares = topoml_spares_last(g_topo, nodes, n, j->view.spares);
	/*
	 * --ml-parallel: the workers in the order topoml_hybrid_rank gave
	 * the job's nodes (pipeline stages kept inside spine subtrees or
	 * dragonfly groups), so RANK follows it; the spares stay last.
	 */
	if (topoml_job_view_parallel(&j->view, g_topo, n - spares, &par,
				     &tpn))
		(void)topoml_hybrid_order(g_topo, nodes, n - spares, tpn,
					  &par, g_conf.hybrid_weights);
	return spares;
}

void sel_publish(job_record_t *job_ptr)
{
	sel_publish_on(job_ptr, job_ptr->node_bitmap);
}

/*
 * Score the job's nodes in the engine's ring order and publish it in the
 * job's SystemComment (scontrol show job), e.g.
 * "topoml: placed=topoml hint=allreduce leaves=2/2 ring=12/12 order=c[1-8]".
 */
void sel_publish_on(job_record_t *job_ptr, bitstr_t *node_bitmap)
{
	struct topoml_placement pl = { 0 };
	struct topoml_comment c = { .global_hops = -1 };
	struct sel_job j;
	hwloc_bitmap_t avail = NULL;
	char *msg = NULL, *merged;
	int i, n = 0;

	if (!g_topo || !node_bitmap)
		return;
	sel_map_nodes();
	sel_job_init(&j, job_ptr);
	pl.nodes = xcalloc(bit_set_count(node_bitmap) + 1, sizeof(int));
	avail = hwloc_bitmap_alloc();
	for (i = 0; i < bit_size(node_bitmap); i++) {
		if (!bit_test(node_bitmap, i))
			continue;
		if (i >= g_map_count || g_map[i] < 0)
			goto out;	/* not a topology job */
		pl.nodes[n++] = g_map[i];
		hwloc_bitmap_set(avail, g_map[i]);
	}
	/* The bounds count what the job could have had: idle nodes of its
	 * partition. */
	for (i = 0; idle_node_bitmap && i < g_map_count; i++)
		if (g_map[i] >= 0 && bit_test(idle_node_bitmap, i) &&
		    (!job_ptr->part_ptr || !job_ptr->part_ptr->node_bitmap ||
		     bit_test(job_ptr->part_ptr->node_bitmap, i)))
			hwloc_bitmap_set(avail, g_map[i]);
	pl.n = n;
	c.spares = sel_job_order(&j, pl.nodes, n);
	topoml_score(g_topo, avail, &pl);
	/*
	 * order= is the one ring order the job's tasks get: topoml.so reads
	 * it in every step (topoml/jobcomment.h has the format, writer and
	 * parser).
	 */
	c.order = topoml_nodes_format(g_topo, pl.nodes, n);
	c.placed = (g_last.job_id == job_ptr->job_id && g_last.choice >= 0) ?
		   "topoml" : "cons_tres";
	if (g_last.job_id == job_ptr->job_id) {
		c.hint = topoml_hint_name(g_last.hint);
		c.choice = g_last.choice > 0 ? g_last.choice : 0;
	}
	c.family = g_topo->family <= TOPOML_TORUS ? (int)g_topo->family : 0;
	c.span = pl.score.span;
	c.span_lb = pl.score.span_lower_bound_free;
	c.ring = pl.score.ring_cost;
	c.ring_lb = pl.score.ring_lower_bound_free;
	if (g_topo->family == TOPOML_DRAGONFLY)
		c.global_hops = pl.score.global_hops;
	if (!(msg = topoml_comment_write(&c)))
		goto out;
	/*
	 * Other plugins may have written their own part: replace only ours
	 * (also when a requeued job begins again).
	 */
	merged = topoml_comment_merge(job_ptr->system_comment, msg);
	if (merged) {
		xfree(job_ptr->system_comment);
		job_ptr->system_comment = xstrdup(merged);
		free(merged);
	}
	if (g_conf.debug > 0 ||
	    (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE))
		info("%s: %pJ %s%s%s", sel_who, job_ptr, msg,
		     (g_last.job_id == job_ptr->job_id && g_last.why[0] &&
		      g_last.choice < 0) ? " fallback: " : "",
		     (g_last.job_id == job_ptr->job_id &&
		      g_last.choice < 0) ? g_last.why : "");
out:
	free(c.order);
	free(msg);
	xfree(pl.nodes);
	if (avail)
		hwloc_bitmap_free(avail);
}
