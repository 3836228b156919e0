/*
 * select/topoml's job view: what placement reads of a job_record_t, built
 * once per call (the job's SPANK environment scanned once, by
 * policy/jobview.c, which a topology plugin shares), and the call's
 * candidates as engine node sets.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "select_int.h"
#include "job_req.h"

void sel_req_free(struct sel_req *r)
{
	if (r->avail_idle)
		hwloc_bitmap_free(r->avail_idle);
	if (r->avail_all)
		hwloc_bitmap_free(r->avail_all);
	if (r->partial)
		hwloc_bitmap_free(r->partial);
	if (r->required)
		hwloc_bitmap_free(r->required);
	xfree(r->owner);
	xfree(r->used_cpus);
	xfree(r->free_units);
	xfree(r->cap_units);
	xfree(r->free_at);
	if (r->avail_then)
		hwloc_bitmap_free(r->avail_then);
	if (r->part)
		hwloc_bitmap_free(r->part);
}

/*
 * Does the job take whole nodes?  --exclusive, an OverSubscribe=EXCLUSIVE
 * partition (slurmctld has set whole_node for it before job_test) or a
 * node reboot.  Other jobs share nodes and are placed by CPUs or GPUs.
 */
static bool _whole_nodes(job_record_t *job_ptr)
{
	if (job_ptr->reboot || !job_ptr->details)
		return true;
	if (job_ptr->part_ptr && job_ptr->part_ptr->max_share == 0)
		return true;
	return job_ptr->details->whole_node == WHOLE_NODE_REQUIRED;
}

/* GPUs (GRES "gpu") the job asks for in all; 0 = none. */
static uint64_t _job_gpus(job_record_t *job_ptr, uint32_t nodes)
{
	topoml_list_itr_t it;
	gres_state_t *gs;
	uint64_t n = 0, tasks;

	if (!job_ptr->gres_list_req)
		return 0;
	tasks = job_ptr->details && job_ptr->details->num_tasks ?
		job_ptr->details->num_tasks : 1;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;

		if (!js || xstrcmp(gs->gres_name, "gpu"))
			continue;
		if (js->gres_per_job)
			n += js->gres_per_job;
		else if (js->gres_per_node)
			n += js->gres_per_node * MAX(nodes, 1);
		else if (js->gres_per_task)
			n += js->gres_per_task * tasks;
		else if (js->total_gres && js->total_gres != NO_VAL64)
			n += js->total_gres;
	}
	list_iterator_destroy(it);
	return n;
}

void sel_job_init(struct sel_job *j, job_record_t *job_ptr)
{
	/* job_details_t from 23.02; 22.05 has only struct job_details */
	__typeof__(job_ptr->details) d = job_ptr->details;
	uint32_t tpn = d ? d->ntasks_per_node : 0;

	memset(j, 0, sizeof(*j));
	j->job_ptr = job_ptr;
	if (tpn == NO_VAL16)
		tpn = 0;
	topoml_job_view_init(&j->view,
			     topoml_siteconf_hint(&g_conf, job_ptr->partition),
			     (const char *const *)job_ptr->spank_job_env,
			     job_ptr->spank_job_env_size, tpn);
	j->whole = _whole_nodes(job_ptr);
	/* details: _whole_nodes is true without */
	if (!j->whole)
		j->gpus = _job_gpus(job_ptr, MAX(d->min_nodes, 1));
	if (d && d->min_cpus != NO_VAL)
		j->min_cpus = d->min_cpus;
}

/* GPUs of a node: those not allocated, or all of them. */
static uint32_t _node_gpus(node_record_t *node_ptr, bool free_only)
{
	topoml_list_itr_t it;
	gres_state_t *gs;
	uint64_t n = 0;

	if (!node_ptr->gres_list)
		return 0;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		gres_node_state_t *ns = gs->gres_data;

		if (!ns || xstrcmp(gs->gres_name, "gpu"))
			continue;
		if (!free_only)
			n += ns->gres_cnt_avail;
		else if (ns->gres_cnt_avail > ns->gres_cnt_alloc)
			n += ns->gres_cnt_avail - ns->gres_cnt_alloc;
	}
	list_iterator_destroy(it);
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/*
 * Which job holds each topology node (0 = none), as the simulator keeps it:
 * the engine keeps multi-leaf jobs apart and honours the isolate hint with
 * it.  One pass over each allocated job's node range.
 */
