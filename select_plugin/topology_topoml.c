/*
 * topology/topoml: topoml's placement through Slurm's own extension point
 * for topology-aware node selection (Slurm 24.05+: cons_tres's job_test
 * calls topology_g_eval_nodes()).
 *
 * A wrapper, as select/topoml wraps cons_tres: it loads Slurm's own
 * topology plugin for the same network (topology/tree for a topology.conf
 * of switches, topology/block for one of blocks, else topology/default or
 * flat) as a plugin context, the way src/interfaces/topology.c loads the
 * configured one, and forwards every topology_p_* entry point to it.
 * Four do more, in slurmctld: get_rank (26.05) answers with the job's
 * order=; get_fragmentation and the topoinfo print give the engine's figure
 * and model (topo_show.c); and in eval_nodes the engine's best choices
 * among cons_tres's candidates (select_plan.c's plans, shared with
 * select/topoml) each narrow the node map, and the wrapped plugin's own
 * eval_nodes (which runs Slurm's common eval_nodes code,
 * src/plugins/topology/common/) sizes cores, memory and GRES there.  Slurm
 * links that common code into each of its topology plugins
 * (libtopology_common.la, no symbol of slurmctld), so the wrapped plugin is
 * how one outside Slurm's tree reaches it.  A request the engine does not
 * model, or any failure, gets the wrapped plugin on the whole map: the job
 * runs as with stock Slurm.
 *
 * Site configuration (topoml.conf and the topology it names) and the job
 * view are select/topoml's (select_conf.c, select_job.c); release
 * differences are in topo_compat.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/core_array.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/plugin.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topo_compat.h"
#include "select_int.h"
#include "topo_show.h"

/*
 * Symbols that live only in the slurmctld binary, defined for the other
 * programs that load a topology plugin (slurmd, srun, scontrol); exported
 * (topology_topoml.map) so that slurmctld's own interpose them.
 */
bitstr_t *idle_node_bitmap;
topoml_list_t job_list;

const char plugin_name[] = "topoml topology-aware ML placement";
const char plugin_type[] = "topology/topoml";
const uint32_t plugin_id = TOPOML_TOPO_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
#if TOPOML_TOPO_CTX
/* The wrapped plugin's (init sets it; Slurm reads it through a pointer
 * when it asks): --exclusive=topo is honoured exactly where stock Slurm
 * honours it (block; not tree or flat). */
bool supports_exclusive_topo;
#endif

const char *topoml_topo_syms[] = {
	"plugin_id",
#if TOPOML_TOPO_CTX
	"plugin_type",
	"supports_exclusive_topo",
	"topology_p_add_rm_node",
#if TOPOML_TOPO_RANK
	"topology_p_allow_one_node",
#endif
	"topology_p_build_config",
	"topology_p_destroy_config",
#if TOPOML_TOPO_RANK
	"topology_p_eval_node",
#endif
	"topology_p_eval_nodes",
	"topology_p_whole_topo",
	"topology_p_get_bitmap",
	"topology_p_generate_node_ranking",
	"topology_p_get_node_addr",
	"topology_p_split_hostlist",
	"topology_p_get",
	"topology_p_topoinfo_free",
	"topology_p_topoinfo_pack",
	"topology_p_topoinfo_print",
	"topology_p_topoinfo_unpack",
	"topology_p_jobinfo_free",
	"topology_p_jobinfo_pack",
	"topology_p_jobinfo_unpack",
	"topology_p_jobinfo_get",
	"topology_p_get_fragmentation",
	"topology_p_get_topology_str",
#if TOPOML_TOPO_RANK
	"topology_p_get_rank",
#endif
#else
	"topology_p_build_config",
	"topology_p_eval_nodes",
	"topology_p_whole_topo",
	"topology_p_get_bitmap",
	"topology_p_generate_node_ranking",
	"topology_p_get_node_addr",
	"topology_p_split_hostlist",
	"topology_p_topology_free",
	"topology_p_get",
	"topology_p_topology_pack",
	"topology_p_topology_print",
	"topology_p_topology_unpack",
	"topology_p_get_fragmentation",
#endif
};
const size_t topoml_topo_syms_size = sizeof(topoml_topo_syms);

/* The last job eval_nodes placed, for get_rank and the SystemComment
 * (g_lock held). */
static job_record_t *g_last_job;
static bitstr_t *g_last_map;

