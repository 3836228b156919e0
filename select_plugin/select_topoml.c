/*
 * select/topoml: topology-aware node selection for Slurm.
 *
 * A thin wrapper around select/cons_tres, built like Slurm's own
 * select/other (src/plugins/select/other/other_select.c): every select_p_*
 * entry point is forwarded to cons_tres through a plugin context.  Only
 * select_p_job_test does more: in run-now mode it asks libtopoml's engine
 * for the best N nodes among the candidates, narrows the candidate bitmap to
 * them and lets cons_tres place cores, memory and GRES there; if cons_tres
 * cannot fit the job it tries the engine's next choices and at last the
 * full bitmap (plain cons_tres).  Any problem is logged once and the job
 * gets cons_tres's own choice.
 *
 * The plugin keeps no placement state of its own: the placement is
 * recomputed from the node and job tables, and the score it shows users
 * lives in the job's SystemComment, which slurmctld saves with the job.
 * Its one table is the node health records (select_health.c), which
 * job_fini fills and job_test reads (HealthPolicy=avoid).
 *
 * Its parts (select_int.h): this file, the ops and their forwarding;
 * select_util.c, what the others share below them (cons_tres's job test,
 * errors logged once); select_conf.c, the site configuration; select_job.c, the job view;
 * select_plan.c, the run-now and will-run plans; select_publish.c, the
 * SystemComment.  What differs between Slurm releases (22.05, 25.05+) is
 * in select_compat.[ch], so the others read the same for each.  The
 * decisions without Slurm (the locality wait, the job view's parsing) are
 * libtopoml's (topology/policy/).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/plugin.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "select_int.h"
#include "log_limit.h"

/*
 * Symbols that live only in the slurmctld binary.  Defined here so clients
 * (squeue, sinfo, scontrol), which load every select plugin up to 24.11,
 * can load this one too; in slurmctld its own definitions take precedence.
 */
bitstr_t *idle_node_bitmap;
topoml_list_t job_list;

const char plugin_name[] = "Topology-aware ML placement (wraps cons_tres)";
const char plugin_type[] = "select/topoml";
const uint32_t plugin_id = TOPOML_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static plugin_context_t *g_context;
static pthread_mutex_t g_context_lock = PTHREAD_MUTEX_INITIALIZER;

static int _ctx_init(void)
{
	int rc = SLURM_SUCCESS;

	if (g_context)
		return rc;
	slurm_mutex_lock(&g_context_lock);
	if (g_context)
		goto done;
	if (topoml_wrapped_syms_size != sizeof(topoml_ops))
		fatal("select/topoml: built for a slurm_select_ops_t of a different Slurm");
	g_context = plugin_context_create("select", "select/cons_tres",
					  (void **)&topoml_ops,
					  topoml_wrapped_syms,
					  topoml_wrapped_syms_size);
	if (!g_context) {
		error("select/topoml: cannot load select/cons_tres");
		rc = SLURM_ERROR;
	}
done:
	slurm_mutex_unlock(&g_context_lock);
	return rc;
}

/* cons_tres's job_test, its wall and CPU time added to us. */
static int _cons_tres_test(job_record_t *job_ptr, bitstr_t *bitmap,
			   uint32_t min_nodes, uint32_t max_nodes,
			   uint32_t req_nodes, uint16_t mode,
			   topoml_list_t preemptee_candidates,
			   topoml_list_t *preemptee_job_list,
			   TOPOML_JT_PARAMS, long us[2])
{
	struct sel_clock t0;
	int rc;

	sel_clock_start(&t0);
	rc = (*(topoml_ops.job_test))(job_ptr, bitmap, min_nodes, max_nodes,
				      req_nodes, mode, preemptee_candidates,
				      preemptee_job_list, TOPOML_JT_ARGS);
	sel_clock_add(&t0, us);
	return rc;
}

/* One job_test call's arguments, for sel_test's tries (_try). */
struct _jt {
	job_record_t *job_ptr;
	uint32_t min_nodes, max_nodes, req_nodes;
	uint16_t mode;
	topoml_list_t preemptee_candidates;
	topoml_list_t *preemptee_job_list;
#if TOPOML_JT_WILL_RUN
	resv_exc_t *resv_exc_ptr;
	will_run_data_t *will_run_ptr;
#elif TOPOML_JT_RESV_EXC
	resv_exc_t *resv_exc_ptr;
#else
	bitstr_t *exc_core_bitmap;
#endif
	long us[2];	/* cons_tres's wall and CPU time */
};

