/*
 * Remote context: slurmstepd.  init_post_opt (root, once per step) reads
 * the node model cached by slurmd and computes every local task's binding;
 * task_init (per task, as the user, just before exec) applies it: CPU
 * affinity and the environment, never touching a variable already set.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <slurm/slurm.h>

#include "ctld_job.h"
#include "topoml/health.h"
#include "topoml/jobcomment.h"
#include "plugin.h"
#include "preflight.h"
#include "secure.h"
#include "slurm_compat.h"

#define ML_BATCH_STEP	0xfffffffb	/* SLURM_BATCH_SCRIPT */
#define ML_EXTERN_STEP	0xfffffffc	/* SLURM_EXTERN_CONT */
#define ML_MAX_NODES	65536

/* libtopoml's engine, for --ml-rank-order=topology on jobs that
 * select/topoml did not place. */
#include "topoml.h"

static int _getenv(spank_t sp, const char *name, char *buf, size_t len)
{
	return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS ? 0 : -1;
}

/* The job's host list (its environment: the user's), bounded. */
static char **_hosts(const char *list, int *n)
{
	return ml_hosts(list, ML_MAX_NODES, n);
}

static void _free_hosts(char **names, int n)
{
	ml_hosts_free(names, n);
}

/*
 * The ring order select/topoml gave the job (its SystemComment, from the
 * step's one load of the job: ctld_job.c), restricted to the step's nodes:
 * order[i] = index in names of ring position i.  0, or -1 when the job
 * has none that covers the step (not placed by select/topoml, order= left
 * out as too long, junk): then topoml.so's own topology decides.
 */
static int _comment_order(uint32_t jobid, char **names, int n, int *order)
{
	const struct ml_ctld_job *j = ml_ctld_job(jobid);
	struct topoml_comment c;
	char err[256] = "";
	int rc;

	if (j->state <= 0) {
		ml_log(ML_LOG_INFO, "topoml: job %u: slurmctld did not answer "
		       "(%s): rank order from the topology file", jobid,
		       slurm_strerror(j->err));
		return -1;
	}
	rc = topoml_comment_parse(j->system_comment, &c, err, sizeof(err));
	if (rc > 0) {
		ml_log(ML_LOG_DEBUG, "topoml: job %u: not placed by "
		       "select/topoml", jobid);
		return -1;
	}
	if (rc < 0) {
		ml_log(ML_LOG_ERROR, "topoml: job %u: SystemComment: %s: rank "
		       "order from the topology file", jobid, err);
		return -1;
	}
	rc = c.order ? topoml_comment_step_order(c.order, names, n, order,
						 err, sizeof(err)) : -1;
	if (rc)
		ml_log(ML_LOG_INFO, "topoml: job %u: select/topoml's order "
		       "does not serve this step (%s): rank order from the "
		       "topology file", jobid, c.order ? err : "no order=");
	else
		ml_log(ML_LOG_VERBOSE, "topoml: job %u: rank order of "
		       "select/topoml", jobid);
	topoml_comment_clear(&c);
	return rc;
}

/* order[i] = Slurm node index of ring position i.  0 or -1 (why logged). */
static int _topology_order(char **names, int n, int *order)
{
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = NULL;
	int *idx = NULL, *slot = NULL, rc = -1;

	if (!ml.conf.topology[0]) {
		ML_ERR(ML_OPT_RANK_ORDER, "no topology= in plugstack.conf, "
		       "using Slurm's order");
		return -1;
	}
	if (!(t = topoml_load(ml.conf.topology, TOPOML_FMT_AUTO, &err))) {
		ML_ERR(ML_OPT_RANK_ORDER, "%s: %s, using Slurm's order",
		       ml.conf.topology, err.n ? err.msg[0] : "cannot load");
		goto out;
	}
	idx = malloc(sizeof(int) * n);
	if (!idx)
		goto out;
	for (int i = 0; i < n; i++)
		if ((idx[i] = topoml_node_by_name(t, names[i])) < 0) {
			ML_ERR(ML_OPT_RANK_ORDER, "node %s is not in %s, using "
			       "Slurm's order", names[i], ml.conf.topology);
			goto out;
		}
	/* Slurm index of each topology node, to map the ring back. */
	slot = malloc(sizeof(int) * (t->nnodes + 1));
	if (!slot)
		goto out;
	for (int i = 0; i < t->nnodes; i++)
		slot[i] = -1;
	for (int k = 0; k < n; k++)
		slot[idx[k]] = k;
	topoml_ring_order(t, idx, n);
	for (int i = 0; i < n; i++)
		if ((order[i] = slot[idx[i]]) < 0)
			goto out;
	rc = 0;
out:
	free(idx);
	free(slot);
	if (t)
		topoml_free(t);
	topoml_errors_clear(&err);
	return rc;
}

/*
 * MASTER_ADDR for a node name.  Node names are usually host names; where
 * they are not (NodeAddr= in slurm.conf, as on a local test cluster), use
 * the address slurmstepd's own Slurm configuration gives the node.  Looked
 * up at run time so that the plugin links no Slurm library.
 */
static void _master_addr(const char *node, char *out, size_t len)
{
	char *(*get_addr)(const char *);
	void (*xfree_fn)(void **);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	char *addr;

	snprintf(out, len, "%s", node);
	if (!getaddrinfo(node, NULL, &hints, &res)) {
		freeaddrinfo(res);
		return;
	}
	get_addr = (char *(*)(const char *))dlsym(RTLD_DEFAULT,
						  "slurm_conf_get_address");
	xfree_fn = (void (*)(void **))dlsym(RTLD_DEFAULT, "slurm_xfree");
	if (!get_addr || !xfree_fn || !(addr = get_addr(node)))
		return;
	snprintf(out, len, "%s", addr);
	xfree_fn((void **)&addr);
}

/*
 * This node's Slurm name, for root's paths (<cache_dir>/<name>.model).
 * Not from the job's environment (SLURM_STEP_NODELIST, SLURMD_NODENAME
 * there are the user's to set) and SPANK 22.05 has no item for it:
 * slurmstepd receives slurmd's conf->node_name from slurmd over its pipe
 * and sets SLURMD_NODENAME in its own process environment
 * (slurmstepd.c, _init_from_slurmd) before any plugin runs; the job's
 * variables live in a separate array (spank_getenv) and reach a process
 * environment only in the forked task.  Right with several slurmd on one
 * host (slurmd -N).  Checked as a plain file name all the same.
 */
static void _node_name(void)
{
	const char *n = getenv("SLURMD_NODENAME");

	ml.node_name[0] = '\0';
	if (ml_node_name_ok(n))
		snprintf(ml.node_name, sizeof(ml.node_name), "%s", n);
	else
		ml_log(ML_LOG_ERROR, "topoml: slurmstepd has no usable "
		       "SLURMD_NODENAME ('%.64s'): node model by host name "
		       "only", n ? n : "");
}

/*
 * The verdict on --ml-parallel's tensor groups (tp consecutive ranks,
 * Megatron's order): split over NVLink domains, a node's GPUs unless the
 * plugin's topology file puts nodes in a bigger domain.  NAMES and COUNTS
 * in Slurm's order, ORDER the rank order of the nodes (NULL: Slurm's).
 */
