/*
 * select/topoml's node health table (topoml/health.h has the whole path):
 * at job end the job's "topoml-health: straggler=..." part of its
 * AdminComment, which only root, SlurmUser and Slurm administrators can
 * set (topoml.so sets it as root from the job's checkpoint directory),
 * is taken out (what was done goes to the SystemComment) for the job's
 * own nodes into a per-node table, and acted on
 * by HealthPolicy= (topoml.conf):
 *   report  recorded, logged and shown (topoml health), nothing else;
 *   avoid   the node is offered to placement last for HealthAvoidTime
 *           seconds: job_test first tries without it, so a job lands
 *           elsewhere when it can;
 *   drain   avoid, and drain the node once users of two different uids
 *           reported it within HealthAvoidTime (one user never can), or
 *           on a root-side preflight finding ("preflight=NODE:ecc", only
 *           node-wide hardware checks, written by topoml.so as root).
 * The table is bounded by the cluster's nodes (names not in Slurm's
 * node table are dropped), saved in StateSaveLocation (replaced
 * atomically by SlurmUser, 0600) whenever it changes, and loaded at
 * start.  Its own lock; never g_lock inside it.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topoml/health.h"
#include "select_int.h"

static pthread_mutex_t h_lock = PTHREAD_MUTEX_INITIALIZER;
static struct topoml_health_table h_table;
static enum topoml_health_policy h_policy = TOPOML_HEALTH_REPORT;
static int h_avoid_time = TOPOML_HEALTH_AVOID_TIME_DEFAULT;
static bool h_on;			/* this slurmctld places */
/* The avoided nodes by Slurm index, rebuilt when the table changes, the
 * first avoidance ends or Slurm's node count changes. */
static bitstr_t *h_avoid;
static bool h_dirty = true;
static time_t h_expiry;

static char *_state_path(const char *suffix)
{
	if (!slurm_conf.state_save_location)
		return NULL;
	return xstrdup_printf("%s/%s%s", slurm_conf.state_save_location,
			      TOPOML_HEALTH_STATE, suffix);
}

/*
 * Written whole and renamed over the old one at each change (small: a
 * line a node); fsynced at most once a minute, so that many short jobs
 * reporting cost slurmctld no disk flush each under its locks.
 */
static time_t h_synced;

static void _save(void)
{
	char *path = _state_path(""), *tmp = _state_path(".new");
	time_t now = time(NULL);
	bool sync = now - h_synced >= 60;
	FILE *f = NULL;
	int fd = -1;

	if (!path || !tmp)
		goto out;
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		error("%s: health: cannot write %s: %m", sel_who, tmp);
		goto out;
	}
	fd = -1;
	if (topoml_health_save(f, &h_table) || fflush(f) ||
	    (sync && fsync(fileno(f))) || fclose(f)) {
		f = NULL;
		error("%s: health: cannot write %s: %m", sel_who, tmp);
		(void)unlink(tmp);
		goto out;
	}
	f = NULL;
	if (rename(tmp, path))
		error("%s: health: cannot rename %s: %m", sel_who, tmp);
	else if (sync)
		h_synced = now;
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	xfree(path);
	xfree(tmp);
}

static void _load(void)
{
	char *path = _state_path(""), *buf = NULL, err[256];
	struct stat st;
	ssize_t n = 0;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			error("%s: health: %s: %m", sel_who, path);
		goto out;
	}
	/* Our own file, but bounded still: 64 bytes a node at least. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)TOPOML_HEALTH_NODES_MAX * 1024) {
		error("%s: health: %s: not a state file, starting empty",
		      sel_who, path);
		goto out;
	}
	buf = xmalloc(st.st_size + 1);
	n = read(fd, buf, st.st_size);
	if (n != st.st_size ||
	    topoml_health_load(buf, n, &h_table, err, sizeof(err))) {
		error("%s: health: %s: %s, starting empty", sel_who, path,
		      n != st.st_size ? "short read" : err);
		topoml_health_table_clear(&h_table);
	} else if (h_table.n) {
		info("%s: health: %d nodes' records from %s", sel_who,
		     h_table.n, path);
	}
out:
	if (fd >= 0)
		close(fd);
	xfree(buf);
	xfree(path);
	h_dirty = true;
}

void sel_health_conf(bool placing, int policy, int avoid_time)
{
	slurm_mutex_lock(&h_lock);
	if (placing && !h_on)
		_load();
	h_on = placing;
	h_policy = (enum topoml_health_policy)policy;
	h_avoid_time = avoid_time;
	h_dirty = true;
	slurm_mutex_unlock(&h_lock);
}

void sel_health_fini(void)
{
	slurm_mutex_lock(&h_lock);
	topoml_health_table_clear(&h_table);
	FREE_NULL_BITMAP(h_avoid);
	h_on = false;
	slurm_mutex_unlock(&h_lock);
}

/* slurmctld's drain_nodes(), which the clients that load this plugin
 * lack: looked up at run time. */
