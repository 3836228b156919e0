/*
 * Checkpoint hooks of the topoml SPANK plugin (--ml-ckpt / TOPOML_CKPT).
 *
 * Route for the warning and the requeue (a SPANK plugin cannot change the
 * job record): every slurmstepd of the job runs a timer thread from
 * user_init to exit.  It learns the job's end time from slurmctld
 * (slurm_load_job, resolved from libslurmfull inside slurmstepd; no
 * Slurm library is linked), raises the warning `lead` seconds before it in
 * the node's shared page (topoml_ckpt_page.h), and the batch
 * step's timer requeues the job (slurm_requeue) as soon as a checkpoint
 * answering the warning is committed, or a few seconds before the limit
 * when none comes.  Requeue by `scontrol requeue` and preemption arrive as
 * SIGTERM, which the hook library turns into the same warning.  Node
 * failures are requeued by slurmctld itself (JobRequeue=1, the default);
 * the new run raises DIR/epoch so that the old one, still running behind a
 * dead slurmd, can neither commit nor survive: its timer kills its tasks.
 *
 * Privileges: slurmstepd is root; user_init runs after it dropped its
 * effective ids to the job's user (src/slurmd/slurmstepd/mgr.c:
 * drop_privileges() then spank_user()), but it reclaims root after forking
 * the tasks, so the timer thread and the exit hook are root.  Every file
 * operation on the user's paths (DIR, DIR/epoch, the page) therefore runs
 * with the user's file-system credentials (secure.h, per thread), never
 * follows a symlink, never blocks on a FIFO.  The page lives in
 * <cache_dir>/ckpt/<uid>/, a directory root makes for that user alone, so
 * no other user can create, read or write it first.  The user can still
 * truncate their own page under slurmstepd's mapping: a SIGBUS there stops
 * the timer, not slurmstepd.  Ids, user name and restart count come from
 * Slurm (SPANK items, passwd, slurmctld), never from the job's environment.
 * Every failure is returned with a message; the caller reports it in the
 * job's output and fails the job, never the node.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "ckpt_int.h"
#include "ckpt_layout.h"

static void _setenv_long(spank_t sp, const char *name, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	spank_setenv(sp, name, buf, 1);
}

/*
 * The world size the checkpoint RESUME was written with: the helper's
 * record in it (".topoml-meta", "world_size=N"), read with the user's
 * credentials; 0 when unknown.  A regular file only (never a FIFO or a
 * link the user planted to block or redirect the read).
 */
static long _resume_world(const char *resume)
{
	char path[PATH_MAX + 16], buf[128], *p;
	struct stat st;
	ssize_t n;
	long v = 0;
	int fd;

	if (!resume[0] || snprintf(path, sizeof(path), "%s/.topoml-meta",
				   resume) >= (int)sizeof(path))
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		close(fd);
		return 0;
	}
	close(fd);
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *end;

		if (strncmp(p, "world_size=", 11))
			continue;
		errno = 0;
		v = strtol(p + 11, &end, 10);
		if (errno || end == p + 11 || (*end && *end != '\n') ||
		    v <= 0 || v > 1L << 24)
			v = 0;
		break;
	}
	return v;
}

static void _dir_close(void)
{
	if (ml_ck.dir_fd >= 0)
		close(ml_ck.dir_fd);
	ml_ck.dir_fd = -1;
}

static char _note[PATH_MAX + 256];

const char *ml_ckpt_resume_note(void)
{
	return _note;
}

/*
 * May this job resume RESUME (step STEP), the checkpoint DIR/latest
 * names?  DIR/epoch records the job whose run DIR holds: the last one
 * that started in it.  Its own run, yes (a requeue or a topoml-run
 * relaunch keeps the job id); another job's, or one of a directory that
 * recorded no job (older versions), only when the user named it
 * (resume=any, resume=JOBID): a resubmitted job would otherwise continue
 * (or write over) a finished run.  No checkpoint: nothing to resume.
 * 0 with _note saying which and why, or -1 + err for the job's output.
 */