static void _tp_verdict(char **names, int n, const int *counts,
			const int *order)
{
	int *c = malloc(sizeof(int) * n), *dom = malloc(sizeof(int) * n);
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = NULL;
	int g, a, b;

	if (!c || !dom)
		goto out;
	for (int i = 0; i < n; i++)
		c[i] = counts[order ? order[i] : i];
	if ((g = ml_tp_split(c, NULL, n, ml.par.tp, &a, &b)) < 0)
		goto out;
	/* over nodes: in one NVLink domain of the topology file? */
	if (ml.conf.topology[0] &&
	    (t = topoml_load(ml.conf.topology, TOPOML_FMT_AUTO, &err))) {
		for (int i = 0; i < n; i++) {
			int k = topoml_node_by_name(t, names[order ?
							     order[i] : i]);

			dom[i] = k >= 0 ? t->nodes[k].nvl : -1;
		}
		g = ml_tp_split(c, dom, n, ml.par.tp, &a, &b);
	}
	if (g >= 0)
		snprintf(ml.par_split, sizeof(ml.par_split), "tensor group "
			 "of ranks %d-%d split over NVLink domains (nodes "
			 "%s and %s)", g, g + ml.par.tp - 1,
			 names[order ? order[a] : a],
			 names[order ? order[b] : b]);
out:
	topoml_free(t);
	free(c);
	free(dom);
}

/*
 * MASTER_ADDR, ranks and sizes of this node's tasks.  The node list and
 * the reserved ports come from the job's environment (the user may set
 * them); they only become the tasks' own variables, as if the user had
 * exported MASTER_ADDR or MASTER_PORT, never a path or a file root opens.
 */
static int _job(spank_t sp, uint32_t jobid)
{
	char list[65536], tpn[8192], resv[256];
	uint32_t nodeid = 0, nnodes = 0, ntasks = 0, local = 0, stepid = 0;
	int n = 0, *counts = NULL, *order = NULL, rc = -1;
	bool have_counts = false, ordered = false;
	char **names = NULL;

	spank_get_item(sp, S_JOB_NODEID, &nodeid);
	spank_get_item(sp, S_JOB_NNODES, &nnodes);
	spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks);
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local);
	spank_get_item(sp, S_JOB_STEPID, &stepid);
	ml.job.jobid = jobid;
	ml.job.nnodes = nnodes;
	ml.job.node_rank = nodeid;
	ml.job.world_size = ntasks;
	ml.job.local_size = local;
	/* Per step: concurrent steps of a job need their own port. */
	if (_getenv(sp, "SLURM_STEP_RESV_PORTS", resv, sizeof(resv)))
		resv[0] = '\0';
	ml.job.master_port = ml_master_port(&ml.conf, jobid, stepid, resv);
	_node_name();
	if (_getenv(sp, "SLURM_STEP_NODELIST", list, sizeof(list)) &&
	    _getenv(sp, "SLURM_JOB_NODELIST", list, sizeof(list)) &&
	    _getenv(sp, "SLURM_NODELIST", list, sizeof(list))) {
		ml_log(ML_LOG_ERROR, "topoml: no SLURM_STEP_NODELIST: no "
		       "MASTER_ADDR");
		return 0;
	}
	if (!(names = _hosts(list, &n)) || n == 0 || (int)nodeid >= n) {
		ml_log(ML_LOG_ERROR, "topoml: cannot expand node list '%.120s'",
		       list);
		goto out;
	}
	_master_addr(names[0], ml.job.master_addr, sizeof(ml.job.master_addr));
	/* --ml-parallel with --ml-rank-order=slurm still wants the
	 * tensor-group check below: the counts are needed for both. */
	if (n < 2 || (ml.val[ML_OPT_RANK_ORDER] != ML_RANK_TOPOLOGY &&
		      !ml.set[ML_OPT_PARALLEL])) {
		rc = 0;
		goto out;
	}
	counts = calloc(n, sizeof(int));
	order = calloc(n, sizeof(int));
	if (!counts || !order)
		goto out;
	if ((_getenv(sp, "SLURM_STEP_TASKS_PER_NODE", tpn, sizeof(tpn)) &&
	     _getenv(sp, "SLURM_TASKS_PER_NODE", tpn, sizeof(tpn))) ||
	    ml_parse_tasks_per_node(tpn, counts, n) != n) {
		if (ml.val[ML_OPT_RANK_ORDER] == ML_RANK_TOPOLOGY)
			ML_ERR(ML_OPT_RANK_ORDER, "no task counts per node, "
			       "using Slurm's order");
		rc = 0;
		goto out;
	}
	have_counts = true;
	if (ml.val[ML_OPT_RANK_ORDER] != ML_RANK_TOPOLOGY) {
		rc = 0;
		goto out;
	}
	if (_comment_order(jobid, names, n, order) &&
	    _topology_order(names, n, order)) {
		rc = 0;
		goto out;
	}
	/* Counts of up to 65535 (ml_parse_tasks_per_node) on up to
	 * ML_MAX_NODES nodes: their sum may not fit a rank. */
	for (long i = 0, sum = 0; i < n; i++)
		if ((sum += counts[i]) > INT_MAX) {
			ML_ERR(ML_OPT_RANK_ORDER, "task counts per node add up "
			       "to more than %d, using Slurm's order", INT_MAX);
			rc = 0;
			goto out;
		}
	ml.node_first_rank = calloc(1, sizeof(int));
	if (!ml.node_first_rank)
		goto out;
	for (int i = 0, first = 0; i < n; i++) {
		if (order[i] == (int)nodeid) {
			ml.job.node_rank = i;
			*ml.node_first_rank = first;
		}
		first += counts[order[i]];
	}
	_master_addr(names[order[0]], ml.job.master_addr,
		     sizeof(ml.job.master_addr));
	ordered = true;
	rc = 0;
out:
	/* the verdict on the rank order the tasks get */
	if (have_counts && ml.set[ML_OPT_PARALLEL])
		_tp_verdict(names, n, counts, ordered ? order : NULL);
	free(counts);
	free(order);
	_free_hosts(names, n);
	return rc;
}