static topoml_topo_ops_t g_ops;		/* the wrapped plugin */
static plugin_context_t *g_inner;
static char *g_inner_name;

/*
 * Slurm's plugin for the network in topology.conf: block for BlockName=
 * lines, tree for SwitchName= lines (as Slurm's own sites configure
 * them), else the flat one (a dragonfly or torus from topoml.conf).
 */
static const char *_inner_name(void)
{
	char *path = get_extra_conf_path("topology.conf");
	const char *kind = topoml_slurm_topology_kind(path);

	xfree(path);
	if (!kind)
		return TOPOML_TOPO_FLAT;
	return !strcmp(kind, "block") ? "topology/block" : "topology/tree";
}

extern int init(void)
{
	sel_who = plugin_type;
	sel_plain = "TopologyPlugin=topology/tree (or block, flat)";
	g_inner_name = xstrdup(_inner_name());
	g_inner = plugin_context_create("topo", g_inner_name, (void **)&g_ops,
					topoml_topo_syms,
					topoml_topo_syms_size);
	if (!g_inner) {
		error("topology/topoml: cannot load %s", g_inner_name);
		return SLURM_ERROR;
	}
#if TOPOML_TOPO_CTX
	supports_exclusive_topo = g_ops.supports_exclusive_topo &&
				  *g_ops.supports_exclusive_topo;
#endif
	topoml_siteconf_init(&g_conf);
	if (running_in_slurmctld()) {
		info("topology/topoml: wraps %s", g_inner_name);
		sel_conf_load(true);
	}
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	int rc = SLURM_SUCCESS;

	slurm_mutex_lock(&g_lock);
	sel_conf_clear();
	sel_plan_clear();
	FREE_NULL_BITMAP(g_last_map);
	g_last_job = NULL;
	slurm_mutex_unlock(&g_lock);
	if (g_inner)
		rc = plugin_context_destroy(g_inner);
	g_inner = NULL;
	xfree(g_inner_name);
	return rc;
}

/* ---- eval_nodes ------------------------------------------------------ */

/* One eval_nodes call, for sel_test's tries (_try) and their undoing. */
struct _ev {
	topology_eval_t *te;
	bitstr_t *orig_map;
	bitstr_t **orig_core;
	uint32_t max_nodes;
	uint16_t avail_cpus;
	uint16_t *node_cpus;	/* each candidate's avail_res avail_cpus */
};

#if TOPOML_TOPO_CTX
/* One instance of this plugin (a topology_ctx_t's plugin_ctx): the
 * wrapped plugin's own instance. */
struct _inst {
	topology_ctx_t inner;
};

static int _inner_eval(topology_eval_t *te)
{
	topology_ctx_t *mine = te->tctx;
	struct _inst *in = mine ? mine->plugin_ctx : NULL;
	int rc;

	if (!in)
		return SLURM_ERROR;
	te->tctx = &in->inner;
	rc = (*(g_ops.eval_nodes))(te);
	te->tctx = mine;
	return rc;
}
#else
static int _inner_eval(topology_eval_t *te)
{
	return (*(g_ops.eval_nodes))(te);
}
#endif

/* Undo what a failed try changed (Slurm's eval_nodes only clears bits,
 * as common_topo_choose_nodes() undoes it, and lowers the avail_cpus of
 * the nodes it sized for a job that shares nodes: the next try and
 * Slurm's own evaluation see every node as cons_tres handed it). */
static void _undo(struct _ev *a)
{
	topology_eval_t *te = a->te;

	bit_copybits(te->node_map, a->orig_map);
	core_array_or(te->avail_core, a->orig_core);
	te->max_nodes = a->max_nodes;
	te->avail_cpus = a->avail_cpus;
	for (int i = 0; te->avail_res_array &&
			next_node_bitmap(a->orig_map, &i); i++) {
		if (te->avail_res_array[i])
			te->avail_res_array[i]->avail_cpus = a->node_cpus[i];
	}
}

/* sel_test's try: the wrapped plugin's eval_nodes on the engine's choice. */
static int _try(void *arg, bitstr_t *narrow)
{
	struct _ev *a = arg;
	topology_eval_t *te = a->te;
	int rc;

	bit_and(te->node_map, narrow);
	rc = _inner_eval(te);
	if (rc == SLURM_SUCCESS)
		bit_copybits(narrow, te->node_map);
	else
		_undo(a);
	return rc;
}