/* sel_test's try: cons_tres on the engine's choice. */
static int _try(void *arg, bitstr_t *narrow)
{
	struct _jt *a = arg;
#if TOPOML_JT_WILL_RUN
	resv_exc_t *resv_exc_ptr = a->resv_exc_ptr;
	will_run_data_t *will_run_ptr = a->will_run_ptr;
#elif TOPOML_JT_RESV_EXC
	resv_exc_t *resv_exc_ptr = a->resv_exc_ptr;
#else
	bitstr_t *exc_core_bitmap = a->exc_core_bitmap;
#endif

	return _cons_tres_test(a->job_ptr, narrow, a->min_nodes, a->max_nodes,
			       a->req_nodes, a->mode, a->preemptee_candidates,
			       a->preemptee_job_list, TOPOML_JT_ARGS,
			       a->us);
}

/*
 * slurmctld loads every select plugin in PluginDir, the configured one or
 * not: only the configured one reads topoml.conf, so that a site file meant
 * for select/topoml never stops a cluster that runs plain cons_tres.
 */
static bool _placing_here(void)
{
	return running_in_slurmctld() &&
	       !xstrcmp(slurm_conf.select_type, plugin_type);
}

/* Node health (select_health.c): the site's policy after each load. */
static void _health_conf(void)
{
	int policy, avoid_time;

	slurm_mutex_lock(&g_lock);
	policy = g_conf.health_policy;
	avoid_time = g_conf.health_avoid_time;
	slurm_mutex_unlock(&g_lock);
	sel_health_conf(_placing_here(), policy, avoid_time);
}

extern int init(void)
{
	if (_ctx_init() != SLURM_SUCCESS)
		return SLURM_ERROR;
	topoml_siteconf_init(&g_conf);
	if (_placing_here())
		sel_conf_load(true);
	_health_conf();
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	int rc = SLURM_SUCCESS;

	slurm_mutex_lock(&g_lock);
	sel_conf_clear();
	sel_plan_clear();
	slurm_mutex_unlock(&g_lock);
	sel_health_fini();

	slurm_mutex_lock(&g_context_lock);
	if (g_context)
		rc = plugin_context_destroy(g_context);
	g_context = NULL;
	slurm_mutex_unlock(&g_context_lock);
	return rc;
}

extern int select_p_node_init(void)
{
	slurm_mutex_lock(&g_lock);
	g_map_count = -1;
	slurm_mutex_unlock(&g_lock);
	return (*(topoml_ops.node_init))();
}

static int _job_test(job_record_t *job_ptr, bitstr_t *bitmap,
		     uint32_t min_nodes, uint32_t max_nodes,
		     uint32_t req_nodes, uint16_t mode,
		     topoml_list_t preemptee_candidates,
		     topoml_list_t *preemptee_job_list,
		     TOPOML_JT_PARAMS)
{
	struct sel_clock t0;
	struct sel_job j;
	enum topoml_hint hint = TOPOML_HINT_ALLREDUCE;
	long ct_us[2] = { 0, 0 }, all_us[2] = { 0, 0 };
	int attempt = -1, rc;
	char why[256] = "";
	bool traced;

	/*
	 * Run-now decides where a job starts; will-run (backfill's plan,
	 * sbatch --test-only) narrows the same way, so that backfill
	 * reserves the nodes topoml would use.  Test-only: cons_tres.
	 */
	if (mode != SELECT_MODE_RUN_NOW && mode != SELECT_MODE_WILL_RUN)
		return (*(topoml_ops.job_test))(job_ptr, bitmap, min_nodes,
						max_nodes, req_nodes, mode,
						preemptee_candidates,
						preemptee_job_list,
						TOPOML_JT_ARGS);

	sel_clock_start(&t0);
	slurm_mutex_lock(&g_lock);
	if (!g_topo) {
		snprintf(why, sizeof(why), "no topology loaded");
	} else if (!topoml_siteconf_placement(&g_conf, job_ptr->partition)) {
		snprintf(why, sizeof(why), "placement off for partition %s",
			 job_ptr->partition);
	} else {
		sel_map_nodes();
		/* the job view: its SPANK environment read once */
		sel_job_init(&j, job_ptr);
		if (j.view.bad_hint)
			sel_error_once("JobId=%u: unknown --ml-comm value '%.60s', using the default",
				       job_ptr->job_id, j.view.bad_hint);
		hint = j.view.hint;
		struct _jt a = {
			.job_ptr = job_ptr, .min_nodes = min_nodes,
			.max_nodes = max_nodes, .req_nodes = req_nodes,
			.mode = mode,
			.preemptee_candidates = preemptee_candidates,
			.preemptee_job_list = preemptee_job_list,
#if TOPOML_JT_WILL_RUN
			.resv_exc_ptr = resv_exc_ptr,
			.will_run_ptr = will_run_ptr,
#elif TOPOML_JT_RESV_EXC
			.resv_exc_ptr = resv_exc_ptr,
#else
			.exc_core_bitmap = exc_core_bitmap,
#endif
		};

		attempt = sel_test(&j, bitmap, min_nodes, max_nodes,
				   req_nodes, mode == SELECT_MODE_WILL_RUN,
				   _try, &a, why, sizeof(why));
		ct_us[0] = a.us[0];
		ct_us[1] = a.us[1];
	}
	traced = g_conf.debug > 0;
	slurm_mutex_unlock(&g_lock);

	if (attempt >= 0) {
		rc = SLURM_SUCCESS;
	} else if (attempt == SEL_WAITING) {
		rc = SLURM_ERROR;	/* pending: Resources */
	} else {
		rc = _cons_tres_test(job_ptr, bitmap, min_nodes, max_nodes,
				     req_nodes, mode, preemptee_candidates,
				     preemptee_job_list, TOPOML_JT_ARGS,
				     ct_us);
	}
	if (rc == SLURM_SUCCESS && mode == SELECT_MODE_RUN_NOW)
		sel_publish_note(job_ptr->job_id, attempt, hint, why);
	sel_clock_add(&t0, all_us);
	if (traced || (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE))
		info("select/topoml: %s %pJ rc=%d attempt=%d total_us=%ld cons_tres_us=%ld cpu_us=%ld cons_tres_cpu_us=%ld%s%s",
		     mode == SELECT_MODE_RUN_NOW ? "job_test" : "will_run",
		     job_ptr, rc, attempt, all_us[0], ct_us[0], all_us[1],
		     ct_us[1],
		     (attempt < 0 && why[0]) ? " fallback: " : "",
		     (attempt < 0) ? why : "");
	return rc;
}