/* Is host in the comma list? */
static bool _in_list(const char *list, const char *host)
{
	size_t n = strlen(host);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, host, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/*
 * --ml-spares=K: the job's spares are the last K of its nodes in ring
 * order (select/topoml's order=, which puts them last; else Slurm's
 * order, as topoml-run reads it).  Every task gets TOPOML_SPARES and
 * TOPOML_SPARE_NODES, the batch script too: topoml-run reads them.  A
 * step with the torch wiring (WIRED) on a spare would give it a RANK: it
 * is refused, with the reason in the job's output.  Which nodes are
 * spares now is the step's TOPOML_SPARE_NODES when set: topoml-run
 * exports it for each launch, and a spare that took a failed worker's
 * place is a worker then.
 */
static void _spares(spank_t sp, uint32_t jobid, bool wired)
{
	char list[65536], now[65536];
	char **names = NULL, **step = NULL;
	int k = ml.val[ML_OPT_SPARES], n = 0, ns = 0, *order = NULL;
	size_t len = 0;

	if (!ml.set[ML_OPT_SPARES] || k < 1)
		return;
	if (_getenv(sp, "SLURM_JOB_NODELIST", list, sizeof(list)) ||
	    !(names = _hosts(list, &n)) || n < 1) {
		ml_log(ML_LOG_ERROR, "topoml: --ml-spares: no "
		       "SLURM_JOB_NODELIST: spares not known");
		goto out;
	}
	if (k >= n) {
		ml_user_error("--ml-spares=%d: the job has %d node(s): ask "
			      "-N workers+%d", k, n, k);
		goto out;
	}
	if (!(order = calloc(n, sizeof(int))))
		goto out;
	if (_comment_order(jobid, names, n, order))
		for (int i = 0; i < n; i++)
			order[i] = i;
	for (int i = n - k; i < n; i++)
		len += strlen(names[order[i]]) + 1;
	if (!(ml.spare_nodes = calloc(1, len + 1)))
		goto out;
	for (int i = n - k; i < n; i++) {
		if (i > n - k)
			strcat(ml.spare_nodes, ",");
		strcat(ml.spare_nodes, names[order[i]]);
	}
	if (!wired)
		goto out;
	if (_getenv(sp, "TOPOML_SPARE_NODES", now, sizeof(now)))
		snprintf(now, sizeof(now), "%s", ml.spare_nodes);
	if (_getenv(sp, "SLURM_STEP_NODELIST", list, sizeof(list)) ||
	    !(step = _hosts(list, &ns)))
		goto out;
	for (int i = 0; i < ns; i++)
		if (_in_list(now, step[i])) {
			ml_user_error("--ml-spares=%d: node %s of this step "
				      "is a spare of the job (TOPOML_SPARE_"
				      "NODES=%.200s) and would get a RANK: "
				      "launch the step on the workers "
				      "(topoml-run does), or without --ml-nccl "
				      "and --ml-parallel", k, step[i], now);
			break;
		}
out:
	free(order);
	_free_hosts(names, n);
	_free_hosts(step, ns);
}

/* The step's GPU pool, kept for task_init (_keep_visible). */
static int *_step_pool;
static int _step_npool = -1;
static bool _pool_slurm;		/* from SLURM_STEP_GPUS/JOB_GPUS */

/* The GPUs this step may use: Slurm's GRES lists, else the node's. */
static int _pool(spank_t sp, int *pool, int max)
{
	static const char *const vars[] = { "SLURM_STEP_GPUS",
					    "SLURM_JOB_GPUS",
					    "CUDA_VISIBLE_DEVICES",
					    "ROCR_VISIBLE_DEVICES" };
	char buf[1024];

	_pool_slurm = false;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int k;

		/* A node's own vendor's list only (Slurm's default GRES
		 * environment sets both on any node). */
		if (i >= 2 && strcmp(vars[i], hw_node_amd(ml.node) ?
				     "ROCR_VISIBLE_DEVICES" :
				     "CUDA_VISIBLE_DEVICES"))
			continue;
		if (_getenv(sp, vars[i], buf, sizeof(buf)))
			continue;
		if ((k = ml_parse_gpu_list(ml.node, buf, pool, max)) >= 0) {
			_pool_slurm = i < 2;
			return k;
		}
		ml_log(ML_LOG_INFO, "topoml: %s=%.120s is not a list of GPU "
		       "indices of this node: all GPUs", vars[i], buf);
		return -1;
	}
	return -1;
}

/*
 * The model slurmd cached for this node (by its Slurm name, or by host name
 * when NodeName differs from it); else the XML slurmd exported or the
 * admin's XML: parsing XML is cheap, discovering hardware is not.  Cache
 * files are read as root, so only from a cache_dir that nobody but root
 * can change, and only as regular files owned by root (no symlink, FIFO or
 * device: ml_open_owned).
 */
static int _load_model(struct hw_node *n, char *err, size_t errlen)
{
	char name[300], host[256], *dot, derr[512];
	hwloc_topology_t topo = NULL;
	int rc, dfd;

	dfd = ml_root_dir_open(ml.conf.cache_dir, false, derr, sizeof(derr));
	if (dfd < 0 && ml_log_once(ml.conf.cache_dir))
		ml_log(ML_LOG_ERROR, "topoml: cache_dir not used: %s: %s",
		       ml.conf.cache_dir, derr);
	if (dfd >= 0 && ml.node_name[0]) {
		snprintf(name, sizeof(name), "%s.model", ml.node_name);
		if (!hw_node_loadat(n, dfd, name, 0, err, errlen))
			goto found;
	}
	if (dfd >= 0 && !gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = '\0';
		if ((dot = strchr(host, '.')))
			*dot = '\0';
		snprintf(name, sizeof(name), "%s.model", host);
		if (ml_node_name_ok(host) &&
		    !hw_node_loadat(n, dfd, name, 0, err, errlen))
			goto found;
	}
	if (dfd >= 0 && ml.node_name[0]) {
		snprintf(name, sizeof(name), "%s.xml", ml.node_name);
		topo = hw_hwloc_loadat(dfd, name, 0, err, errlen);
	}
	/* The admin's own file, named in plugstack.conf. */
	if (!topo && ml.conf.hwloc_xml[0] && !access(ml.conf.hwloc_xml, R_OK))
		topo = hw_hwloc_load(ml.conf.hwloc_xml, err, errlen);
	if (topo) {
		rc = hw_node_from_hwloc(n, topo, err, errlen);
		hwloc_topology_destroy(topo);
		if (!rc) {
			hw_ib_default_ports(n);
			goto found;
		}
	}
	if (dfd >= 0)
		close(dfd);
	snprintf(err, errlen, "no %.200s/%.100s.model (slurmd caches it when it "
		 "starts with the plugin)", ml.conf.cache_dir, ml.node_name);
	return -1;
found:
	if (dfd >= 0)
		close(dfd);
	return 0;
}

/* <cache_dir>/<node><suffix> is a regular file of root in a trusted
 * cache_dir: its path may go to the tasks (NCCL_TOPO_FILE). */
static bool _cache_file_ok(const char *suffix)
{
	char name[300], derr[512];
	int dfd, fd;

	if (!ml.node_name[0])
		return false;
	dfd = ml_root_dir_open(ml.conf.cache_dir, false, derr, sizeof(derr));
	if (dfd < 0)
		return false;
	snprintf(name, sizeof(name), "%s%s", ml.node_name, suffix);
	fd = ml_open_owned(dfd, name, O_RDONLY, 0, 0);
	close(dfd);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * A mistake that depends on this node (a path it sees): every node where
 * it happens prints it, where a mistake of the job's options prints once
 * for the whole step (_refuse).
 */
static void _node_error(const char *fmt, const char *err)
{
	bool first = !ml.user_error[0];

	ml_user_error(fmt, err);
	if (first)
		ml.user_error_node = true;
}

/*
 * The step's nodes and tasks a node, from Slurm (the same on every node):
 * the count when every node runs as many tasks, 0 when they differ,
 * -1 when Slurm does not say.
 */
static int _step_tpn(spank_t sp, int *nnodes)
{
	char tpn[8192];
	uint32_t nn = 0;
	int *c, k, same;

	spank_get_item(sp, S_JOB_NNODES, &nn);
	*nnodes = (int)nn;
	if (nn < 1 || nn > 65536 ||
	    (_getenv(sp, "SLURM_STEP_TASKS_PER_NODE", tpn, sizeof(tpn)) &&
	     _getenv(sp, "SLURM_TASKS_PER_NODE", tpn, sizeof(tpn))))
		return -1;
	if (!(c = calloc(nn, sizeof(int))))
		return -1;
	k = ml_parse_tasks_per_node(tpn, c, (int)nn);
	same = k == (int)nn ? c[0] : -1;
	for (int i = 1; same > 0 && i < k; i++)
		if (c[i] != same)
			same = 0;
	free(c);
	return same;
}

/*
 * --ml-parallel's model=FILE, read as the job's user and walked from "/"
 * (ml_model_read): a relative path from the directory srun ran in (the
 * job's PWD).  PWD, like FILE, is the user's own input: it only chooses
 * which file the user could name anyway, and the walk, not the name,
 * keeps other users out.  No root-side path depends on it.  The text
 * (malloc'd) or NULL with the reason recorded for task_init.
 */
static char *_model_text(spank_t sp, size_t *len, char *path, size_t plen)
{
	char err[512], pwd[PATH_MAX];
	struct ml_cred u = { 0 };
	struct ml_cred_saved saved;
	gid_t *gids = NULL;
	char *text = NULL;
	int ng = 0;

	if (ml.par_model[0] == '/' ||
	    _getenv(sp, "PWD", pwd, sizeof(pwd)) || pwd[0] != '/')
		snprintf(path, plen, "%s", ml.par_model);
	else if (snprintf(path, plen, "%s/%s", pwd, ml.par_model) >=
		 (int)plen) {
		ml_user_error("--ml-parallel: model=%s: path too long",
			      ml.par_model);
		return NULL;
	}
	if (path[0] != '/') {
		ml_user_error("--ml-parallel: model=%s: not an absolute path "
			      "and no PWD", ml.par_model);
		return NULL;
	}
	if (spank_get_item(sp, S_JOB_UID, &u.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &u.gid) != ESPANK_SUCCESS) {
		ml_user_error("--ml-parallel: model=%s: no user from Slurm",
			      path);
		return NULL;
	}
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ng) ==
	    ESPANK_SUCCESS)
		for (int i = 0; i < ng && u.ngids < ML_CRED_MAX_GIDS; i++)
			u.gids[u.ngids++] = gids[i];
	if (!u.ngids)
		u.gids[u.ngids++] = u.gid;
	if (ml_cred_enter(&u, &saved)) {
		ml_log(ML_LOG_ERROR, "topoml: cannot act as uid %u: %s",
		       (unsigned)u.uid, strerror(errno));
		ml_user_error("--ml-parallel: model=%s: cannot read it as "
			      "the job's user", path);
		return NULL;
	}
	if (ml_model_read(path, &u, &text, len, err, sizeof(err)))
		ml_user_error("--ml-parallel: model=%s: %s", path, err);
	ml_cred_leave(&saved);
	return text;
}