static void _owners(job_record_t *self, uint32_t *owner, uint32_t *used,
		    int64_t *free_at)
{
	topoml_list_itr_t it;
	job_record_t *j;

	if (!job_list)
		return;
	it = list_iterator_create(job_list);
	while ((j = list_next(it))) {
		job_resources_t *jr = j->job_resrcs;
		int i, last, k = 0;

		if (j == self || !j->node_bitmap ||
		    !(IS_JOB_RUNNING(j) || IS_JOB_SUSPENDED(j) ||
		      IS_JOB_COMPLETING(j)))
			continue;
		last = bit_fls(j->node_bitmap);
		for (i = bit_ffs(j->node_bitmap); i >= 0 && i <= last; i++) {
			if (i >= g_map_count || g_map[i] < 0 ||
			    !bit_test(j->node_bitmap, i))
				continue;
			owner[g_map[i]] = j->job_id;
			/* will-run: when the node is free again */
			if (free_at && free_at[g_map[i]] < j->end_time)
				free_at[g_map[i]] = j->end_time;
		}
		/* CPUs it holds per node, as cons_tres allocated them. */
		if (!used || !jr || !jr->node_bitmap || !jr->cpus)
			continue;
		last = bit_fls(jr->node_bitmap);
		for (i = bit_ffs(jr->node_bitmap); i >= 0 && i <= last; i++) {
			if (!bit_test(jr->node_bitmap, i))
				continue;
			if ((uint32_t)k < jr->nhosts && i < g_map_count &&
			    g_map[i] >= 0)
				used[g_map[i]] += jr->cpus[k];
			k++;
		}
	}
	list_iterator_destroy(it);
}

/*
 * Translate the candidate bitmap and the job's required nodes to engine
 * node sets.  Returns NULL on success, else why the engine is not used.
 */
const char *sel_req_build(const struct sel_job *j, bitstr_t *bitmap,
			  bool will_run, struct sel_req *r)
{
	job_record_t *job_ptr = j->job_ptr;
	bitstr_t *req = job_ptr->details ? job_ptr->details->req_node_bitmap
					 : NULL;
	int i, n = bit_size(bitmap);
	bool gpus = false, whole = j->whole;

	r->avail_idle = hwloc_bitmap_alloc();
	r->avail_all = hwloc_bitmap_alloc();
	r->partial = hwloc_bitmap_alloc();
	r->owner = xcalloc(g_topo->nnodes, sizeof(uint32_t));
	/* the aligned groups a crowded block row waits for (engine) */
	if (g_topo->nblocks > 0)
		r->part = sel_part_nodes(job_ptr);
	r->used_cpus = xcalloc(g_topo->nnodes, sizeof(uint32_t));
	r->free_units = xcalloc(g_topo->nnodes, sizeof(uint32_t));
	/* CPUs in use matter only to a job that shares nodes. */
	if (will_run)
		r->free_at = xcalloc(g_topo->nnodes, sizeof(int64_t));
	_owners(job_ptr, r->owner, whole ? NULL : r->used_cpus, r->free_at);
	if (!whole) {
		/* only where will-run narrows such jobs (sel_plan_will_run) */
		if (will_run && g_topo->family == TOPOML_DRAGONFLY)
			r->cap_units = xcalloc(g_topo->nnodes,
					       sizeof(uint32_t));
		r->units = j->gpus;
		gpus = r->units > 0;
		if (!gpus)
			r->units = MAX(job_ptr->details->min_cpus, 1);
	}
	for (i = bit_ffs(bitmap); i >= 0 && i < n; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];
		uint32_t cpus;
		int t;

		if (!bit_test(bitmap, i))
			continue;
		t = (i < g_map_count) ? g_map[i] : -1;
		if (t < 0 || !node_ptr)
			continue;
		if (node_ptr->cpus > r->max_cpus)
			r->max_cpus = node_ptr->cpus;
		hwloc_bitmap_set(r->avail_all, t);
		if (idle_node_bitmap && bit_test(idle_node_bitmap, i))
			hwloc_bitmap_set(r->avail_idle, t);
		else
			hwloc_bitmap_set(r->partial, t);
		/* What the node still offers a job that shares it. */
		cpus = node_ptr->cpus_efctv ? node_ptr->cpus_efctv
					    : node_ptr->cpus;
		if (r->cap_units)
			r->cap_units[t] = gpus ? _node_gpus(node_ptr, false)
					       : cpus;
		cpus = cpus > r->used_cpus[t] ? cpus - r->used_cpus[t] : 0;
		r->free_units[t] = (gpus && cpus) ? _node_gpus(node_ptr, true)
						  : cpus;
	}
	if (!req || bit_set_count(req) == 0)
		return NULL;
	r->required = hwloc_bitmap_alloc();
	for (i = bit_ffs(req); i >= 0 && i < bit_size(req); i++) {
		if (!bit_test(req, i))
			continue;
		if (i >= g_map_count || g_map[i] < 0)
			return "a required node is outside the topology";
		hwloc_bitmap_set(r->required, g_map[i]);
	}
	return NULL;
}

/* Nodes to ask the engine for (job_req.c). */
uint32_t sel_nodes_wanted(const struct sel_job *j, uint32_t min_nodes,
			  uint32_t max_nodes, uint32_t req_nodes,
			  uint16_t max_cpus)
{
	return topoml_job_nodes_wanted(min_nodes, max_nodes, req_nodes,
				       j->min_cpus, max_cpus);
}

/* The partition's nodes, busy or not (NULL: no memory). */
hwloc_bitmap_t sel_part_nodes(job_record_t *job_ptr)
{
	bitstr_t *part = job_ptr->part_ptr ? job_ptr->part_ptr->node_bitmap
					   : NULL;
	hwloc_bitmap_t all = hwloc_bitmap_alloc();

	for (int i = 0; all && i < g_map_count; i++)
		if (g_map[i] >= 0 && (!part || bit_test(part, i)))
			hwloc_bitmap_set(all, g_map[i]);
	return all;
}