typedef int (*drain_fn)(char *nodes, char *reason, uint32_t reason_uid);

static void _drain(const char *node, const char *kind, const char *why)
{
	drain_fn drain = (drain_fn)dlsym(RTLD_DEFAULT, "drain_nodes");
	char *reason = xstrdup_printf("topoml: %s: %s", kind, why);
	char *name = xstrdup(node);

	if (!drain)
		error("%s: health: cannot drain %s: no drain_nodes", sel_who,
		      node);
	else if ((*drain)(name, reason, slurm_conf.slurm_user_id))
		error("%s: health: cannot drain %s", sel_who, node);
	xfree(reason);
	xfree(name);
}

/* Is NODE_PTR (may be NULL) one of the job's nodes? */
static bool _of_job(job_record_t *job_ptr, node_record_t *node_ptr)
{
	return node_ptr && job_ptr->node_bitmap &&
	       node_ptr->index < (uint32_t)bit_size(job_ptr->node_bitmap) &&
	       bit_test(job_ptr->node_bitmap, node_ptr->index);
}

void sel_health_job_fini(job_record_t *job_ptr)
{
	struct topoml_health_names names, took = { 0 };
	struct topoml_health_pf pf, pf_took = { 0 };
	char err[128], *part = NULL, *merged;
	time_t now = time(NULL);
	int rc, act = TOPOML_HEALTH_ACT_NONE;

	if (!job_ptr->admin_comment ||
	    !strstr(job_ptr->admin_comment, TOPOML_HEALTH_TAG))
		return;
	rc = topoml_health_part_parse_pf(job_ptr->admin_comment, &names, &pf,
					 err, sizeof(err));
	if (rc < 0) {
		sel_error_once("%s: health: JobId=%u: bad %.13s part: %s",
			       sel_who, job_ptr->job_id, TOPOML_HEALTH_TAG,
			       err);
		return;
	}
	if (rc)
		return;
	slurm_mutex_lock(&h_lock);
	if (!h_on)
		goto out;
	/*
	 * Taken once: AdminComment is the admin's again, and a requeued run
	 * of the job reports anew (SystemComment keeps what was done).
	 */
	merged = topoml_health_part_drop(job_ptr->admin_comment);
	if (merged) {
		xfree(job_ptr->admin_comment);
		if (merged[0])
			job_ptr->admin_comment = xstrdup(merged);
		free(merged);
	}
	for (int i = 0; i < names.n; i++) {
		node_record_t *node_ptr = find_node_record(names.name[i]);
		int a;

		if (!node_ptr || !job_ptr->node_bitmap ||
		    node_ptr->index >= (uint32_t)bit_size(job_ptr->node_bitmap) ||
		    !bit_test(job_ptr->node_bitmap, node_ptr->index)) {
			sel_error_once("%s: health: JobId=%u: node %s is not the job's, ignored",
				       sel_who, job_ptr->job_id,
				       names.name[i]);
			continue;
		}
		a = topoml_health_record(&h_table, names.name[i],
					 job_ptr->job_id, job_ptr->user_id,
					 now, h_policy, h_avoid_time);
		if (a < 0) {
			error("%s: health: table full, %s not recorded",
			      sel_who, names.name[i]);
			continue;
		}
		topoml_health_names_add(&took, names.name[i]);
		info("%s: health: node %s reported slow by %pJ uid=%u: %s (%s)",
		     sel_who, names.name[i], job_ptr, job_ptr->user_id,
		     topoml_health_action_name(a),
		     topoml_health_find(&h_table, names.name[i])->why);
		if (a == TOPOML_HEALTH_ACT_DRAIN)
			_drain(names.name[i], "straggler",
			       topoml_health_find(&h_table,
						  names.name[i])->why);
		if (a > act)
			act = a;
	}
	/* Root-side preflight findings: acted on alone (nobody else's
	 * word is needed: only root's topoml.so writes them). */
	for (int i = 0; i < pf.n; i++) {
		node_record_t *node_ptr = find_node_record(pf.name[i]);
		char c[32];
		int a;

		if (!_of_job(job_ptr, node_ptr)) {
			sel_error_once("%s: health: JobId=%u: node %s is not the job's, ignored",
				       sel_who, job_ptr->job_id, pf.name[i]);
			continue;
		}
		a = topoml_health_record_pf(&h_table, pf.name[i],
					    job_ptr->job_id, pf.checks[i],
					    now, h_policy, h_avoid_time);
		if (a < 0) {
			error("%s: health: table full, %s not recorded",
			      sel_who, pf.name[i]);
			continue;
		}
		topoml_health_pf_add(&pf_took, pf.name[i], pf.checks[i]);
		topoml_health_pf_checks_write(pf.checks[i], c, sizeof(c));
		info("%s: health: node %s failed root-side preflight (%s) in %pJ: %s",
		     sel_who, pf.name[i], c, job_ptr,
		     topoml_health_action_name(a));
		if (a == TOPOML_HEALTH_ACT_DRAIN)
			_drain(pf.name[i], "preflight",
			       topoml_health_find(&h_table, pf.name[i])->why);
		if (a > act)
			act = a;
	}
	if (!took.n && !pf_took.n)
		goto out;
	h_dirty = true;
	_save();
	/* What was seen and done, beside the placement in SystemComment. */
	part = topoml_health_part_write_pf(&took, &pf_took);
	if (part) {
		char *with = xstrdup_printf("%s policy=%s action=%s", part,
					    topoml_health_policy_name(h_policy),
					    topoml_health_action_name(act));

		merged = topoml_health_part_merge(job_ptr->system_comment,
						  with);
		if (merged) {
			xfree(job_ptr->system_comment);
			job_ptr->system_comment = xstrdup(merged);
			free(merged);
		}
		xfree(with);
	}
out:
	free(part);
	slurm_mutex_unlock(&h_lock);
}