/*
 * --ml-parallel=auto: the layout the planner chooses on this step (its
 * nodes and tasks a node, from Slurm); with model= on an explicit layout
 * the memory verdict.  0, or -1 with the job's mistake recorded.
 */
static int _plan(spank_t sp)
{
	char err[1024], path[PATH_MAX + 64];
	int nnodes = 0, tpn;
	size_t len = 0;
	char *text;

	if (!ml.par_model[0]) {
		if (!ml.par_auto)
			return 0;
		ml_user_error("--ml-parallel=auto: the planner needs the "
			      "model: --ml-parallel=auto,model=FILE "
			      "(topoml-plan(1))");
		return -1;
	}
	tpn = _step_tpn(sp, &nnodes);
	if (tpn <= 0) {
		if (!ml.par_auto)
			return 0;	/* no memory verdict, the job runs */
		ml_user_error("--ml-parallel=auto: %s", tpn ? "Slurm gives no "
			      "task counts per node" : "the step's nodes run "
			      "different numbers of tasks: ask "
			      "--ntasks-per-node");
		return -1;
	}
	if (!(text = _model_text(sp, &len, path, sizeof(path))))
		return -1;
	if (ml.par_auto) {
		if (ml_par_auto(text, len, path, nnodes, tpn, &ml.par,
				ml.par_note, sizeof(ml.par_note), err,
				sizeof(err))) {
			ml_user_error("--ml-parallel=auto: %s", err);
			free(text);
			return -1;
		}
	} else if (ml_par_mem(text, len, path, nnodes, tpn, &ml.par,
			      ml.par_mem, sizeof(ml.par_mem), err,
			      sizeof(err)) < 0) {
		ml_user_error("--ml-parallel: %s", err);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/*
 * --ml-preflight: this node against its model and Slurm's GPUs for the
 * step.  Here, in init_post_opt: as root, once a step on each node,
 * before any task is forked (task_init_privileged runs once a task, in
 * the task); user_init, the first callback with the step's output open,
 * says why the node failed, and task_init cancels the step
 * (_preflight_cancel).
 */
static char _pf_why[1024];

/* full's compute probe: a fixed integer workload (tens of ms a try). */
#define ML_PF_PROBE_ITERS	12000000L

/* The step's nodes as slurmctld has them (not the job's environment:
 * root connects to them).  NULL when it does not answer. */
static char **_step_nodes(uint32_t jobid, uint32_t stepid, int *n)
{
	job_step_info_response_msg_t *resp = NULL;
	char **names = NULL;
	int rc;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = jobid;
	id.step_id = stepid;
	rc = slurm_get_job_steps(&id, &resp, SHOW_ALL);
#else
	rc = slurm_get_job_steps(0, jobid, stepid, &resp, SHOW_ALL);
#endif
	*n = 0;
	if (rc == SLURM_SUCCESS && resp && resp->job_step_count >= 1 &&
	    resp->job_steps[0].nodes)
		names = _hosts(resp->job_steps[0].nodes, n);
	if (resp)
		slurm_free_job_step_info_response_msg(resp);
	return names;
}

/* A node's address as slurmctld's configuration gives it, else its name
 * (both from slurm.conf, not the job's). */
static void _pf_addr(const char *node, char *out, size_t len)
{
	char *(*get_addr)(const char *);
	void (*xfree_fn)(void **);
	char *addr;

	snprintf(out, len, "%s", node);
	get_addr = (char *(*)(const char *))dlsym(RTLD_DEFAULT,
						  "slurm_conf_get_address");
	xfree_fn = (void (*)(void **))dlsym(RTLD_DEFAULT, "slurm_xfree");
	if (!get_addr || !xfree_fn || !(addr = get_addr(node)))
		return;
	snprintf(out, len, "%s", addr);
	xfree_fn((void **)&addr);
}

/*
 * --ml-preflight=full: the compute probe here, the ring stream over the
 * step's nodes in ring order (select/topoml's, else Slurm's), every
 * node's results gathered around the ring, this node judged against the
 * job's medians.  Its problems are added to WHY (after quick's); their
 * count.  A ring that does not complete judges nobody (logged).
 */
static int _preflight_full(spank_t sp, char *why, size_t whylen)
{
	char **names = NULL, **addr = NULL, err[512], line[700];
	const char **rn = NULL, **ra = NULL;
	struct ml_pf_rec *recs = NULL;
	struct ml_pf_ring r = { 0 };
	uint32_t jobid = 0;
	int n = 0, *order = NULL, bad = 0, k;
	long mp = 0;

	spank_get_item(sp, S_JOB_ID, &jobid);
	if (!(names = _step_nodes(jobid, ml.stepid, &n))) {
		ml_log(ML_LOG_ERROR, "topoml: --ml-preflight=full: step %u.%u: "
		       "slurmctld did not answer: no ring", jobid, ml.stepid);
		return 0;
	}
	if (n < 3) {
		ml_log(ML_LOG_INFO, "topoml: --ml-preflight=full: %d node(s): "
		       "no median to compare with", n);
		goto out;
	}
	order = calloc(n, sizeof(int));
	addr = calloc(n, sizeof(char *));
	rn = calloc(n, sizeof(char *));
	ra = calloc(n, sizeof(char *));
	recs = calloc(n, sizeof(*recs));
	if (!order || !addr || !rn || !ra || !recs)
		goto out;
	if (_comment_order(jobid, names, n, order))
		for (int i = 0; i < n; i++)
			order[i] = i;
	r.me = -1;
	for (int i = 0; i < n; i++) {
		char a[256];

		rn[i] = names[order[i]];
		_pf_addr(rn[i], a, sizeof(a));
		if (!(addr[i] = strdup(a)))
			goto out;
		ra[i] = addr[i];
		if (!strcmp(rn[i], ml.node_name))
			r.me = i;
	}
	if (r.me < 0) {
		ml_log(ML_LOG_ERROR, "topoml: --ml-preflight=full: node %s is "
		       "not in step %u.%u's nodes: no ring", ml.node_name,
		       jobid, ml.stepid);
		goto out;
	}
	recs[r.me].probe_us = ml_pf_probe_us(ML_PF_PROBE_ITERS);
	r.n = n;
	r.names = rn;
	r.addr = ra;
	r.port = ml_master_port(&ml.conf, jobid, ml.stepid, "");
	r.jobid = jobid;
	r.stepid = ml.stepid;
	r.bytes = (size_t)ml.conf.pf_ring_mb << 20;
	r.timeout_ms = 4000;
	r.privileged = geteuid() == 0;
	k = ml_pf_ring_run(&r, recs, err, sizeof(err));
	if (err[0])
		ml_log(ML_LOG_ERROR, "topoml: --ml-preflight=full: node %s: "
		       "%s%s", ml.node_name, err,
		       k < n - 1 ? ": not judged" : "");
	if (k < n - 1)
		goto out;
	bad = ml_pf_ring_judge(recs, n, r.me, rn, ml.conf.pf_outlier,
			       ml.conf.pf_ring_outlier, line, sizeof(line));
	for (int i = 0; i < n; i++)
		mp = recs[i].probe_us > mp ? recs[i].probe_us : mp;
	ml_log(ML_LOG_INFO, "topoml: --ml-preflight=full: node %s: probe %ld "
	       "us, stream in %ld kB/s (slowest probe %ld us, %d nodes)",
	       ml.node_name, recs[r.me].probe_us, recs[r.me].bw_kbs, mp, n);
	if (bad) {
		size_t off = strlen(why);

		snprintf(why + off, whylen - off, "%s%s", off ? "; " : "",
			 line);
	}
out:
	for (int i = 0; addr && i < n; i++)
		free(addr[i]);
	free(addr);
	free(rn);
	free(ra);
	free(recs);
	free(order);
	_free_hosts(names, n);
	return bad;
}

/* preflight.c's root fault bits are the health part's checks. */
_Static_assert(ML_PF_ROOT_ECC == TOPOML_HEALTH_PF_ECC &&
	       ML_PF_ROOT_PAGES == TOPOML_HEALTH_PF_PAGES &&
	       ML_PF_ROOT_PORT == TOPOML_HEALTH_PF_PORT,
	       "preflight's root faults and the health part's checks");

static void _preflight(spank_t sp)
{
	struct hw_node *n = hw_node_new();
	char gpus[1024], err[1400];
	struct timespec t0, t1;
	bool full = ml.val[ML_OPT_PREFLIGHT] == ML_PREFLIGHT_FULL;
	const char *mode = full ? "full" : "quick";
	unsigned root = 0;
	uint32_t jobid = 0;
	long ms;
	int bad;

	_node_name();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!n || _load_model(n, err, sizeof(err))) {
		snprintf(_pf_why, sizeof(_pf_why), "no node model (%.400s): what "
			 "the node should have is not known", n ? err :
			 "out of memory");
		bad = 1;
	} else {
		if (_getenv(sp, "SLURM_STEP_GPUS", gpus, sizeof(gpus)) &&
		    _getenv(sp, "SLURM_JOB_GPUS", gpus, sizeof(gpus)))
			gpus[0] = '\0';
		bad = ml_preflight_quick_root(&ml.conf, n, gpus, _pf_why,
					      sizeof(_pf_why), &root);
	}
	hw_node_free(n);
	/* Every node takes part in the ring, failing ones too: the
	 * others wait for it. */
	if (full && ml.stepid != ML_BATCH_STEP)
		bad += _preflight_full(sp, _pf_why, sizeof(_pf_why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		(t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (!bad) {
		ml_log(ML_LOG_INFO, "topoml: --ml-preflight: node %s passed "
		       "(%s, %ld ms)", ml.node_name, mode, ms);
		return;
	}
	ml_log(ML_LOG_ERROR, "topoml: --ml-preflight: node %s failed (%s, "
	       "%ld ms): %s", ml.node_name, mode, ms, _pf_why);
	ml.preflight_failed = true;
	/* Node-wide hardware faults, read by root: the site's HealthPolicy
	 * may act on them alone (select/topoml). */
	if (root && geteuid() == 0 &&
	    spank_get_item(sp, S_JOB_ID, &jobid) == ESPANK_SUCCESS)
		ml_health_preflight(jobid, ml.node_name, root);
	snprintf(err, sizeof(err), "node %s: %s", ml.node_name, _pf_why);
	_node_error("--ml-preflight: %s", err);
}

int ml_remote_post_opt(spank_t sp)
{
	char err[1024], path[PATH_MAX + 64];
	uint32_t jobid = 0, stepid = 0, local = 0;
	int *pool = NULL, npool;

	spank_get_item(sp, S_JOB_STEPID, &stepid);
	ml.stepid = stepid;
	if (ml_options_finish(sp, true))
		return 0;	/* the job's mistake: task_init reports it */
	if (ml.ckpt.set && ml_ckpt_post_opt(sp, &ml.ckpt, ml.conf.cache_dir,
					    err, sizeof(err)))
		_node_error("--ml-ckpt: %s", err);
	if (stepid != ML_EXTERN_STEP &&
	    ml.val[ML_OPT_PREFLIGHT] != ML_PREFLIGHT_OFF)
		_preflight(sp);
	spank_get_item(sp, S_JOB_ID, &jobid);
	if (stepid != ML_EXTERN_STEP)
		_spares(sp, jobid, stepid != ML_BATCH_STEP &&
			(ml.val[ML_OPT_NCCL] == ML_NCCL_AUTO ||
			 ml.set[ML_OPT_PARALLEL]));
	if (stepid == ML_BATCH_STEP || stepid == ML_EXTERN_STEP)
		return 0;	/* the wiring is for the tasks of srun steps */
	if (ml.set[ML_OPT_PARALLEL]) {
		uint32_t ntasks = 0;

		if (_plan(sp))
			return 0;	/* the job's mistake: task_init */
		/* The job's sizes against this step's tasks: a mistake fails
		 * the tasks with the reason (task_init), never the node. */
		spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks);
		if (topoml_parallel_resolve(&ml.par, (int)ntasks, err,
					    sizeof(err))) {
			ml_user_error("--ml-parallel=%s: %s",
				      ml.arg[ML_OPT_PARALLEL], err);
			return 0;
		}
		/* The groups land on the placement only in its order. */
		if (!ml.set[ML_OPT_RANK_ORDER])
			ml.val[ML_OPT_RANK_ORDER] = ML_RANK_TOPOLOGY;
	}
	if (ml.val[ML_OPT_GPU_BIND] == ML_GPU_BIND_NONE &&
	    ml.val[ML_OPT_NCCL] == ML_NCCL_OFF && !ml.set[ML_OPT_PARALLEL])
		return 0;
	if (_job(sp, jobid))
		return 0;
	ml.active = true;
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local);
	ml.ntasks = local;

	ml.node = hw_node_new();
	if (!ml.node)
		return 0;
	if (_load_model(ml.node, err, sizeof(err))) {
		ml_log(ML_LOG_ERROR, "topoml: no node model (%s): tasks are "
		       "not bound", err);
		hw_node_free(ml.node);
		ml.node = NULL;
		return 0;
	}
	if (ml.conf.nccl_topo == ML_TOPO_FILE) {
		snprintf(ml.topo_file, sizeof(ml.topo_file), "%s",
			 ml.conf.nccl_topo_file);
	} else if (ml.conf.nccl_topo == ML_TOPO_GENERATE ||
		   (ml.conf.nccl_topo == ML_TOPO_AUTO &&
		    ml.conf.hwloc_xml[0])) {
		/* auto: NCCL sees the real PCI tree unless the admin had to
		 * describe the machine with an XML file. */
		ml_cache_path(&ml.conf, ml.node_name, ".nccl_topo.xml", path,
			      sizeof(path));
		if (_cache_file_ok(".nccl_topo.xml"))
			snprintf(ml.topo_file, sizeof(ml.topo_file), "%s",
				 path);
	}
	if (ml.ntasks <= 0)
		return 0;
	pool = malloc(sizeof(int) * (ml.node->ngpus + 1));
	ml.binds = calloc(ml.ntasks, sizeof(*ml.binds));
	if (!pool || !ml.binds) {
		free(pool);
		return 0;
	}
	if (ml.val[ML_OPT_GPU_BIND] == ML_GPU_BIND_NVLINK && !ml.node->nvml &&
	    ml.node->ngpus > 1)
		ml_log(ML_LOG_INFO, "topoml: --ml-gpu-bind=nvlink: no %s "
		       "islands known on %s, binding by PCI locality",
		       hw_node_amd(ml.node) ? "xGMI (ROCm SMI)" :
		       "NVLink (NVML)", ml.node_name);
	npool = _pool(sp, pool, ml.node->ngpus);
	free(_step_pool);
	_step_pool = NULL;
	_step_npool = -1;
	if (npool >= 0 && (_step_pool = malloc(sizeof(int) * (npool + 1)))) {
		memcpy(_step_pool, pool, sizeof(int) * npool);
		_step_npool = npool;
	}
	if (ml_bind_compute(ml.node, ml.val[ML_OPT_GPU_BIND], ml.ntasks,
			    npool >= 0 ? pool : NULL, npool, ml.binds, err,
			    sizeof(err))) {
		ML_ERR(ML_OPT_GPU_BIND, "%s", err);
		free(ml.binds);
		ml.binds = NULL;
	}
	free(pool);
	return 0;
}

/*
 * The site's straggler settings (plugstack.conf) as the job's defaults:
 * the job's own TOPOML_STRAGGLER_* win, as they are the user's to tune
 * for their own ranks.  What the site does with a report is
 * HealthPolicy's, in slurmctld, whatever the job sets here.
 */
static void _straggler_defaults(spank_t sp)
{
	for (int i = 0; i < ML_STRAGGLER_KEYS; i++) {
		const char *kv = ml.conf.straggler_env[i];
		const char *eq = strchr(kv, '=');
		char name[64], cur[8];
		spank_err_t rc;

		if (!eq)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - kv), kv);
		rc = spank_getenv(sp, name, cur, sizeof(cur));
		if (rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE)
			continue;
		spank_setenv(sp, name, eq + 1, 0);
	}
}

