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
 * The plugin keeps no state of its own: the placement is recomputed from the
 * node and job tables, and the score it shows users lives in the job's
 * SystemComment, which slurmctld saves with the job.
 *
 * This file and select_compat.[ch] are the only places that know Slurm's
 * internal structures; what differs between releases (22.05, 25.05+) is in
 * select_compat.[ch], so this file reads the same for each.
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

#include "topoml.h"
#include "loaders.h"
#include "jobcomment.h"
#include "select_compat.h"
#include "job_req.h"
#include "log_limit.h"

/*
 * Symbols that live only in the slurmctld binary.  Defined here so clients
 * (squeue, sinfo, scontrol), which load every select plugin up to 24.11,
 * can load this one too; in slurmctld its own definitions take precedence.
 */
bitstr_t *idle_node_bitmap;
topoml_list_t job_list;
/*
 * When slurmctld last changed its partitions (every release the plugin
 * builds for has it).  Weak: the clients, which lack it, load the plugin
 * with its address NULL, and the version script needs no entry for it.
 */
extern time_t last_part_update __attribute__((weak));

const char plugin_name[] = "Topology-aware ML placement (wraps cons_tres)";
const char plugin_type[] = "select/topoml";
const uint32_t plugin_id = TOPOML_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define TOPOML_ATTEMPTS	3	/* engine choices before plain cons_tres */

static plugin_context_t *g_context;
static pthread_mutex_t g_context_lock = PTHREAD_MUTEX_INITIALIZER;

/* Site configuration and topology, replaced as a whole on reconfigure. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct topoml_siteconf g_conf;
static topoml_topo_t *g_topo;
static char *g_topo_path;
static int *g_map;		/* Slurm node index -> engine node, or -1 */
static int *g_rmap;		/* engine node -> Slurm node index, or -1 */
static int g_map_count = -1;	/* node_record_count g_map was built for */
static uint64_t g_map_gen;	/* bumped when g_topo or g_map change */

/* The last run-now decision, for the job's SystemComment at job_begin. */
static struct {
	uint32_t job_id;
	int attempt;		/* engine choice used, -1 = plain cons_tres */
	enum topoml_hint hint;
	char why[256];
} g_last;

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

/*
 * Errors a job can cause (a forged --ml-comm value in each of many jobs)
 * must not flood the log: each text once while it is recent, at most 5
 * lines of one kind (its format) a minute with the count of the others
 * (log_limit.h), the line escaped whole (its values are the job's).
 */