static int _may_resume(const struct ml_ckpt_opts *o, const char *resume,
		       long step, char *err, size_t errlen)
{
	uint32_t owner = 0;
	char whose[64];

	_note[0] = '\0';
	if (step < 0 || !resume[0])
		return 0;
	topoml_ckpt__read_epoch_job_at(ml_ck.dir_fd, ml_ck.cred.uid, &owner);
	if (owner)
		snprintf(whose, sizeof(whose), "job %u", owner);
	else
		snprintf(whose, sizeof(whose), "a job not recorded");
	if (owner == ml_ck.job_id) {
		snprintf(_note, sizeof(_note), "resuming from %s (step %ld): "
			 "the run of this job, %u", resume, step, owner);
		return 0;
	}
	if (o->resume == ML_CKPT_RESUME_ANY ||
	    (o->resume == ML_CKPT_RESUME_JOB && owner &&
	     owner == o->resume_job)) {
		snprintf(_note, sizeof(_note), "resuming from %s (step %ld): "
			 "the run of %s, as resume=%s asks", resume, step,
			 whose, o->resume == ML_CKPT_RESUME_ANY ? "any" :
			 whose + 4);
		return 0;
	}
	snprintf(err, errlen, "%s holds the run of %s (latest checkpoint: "
		 "step %ld); a job resumes only its own run: add resume=%s to "
		 "--ml-ckpt to continue that one, or give this job a "
		 "directory of its own (%%j)", ml_ck.dir, whose, step,
		 owner ? whose + 4 : "any");
	return -1;
}

/*
 * As the user: DIR, its epoch, the latest checkpoint, the page.  err says
 * what went wrong, for the job's output.
 */
static int _user_setup(const struct ml_ckpt_opts *o, char *resume,
		       size_t len, long *world, char *err, size_t errlen)
{
	long step;

	struct ml_cred_saved saved;
	char canon[PATH_MAX];
	int rc = -1;

	if (ml_cred_enter(&ml_ck.cred, &saved) < 0) {
		snprintf(err, errlen, "cannot take uid %u's identity: %s",
			 (unsigned)ml_ck.cred.uid, strerror(errno));
		return -1;
	}
	_dir_close();
	ml_ck.dir_fd = ml_ckpt__dir_open(ml_ck.dir, &ml_ck.cred, canon,
					 sizeof(canon), err, errlen);
	if (ml_ck.dir_fd < 0)
		goto out;
	/* What the job and the root side use from now on. */
	strcpy(ml_ck.dir, canon);
	step = topoml_ckpt__read_latest_at(ml_ck.dir_fd, ml_ck.dir, resume,
					  len);
	if (_may_resume(o, resume, step, err, errlen) < 0)
		goto out;	/* DIR's record stays the other job's */
	topoml_ckpt__write_epoch_at(ml_ck.dir_fd, ml_ck.restart,
				    ml_ck.cred.uid, ml_ck.job_id);
	*world = _resume_world(resume);
	if (ml_ckpt__page_open() < 0) {
		snprintf(err, errlen, "shared page %s: %s", ml_ck.page_path,
			 errno == EPERM || errno == ELOOP ?
			 "not a regular file of the job's user" :
			 errno == EWOULDBLOCK ? "locked (flock) by another "
			 "process for seconds" : strerror(errno));
		goto out;
	}
	ml_ckpt__page_clean_stale();
	rc = 0;
out:
	if (rc)
		_dir_close();
	ml_cred_leave(&saved);
	return rc;
}

/* The user's credentials, from Slurm. */
static int _job_cred(spank_t sp)
{
	gid_t *gids = NULL;
	int n = 0;

	memset(&ml_ck.cred, 0, sizeof(ml_ck.cred));
	ml_ck.cred.uid = ml_ck.uid;
	ml_ck.cred.gid = ml_ck.gid;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &n) !=
	    ESPANK_SUCCESS || !gids || n < 0)
		n = 0;
	if (n > ML_CRED_MAX_GIDS)
		n = ML_CRED_MAX_GIDS;
	for (int i = 0; i < n; i++)
		ml_ck.cred.gids[i] = gids[i];
	if (!n)
		ml_ck.cred.gids[n++] = ml_ck.gid;
	ml_ck.cred.ngids = n;
	return 0;
}