int ml_remote_user_init(spank_t sp)
{
	char err[1024];

	/*
	 * --ml-preflight failed on this node: one line in the step's output
	 * (slurmstepd's stderr is the step's from here on); task_init ends
	 * the step.  The batch step: task_init refuses its script, which
	 * fails the job (an error return here would drain the node).
	 */
	if (ml.preflight_failed && ml.stepid != ML_BATCH_STEP) {
		topoml_log_format(err, sizeof(err), "node %s: %s",
				  ml.node_name, _pf_why);
		dprintf(STDERR_FILENO, "topoml: --ml-preflight: %s\n", err);
		return 0;
	}
	if (ml.ckpt.set && !ml.user_error[0] &&
	    ml_ckpt_user_init(sp, &ml.ckpt, err, sizeof(err)))
		_node_error("--ml-ckpt: %s", err);
	else if (ml.ckpt.set && ml_ckpt_resume_note()[0])
		ml_log(ML_LOG_INFO, "topoml: --ml-ckpt: %s",
		       ml_ckpt_resume_note());
	if (ml.ckpt.set)
		_straggler_defaults(sp);
	return 0;	/* never an error here: see ml.user_error */
}

/* Bind within what Slurm already allowed; false when nothing is left. */
static bool _bind_cpus(hwloc_const_bitmap_t want, int tid)
{
	cpu_set_t cur, set;
	unsigned int i;
	int count = 0;

	if (sched_getaffinity(0, sizeof(cur), &cur))
		return false;
	CPU_ZERO(&set);
	hwloc_bitmap_foreach_begin(i, want)
		if (i < CPU_SETSIZE && CPU_ISSET(i, &cur)) {
			CPU_SET(i, &set);
			count++;
		}
	hwloc_bitmap_foreach_end();
	if (!count) {
		/* In the task: stderr is the job's output, where the user
		 * who asked for --ml-gpu-bind looks (not slurmd's log). */
		const char *node = getenv("SLURMD_NODENAME");

		dprintf(STDERR_FILENO, "topoml: warning: --ml-gpu-bind: node "
			"%s, task %d: the CPUs near its GPU are outside the "
			"CPUs Slurm gave it: CPU binding left as Slurm set "
			"it\n", ml_node_name_ok(node) ? node : "?", tid);
		return false;
	}
	if (sched_setaffinity(0, sizeof(set), &set)) {
		ml_log(ML_LOG_ERROR, "topoml: sched_setaffinity: %s",
		       strerror(errno));
		return false;
	}
	return true;
}

