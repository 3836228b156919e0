/*
 * The job's straggler report, taken to slurmctld by root (topoml/health.h
 * has the whole path).  When the last local task of the step that speaks
 * for the job ends (the batch step; for a job without a batch script,
 * each step's first node), as root, before slurmstepd tells srun and
 * slurmctld that the step ended:
 *  - DIR/health.jsonl is opened through the checkpoint directory's
 *    descriptor (walked as the user at user_init, ckpt_dir.c), with the
 *    user's file-system identity, never through a symlink, only as a
 *    regular file the user owns and nobody else can write;
 *  - at most TOPOML_HEALTH_REPORT_MAX bytes are read (a larger file is
 *    ignored whole), parsed strictly (topoml_health_report_parse);
 *  - only names of nodes in the job's allocation as slurmctld reports it
 *    are kept (the job's file may name any node);
 *  - they go into the job's AdminComment as the part
 *    "topoml-health: straggler=n3,n4", the others' parts kept (and the
 *    root-side preflight findings already in it, ml_health_preflight).
 *    Only root, SlurmUser and Slurm administrators can set AdminComment
 *    (no RPC sets SystemComment), and the job still runs here
 *    (slurmstepd sends the tasks' exit and the step's end after
 *    task_exit), so select/topoml finds the part at job end.
 * What is refused is logged (slurmd's log), never an error of the step.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "ckpt_int.h"
#include "slurm_compat.h"
#include "topoml/errors.h"
#include "topoml/health.h"

static void __attribute__((format(printf, 2, 3)))
_say(bool error, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (error)
		slurm_error("%s", line);
	else
		slurm_info("%s", line);
}

/* The report's bytes (malloc'd, *len), NULL when there is none or it is
 * refused (logged). */
static char *_read_report(size_t *len)
{
	struct ml_cred_saved saved;
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	size_t got = 0;
	int fd, e;

	if (ml_cred_enter(&ml_ck.cred, &saved) < 0)
		return NULL;
	fd = ml_open_owned(ml_ck.dir_fd, TOPOML_HEALTH_FILE,
			   O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0,
			   ml_ck.cred.uid);
	e = errno;
	ml_cred_leave(&saved);
	if (fd < 0) {
		if (e != ENOENT)
			_say(true, "topoml: health: job %u: %s/%s ignored: %s",
			     ml_ck.job_id, ml_ck.dir, TOPOML_HEALTH_FILE,
			     e == ELOOP ? "a symlink" : e == EPERM ?
			     "not a regular file of the job's user" :
			     strerror(e));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || (st.st_mode & S_IWOTH)) {
		_say(true, "topoml: health: job %u: %s/%s ignored: writable "
		     "by others", ml_ck.job_id, ml_ck.dir, TOPOML_HEALTH_FILE);
		goto out;
	}
	if (st.st_size > TOPOML_HEALTH_REPORT_MAX) {
		_say(true, "topoml: health: job %u: %s/%s ignored: over %d "
		     "bytes", ml_ck.job_id, ml_ck.dir, TOPOML_HEALTH_FILE,
		     TOPOML_HEALTH_REPORT_MAX);
		goto out;
	}
	if (!(buf = malloc(TOPOML_HEALTH_REPORT_MAX + 1)))
		goto out;
	/* The file may grow meanwhile: read one byte over the bound. */
	while (got <= TOPOML_HEALTH_REPORT_MAX &&
	       (n = read(fd, buf + got, TOPOML_HEALTH_REPORT_MAX + 1 - got)) >
	       0)
		got += n;
	if (got > TOPOML_HEALTH_REPORT_MAX) {
		_say(true, "topoml: health: job %u: %s/%s ignored: over %d "
		     "bytes", ml_ck.job_id, ml_ck.dir, TOPOML_HEALTH_FILE,
		     TOPOML_HEALTH_REPORT_MAX);
		free(buf);
		buf = NULL;
		goto out;
	}
	*len = got;
out:
	close(fd);
	return buf;
}

/* Keep the names of nodes in the job's allocation (slurmctld's). */
static int _in_job(const char *nodes, struct topoml_health_names *n)
{
	topoml_hl_t hl = nodes ? slurm_hostlist_create(nodes) : NULL;
	struct topoml_health_names keep = { 0 };

	for (int i = 0; i < n->n; i++) {
		if (hl && slurm_hostlist_find(hl, n->name[i]) >= 0)
			topoml_health_names_add(&keep, n->name[i]);
		else
			_say(true, "topoml: health: job %u: node %s is not "
			     "the job's, ignored", ml_ck.job_id, n->name[i]);
	}
	if (hl)
		slurm_hostlist_destroy(hl);
	*n = keep;
	return n->n;
}