/* h_lock held: the avoided nodes as a Slurm bitmap, NULL: none. */
static bitstr_t *_avoided(time_t now)
{
	if (!h_dirty && h_avoid && (!h_expiry || now < h_expiry) &&
	    bit_size(h_avoid) == node_record_count)
		return h_expiry ? h_avoid : NULL;
	FREE_NULL_BITMAP(h_avoid);
	h_avoid = bit_alloc(node_record_count);
	h_expiry = 0;
	h_dirty = false;
	for (int i = 0; i < h_table.n; i++) {
		struct topoml_health_node *n = &h_table.node[i];
		node_record_t *node_ptr;

		if (!topoml_health_avoided(n, now) ||
		    !(node_ptr = find_node_record(n->name)) ||
		    node_ptr->index >= (uint32_t)node_record_count)
			continue;
		bit_set(h_avoid, node_ptr->index);
		if (!h_expiry || n->avoid_until < h_expiry)
			h_expiry = (time_t)n->avoid_until;
	}
	return h_expiry ? h_avoid : NULL;
}

bitstr_t *sel_health_prefer(bitstr_t *bitmap, uint32_t min_nodes)
{
	bitstr_t *avoid, *pref = NULL;

	slurm_mutex_lock(&h_lock);
	if (!h_on || h_policy == TOPOML_HEALTH_REPORT || !bitmap)
		goto out;
	avoid = _avoided(time(NULL));
	if (!avoid || bit_size(avoid) != bit_size(bitmap) ||
	    !bit_overlap(bitmap, avoid))
		goto out;
	pref = bit_copy(bitmap);
	bit_and_not(pref, avoid);
	if (bit_set_count(pref) < (int)(min_nodes ? min_nodes : 1))
		FREE_NULL_BITMAP(pref);
out:
	slurm_mutex_unlock(&h_lock);
	return pref;
}