/*
 * CUDA_VISIBLE_DEVICES (ROCR_VISIBLE_DEVICES on AMD) already set, by the
 * user or Slurm's GRES: it stays, CUDA_DEVICE_ORDER too, and
 * TOPOML_LOCAL_GPUS / TOPOML_DEVICE point into that list (by position
 * when Slurm renumbered it), or are left out when the list does not say
 * where the task's GPUs are.
 */
static void _keep_visible(spank_t sp, const struct ml_task_bind *b,
			  struct ml_env *e)
{
	char cur[1024], own[256];

	if (spank_getenv(sp, ml_visible_var(b), cur, sizeof(cur)) !=
	    ESPANK_SUCCESS)
		return;
	if (ml_own_in_visible(ml.node, b, cur, _step_pool,
			      _step_npool > 0 ? _step_npool : 0,
			      _pool_slurm, own, sizeof(own))) {
		ml_log(ML_LOG_INFO, "topoml: %s=%.120s does not say where this "
		       "task's GPUs are: no TOPOML_DEVICE", ml_visible_var(b),
		       cur);
		own[0] = '\0';
	}
	/* An empty value: _apply leaves the variable out. */
	ml_env_add(e, "TOPOML_LOCAL_GPUS", "%s", own);
	ml_env_device(own, e);
	ml_env_add(e, "CUDA_DEVICE_ORDER", "%s", "");
}

static void _apply(spank_t sp, const struct ml_env *e)
{
	char buf[16];

	for (int i = 0; i < e->n; i++) {
		spank_err_t rc = spank_getenv(sp, e->name[i], buf, sizeof(buf));

		/* Set already (by the user, or by Slurm for GPUs): keep.
		 * An empty value means "leave it out". */
		if (rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE ||
		    !e->value[i][0])
			continue;
		spank_setenv(sp, e->name[i], e->value[i], 0);
	}
}

/*
 * The job's mistake, in the task before exec (as the user; stderr is the
 * job's output): one task prints the reason, the step's first (the first
 * local task of node 0) or, for a mistake of this node's own, the first
 * local task of each node that has it; every task exits 1 there.  Not
 * returned to slurmstepd: under `optional` it would exec the task all
 * the same, under `required` print its own lines once per task.
 */