int ml_ckpt_user_init(spank_t sp, const struct ml_ckpt_opts *o, char *err,
		      size_t errlen)
{
	uint32_t array_job = 0, array_task = NO_VAL;
	char user[256], dir[PATH_MAX], resume[PATH_MAX];
	char pwbuf[4096];
	long world = 0;
	struct passwd pw, *pwp = NULL;

	if (!o || !o->set || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_UID, &ml_ck.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &ml_ck.gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &ml_ck.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &ml_ck.step_id) !=
	    ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot read the job's ids");
		return -1;
	}
	if (!ml_ck.page_dir[0]) {
		snprintf(err, errlen, "no page directory (cache_dir of "
			 "plugstack.conf; see the slurmd log)");
		return -1;
	}
	_job_cred(sp);
	spank_get_item(sp, S_JOB_NODEID, &ml_ck.node_id);
	if (spank_get_item(sp, S_JOB_NNODES, &ml_ck.nnodes) != ESPANK_SUCCESS)
		ml_ck.nnodes = 1;
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) != ESPANK_SUCCESS)
		array_job = 0;
	if (spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) !=
	    ESPANK_SUCCESS)
		array_task = NO_VAL;
	/* %u: the uid's name in passwd, as Slurm's own %u. */
	if (getpwuid_r(ml_ck.uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 &&
	    pwp &&
	    ml_plain_name(pw.pw_name))
		snprintf(user, sizeof(user), "%s", pw.pw_name);
	else
		snprintf(user, sizeof(user), "%u", (unsigned)ml_ck.uid);
	if (ml_ckpt__expand_dir(o->dir, ml_ck.job_id, array_job, array_task,
				user, dir, sizeof(dir)) < 0) {
		snprintf(err, errlen, "%s: bad %%-pattern or too long",
			 o->dir);
		return -1;
	}
	/* slurmstepd is in the job's working directory (mgr.c chdir). */
	if (dir[0] != '/') {
		char cwd[PATH_MAX];
		int n = -1;

		if (getcwd(cwd, sizeof(cwd)))
			n = snprintf(ml_ck.dir, sizeof(ml_ck.dir), "%s/%s", cwd,
				     dir);
		if (n < 0 || (size_t)n >= sizeof(ml_ck.dir)) {
			snprintf(err, errlen, "%s: %s", dir, n < 0 ?
				 strerror(errno) : "path too long");
			return -1;
		}
	} else {
		strcpy(ml_ck.dir, dir);
	}
	ml_ck.lead = o->lead;
	ml_ck.interval = o->interval;
	if (ml_ckpt__page_path(err, errlen) < 0)
		return -1;
	ml_ckpt__bus_install();
	if (_user_setup(o, resume, sizeof(resume), &world, err, errlen) < 0)
		return -1;
	spank_setenv(sp, "TOPOML_CKPT_DIR", ml_ck.dir, 1);
	_setenv_long(sp, "TOPOML_CKPT_EVERY", o->every);
	_setenv_long(sp, "TOPOML_CKPT_INTERVAL", o->interval);
	_setenv_long(sp, "TOPOML_CKPT_KEEP", o->keep);
	_setenv_long(sp, "TOPOML_CKPT_LEAD", o->lead);
	_setenv_long(sp, "TOPOML_RESTART_COUNT", ml_ck.restart);
	spank_setenv(sp, "TOPOML_RESUME", resume, 1);
	/* Empty when unknown: a value from the job's environment would be
	 * some other checkpoint's. */
	if (world > 0)
		_setenv_long(sp, "TOPOML_RESUME_WORLD_SIZE", world);
	else
		spank_setenv(sp, "TOPOML_RESUME_WORLD_SIZE", "", 1);
	spank_setenv(sp, "TOPOML_CKPT_PAGE", ml_ck.page_path, 1);
	ml_ck.page_broken = 0;
	if (ml_ckpt__timer_start(err, errlen) < 0)
		return -1;
	ml_ck.active = true;
	return 0;
}

int ml_ckpt_task_init(spank_t sp, const struct ml_ckpt_opts *o)
{
	(void)sp;
	(void)o;
	return 0;
}

int ml_ckpt_task_exit(spank_t sp, const struct ml_ckpt_opts *o)
{
	uint32_t local = 0;

	(void)o;
	if (!ml_ck.active || !spank_remote(sp) ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) !=
	    ESPANK_SUCCESS)
		return 0;
	ml_ckpt__health_task_exit(local);
	return 0;
}

int ml_ckpt_exit(spank_t sp, const struct ml_ckpt_opts *o)
{
	(void)o;
	if (!ml_ck.active || !spank_remote(sp))
		return 0;
	ml_ck.active = false;
	ml_ckpt__timer_stop();
	ml_ckpt__page_leave();
	ml_ckpt__health();
	_dir_close();
	return 0;
}