/*
 * Our part: NAMES, the root-side preflight findings already in OLD's part
 * (root's: only root writes the part), NODE's CHECKS added (NODE NULL:
 * none).  A malformed old part is replaced (logged).
 */
static char *_with_pf(uint32_t job, const char *old,
		      const struct topoml_health_names *n, const char *node,
		      unsigned checks)
{
	struct topoml_health_names keep = { 0 };
	struct topoml_health_pf pf = { 0 };
	char err[128];

	if (old && topoml_health_part_parse_pf(old, &keep, &pf, err,
					       sizeof(err)) < 0) {
		slurm_error("topoml: health: job %u: AdminComment's %.13s "
			    "part replaced: %s", job,
			    TOPOML_HEALTH_TAG, err);
		pf.n = 0;
		keep.n = 0;
	}
	if (node)
		topoml_health_pf_add(&pf, node, checks);
	return topoml_health_part_write_pf(n ? n : &keep, &pf);
}

void ml_health_preflight(uint32_t jobid, const char *node, unsigned checks)
{
	job_info_msg_t *info = NULL;
	job_desc_msg_t d;
	char *part = NULL, *merged = NULL;

	if (geteuid() != 0 || !checks || !topoml_health_name_ok(node))
		return;
	if (ml_load_job(&info, jobid) != SLURM_SUCCESS || !info ||
	    info->record_count < 1) {
		slurm_error("topoml: health: job %u: slurmctld does not "
			    "answer: %s", jobid, slurm_strerror(errno));
		goto out;
	}
	part = _with_pf(jobid, info->job_array[0].admin_comment, NULL, node,
			checks);
	merged = part ? topoml_health_part_merge(
		info->job_array[0].admin_comment, part) : NULL;
	if (!merged)
		goto out;
	slurm_init_job_desc_msg(&d);
	ml_job_desc_job(&d, jobid);
	d.admin_comment = merged;
	if (slurm_update_job(&d) != SLURM_SUCCESS)
		slurm_error("topoml: health: job %u: cannot record %s: %s",
			    jobid, part, slurm_strerror(errno));
	else
		slurm_info("topoml: health: job %u: %s", jobid, part);
out:
	free(part);
	free(merged);
	if (info)
		slurm_free_job_info_msg(info);
}

static bool _done;
static uint32_t _exited;

void ml_ckpt__health_task_exit(uint32_t local)
{
	if (++_exited >= local)
		ml_ckpt__health();
}

void ml_ckpt__health(void)
{
	struct topoml_health_names names;
	job_info_msg_t *info = NULL;
	job_desc_msg_t d;
	char err[256], *buf, *part = NULL, *merged = NULL;
	size_t len = 0;
	int bad = 0;

	if (_done || ml_ck.dir_fd < 0 || ml_ck.node_id != 0 ||
	    !(ml_ck.step_id == SLURM_BATCH_SCRIPT || ml_ck.job_batch == 0))
		return;
	_done = true;
	if (!(buf = _read_report(&len)))
		return;
	topoml_health_report_parse(buf, len, &names, &bad, err, sizeof(err));
	free(buf);
	if (bad)
		_say(true, "topoml: health: job %u: %s/%s: %d bad lines "
		     "ignored (%s)", ml_ck.job_id, ml_ck.dir,
		     TOPOML_HEALTH_FILE, bad, err);
	if (!names.n)
		return;
	if (ml_load_job(&info, ml_ck.job_id) != SLURM_SUCCESS || !info ||
	    info->record_count < 1) {
		slurm_error("topoml: health: job %u: slurmctld does not "
			    "answer: %s", ml_ck.job_id,
			    slurm_strerror(errno));
		goto out;
	}
	if (!_in_job(info->job_array[0].nodes, &names))
		goto out;
	part = _with_pf(ml_ck.job_id, info->job_array[0].admin_comment,
			&names, NULL, 0);
	merged = part ? topoml_health_part_merge(
		info->job_array[0].admin_comment, part) : NULL;
	if (!merged)
		goto out;
	slurm_init_job_desc_msg(&d);
	ml_job_desc_job(&d, ml_ck.job_id);
	d.admin_comment = merged;
	if (slurm_update_job(&d) != SLURM_SUCCESS)
		slurm_error("topoml: health: job %u: cannot record %s: %s",
			    ml_ck.job_id, part,
			    slurm_strerror(errno));
	else
		slurm_info("topoml: health: job %u: %s", ml_ck.job_id, part);
out:
	free(part);
	free(merged);
	if (info)
		slurm_free_job_info_msg(info);
}