static void __attribute__((noreturn)) _refuse(spank_t sp)
{
	/* slurmstepd's own variable (see _node_name), not the job's */
	const char *node = getenv("SLURMD_NODENAME");
	uint32_t nodeid = 0;
	int tid = -1;

	spank_get_item(sp, S_TASK_ID, &tid);
	spank_get_item(sp, S_JOB_NODEID, &nodeid);
	if (tid == 0 && nodeid == 0)
		dprintf(STDERR_FILENO, "topoml: %s\n", ml.user_error);
	else if (tid == 0 && ml.user_error_node)
		dprintf(STDERR_FILENO, "topoml: node %s: %s\n",
			ml_node_name_ok(node) ? node : "?", ml.user_error);
	_exit(1);
}

/* A line of --ml-preflight's in the job's output (escaped). */
static void __attribute__((format(printf, 1, 2)))
_pf_says(const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	dprintf(STDERR_FILENO, "topoml: --ml-preflight: %s\n", line);
	ml_log(ML_LOG_INFO, "topoml: --ml-preflight: %s", line);
}

/* Is host in the host list (a Slurm one: "n[1-3],m2")? */
static bool _in_hosts(const char *list, const char *host)
{
	char **h;
	bool in = false;
	int n = 0;

	if (!list || !*list || !(h = _hosts(list, &n)))
		return false;
	for (int i = 0; i < n; i++)
		in |= !strcmp(h[i], host);
	_free_hosts(h, n);
	return in;
}

/* An update of the job (25.11 names it by step_id). */
static void _pf_desc(job_desc_msg_t *d, uint32_t jobid)
{
	slurm_init_job_desc_msg(d);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	d->step_id.job_id = jobid;
#else
	d->job_id = jobid;
#endif
}

/* Is this node in the job's excluded nodes now?  -1: not known. */
static int _pf_excluded(uint32_t jobid, char *exc, size_t len)
{
	job_info_msg_t *info = NULL;

	exc[0] = '\0';
	if (ml_load_job(&info, jobid) != SLURM_SUCCESS || !info ||
	    info->record_count < 1) {
		if (info)
			slurm_free_job_info_msg(info);
		return -1;
	}
	/* A list cut short would exclude other nodes: not known. */
	if (info->job_array[0].exc_nodes &&
	    (size_t)snprintf(exc, len, "%s", info->job_array[0].exc_nodes) >=
	    len) {
		slurm_free_job_info_msg(info);
		return -1;
	}
	slurm_free_job_info_msg(info);
	return _in_hosts(exc, ml.node_name);
}

/*
 * --ml-preflight failed on this node, in its first task (as the user:
 * the user's own job, the user's own rights).  A batch job that may be
 * requeued and has no spare left to take the node's place (the step's
 * TOPOML_SPARE_NODES empty: else topoml-run puts a spare in, see
 * _preflight_cancel) is requeued held, the node added to its excluded
 * nodes, and released: held, so that it cannot start again before the
 * node is out.  At most preflight_requeue times (the job's restart
 * count): a fleet of bad nodes cannot loop.  No node is ever drained.
 * true when the job was requeued; the why of a job not requeued goes
 * to the job's output.
 */
static bool _preflight_requeue(spank_t sp, uint32_t jobid)
{
	char spares[4096], exc[8192], want[8192 + sizeof(ml.node_name) + 2];
	job_info_msg_t *info = NULL;
	const slurm_job_info_t *j;
	job_desc_msg_t d;
	long restarts = 0;
	int rc = -1, in;

	if (!ml.node_name[0])
		return false;
	if (!_getenv(sp, "TOPOML_SPARE_NODES", spares, sizeof(spares)) &&
	    spares[0]) {
		_pf_says("job %u not requeued: spare(s) %s left, for "
			 "topoml-run to put in node %s's place", jobid,
			 spares, ml.node_name);
		return false;
	}
	if (ml_load_job(&info, jobid) != SLURM_SUCCESS || !info ||
	    info->record_count < 1) {
		_pf_says("job %u not requeued: slurmctld did not answer (%s)",
			 jobid, slurm_strerror(errno));
		goto out;
	}
	j = &info->job_array[0];
	restarts = j->restart_cnt;
	if (!j->batch_flag)
		goto out;	/* srun or salloc: the step ends, as asked */
	if (!j->requeue) {
		_pf_says("job %u not requeued: it may not be (--no-requeue, "
			 "JobRequeue=0)", jobid);
		goto out;
	}
	if (_in_hosts(j->req_nodes, ml.node_name)) {
		_pf_says("job %u not requeued: it asked for node %s (-w)",
			 jobid, ml.node_name);
		goto out;
	}
	if (restarts >= ml.conf.pf_requeue) {
		_pf_says("job %u not requeued: restarted %ld time(s) already "
			 "(the site allows %d for preflight)", jobid, restarts,
			 ml.conf.pf_requeue);
		goto out;
	}
	rc = 0;
out:
	if (info)
		slurm_free_job_info_msg(info);
	if (rc)
		return false;
	/* Said before the requeue ends the job's script and its srun;
	 * the batch step's reason too (_refuse would say it). */
	if (ml.stepid == ML_BATCH_STEP)
		_pf_says("node %s: %s", ml.node_name, _pf_why);
	_pf_says("job %u requeued without node %s (requeue %ld of at most %d)",
		 jobid, ml.node_name, restarts + 1, ml.conf.pf_requeue);
	usleep(200000);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	rc = slurm_requeue(ml_job_step_id(jobid), JOB_REQUEUE_HOLD);
#else
	rc = slurm_requeue(jobid, JOB_REQUEUE_HOLD);
#endif
	/* Another failing node of the step may have requeued it already. */
	if (rc != SLURM_SUCCESS && errno != ESLURM_JOB_PENDING &&
	    errno != ESLURM_JOB_NOT_RUNNING) {
		_pf_says("job %u: requeue failed (%s): step cancelled", jobid,
			 slurm_strerror(errno));
		return false;
	}
	/* Each failing node adds itself; read again after, in case two
	 * wrote at once. */
	for (int tries = 0; tries < 5; tries++) {
		if ((in = _pf_excluded(jobid, exc, sizeof(exc))) != 0)
			break;
		snprintf(want, sizeof(want), "%s%s%s", exc, exc[0] ? "," : "",
			 ml.node_name);
		_pf_desc(&d, jobid);
		d.exc_nodes = want;
		if (slurm_update_job(&d) != SLURM_SUCCESS) {
			ml_log(ML_LOG_ERROR, "topoml: --ml-preflight: job %u: "
			       "excluding %s: %s", jobid, ml.node_name,
			       slurm_strerror(errno));
			usleep(50000);
		}
	}
	if (in != 1)
		_pf_says("job %u: node %s could not be excluded (%s): it "
			 "may run there again", jobid, ml.node_name,
			 in < 0 ? "slurmctld did not answer" :
			 "update refused");
	_pf_desc(&d, jobid);
	d.priority = INFINITE;		/* scontrol release */
	if (slurm_update_job(&d) != SLURM_SUCCESS)
		_pf_says("job %u is held: release failed (%s): scontrol "
			 "release %u", jobid, slurm_strerror(errno), jobid);
	return true;
}

static void __attribute__((noreturn)) _preflight_cancel(spank_t sp)
{
	uint32_t jobid = 0;
	int tid = -1;

	spank_get_item(sp, S_TASK_ID, &tid);
	spank_get_item(sp, S_JOB_ID, &jobid);
	if (tid == 0 && _preflight_requeue(sp, jobid))
		_exit(1);
	if (tid == 0 && ml_kill_step(jobid, ml.stepid, SIGKILL))
		ml_log(ML_LOG_ERROR, "topoml: --ml-preflight: cannot cancel "
		       "step %u.%u: %s", jobid, ml.stepid,
		       slurm_strerror(errno));
	_exit(1);
}