/*
 * HealthPolicy=avoid or drain: nodes reported slow lately are offered
 * last, by a first try without them (select_health.c); the job gets
 * them only when it fits nowhere else.  Run-now only, and that try
 * preempts nothing: a job never waits (will-run) or preempts another to
 * keep off a reported node.
 */
extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap,
			     uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode,
			     topoml_list_t preemptee_candidates,
			     topoml_list_t *preemptee_job_list,
			     TOPOML_JT_PARAMS)
{
	bitstr_t *pref = NULL;
	int rc;

	if (mode == SELECT_MODE_RUN_NOW)
		pref = sel_health_prefer(bitmap, min_nodes);
	if (pref) {
		rc = _job_test(job_ptr, pref, min_nodes, max_nodes, req_nodes,
			       mode, NULL, preemptee_job_list, TOPOML_JT_ARGS);
		if (rc == SLURM_SUCCESS)
			bit_copybits(bitmap, pref);
		FREE_NULL_BITMAP(pref);
		if (rc == SLURM_SUCCESS)
			return rc;
	}
	return _job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
			 mode, preemptee_candidates, preemptee_job_list,
			 TOPOML_JT_ARGS);
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	int rc = (*(topoml_ops.job_begin))(job_ptr);

	slurm_mutex_lock(&g_lock);
	sel_publish(job_ptr);
	slurm_mutex_unlock(&g_lock);
	return rc;
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
	return (*(topoml_ops.job_ready))(job_ptr);
}

extern int select_p_job_expand(job_record_t *from_job_ptr,
			       job_record_t *to_job_ptr)
{
	return (*(topoml_ops.job_expand))(from_job_ptr, to_job_ptr);
}

extern int select_p_job_resized(job_record_t *job_ptr,
				node_record_t *node_ptr)
{
	return (*(topoml_ops.job_resized))(job_ptr, node_ptr);
}

extern int select_p_job_fini(job_record_t *job_ptr)
{
	sel_health_job_fini(job_ptr);
	return (*(topoml_ops.job_fini))(job_ptr);
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	return (*(topoml_ops.job_suspend))(job_ptr, indf_susp);
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	return (*(topoml_ops.job_resume))(job_ptr, indf_susp);
}

extern int select_p_select_nodeinfo_set_all(void)
{
	return (*(topoml_ops.nodeinfo_set_all))();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	return (*(topoml_ops.nodeinfo_set))(job_ptr);
}

/* scontrol reconfigure: reread topoml.conf and the topology file. */
extern int select_p_reconfigure(void)
{
	if (_placing_here())
		sel_conf_load(false);
	_health_conf();
	return (*(topoml_ops.reconfigure))();
}