/*
 * Does the job count a GRES per job (--gpus=N)?  What Slurm's
 * gres_sched_init() finds, which cons_tres calls only inside the common
 * eval_nodes code (and for one node): te->gres_per_job is unset when a
 * job of more than one node comes here.
 */
static bool _gres_per_job(job_record_t *job_ptr)
{
	topoml_list_itr_t it;
	gres_state_t *gs;
	bool any = false;

	if (!job_ptr->gres_list_req)
		return false;
	it = list_iterator_create(job_ptr->gres_list_req);
	while (!any && (gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;

		any = js && js->gres_per_job;
	}
	list_iterator_destroy(it);
	return any;
}

/* NULL, or why the engine does not place this request. */
static const char *_not_modelled(const topology_eval_t *te)
{
	job_record_t *job_ptr = te->job_ptr;

	if (!job_ptr || !job_ptr->details)
		return "no job details";
	if (job_ptr->details->contiguous)
		return "--contiguous is Slurm's";
	if (job_ptr->details->segment_size)
		return "--segment is Slurm's";
	if (te->gres_per_job || _gres_per_job(job_ptr))
		return "GRES per job are Slurm's";
	if (te->prefer_alloc_nodes)
		return "prefer_alloc_nodes is Slurm's";
	return NULL;
}

/*
 * The nodes eval_nodes chose for a job, the choice and the reason: the
 * job's SystemComment (sel_publish_on: its nodes in their order, the
 * placement's score) as select/topoml writes it at job_begin.  A topology
 * plugin has no job_begin: 26.05 writes it in get_rank, which cons_tres
 * calls only for the nodes it allocates (of a job of two nodes or more);
 * else here, on every evaluation that fits (backfill's plans too: a
 * pending job shows its planned nodes until it starts).
 */
static void _note(job_record_t *job_ptr, bitstr_t *nodes, int attempt,
		  enum topoml_hint hint, const char *why)
{
	slurm_mutex_lock(&g_lock);
	if (g_topo) {
		sel_publish_note(job_ptr->job_id, attempt, hint, why);
		FREE_NULL_BITMAP(g_last_map);
		g_last_map = bit_copy(nodes);
		g_last_job = job_ptr;
		/* 26.05 calls get_rank for more than one node only */
		if (!TOPOML_TOPO_RANK || bit_set_count(nodes) == 1)
			sel_publish_on(job_ptr, nodes);
	}
	slurm_mutex_unlock(&g_lock);
}

extern int topology_p_eval_nodes(topology_eval_t *te)
{
	struct timespec t0;
	struct sel_job j;
	struct _ev a = { .te = te };
	enum topoml_hint hint = TOPOML_HINT_ALLREDUCE;
	const char *bad;
	int attempt = -1, rc;
	char why[256] = "";
	bool traced;

	if (!running_in_slurmctld() || !te->node_map)
		return _inner_eval(te);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	slurm_mutex_lock(&g_lock);
	traced = g_conf.debug > 0;
	if (!g_topo) {
		snprintf(why, sizeof(why), "no topology loaded");
	} else if ((bad = _not_modelled(te))) {
		snprintf(why, sizeof(why), "%s", bad);
	} else if (!topoml_siteconf_placement(&g_conf,
					      te->job_ptr->partition)) {
		snprintf(why, sizeof(why), "placement off for partition %s",
			 te->job_ptr->partition);
	} else {
		a.orig_map = bit_copy(te->node_map);
		a.orig_core = copy_core_array(te->avail_core);
		a.max_nodes = te->max_nodes;
		a.avail_cpus = te->avail_cpus;
		a.node_cpus = xcalloc(node_record_count, sizeof(uint16_t));
		for (int i = 0; te->avail_res_array &&
				next_node_bitmap(a.orig_map, &i); i++) {
			if (te->avail_res_array[i])
				a.node_cpus[i] =
					te->avail_res_array[i]->avail_cpus;
		}
		sel_map_nodes();
		sel_job_init(&j, te->job_ptr);
		hint = j.view.hint;
		attempt = sel_test(&j, a.orig_map, te->min_nodes,
				   te->max_nodes, te->req_nodes, false, _try,
				   &a, why, sizeof(why));
		if (attempt >= 0)
			bit_copybits(te->node_map, a.orig_map);
	}
	slurm_mutex_unlock(&g_lock);

	if (attempt >= 0)
		rc = SLURM_SUCCESS;
	else if (attempt == SEL_WAITING)
		rc = SLURM_ERROR;	/* the site's locality wait */
	else
		rc = _inner_eval(te);	/* as stock Slurm */
	if (rc == SLURM_SUCCESS)
		_note(te->job_ptr, te->node_map, attempt, hint, why);
	if (traced || (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE))
		info("topology/topoml: eval_nodes %pJ rc=%d attempt=%d nodes=%d total_us=%ld%s%s",
		     te->job_ptr, rc, attempt,
		     rc == SLURM_SUCCESS ? bit_set_count(te->node_map) : 0,
		     sel_usec_since(&t0),
		     (attempt < 0 && why[0]) ? " fallback: " : "",
		     (attempt < 0) ? why : "");
	FREE_NULL_BITMAP(a.orig_map);
	if (a.orig_core)
		free_core_array(&a.orig_core);
	xfree(a.node_cpus);
	return rc;
}

/* ---- forwarded to the wrapped plugin ------------------------------- */

/*
 * The topology Slurm's tools show (scontrol show topology): the wrapped
 * plugin's record (its switches or blocks), the engine's model in one
 * line, and topo_show.c's listing (dragonfly groups, torus coordinates,
 * the fragmentation now), made in slurmctld and carried to the client.
 * It travels tagged with the active plugin's id, which is ours (else
 * topology_g_topology_pack() drops it).
 */
struct _tinfo {
	void *inner;		/* the wrapped plugin's topoinfo */
	char *model;		/* the engine's summary, or why none */
	struct topo_show *show;	/* the engine's listing, or NULL */
};

static int _own_topoinfo(topology_data_t type, void *data, int rc)
{
	dynamic_plugin_data_t **pp = data;
	struct _tinfo *t;
	char sum[256];

	if (rc != SLURM_SUCCESS || type != TOPO_DATA_TOPOLOGY_PTR || !pp)
		return rc;
	if (!*pp)	/* topology/default (24.11) has no record */
		*pp = xmalloc(sizeof(dynamic_plugin_data_t));
	t = xmalloc(sizeof(*t));
	t->inner = (*pp)->data;
	slurm_mutex_lock(&g_lock);
	if (g_topo) {
		topoml_summary(g_topo, sum, sizeof(sum));
		/* slurmctld's node read lock is held (_slurm_rpc_get_topo) */
		sel_map_nodes();
		t->show = topo_show_make(g_topo,
					 xstrcmp(g_inner_name,
						 TOPOML_TOPO_FLAT),
					 g_map, g_map_count);
	} else {
		snprintf(sum, sizeof(sum), "no model, %s places every job",
			 g_inner_name);
	}
	slurm_mutex_unlock(&g_lock);
	t->model = xstrdup(sum);
	(*pp)->data = t;
	(*pp)->plugin_id = plugin_id;
	return rc;
}

static int _tinfo_free(void *p)
{
	struct _tinfo *t = p;
	int rc = SLURM_SUCCESS;

	if (!t)
		return rc;
	if (t->inner)
		rc = (*(g_ops.topoinfo_free))(t->inner);
	xfree(t->model);
	topo_show_free(t->show);
	xfree(t);
	return rc;
}

static int _tinfo_pack(void *p, buf_t *buffer, uint16_t protocol_version)
{
	struct _tinfo *t = p;
	char *model = t ? t->model : NULL;
	int rc = (*(g_ops.topoinfo_pack))(t ? t->inner : NULL, buffer,
					  protocol_version);

	packstr(model, buffer);
	topo_show_pack(t ? t->show : NULL, buffer);
	return rc;
}

static int _tinfo_unpack(void **pp, buf_t *buffer, uint16_t protocol_version)
{
	struct _tinfo *t = xmalloc(sizeof(*t));

	*pp = t;
	if ((*(g_ops.topoinfo_unpack))(&t->inner, buffer, protocol_version) !=
	    SLURM_SUCCESS)
		goto unpack_error;
	safe_unpackstr(&t->model, buffer);
	/* the message's last field: none from an older topology/topoml */
	if (remaining_buf(buffer) &&
	    topo_show_unpack(&t->show, buffer) != SLURM_SUCCESS)
		goto unpack_error;
	return SLURM_SUCCESS;

unpack_error:
	t->inner = NULL;	/* the wrapped plugin frees its own */
	_tinfo_free(t);
	*pp = NULL;
	return SLURM_ERROR;
}

/* After the wrapped plugin's lines: the model and its listing. */
static void _tinfo_print_model(struct _tinfo *t, char *nodes_list,
			       char *unit, char **out)
{
	if (!t)
		return;
	if (t->model && (!nodes_list || !nodes_list[0]) &&
	    (!unit || !unit[0]))
		xstrfmtcat(*out, "topoml model: %s\n", t->model);
	topo_show_print(t->show, nodes_list, unit, out);
}

/*
 * The engine's fragmentation of the nodes of node_mask (topo_show.h: the
 * model's nodes the largest job at the best level cannot have), which
 * backfill's bf_topopt compares; false: none (no model, not slurmctld).
 */
static bool _engine_frag(bitstr_t *node_mask, uint32_t *frag)
{
	int64_t f = -1;

	if (!running_in_slurmctld() || !node_mask)
		return false;
	slurm_mutex_lock(&g_lock);
	if (g_topo) {
		sel_map_nodes();
		f = topo_show_fragmentation(g_topo, g_map, g_map_count,
					    node_mask, NULL);
	}
	slurm_mutex_unlock(&g_lock);
	if (f < 0)
		return false;
	*frag = f;
	return true;
}

#if TOPOML_TOPO_CTX

/* The wrapped plugin's instance behind ours (plugin_ctx). */
static void *_ictx(void *tctx)
{
	struct _inst *in = tctx;

	return in ? in->inner.plugin_ctx : NULL;
}

extern int topology_p_add_rm_node(node_record_t *node_ptr, char *addr,
				  topology_ctx_t *tctx)
{
	struct _inst *in = tctx->plugin_ctx;

	return in ? (*(g_ops.add_rm_node))(node_ptr, addr, &in->inner)
		  : SLURM_ERROR;
}

extern int topology_p_build_config(topology_ctx_t *tctx)
{
	struct _inst *in = tctx->plugin_ctx;

	if (!in) {
		in = xmalloc(sizeof(*in));
		tctx->plugin_ctx = in;
	}
	/* the same file; its parsed config only for Slurm's own kinds */
	in->inner.cluster_default = tctx->cluster_default;
	in->inner.idx = tctx->idx;
	in->inner.name = tctx->name;
	in->inner.plugin = g_inner_name;
	in->inner.topo_conf = tctx->topo_conf;
	slurm_mutex_lock(&g_lock);
	g_map_count = -1;
	slurm_mutex_unlock(&g_lock);
	return (*(g_ops.build_config))(&in->inner);
}

extern int topology_p_destroy_config(topology_ctx_t *tctx)
{
	struct _inst *in = tctx->plugin_ctx;
	int rc = SLURM_SUCCESS;

	if (in)
		rc = (*(g_ops.destroy_config))(&in->inner);
	xfree(tctx->plugin_ctx);
	return rc;
}

extern int topology_p_whole_topo(bitstr_t *node_mask, void *tctx)
{
	return (*(g_ops.whole_topo))(node_mask, _ictx(tctx));
}

extern bitstr_t *topology_p_get_bitmap(char *name, void *tctx)
{
	return (*(g_ops.get_bitmap))(name, _ictx(tctx));
}

extern bool topology_p_generate_node_ranking(topology_ctx_t *tctx)
{
	struct _inst *in = tctx->plugin_ctx;

	return in ? (*(g_ops.node_ranking))(&in->inner) : false;
}

extern int topology_p_get_node_addr(char *node_name, char **addr,
				    char **pattern, void *tctx)
{
	return (*(g_ops.get_node_addr))(node_name, addr, pattern,
					_ictx(tctx));
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				     int *count, uint16_t tree_width,
				     void *tctx)
{
	return (*(g_ops.split_hostlist))(hl, sp_hl, count, tree_width,
					 _ictx(tctx));
}

extern int topology_p_get(topology_data_t type, void *data, void *tctx)
{
	return _own_topoinfo(type, data,
			     (*(g_ops.get))(type, data, _ictx(tctx)));
}

extern int topology_p_topoinfo_free(void *topoinfo_ptr)
{
	return _tinfo_free(topoinfo_ptr);
}

extern int topology_p_topoinfo_pack(void *topoinfo_ptr, buf_t *buffer,
				    uint16_t protocol_version)
{
	return _tinfo_pack(topoinfo_ptr, buffer, protocol_version);
}

extern int topology_p_topoinfo_print(void *topoinfo_ptr, char *nodes_list,
				     char *unit, char **out)
{
	struct _tinfo *t = topoinfo_ptr;
	int rc = (*(g_ops.topoinfo_print))(t ? t->inner : NULL, nodes_list,
					   unit, out);

	_tinfo_print_model(t, nodes_list, unit, out);
	return rc;
}

extern int topology_p_topoinfo_unpack(void **topoinfo_pptr, buf_t *buffer,
				      uint16_t protocol_version)
{
	return _tinfo_unpack(topoinfo_pptr, buffer, protocol_version);
}

extern void topology_p_jobinfo_free(void *topo_jobinfo)
{
	(*(g_ops.jobinfo_free))(topo_jobinfo);
}

extern void topology_p_jobinfo_pack(void *topo_jobinfo, buf_t *buffer,
				    uint16_t protocol_version)
{
	(*(g_ops.jobinfo_pack))(topo_jobinfo, buffer, protocol_version);
}

extern int topology_p_jobinfo_unpack(void **topo_jobinfo, buf_t *buffer,
				     uint16_t protocol_version)
{
	return (*(g_ops.jobinfo_unpack))(topo_jobinfo, buffer,
					 protocol_version);
}

extern int topology_p_jobinfo_get(topology_jobinfo_type_t type,
				  void *topo_jobinfo, void *data)
{
	return (*(g_ops.jobinfo_get))(type, topo_jobinfo, data);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask,
					     void *tctx)
{
	uint32_t frag;

	if (_engine_frag(node_mask, &frag))
		return frag;
	return (*(g_ops.get_fragmentation))(node_mask, _ictx(tctx));
}

extern void topology_p_get_topology_str(node_record_t *node_ptr,
					char **topology_str_ptr,
					topology_ctx_t *tctx)
{
	struct _inst *in = tctx->plugin_ctx;

	if (in)
		(*(g_ops.get_topology_str))(node_ptr, topology_str_ptr,
					    &in->inner);
}

#if TOPOML_TOPO_RANK
/*
 * false: one-node jobs come to eval_nodes too (not cons_tres's
 * _get_one_res), so that the engine places them as select/topoml does,
 * where they break no free leaf; the wrapped plugin's answer is unused.
 */
extern bool topology_p_allow_one_node(void *tctx)
{
	(void)tctx;
	return false;
}

extern int topology_p_eval_node(topology_eval_t *te, int node_inx)
{
	topology_ctx_t *mine = te->tctx;
	struct _inst *in = mine ? mine->plugin_ctx : NULL;
	int rc;

	if (!in)
		return SLURM_ERROR;
	te->tctx = &in->inner;
	rc = (*(g_ops.eval_node))(te, node_inx);
	te->tctx = mine;
	return rc;
}

/*
 * The job's nodes in the engine's ring order, the key Slurm sorts task ids
 * by (slurm_step_layout.c _task_layout_topo): rank = unit << 16 | place
 * in the ring, where the unit (stepmgr.c groups step nodes by it) counts
 * the wrapped plugin's units (tree: leaves) as the ring meets them.  false
 * (the wrapped plugin's ranks kept): no model, a node it lacks, too many
 * nodes.  g_lock held.
 */
static bool _ring_ranks(bitstr_t *node_bitmap, uint32_t *rank, uint32_t n,
			const struct sel_job *j)
{
	int *eng = xcalloc(n, sizeof(int));
	uint32_t *inner = xcalloc(n, sizeof(uint32_t));
	int *k_of = NULL;
	uint32_t k = 0, unit = 0, last = 0;
	bool ok = false;

	if (!g_topo || n >= (1U << TOPO_RANK_ID_SHIFT))
		goto out;
	sel_map_nodes();
	for (int i = 0; next_node_bitmap(node_bitmap, &i); i++) {
		if (k >= n || g_map[i] < 0)
			goto out;
		eng[k++] = g_map[i];
	}
	if (k != n)
		goto out;
	k_of = xcalloc(g_topo->nnodes, sizeof(int));
	for (k = 0; k < n; k++)
		k_of[eng[k]] = k;
	memcpy(inner, rank, n * sizeof(uint32_t));
	if (j)
		(void)sel_job_order(j, eng, n);
	else
		topoml_ring_order(g_topo, eng, n);
	for (uint32_t p = 0; p < n; p++) {
		uint32_t at = k_of[eng[p]];
		uint32_t u = inner[at] >> TOPO_RANK_ID_SHIFT;

		if (!p || u != last)
			unit++;
		last = u;
		rank[at] = (unit << TOPO_RANK_ID_SHIFT) | p;
	}
	ok = true;
out:
	xfree(eng);
	xfree(inner);
	xfree(k_of);
	return ok;
}

extern int topology_p_get_rank(bitstr_t *node_bitmap, uint32_t **node_rank,
			       uint32_t *size, void *tctx)
{
	uint32_t n = node_bitmap ? bit_set_count(node_bitmap) : 0;
	int rc = (*(g_ops.get_rank))(node_bitmap, node_rank, size,
				     _ictx(tctx));

	if (rc != SLURM_SUCCESS || n < 2 || !running_in_slurmctld())
		return rc;
	if (!*node_rank) {	/* flat: one unit */
		*node_rank = xcalloc(n, sizeof(uint32_t));
		*size = n;
	}
	if (*size != n)
		return rc;
	slurm_mutex_lock(&g_lock);
	if (g_topo && g_last_job && g_last_map &&
	    bit_equal(g_last_map, node_bitmap)) {
		/* the job eval_nodes just placed: its order, its comment */
		struct sel_job j;

		sel_map_nodes();
		sel_job_init(&j, g_last_job);
		sel_publish_on(g_last_job, node_bitmap);
		if (!_ring_ranks(node_bitmap, *node_rank, n, &j))
			debug("topology/topoml: %pJ keeps %s's ranks",
			      g_last_job, g_inner_name);
	} else if (!_ring_ranks(node_bitmap, *node_rank, n, NULL)) {
		debug("topology/topoml: %u nodes keep %s's ranks", n,
		      g_inner_name);
	}
	g_last_job = NULL;
	FREE_NULL_BITMAP(g_last_map);
	slurm_mutex_unlock(&g_lock);
	return rc;
}
#endif

#else /* 24.11 */

extern int topology_p_build_config(void)
{
	slurm_mutex_lock(&g_lock);
	g_map_count = -1;
	slurm_mutex_unlock(&g_lock);
	return (*(g_ops.build_config))();
}

extern int topology_p_whole_topo(bitstr_t *node_mask)
{
	return (*(g_ops.whole_topo))(node_mask);
}

extern bitstr_t *topology_p_get_bitmap(char *name)
{
	return (*(g_ops.get_bitmap))(name);
}

extern bool topology_p_generate_node_ranking(void)
{
	return (*(g_ops.node_ranking))();
}

extern int topology_p_get_node_addr(char *node_name, char **addr,
				    char **pattern)
{
	return (*(g_ops.get_node_addr))(node_name, addr, pattern);
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				     int *count, uint16_t tree_width)
{
	return (*(g_ops.split_hostlist))(hl, sp_hl, count, tree_width);
}

extern int topology_p_topology_free(void *topoinfo_ptr)
{
	return _tinfo_free(topoinfo_ptr);
}

extern int topology_p_get(topology_data_t type, void *data)
{
	return _own_topoinfo(type, data, (*(g_ops.get))(type, data));
}

extern int topology_p_topology_pack(void *topoinfo_ptr, buf_t *buffer,
				    uint16_t protocol_version)
{
	return _tinfo_pack(topoinfo_ptr, buffer, protocol_version);
}

extern int topology_p_topology_print(void *topoinfo_ptr, char *nodes_list,
				     char **out)
{
	struct _tinfo *t = topoinfo_ptr;
	int rc = (*(g_ops.topoinfo_print))(t ? t->inner : NULL, nodes_list,
					   out);

	_tinfo_print_model(t, nodes_list, NULL, out);
	return rc;
}

extern int topology_p_topology_unpack(void **topoinfo_pptr, buf_t *buffer,
				      uint16_t protocol_version)
{
	return _tinfo_unpack(topoinfo_pptr, buffer, protocol_version);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask)
{
	uint32_t frag;

	if (_engine_frag(node_mask, &frag))
		return frag;
	return (*(g_ops.get_fragmentation))(node_mask);
}

#endif