/* A line in the job's output from the step's first task (escaped). */
static void __attribute__((format(printf, 2, 3)))
_first_task_says(spank_t sp, const char *fmt, ...)
{
	char line[2048];
	uint32_t nodeid = 0;
	int tid = -1;
	va_list ap;

	spank_get_item(sp, S_TASK_ID, &tid);
	spank_get_item(sp, S_JOB_NODEID, &nodeid);
	if (tid || nodeid)
		return;
	va_start(ap, fmt);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	dprintf(STDERR_FILENO, "topoml: %s\n", line);
}

static bool _task_getenv(void *sp, const char *name, char *buf, size_t len)
{
	spank_err_t rc = spank_getenv(sp, name, buf, len);

	buf[len - 1] = '\0';
	return rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE;
}

/* One task on this node that starts its own workers (torchrun): what
 * each would get as a task of its own, for topoml-worker (env.c). */
static void _workers(spank_t sp, const struct ml_task_bind *b, bool bound,
		     struct ml_env *e)
{
	bool gpus = b && ml.val[ML_OPT_GPU_BIND] != ML_GPU_BIND_NONE;
	bool nccl = ml.val[ML_OPT_NCCL] == ML_NCCL_AUTO;
	struct ml_workers w = {
		.node = ml.node, .mode = ml.val[ML_OPT_GPU_BIND],
		.task = gpus ? b : NULL, .job = nccl ? &ml.job : NULL,
		.nworkers = gpus ? b->ngpus : 0, .pool = _step_pool,
		.npool = _step_npool > 0 ? _step_npool : 0,
		.from_slurm = _pool_slurm, .cpus = bound, .net = nccl,
		.get = _task_getenv, .arg = sp,
	};
	char vis[1024];

	if (gpus)
		w.visible = _task_getenv(sp, ml_visible_var(b), vis,
					 sizeof(vis)) ? vis : b->cuda_visible;
	if (ml_env_workers(&w, e))
		ml_log(ML_LOG_INFO, "topoml: no per-worker bindings");
}

int ml_remote_task_init(spank_t sp)
{
	struct ml_env env = { 0 };
	struct ml_task_bind *b = NULL;
	uint32_t grank = 0;
	int tid = -1, rc = 0;
	bool bound = false;

	/*
	 * --ml-preflight failed on this node: its first task cancels the
	 * step on every node with the user's own right (a task runs as the
	 * user), and no task here reaches exec.  Not from user_init: failing
	 * the launch there, srun 22.05 counts the node's tasks as fine, and
	 * 23.11+ hold slurmstepd's auth lock there, so an RPC is fatal; they
	 * release it for task_init.
	 */
	if (ml.preflight_failed && ml.stepid != ML_BATCH_STEP)
		_preflight_cancel(sp);
	/* The batch step: its script fails (_refuse), unless requeued. */
	if (ml.preflight_failed && ml.stepid == ML_BATCH_STEP) {
		uint32_t jobid = 0;

		spank_get_item(sp, S_JOB_ID, &jobid);
		if (_preflight_requeue(sp, jobid))
			_exit(1);
	}
	if (ml.user_error[0] && ml.stepid != ML_EXTERN_STEP)
		_refuse(sp);
	if (ml.ckpt.set && ml_ckpt_resume_note()[0])
		_first_task_says(sp, "--ml-ckpt: %s", ml_ckpt_resume_note());
	if (ml.ckpt.set && ml_ckpt_task_init(sp, &ml.ckpt))
		rc = -1;
	if (ml.spare_nodes) {
		ml_env_add(&env, "TOPOML_SPARES", "%d",
			   ml.val[ML_OPT_SPARES]);
		ml_env_add(&env, "TOPOML_SPARE_NODES", "%s", ml.spare_nodes);
		_apply(sp, &env);
		ml_env_clear(&env);
	}
	if (!ml.active)
		return rc;
	spank_get_item(sp, S_TASK_ID, &tid);
	spank_get_item(sp, S_TASK_GLOBAL_ID, &grank);
	if (ml.binds && tid >= 0 && tid < ml.ntasks)
		b = &ml.binds[tid];

	if (b && ml.val[ML_OPT_GPU_BIND] != ML_GPU_BIND_NONE) {
		ml_env_gpu(b, &env);
		_keep_visible(sp, b, &env);
		if (ml.conf.bind_cpus && !hwloc_bitmap_iszero(b->cpuset))
			bound = _bind_cpus(b->cpuset, tid);
	}
	if (ml.val[ML_OPT_NCCL] == ML_NCCL_AUTO || ml.set[ML_OPT_PARALLEL]) {
		ml.job.local_rank = tid;
		ml.job.rank = ml.node_first_rank ?
			*ml.node_first_rank + tid : (int)grank;
		ml_env_torch(&ml.job, &env);
	}
	if (ml.set[ML_OPT_PARALLEL]) {
		ml_env_parallel(&ml.par, ml.job.rank, &env);
		if (ml.par_note[0] && grank == 0)
			dprintf(STDERR_FILENO, "topoml: %s\n", ml.par_note);
		/* the verdict: one line a step, silent when all is well */
		if ((ml.par_split[0] || ml.par_mem[0]) && grank == 0)
			dprintf(STDERR_FILENO, "topoml: verdict on "
				"--ml-parallel=tp=%d,pp=%d,dp=%d: %s%s%s\n",
				ml.par.tp, ml.par.pp, ml.par.dp,
				ml.par_split, ml.par_split[0] &&
				ml.par_mem[0] ? "; " : "", ml.par_mem);
	}
	if (ml.val[ML_OPT_NCCL] == ML_NCCL_AUTO) {
		struct ml_task_bind none = { .nic = -1, .gid_index = -1 };

		/* HCAs follow the GPUs only when the plugin chose them. */
		ml_env_nccl(&ml.conf, ml.node,
			    b && ml.val[ML_OPT_GPU_BIND] ? b : &none, bound,
			    ml.topo_file, &env);
	}
	if (ml.ntasks == 1)
		_workers(sp, b, bound, &env);
	_apply(sp, &env);
	if (b && b->ngpus) {
		char cpus[256] = "-";

		if (bound)
			hwloc_bitmap_list_snprintf(cpus, sizeof(cpus),
						   b->cpuset);
		ml_log(ML_LOG_VERBOSE, "topoml: task %d: %s=%.120s own=%s "
		       "cpus=%s hca=%s cxi=%s", tid, ml_visible_var(b),
		       b->cuda_visible, b->local_gpus, cpus,
		       b->ib_hca[0] ? b->ib_hca : "-",
		       b->cxi[0] ? b->cxi : "-");
	}
	ml_env_clear(&env);
	return rc;
}

int ml_remote_exit(spank_t sp)
{
	int rc = 0;

	if (ml.ckpt.set)
		rc = ml_ckpt_exit(sp, &ml.ckpt);
	if (ml.binds)
		ml_bind_free(ml.binds, ml.ntasks);
	free(ml.binds);
	ml.binds = NULL;
	hw_node_free(ml.node);
	ml.node = NULL;
	free(_step_pool);
	_step_pool = NULL;
	free(ml.node_first_rank);
	ml.node_first_rank = NULL;
	free(ml.spare_nodes);
	ml.spare_nodes = NULL;
	ml_ctld_job_clear();
	return rc;
}