static void _error_once(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void _error_once(const char *fmt, ...)
{
	static struct topoml_log_limit limit = TOPOML_LOG_LIMIT_INIT(5, 60);
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned long dropped;
	char buf[1024];
	va_list ap;
	bool show;

	va_start(ap, fmt);
	topoml_log_vformat(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	slurm_mutex_lock(&lock);
	show = topoml_log_limit(&limit, fmt, buf, time(NULL), &dropped);
	slurm_mutex_unlock(&lock);
	if (show && dropped)
		error("select/topoml: %s (%lu similar messages suppressed)",
		      buf, dropped);
	else if (show)
		error("select/topoml: %s", buf);
}

static char *_conf_dir(void)
{
	char *p = get_extra_conf_path("topoml.conf");
	char *slash = p ? strrchr(p, '/') : NULL;

	if (slash)
		*slash = '\0';
	else
		xfree(p);
	return p;
}

static void _errors_log(topoml_errors_t *err, bool is_fatal)
{
	int i;

	for (i = 0; i < err->n; i++)
		error("select/topoml: %s", err->msg[i]);
	if (is_fatal)
		fatal("select/topoml: bad site configuration (above); fix it or set SelectType=select/cons_tres");
}

/*
 * Slurm's own topology.conf, written for a topology plugin whose file the
 * engine does not read (topology/ring: RingName=; topology/hypercube):
 * that site wants Slurm's plugin, so jobs get plain cons_tres rather than
 * a slurmctld that stops at start-up.  A TopologyFile= the admin names in
 * topoml.conf is still read (and its errors still fatal).
 */
static bool _foreign_topology_conf(const struct topoml_siteconf *c,
				   const char *topo_path)
{
	static const char *const foreign[] = { "topology/ring",
					       "topology/hypercube" };
	const char *plugin = slurm_conf.topology_plugin;
	const char *base = topo_path ? strrchr(topo_path, '/') : NULL;
	size_t i;

	if (c->topology_file || !plugin || !base ||
	    strcmp(base, "/topology.conf"))
		return false;
	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		if (!strcmp(plugin, foreign[i]))
			return true;
	return false;
}

/*
 * The topology file is the topology.conf that Slurm's own topology plugin
 * reads: topoml must then see the network Slurm sees, never stop a
 * slurmctld that stock Slurm runs, never keep a model of a file Slurm has
 * replaced.
 */
static bool _slurms_topology_file(const char *topo_path)
{
	const char *plugin = slurm_conf.topology_plugin;
	char *conf;
	struct stat a, b;
	bool same;

	if (!topo_path || (xstrcmp(plugin, "topology/tree") &&
			   xstrcmp(plugin, "topology/block")))
		return false;
	conf = get_extra_conf_path("topology.conf");
	same = conf && !stat(conf, &a) && !stat(topo_path, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	xfree(conf);
	return same;
}

/*
 * topoml_siteconf_load_topology() with the loader's warnings logged (what
 * Slurm only logs too, FILE:LINE:COL each) and, on failure, whether
 * Slurm's topology plugin refuses the file as well (*refused).
 */
#define TOPO_WARNINGS_SHOWN 50
static topoml_topo_t *_load_topology(const struct topoml_siteconf *c,
				     const char *dir, const char *topo_path,
				     topoml_errors_t *err, bool *refused)
{
	topoml_errors_t warn = { 0 };
	topoml_topo_t *t;
	int i;

	*refused = true;
	if (!topo_path)
		return topoml_siteconf_load_topology(c, dir, err);
	t = topoml_load_judged(topo_path, c->topology_format, err, &warn,
			       refused);
	for (i = 0; i < warn.n && i < TOPO_WARNINGS_SHOWN; i++)
		error("select/topoml: warning: %s", warn.msg[i]);
	if (warn.n > TOPO_WARNINGS_SHOWN)
		error("select/topoml: warning: ... and %d more about %s",
		      warn.n - TOPO_WARNINGS_SHOWN, topo_path);
	topoml_errors_clear(&warn);
	if (t && c->family && (int)t->family != c->family) {
		topoml_errors_add(err, "%s: Family=%s but %s describes a %s",
				  c->path ? c->path : "topoml.conf",
				  topoml_family_name(c->family), topo_path,
				  topoml_family_name(t->family));
		topoml_free(t);
		t = NULL;
		*refused = true;	/* topoml.conf's error */
	}
	return t;
}

/* torus3d's boxes the engine is bound to (g_topo->torus3d), or NULL */
static struct topoml_torus3d *g_t3d;

/*
 * Slurm 26.05's topology/torus3d (topology.yaml) takes only the box shapes
 * it lists, at its anchors: on that torus the engine proposes only those,
 * chosen by its own criteria, else torus3d refuses its choice.  A yaml
 * without torus3d (tree, block) or of another torus: the engine's own
 * boxes, as before.
 */
static struct topoml_torus3d *_torus3d_bind(topoml_topo_t *topo,
					    const char *dir)
{
	char *yaml = NULL, why[512];
	topoml_errors_t err = { 0 };
	struct topoml_torus3d *c = NULL;

	if (!topo || topo->family != TOPOML_TORUS)
		return NULL;
	xstrfmtcat(yaml, "%s/topology.yaml", dir);
	if (access(yaml, F_OK) == 0 &&
	    (c = topoml_torus3d_load(yaml, &err)) &&
	    topoml_torus3d_bind(topo, c, why, sizeof(why))) {
		info("select/topoml: not bound to torus3d's boxes: %s", why);
		topoml_torus3d_free(c);
		c = NULL;
	} else if (c) {
		info("select/topoml: %s: the engine proposes torus3d's %d box shapes only",
		     yaml, c->nshapes);
	} else if (err.n) {
		/* no torus3d section (tree, block) or a bad one */
		info("select/topoml: not bound to torus3d's boxes: %s",
		     err.msg[0]);
	}
	topoml_errors_clear(&err);
	xfree(yaml);
	return c;
}

/*
 * Read topoml.conf (if present) and the topology it names.  On failure the
 * previous configuration stays; at start-up a failure is fatal.  Not so
 * for the topology.conf Slurm reads (_slurms_topology_file()): a file
 * Slurm runs with never stops slurmctld, and one topoml cannot model
 * (Slurm may run with it, or has read it at reconfigure) leaves jobs to
 * plain cons_tres, said loudly, rather than keep a model Slurm has left.
 */
static int _load_conf(bool at_start)
{
	struct topoml_siteconf conf;
	topoml_errors_t err = { 0 };
	topoml_topo_t *topo = NULL;
	char *path = get_extra_conf_path("topoml.conf");
	char *dir = _conf_dir();
	char *topo_path = NULL;
	struct topoml_torus3d *t3d = NULL;
	char notes[8][TOPOML_NOTE_LEN];
	int rc = SLURM_ERROR, nnotes;
	bool refused, no_model = false;

	topoml_siteconf_init(&conf);
	if (path && access(path, F_OK) == 0) {
		if (topoml_siteconf_read(path, &conf, &err))
			goto out;
		/* deprecated names, settings that do nothing as set */
		nnotes = topoml_siteconf_notes(&conf, notes, 8);
		for (int i = 0; i < nnotes; i++)
			info("select/topoml: %s: %s", path, notes[i]);
	} else {
		info("select/topoml: no %s, using defaults", path);
	}
	if (conf.placement) {
		topo_path = topoml_siteconf_topology_path(&conf, dir);
		if (!topo_path && !conf.path) {
			/* No site files at all: behave as cons_tres. */
			info("select/topoml: no topology file in %s, jobs get plain cons_tres",
			     dir);
			rc = SLURM_SUCCESS;
			goto out;
		}
		if (_foreign_topology_conf(&conf, topo_path)) {
			info("select/topoml: %s is %s's, not a network the engine reads: jobs get plain cons_tres",
			     topo_path, slurm_conf.topology_plugin);
			free(topo_path);
			topo_path = NULL;
			rc = SLURM_SUCCESS;
			goto out;
		}
		topo = _load_topology(&conf, dir, topo_path, &err, &refused);
		if (!topo && _slurms_topology_file(topo_path) &&
		    (!refused || !at_start)) {
			_errors_log(&err, false);
			error("select/topoml: %s: %s; jobs get plain cons_tres placement until it is fixed (then scontrol reconfigure)",
			      topo_path, refused ?
			      "Slurm's topology plugin refuses it too" :
			      "Slurm's topology plugin runs with it, but topoml cannot model its network (above)");
			topoml_errors_clear(&err);
			no_model = true;
			rc = SLURM_SUCCESS;
			goto out;
		}
		if (!topo)
			goto out;
		t3d = _torus3d_bind(topo, dir);
	}
	rc = SLURM_SUCCESS;
out:
	if (rc != SLURM_SUCCESS) {
		_errors_log(&err, at_start);
		error("select/topoml: keeping the previous configuration");
		topoml_siteconf_clear(&conf);
		free(topo_path);
	} else {
		char sum[256];

		if (topo)
			topoml_summary(topo, sum, sizeof(sum));
		else if (no_model)
			snprintf(sum, sizeof(sum), "%s",
				 "no model of the topology (above), plain cons_tres");
		else
			snprintf(sum, sizeof(sum), "%s",
				 conf.placement ? "no topology, plain cons_tres"
						: "Placement=off, plain cons_tres");
		info("select/topoml: %s: %s%s%s", path, sum,
		     topo_path ? " from " : "", topo_path ? topo_path : "");
		slurm_mutex_lock(&g_lock);
		topoml_siteconf_clear(&g_conf);
		g_conf = conf;
		if (g_topo)
			topoml_free(g_topo);
		g_topo = topo;
		topoml_torus3d_free(g_t3d);
		g_t3d = t3d;
		free(g_topo_path);
		g_topo_path = topo_path;
		g_map_count = -1;
		g_map_gen++;
		slurm_mutex_unlock(&g_lock);
	}
	topoml_errors_clear(&err);
	xfree(path);
	xfree(dir);
	return rc;
}

/* Build the Slurm <-> engine node maps by name; g_lock held. */
static void _map_nodes(void)
{
	node_record_t *node_ptr;
	int i, unmapped = 0;

	if (g_map_count == node_record_count && g_map)
		return;
	xfree(g_map);
	xfree(g_rmap);
	g_map = xcalloc(node_record_count + 1, sizeof(int));
	g_rmap = xcalloc(g_topo->nnodes + 1, sizeof(int));
	for (i = 0; i < node_record_count; i++)
		g_map[i] = -1;
	for (i = 0; i < g_topo->nnodes; i++)
		g_rmap[i] = -1;
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		int t = topoml_node_by_name(g_topo, node_ptr->name);

		g_map[i] = t;
		if (t >= 0)
			g_rmap[t] = i;
		else
			unmapped++;
	}
	g_map_count = node_record_count;
	g_map_gen++;
	info("select/topoml: %d of %d Slurm nodes are in the topology (ring order of each job in its SystemComment)",
	     node_record_count - unmapped, node_record_count);
	/* Slurm leaves them out too ("Invalid hostnames ..."): say so */
	if (g_topo->nnodes > node_record_count - unmapped)
		info("select/topoml: %d of the topology's %d nodes are no Slurm node; never chosen",
		     g_topo->nnodes - (node_record_count - unmapped),
		     g_topo->nnodes);
}

/*
 * --ml-parallel without --ml-comm: an allreduce job.  Its ring order keeps
 * leaves (blocks) together, and Megatron's order puts each pipeline stage
 * on consecutive ranks, so each stage's data-parallel rings stay in the
 * fewest leaves and neighbouring stages on neighbouring ones.
 */
static enum topoml_hint _parallel_hint(job_record_t *job_ptr,
				       enum topoml_hint hint)
{
	const char *par = NULL;

	for (uint32_t i = 0; i < job_ptr->spank_job_env_size; i++) {
		const char *e = job_ptr->spank_job_env[i];

		if (topoml_comm_job_env(e))
			return hint;
		if (topoml_parallel_job_env(e))
			par = topoml_parallel_job_env(e);
	}
	return par ? TOPOML_HINT_ALLREDUCE : hint;
}

/* The job's --ml-parallel sizes for nnodes nodes and its tasks a node. */
static bool _job_parallel(job_record_t *job_ptr, int nnodes,
			  struct topoml_parallel *p, int *tpn)
{
	uint32_t k = job_ptr->details ? job_ptr->details->ntasks_per_node
				      : 0;
	const char *spec = NULL;
	char err[256];

	for (uint32_t i = 0; i < job_ptr->spank_job_env_size; i++)
		if (topoml_parallel_job_env(job_ptr->spank_job_env[i]))
			spec = topoml_parallel_job_env(
				job_ptr->spank_job_env[i]);
	*tpn = (int)k;
	/*
	 * Pricing is linear in the ranks: beyond the engine's bound (a
	 * 16-bit count per node is the user's) the job is no hybrid job,
	 * and slurmctld's cost stays the machine's, not the request's.
	 */
	return spec && nnodes > 0 && k && k != NO_VAL16 &&
	       (long)nnodes * k <= topoml_hybrid_max_ranks(g_topo) &&
	       !topoml_parallel_parse(spec, p, err, sizeof(err)) &&
	       !topoml_parallel_resolve(p, (int)(nnodes * k), err,
					sizeof(err));
}

/* The job's --ml-spares count, 0 without (or a bad value, as _publish). */
static int _job_spares(job_record_t *job_ptr)
{
	int k = 0;

	for (uint32_t i = 0; i < job_ptr->spank_job_env_size; i++) {
		const char *v = topoml_spares_job_env(job_ptr->spank_job_env[i]);

		if (v && topoml_spares_parse(v, &k))
			k = 0;
	}
	return k;
}

/*
 * The --ml-parallel shape of a job on nnodes nodes: its workers, the
 * nodes less its --ml-spares (*spares; none when they would leave no
 * worker, as topoml_spares_last decides in _publish).
 */
static bool _job_workers(job_record_t *job_ptr, int nnodes, int *spares,
			 struct topoml_parallel *p, int *tpn)
{
	*spares = _job_spares(job_ptr);
	if (*spares >= nnodes)
		*spares = 0;
	return _job_parallel(job_ptr, nnodes - *spares, p, tpn);
}

/*
 * --ml-parallel with --ntasks-per-node: the engine's choices reordered by
 * the job's cost per traffic kind, whole tensor groups in NVLink domains
 * first (topoml_hybrid_rank); else left as they are.  With --ml-spares
 * the sizes are those of the workers, and each choice is priced on the
 * workers _publish will keep of it (topoml_hybrid_rank_spares).
 */
static void _hybrid_rank(job_record_t *job_ptr,
			 const struct topoml_place_req *req,
			 struct topoml_placement *choice, int n)
{
	struct topoml_parallel p;
	int tpn, spares;

	if (n < 1 || req->units ||
	    !_job_workers(job_ptr, req->nnodes, &spares, &p, &tpn))
		return;
	(void)topoml_hybrid_rank_spares(g_topo, req, &p, tpn,
					g_conf.hybrid_weights, choice, n,
					spares);
}

/* The job's --ml-comm hint, or the partition/site default. */
static enum topoml_hint _job_hint(job_record_t *job_ptr)
{
	enum topoml_hint hint;
	const char *bad = NULL;

	hint = topoml_job_hint(topoml_siteconf_hint(&g_conf,
						    job_ptr->partition),
			       (const char *const *)job_ptr->spank_job_env,
			       job_ptr->spank_job_env_size, &bad);
	if (bad)
		_error_once("JobId=%u: unknown --ml-comm value '%.60s', using the default",
			    job_ptr->job_id, bad);
	return _parallel_hint(job_ptr, hint);
}

static long _usec_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000L +
	       (t1.tv_nsec - t0->tv_nsec) / 1000;
}

struct _job_req {
	uint16_t max_cpus;		/* most CPUs of a candidate node */
	hwloc_bitmap_t avail_idle;	/* candidates with no job */
	hwloc_bitmap_t avail_all;	/* every candidate */
	hwloc_bitmap_t partial;		/* candidates other jobs use in part */
	hwloc_bitmap_t required;
	uint32_t *owner;
	uint32_t *used_cpus;		/* per engine node */
	uint32_t *free_units;		/* per engine node: CPUs or GPUs */
	uint32_t *cap_units;		/* will-run, shared job: the same once
					 * the node's jobs have ended */
	uint64_t units;			/* shared job: CPUs or GPUs; 0 = whole
					 * nodes */
	int64_t *free_at;		/* will-run: per engine node, when its
					 * jobs end (0 = idle) */
	hwloc_bitmap_t avail_then;	/* will-run: free soonest */
};

static void _job_req_free(struct _job_req *r)
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
static const char *_job_req_build(job_record_t *job_ptr, bitstr_t *bitmap,
				  bool will_run, struct _job_req *r)
{
	bitstr_t *req = job_ptr->details ? job_ptr->details->req_node_bitmap
					 : NULL;
	int i, n = bit_size(bitmap);
	bool gpus = false, whole;

	r->avail_idle = hwloc_bitmap_alloc();
	r->avail_all = hwloc_bitmap_alloc();
	r->partial = hwloc_bitmap_alloc();
	r->owner = xcalloc(g_topo->nnodes, sizeof(uint32_t));
	r->used_cpus = xcalloc(g_topo->nnodes, sizeof(uint32_t));
	r->free_units = xcalloc(g_topo->nnodes, sizeof(uint32_t));
	whole = _whole_nodes(job_ptr);
	/* CPUs in use matter only to a job that shares nodes. */
	if (will_run)
		r->free_at = xcalloc(g_topo->nnodes, sizeof(int64_t));
	_owners(job_ptr, r->owner, whole ? NULL : r->used_cpus, r->free_at);
	if (!whole) {
		uint32_t nodes = MAX(job_ptr->details->min_nodes, 1);

		/* only where will-run narrows such jobs (_topoml_test) */
		if (will_run && g_topo->family == TOPOML_DRAGONFLY)
			r->cap_units = xcalloc(g_topo->nnodes,
					       sizeof(uint32_t));
		r->units = _job_gpus(job_ptr, nodes);
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
static uint32_t _nodes_wanted(job_record_t *job_ptr, uint32_t min_nodes,
			      uint32_t max_nodes, uint32_t req_nodes,
			      uint16_t max_cpus)
{
	uint32_t min_cpus = 0;

	if (job_ptr->details && job_ptr->details->min_cpus != NO_VAL)
		min_cpus = job_ptr->details->min_cpus;
	return topoml_job_nodes_wanted(min_nodes, max_nodes, req_nodes,
				       min_cpus, max_cpus);
}

/*
 * One of the engine's placements as a Slurm node bitmap within cand, or
 * NULL with why (a node the engine chose that is not a candidate is an
 * engine bug, not a busy machine).
 */
static bitstr_t *_engine_choice(const struct topoml_placement *pl,
				bitstr_t *cand, char *why, size_t whylen)
{
	bitstr_t *narrow;
	int i, nbits = bit_size(cand);

	narrow = bit_alloc(nbits);
	for (i = 0; i < pl->n; i++) {
		int s = g_rmap[pl->nodes[i]];

		if (s < 0 || s >= nbits || !bit_test(cand, s)) {
			_error_once("engine chose node %d, which is not a candidate Slurm node",
				    pl->nodes[i]);
			snprintf(why, whylen, "engine node %d is not a Slurm node",
				 pl->nodes[i]);
			FREE_NULL_BITMAP(narrow);
			return NULL;
		}
		bit_set(narrow, s);
	}
	return narrow;
}

static int _cons_tres_test(job_record_t *job_ptr, bitstr_t *bitmap,
			   uint32_t min_nodes, uint32_t max_nodes,
			   uint32_t req_nodes, uint16_t mode,
			   topoml_list_t preemptee_candidates,
			   topoml_list_t *preemptee_job_list,
			   TOPOML_JT_PARAMS, long *usec)
{
	struct timespec t0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = (*(topoml_ops.job_test))(job_ptr, bitmap, min_nodes, max_nodes,
				      req_nodes, mode, preemptee_candidates,
				      preemptee_job_list, TOPOML_JT_ARGS);
	*usec += _usec_since(&t0);
	return rc;
}

/* _topoml_test: the job waits for a better placement (LocalityWait) */
#define TOPOML_BOX_WAITING	(-2)

/* LocalityWait's clock per job; g_lock held */
static struct topoml_box_waits g_box_waits;

/* The partition's nodes, busy or not (NULL: no memory). */
static hwloc_bitmap_t _part_nodes(job_record_t *job_ptr)
{
	bitstr_t *part = job_ptr->part_ptr ? job_ptr->part_ptr->node_bitmap
					   : NULL;
	hwloc_bitmap_t all = hwloc_bitmap_alloc();

	for (int i = 0; all && i < g_map_count; i++)
		if (g_map[i] >= 0 && (!part || bit_test(part, i)))
			hwloc_bitmap_set(all, g_map[i]);
	return all;
}

/*
 * The identity of a job's universe for the verdicts kept while it waits
 * (policy/wait.h): its partition, slurmctld's last partition change and
 * the topology and node map in use, so that they are computed once while
 * the job waits, and again when any of these changes.  0 (not kept):
 * partitions changed this second, so that a second change now might
 * leave last_part_update as it is; or no last_part_update (not
 * slurmctld).
 */
static uint64_t _wait_salt(job_record_t *job_ptr)
{
	uint64_t v[3];
	time_t part_update;

	if (!&last_part_update)
		return 0;
	part_update = last_part_update;
	if (part_update >= time(NULL))
		return 0;
	v[0] = (uintptr_t)job_ptr->part_ptr;
	v[1] = (uint64_t)part_update;
	v[2] = g_map_gen;
	return topoml_wait_key(v, 3);
}

/* The job found what it waited for: forget its clock. */
static void _wait_found(job_record_t *job_ptr, const char *what)
{
	int64_t since = topoml_box_wait_forget(&g_box_waits, job_ptr->job_id);

	if (since >= 0)
		info("select/topoml: %pJ: found %s after waiting %lld s",
		     job_ptr, what, (long long)(time(NULL) - since));
}

/*
 * The job may wait for `what' up to `wait' s (topoml.conf `key'): true
 * while it still does (why says so), false once the time is up.
 */
static bool _wait_more(job_record_t *job_ptr, const char *key, int wait,
		       const char *what, char *why, size_t whylen)
{
	int64_t left = topoml_box_wait_left(&g_box_waits, job_ptr->job_id,
					    time(NULL), wait);

	if (!left) {
		info("select/topoml: %pJ: no %s after %s=%d s, placed without",
		     job_ptr, what, key, wait);
		return false;
	}
	if (left == wait)
		info("select/topoml: %pJ waits up to %d s for %s (none free, enough nodes)",
		     job_ptr, wait, what);
	snprintf(why, whylen, "waiting %lld s more for %s (%s=%d)",
		 (long long)left, what, key, wait);
	return true;
}

/* The locality wait's view of a job (policy/wait.h). */
struct _wait {
	struct topoml_wait_policy pol;
	struct topoml_wait_job job;
	struct topoml_parallel par;
	struct topoml_wait_verdict_info v;
};

/*
 * LocalityWait (topoml.conf(5), policy/wait.h) on the engine's best
 * choice pl (ranked by _hybrid_rank, workers first in rank order): a job
 * whose placement misses its family's locality criterion where its
 * partition's nodes, busy or not, offer it, waits up to the site's
 * seconds from the first time it could have started here.  True: decline
 * now (why says so; w->v what it waits for).  plan (backfill's will-run):
 * whether it would wait, its clock only read.
 */
static bool _locality_wait(job_record_t *job_ptr,
			   const struct topoml_place_req *req,
			   const struct topoml_placement *pl, bool plan,
			   struct _wait *w, char *why, size_t whylen)
{
	struct topoml_wait_memo memo;
	hwloc_bitmap_t all = NULL;
	uint64_t salt;
	bool waits;

	topoml_siteconf_wait(&g_conf, job_ptr->partition, &w->pol);
	if (!(w->pol.box_wait > 0) && !(w->pol.hybrid_wait > 0))
		return false;
	w->job = (struct topoml_wait_job){
		.nnodes = req->nnodes,
		.pinned = req->required || req->units,
	};
	if (!req->units && _job_workers(job_ptr, req->nnodes, &w->job.spares,
					&w->par, &w->job.tpn))
		w->job.par = &w->par;
	else
		w->job.spares = 0;
	salt = _wait_salt(job_ptr);
	topoml_wait_memo_load(&g_box_waits, job_ptr->job_id, salt, &w->job,
			      &memo);
	/* the partition's nodes: only for a verdict not kept */
	if (memo.box < 0 || !memo.hyb_known)
		all = _part_nodes(job_ptr);
	topoml_wait_criterion(g_topo, &w->pol, &w->job, pl, all, &memo,
			      &w->v);
	if (all)
		hwloc_bitmap_free(all);
	if (w->v.met && !plan)
		_wait_found(job_ptr, w->v.met_what);
	if (!w->v.kind)
		return false;
	if (plan)
		waits = topoml_box_wait_peek(&g_box_waits, job_ptr->job_id,
					     time(NULL),
					     (int64_t)w->v.bound) > 0;
	else
		waits = _wait_more(job_ptr, w->v.key, (int)w->v.bound,
				   w->v.what, why, whylen);
	/* after _wait_more: kept from the job's first wait on */
	topoml_wait_memo_save(&g_box_waits, job_ptr->job_id, salt, &w->job,
			      &memo);
	return waits;
}

/*
 * Will-run: plan on r->avail_then, the nodes free by the planned start;
 * the jobs on them will have ended by then, so they neither share nor
 * spoil a leaf (no owners).
 */
static void _plan_then(struct _job_req *r, struct topoml_place_req *req)
{
	int v;

	hwloc_bitmap_foreach_begin(v, r->avail_then)
		r->owner[v] = 0;
	hwloc_bitmap_foreach_end();
	req->avail = r->avail_then;
}

/*
 * Backfill's will-run for a job that run-now holds for a better placement
 * (_locality_wait): the nodes free when what it waits for is, by the
 * running jobs' limits (topoml_wait_plan), not the placement it declines
 * now.  Backfill then reserves them, and jobs that would outlast that time
 * keep off them, so that they do free; planned where it declines to
 * start, the job would hold those nodes in the plan while other jobs fill
 * them.  1 (a box), 2 (--ml-parallel locality): req->avail is those
 * nodes (_plan_then); 0: plan on pl (it would not wait, or takes pl when
 * its wait ends); -1: no plan of ours.
 */
static int _wait_plan(job_record_t *job_ptr, struct _job_req *r,
		      struct topoml_place_req *req,
		      const struct topoml_placement *pl, char *why,
		      size_t whylen)
{
	struct _wait w;
	int64_t end, when;

	if (!_locality_wait(job_ptr, req, pl, true, &w, why, whylen))
		return 0;
	if (!r->free_at)
		return w.v.kind == TOPOML_WAIT_BOX ? -1 : 0;
	if (!r->avail_then && !(r->avail_then = hwloc_bitmap_alloc()))
		return -1;
	end = time(NULL);
	end += topoml_box_wait_peek(&g_box_waits, job_ptr->job_id, end,
				    (int64_t)w.v.bound);
	when = topoml_wait_plan(g_topo, &w.pol, &w.job, &w.v, r->avail_all,
				r->free_at, end, r->avail_then);
	if (when == -2)
		return -1;
	if (when < 0)
		return w.v.kind == TOPOML_WAIT_BOX ? -1 : 0;
	_plan_then(r, req);
	return w.v.kind == TOPOML_WAIT_BOX ? 1 : 2;
}

/*
 * Try the engine's choices; on success bitmap holds the nodes cons_tres
 * took and the attempt number is returned, else -1 with the reason in why
 * (TOPOML_BOX_WAITING: the job waits for a torus box).
 */
static int _topoml_test(job_record_t *job_ptr, bitstr_t *bitmap,
			uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode,
			topoml_list_t preemptee_candidates,
			topoml_list_t *preemptee_job_list,
			TOPOML_JT_PARAMS, enum topoml_hint hint,
			long *ct_usec, char *why, size_t whylen)
{
	struct _job_req r = { 0 };
	struct topoml_place_req req = { .unscored = true };
	struct topoml_placement choice[TOPOML_ATTEMPTS];
	struct _wait wait;
	int attempt, result = -1, pass, tried = 0, nchoice, plan;
	/*
	 * Will-run tests (a backfill plan) are many and each cons_tres
	 * will-run simulates job ends: the engine's best choice only.
	 */
	bool will_run = mode == SELECT_MODE_WILL_RUN;
	const char *bad;

	if ((bad = _job_req_build(job_ptr, bitmap, will_run, &r))) {
		snprintf(why, whylen, "%s", bad);
		goto out;
	}
	req.nnodes = _nodes_wanted(job_ptr, min_nodes, max_nodes, req_nodes,
				   r.max_cpus);
	req.required = r.required;
	req.hint = hint;
	/* --switches=N[@T]: cons_tres enforces the wait if we cannot. */
	if (job_ptr->req_switch && job_ptr->req_switch < INFINITE16)
		req.max_leaves = job_ptr->req_switch;
	req.df_spread_alltoall = g_conf.df_spread_alltoall;
	req.torus_curve = g_conf.torus_curve;
	req.partial = r.partial;
	if (r.units && !r.required && hint != TOPOML_HINT_ISOLATE) {
		/*
		 * A job that shares nodes: by CPUs or GPUs, partly used
		 * nodes first, on every candidate (one pass).  Isolate
		 * keeps to idle nodes first, as whole-node jobs do.
		 */
		req.nnodes = MAX(MAX(min_nodes, req_nodes), 1);
		if (max_nodes && (uint32_t)req.nnodes > max_nodes)
			req.nnodes = max_nodes;
		req.units = r.units > UINT32_MAX ? UINT32_MAX : r.units;
		req.free_units = r.free_units;
	}
	/*
	 * Whole-node jobs: idle nodes first (no sharing with other jobs),
	 * then every candidate for jobs that may share nodes.
	 */
	for (pass = req.units ? 1 : 0; pass < 2 && result < 0; pass++) {
		req.avail = pass ? r.avail_all : r.avail_idle;
		req.owner = r.owner;
		if (pass && !req.units &&
		    hwloc_bitmap_isequal(r.avail_all, r.avail_idle))
			break;
		if (will_run && pass && !req.units) {
			/*
			 * Will-run without enough idle nodes: the nodes free
			 * soonest, as cons_tres lets jobs end in end-time
			 * order; the jobs on them will have ended by then,
			 * so they neither share nor spoil a leaf.
			 */
			if (!r.avail_then)
				r.avail_then = hwloc_bitmap_alloc();
			if (!r.avail_then ||
			    topoml_job_free_by(r.free_at, r.avail_all,
					       req.nnodes, r.avail_then) < 0)
				break;
			_plan_then(&r, &req);
		}
		if (will_run && req.units && r.cap_units && r.free_at) {
			/*
			 * Will-run on a dragonfly (cap_units is kept there
			 * only) for a job that shares nodes and cannot
			 * start now: the units free once enough are, busy
			 * nodes counted whole in end-time order.  Nodes idle
			 * by then hold no job, so the reservation falls on
			 * what frees rather than on idle cores backfill can
			 * fill meanwhile: cons_tres's will-run on a dragonfly
			 * (TopologyParam=dragonfly) spreads one node per
			 * router over them and keeps small jobs waiting.  On
			 * a tree its best fit packs as select/topoml does,
			 * and this plan cost more than it gained there
			 * (doc/sim-results.md, issue 18).
			 */
			int v;

			r.avail_then = hwloc_bitmap_alloc();
			if (r.avail_then &&
			    topoml_job_units_free_by(r.free_at, r.cap_units,
						     r.free_units, r.avail_all,
						     req.units,
						     r.avail_then) > 0) {
				hwloc_bitmap_foreach_begin(v, r.avail_then)
					r.owner[v] = 0;
					hwloc_bitmap_clr(r.partial, v);
				hwloc_bitmap_foreach_end();
			}
		}
		if (g_conf.debug > 1) {
			char *av = topoml_nodeset_format(g_topo, req.avail);

			info("select/topoml: %pJ pass %d: %d nodes of %s, hint %s, max_leaves %d, units %u",
			     job_ptr, pass, req.nnodes, av,
			     topoml_hint_name(req.hint), req.max_leaves,
			     req.units);
			free(av);
		}
		/* The engine's best distinct choices, from one call. */
		why[0] = '\0';
		nchoice = topoml_place_ranked(g_topo, TOPOML_POLICY_TOPOML,
					      &req, will_run ? 1 : TOPOML_ATTEMPTS,
					      choice, why, whylen);
		/* --ml-parallel: the choices by the job's traffic kinds */
		_hybrid_rank(job_ptr, &req, choice, nchoice);
		if (!pass && will_run && nchoice > 0 &&
		    (plan = _wait_plan(job_ptr, &r, &req, &choice[0], why,
				       whylen))) {
			/* one pass, on the nodes free when the wait is met */
			for (attempt = 0; attempt < nchoice; attempt++)
				topoml_placement_clear(&choice[attempt]);
			nchoice = plan > 0 ?
				  topoml_place_ranked(g_topo,
						      TOPOML_POLICY_TOPOML,
						      &req, 1, choice, why,
						      whylen) : 0;
			/* ranked as run-now ranks, that meets the goal */
			if (plan == 2)
				_hybrid_rank(job_ptr, &req, choice, nchoice);
			pass = 1;
		}
		if (!pass && !will_run && nchoice > 0 &&
		    _locality_wait(job_ptr, &req, &choice[0], false, &wait,
				   why, whylen)) {
			for (attempt = 0; attempt < nchoice; attempt++)
				topoml_placement_clear(&choice[attempt]);
			result = TOPOML_BOX_WAITING;
			goto out;
		}
		for (attempt = 0; attempt < nchoice && result < 0;
		     attempt++) {
			bitstr_t *narrow;

			narrow = _engine_choice(&choice[attempt], bitmap, why,
						whylen);
			if (!narrow)
				break;
			if (_cons_tres_test(job_ptr, narrow, min_nodes,
					    max_nodes, req_nodes, mode,
					    preemptee_candidates,
					    preemptee_job_list,
					    TOPOML_JT_ARGS,
					    ct_usec) == SLURM_SUCCESS) {
				bit_copybits(bitmap, narrow);
				result = attempt + (req.units ? 0 :
						    pass * TOPOML_ATTEMPTS);
			} else {
				tried++;
			}
			FREE_NULL_BITMAP(narrow);
		}
		for (attempt = 0; attempt < nchoice; attempt++)
			topoml_placement_clear(&choice[attempt]);
	}
	if (result < 0 && tried) {
		char engine[128];
		size_t n = strnlen(why, sizeof(engine) - 1);

		/* A long engine reason may be cut: the count comes first. */
		memcpy(engine, why, n);
		engine[n] = '\0';
		if (snprintf(why, whylen,
			     "cons_tres could not fit the job on the engine's %d choice(s)%s%s",
			     tried, engine[0] ? "; engine: " : "",
			     engine) >= (int)whylen)
			why[whylen - 1] = '\0';
	}
out:
	_job_req_free(&r);
	return result;
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

extern int init(void)
{
	if (_ctx_init() != SLURM_SUCCESS)
		return SLURM_ERROR;
	topoml_siteconf_init(&g_conf);
	if (_placing_here())
		_load_conf(true);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	int rc = SLURM_SUCCESS;

	slurm_mutex_lock(&g_lock);
	if (g_topo)
		topoml_free(g_topo);
	g_topo = NULL;
	topoml_torus3d_free(g_t3d);
	g_t3d = NULL;
	topoml_siteconf_clear(&g_conf);
	topoml_box_waits_clear(&g_box_waits);
	free(g_topo_path);
	g_topo_path = NULL;
	xfree(g_map);
	xfree(g_rmap);
	g_map_count = -1;
	slurm_mutex_unlock(&g_lock);

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

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap,
			     uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode,
			     topoml_list_t preemptee_candidates,
			     topoml_list_t *preemptee_job_list,
			     TOPOML_JT_PARAMS)
{
	struct timespec t0;
	enum topoml_hint hint = TOPOML_HINT_ALLREDUCE;
	long ct_usec = 0;
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

	clock_gettime(CLOCK_MONOTONIC, &t0);
	slurm_mutex_lock(&g_lock);
	if (!g_topo) {
		snprintf(why, sizeof(why), "no topology loaded");
	} else if (!topoml_siteconf_placement(&g_conf, job_ptr->partition)) {
		snprintf(why, sizeof(why), "placement off for partition %s",
			 job_ptr->partition);
	} else {
		_map_nodes();
		hint = _job_hint(job_ptr);
		attempt = _topoml_test(job_ptr, bitmap, min_nodes, max_nodes,
				       req_nodes, mode, preemptee_candidates,
				       preemptee_job_list, TOPOML_JT_ARGS,
				       hint, &ct_usec, why, sizeof(why));
	}
	traced = g_conf.debug > 0;
	slurm_mutex_unlock(&g_lock);

	if (attempt >= 0) {
		rc = SLURM_SUCCESS;
	} else if (attempt == TOPOML_BOX_WAITING) {
		rc = SLURM_ERROR;	/* pending: Resources */
	} else {
		rc = _cons_tres_test(job_ptr, bitmap, min_nodes, max_nodes,
				     req_nodes, mode, preemptee_candidates,
				     preemptee_job_list, TOPOML_JT_ARGS,
				     &ct_usec);
	}
	if (rc == SLURM_SUCCESS && mode == SELECT_MODE_RUN_NOW) {
		g_last.job_id = job_ptr->job_id;
		g_last.attempt = attempt;
		g_last.hint = hint;
		snprintf(g_last.why, sizeof(g_last.why), "%s", why);
	}
	if (traced || (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE))
		info("select/topoml: %s %pJ rc=%d attempt=%d total_us=%ld cons_tres_us=%ld%s%s",
		     mode == SELECT_MODE_RUN_NOW ? "job_test" : "will_run",
		     job_ptr, rc, attempt, _usec_since(&t0), ct_usec,
		     (attempt < 0 && why[0]) ? " fallback: " : "",
		     (attempt < 0) ? why : "");
	return rc;
}

/*
 * Score the job's nodes in the engine's ring order and publish it in the
 * job's SystemComment (scontrol show job), e.g.
 * "topoml: placed=topoml hint=allreduce leaves=2/2 ring=12/12 order=c[1-8]".
 */
static void _publish(job_record_t *job_ptr)
{
	struct topoml_placement pl = { 0 };
	struct topoml_comment c = { .global_hops = -1 };
	struct topoml_parallel par;
	hwloc_bitmap_t avail = NULL;
	char *msg = NULL, *merged;
	int i, n = 0, tpn;

	if (!g_topo || !job_ptr->node_bitmap)
		return;
	_map_nodes();
	pl.nodes = xcalloc(bit_set_count(job_ptr->node_bitmap) + 1,
			   sizeof(int));
	avail = hwloc_bitmap_alloc();
	for (i = 0; i < bit_size(job_ptr->node_bitmap); i++) {
		if (!bit_test(job_ptr->node_bitmap, i))
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
	topoml_ring_order(g_topo, pl.nodes, n);
	/*
	 * --ml-spares=K: the job asked -N workers+K and the engine placed
	 * them together; its spares go last in order= (jobcomment.h), so
	 * that both plugins and topoml-run agree which nodes they are.
	 */
	c.spares = topoml_spares_last(g_topo, pl.nodes, n,
				      _job_spares(job_ptr));
	/*
	 * --ml-parallel: the workers in the order topoml_hybrid_rank gave
	 * the job's nodes (pipeline stages kept inside spine subtrees or
	 * dragonfly groups), so RANK follows it; the spares stay last.
	 */
	if (_job_parallel(job_ptr, n - c.spares, &par, &tpn))
		(void)topoml_hybrid_order(g_topo, pl.nodes, n - c.spares, tpn,
					  &par, g_conf.hybrid_weights);
	topoml_score(g_topo, avail, &pl);
	/*
	 * order= is the one ring order the job's tasks get: topoml.so reads
	 * it in every step (jobcomment.h has the format, writer and parser).
	 */
	c.order = topoml_nodes_format(g_topo, pl.nodes, n);
	c.placed = (g_last.job_id == job_ptr->job_id && g_last.attempt >= 0) ?
		   "topoml" : "cons_tres";
	if (g_last.job_id == job_ptr->job_id) {
		c.hint = topoml_hint_name(g_last.hint);
		c.choice = g_last.attempt > 0 ? g_last.attempt : 0;
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
		info("select/topoml: %pJ %s%s%s", job_ptr, msg,
		     (g_last.job_id == job_ptr->job_id && g_last.why[0] &&
		      g_last.attempt < 0) ? " fallback: " : "",
		     (g_last.job_id == job_ptr->job_id &&
		      g_last.attempt < 0) ? g_last.why : "");
out:
	free(c.order);
	free(msg);
	xfree(pl.nodes);
	if (avail)
		hwloc_bitmap_free(avail);
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	int rc = (*(topoml_ops.job_begin))(job_ptr);

	slurm_mutex_lock(&g_lock);
	_publish(job_ptr);
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
		_load_conf(false);
	return (*(topoml_ops.reconfigure))();
}