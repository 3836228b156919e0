/*
 * Checkpoint hooks of the topoml SPANK plugin (--ml-ckpt / TOPOML_CKPT).
 *
 * Route for the warning and the requeue (a SPANK plugin cannot change the
 * job record): every slurmstepd of the job runs a timer thread from
 * user_init to exit.  It learns the job's end time from slurmctld
 * (slurm_load_job, resolved from libslurmfull inside slurmstepd; no
 * Slurm library is linked), raises the warning `lead` seconds before it in
 * the node's shared page (contrib/ckpt/topoml_ckpt_page.h), and the batch
 * step's timer requeues the job (slurm_requeue) as soon as a checkpoint
 * answering the warning is committed, or a few seconds before the limit
 * when none comes.  Requeue by `scontrol requeue` and preemption arrive as
 * SIGTERM, which the hook library turns into the same warning.  Node
 * failures are requeued by slurmctld itself (JobRequeue=1, the default);
 * the new run raises DIR/epoch so that the old one, still running behind a
 * dead slurmd, can neither commit nor survive: its timer kills its tasks.
 *
 * Privileges: user_init runs after slurmstepd dropped its effective uid and
 * gids to the job's user (src/slurmd/slurmstepd/mgr.c: drop_privileges()
 * then spank_user()); the directory and the page are created there, and in
 * a child that setuid()s to the user when that is not so.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "ckpt.h"
#include "../contrib/ckpt/topoml_ckpt_page.h"
#include "../contrib/ckpt/ckpt_layout.h"

#define CKPT_MIN_RUN	10	/* s of a run before its warning, at least */
#define CKPT_POLL_NS	(200 * 1000 * 1000)
#define CKPT_QUIET	2	/* s without RPCs after the timer starts */

static struct {
	bool active;
	uint32_t job_id, step_id, node_id;
	uid_t uid;
	gid_t gid;
	long restart;
	int lead;
	long interval;
	char dir[PATH_MAX];
	char page_path[PATH_MAX];
	int page_fd;
	struct topoml_ckpt_page *page;
	pthread_t timer;
	volatile int stop;
} _st = { .page_fd = -1 };

/*
 * DIR with %j (job id), %A/%a (array job/task id), %u (user name), %%; a DIR
 * without '%' gets a per-job (or per array task) subdirectory.
 */
static int _expand_dir(const char *in, uint32_t job, uint32_t array_job,
		       uint32_t array_task, const char *user, char *out,
		       size_t len)
{
	char tmp[PATH_MAX], num[32];
	size_t o = 0;
	const char *s, *add;

	if (!strchr(in, '%')) {
		int n;

		if (array_job && array_task != NO_VAL)
			n = snprintf(tmp, sizeof(tmp), "%s/%u_%u", in,
				     array_job, array_task);
		else
			n = snprintf(tmp, sizeof(tmp), "%s/%u", in, job);
		if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= len)
			return -1;
		strcpy(out, tmp);
		return 0;
	}
	for (s = in; *s; s++) {
		add = NULL;
		if (*s == '%' && s[1]) {
			s++;
			switch (*s) {
			case 'j':
				snprintf(num, sizeof(num), "%u", job);
				break;
			case 'A':
				snprintf(num, sizeof(num), "%u",
					 array_job ? array_job : job);
				break;
			case 'a':
				if (array_job && array_task != NO_VAL)
					snprintf(num, sizeof(num), "%u",
						 array_task);
				else
					strcpy(num, "0");
				break;
			case 'u':
				add = user;
				break;
			case '%':
				strcpy(num, "%");
				break;
			default:
				return -1;
			}
			if (!add)
				add = num;
		} else {
			num[0] = *s;
			num[1] = '\0';
			add = num;
		}
		if (o + strlen(add) >= len)
			return -1;
		strcpy(out + o, add);
		o += strlen(add);
	}
	out[o] = '\0';
	return 0;
}

/* The existing directory at or above path (a copy in buf). */
static int _existing_ancestor(const char *path, char *buf, size_t len,
			      struct stat *st)
{
	char *slash;

	if (strlen(path) >= len)
		return -1;
	strcpy(buf, path);
	while (stat(buf, st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		slash = strrchr(buf, '/');
		if (!slash)
			return getcwd(buf, len) && !stat(buf, st) ? 0 : -1;
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return 0;
}

int ml_ckpt_local(spank_t sp, const struct ml_ckpt_opts *o)
{
	char probe[PATH_MAX], anc[PATH_MAX], *pct;
	struct stat st;

	(void)sp;
	if (!o || !o->set)
		return 0;
	/* Only the part before the first %-pattern exists at submit time. */
	strcpy(probe, o->dir);
	if ((pct = strchr(probe, '%'))) {
		*pct = '\0';
		if ((pct = strrchr(probe, '/')))
			pct[pct == probe ? 1 : 0] = '\0';
		else
			strcpy(probe, ".");
	}
	if (_existing_ancestor(probe, anc, sizeof(anc), &st) < 0) {
		slurm_error("topoml: --ml-ckpt: %s: %s", o->dir,
			    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		slurm_error("topoml: --ml-ckpt: %s: %s is not a directory",
			    o->dir, anc);
		return -1;
	}
	if (access(anc, W_OK | X_OK) < 0) {
		slurm_error("topoml: --ml-ckpt: %s: cannot create checkpoints "
			    "there: %s is not writable by uid %u (%s)",
			    o->dir, anc, (unsigned)getuid(), strerror(errno));
		return -1;
	}
	return 0;
}

/* DIR created and usable by the job's user. */
static int _mkdir_user(const char *dir)
{
	if (topoml_ckpt__mkdir_p(dir) < 0)
		return -1;
	/* Effective ids: slurmstepd's real uid is still root here. */
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
}

/* DIR/latest's path, or "" when there is no complete checkpoint. */
static void _resume_path(const char *dir, char *out, size_t len)
{
	topoml_ckpt__read_latest(dir, out, len);
}

/* A process that runs (a zombie does not). */
static bool _alive(pid_t pid)
{
	char path[64], buf[256], *s;
	ssize_t n;
	int fd;

	if (pid <= 1 || (kill(pid, 0) < 0 && errno != EPERM))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	s = strrchr(buf, ')');
	return !(s && s[1] == ' ' && (s[2] == 'Z' || s[2] == 'X'));
}

/*
 * Create (or join) the node's page; the file belongs to the job's user.
 * It is shared by the job's slurmstepds on the node (batch step and srun
 * steps), which list themselves in it; a page left by slurmstepds that died
 * without their exit hook (none of them alive) is reset.
 */
static int _open_page(void)
{
	struct topoml_ckpt_page *p;
	struct stat st, st2;
	uint32_t i, n;
	bool live = false;
	void *m;
	int fd;

again:
	fd = open(_st.page_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	/* Made by root (privileges not dropped): give it to the user. */
	if (st.st_uid == 0 && _st.uid != 0 && geteuid() == 0 &&
	    st.st_size == 0 && fchown(fd, _st.uid, _st.gid) == 0)
		st.st_uid = _st.uid;
	if (st.st_uid != _st.uid || !S_ISREG(st.st_mode)) {
		errno = EPERM;
		goto fail;
	}
	flock(fd, LOCK_EX);
	/* The last user may have unlinked it between open and flock. */
	if (stat(_st.page_path, &st2) < 0 || st2.st_ino != st.st_ino) {
		close(fd);
		goto again;
	}
	if ((st.st_size < TOPOML_CKPT_PAGE_SIZE &&
	     ftruncate(fd, TOPOML_CKPT_PAGE_SIZE) < 0) ||
	    (m = mmap(NULL, TOPOML_CKPT_PAGE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0)) == MAP_FAILED)
		goto fail;
	p = m;
	if (p->magic == TOPOML_CKPT_PAGE_MAGIC) {
		/* Keep only the slurmstepds still alive. */
		for (i = n = 0; i < p->nstepd && i < TOPOML_CKPT_PAGE_STEPDS;
		     i++)
			if (_alive(p->stepd[i]))
				p->stepd[n++] = p->stepd[i];
		p->nstepd = n;
		live = n > 0;
	}
	if (!live) {
		memset(p, 0, TOPOML_CKPT_PAGE_SIZE);
		p->version = TOPOML_CKPT_PAGE_VERSION;
		p->size = TOPOML_CKPT_PAGE_SIZE;
		p->target_step = -1;
		p->commit_step = -1;
		p->start_time = time(NULL);
		__atomic_store_n(&p->magic, TOPOML_CKPT_PAGE_MAGIC,
				 __ATOMIC_RELEASE);
	}
	if (p->nstepd < TOPOML_CKPT_PAGE_STEPDS)
		p->stepd[p->nstepd++] = getpid();
	flock(fd, LOCK_UN);
	_st.page_fd = fd;
	_st.page = p;
	return 0;
fail:
	close(fd);
	return -1;
}

/* File work as the job's user: directly when slurmstepd already is. */
static int _user_setup(char *resume, size_t len)
{
	pid_t pid;
	int status, rc = -1, pfd[2];

	if (geteuid() == _st.uid) {
		if (_mkdir_user(_st.dir) < 0)
			return -1;
		topoml_ckpt__write_epoch(_st.dir, _st.restart);
		_resume_path(_st.dir, resume, len);
		return 0;
	}
	if (pipe(pfd) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		char buf[PATH_MAX] = "";
		int e = 0;

		close(pfd[0]);
		if (setgroups(0, NULL) < 0 || setgid(_st.gid) < 0 ||
		    setuid(_st.uid) < 0 || _mkdir_user(_st.dir) < 0)
			e = errno ? errno : EPERM;
		if (!e) {
			topoml_ckpt__write_epoch(_st.dir, _st.restart);
			_resume_path(_st.dir, buf, sizeof(buf));
		}
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e) ||
		    write(pfd[1], buf, sizeof(buf)) != sizeof(buf))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	{
		int e = EIO;
		char buf[PATH_MAX];

		if (read(pfd[0], &e, sizeof(e)) == sizeof(e) &&
		    read(pfd[0], buf, sizeof(buf)) == sizeof(buf)) {
			if (!e) {
				snprintf(resume, len, "%s", buf);
				rc = 0;
			}
		}
		errno = e;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return rc;
}

static void _raise(uint32_t why)
{
	struct topoml_ckpt_page *p = _st.page;

	flock(_st.page_fd, LOCK_EX);
	__atomic_fetch_or(&p->reason, why, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_SEQ_CST);
	flock(_st.page_fd, LOCK_UN);
}

/* A newer run of the job started elsewhere: stop this one's tasks. */
static void _kill_stale(void)
{
	struct topoml_ckpt_page *p = _st.page;
	int i;

	for (i = 0; i < p->npids && i < TOPOML_CKPT_PAGE_PIDS; i++) {
		char path[64];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d", p->pids[i]);
		if (p->pids[i] > 1 && stat(path, &st) == 0 &&
		    st.st_uid == _st.uid)
			kill(p->pids[i], SIGKILL);
	}
}

/* The current run's start and expected end, from slurmctld. */
static int _job_times(time_t *start, time_t *end)
{
	job_info_msg_t *info = NULL;
	int rc = -1;

	if (slurm_load_job(&info, _st.job_id, SHOW_ALL) == SLURM_SUCCESS &&
	    info && info->record_count > 0) {
		*start = info->job_array[0].start_time;
		*end = info->job_array[0].end_time;
		rc = 0;
	}
	if (info)
		slurm_free_job_info_msg(info);
	return rc;
}

static void *_timer(void *arg)
{
	struct topoml_ckpt_page *p = _st.page;
	struct timespec ts = { 0, CKPT_POLL_NS };
	bool batch = _st.step_id == SLURM_BATCH_SCRIPT;
	bool warned = false, requeued = false, fenced = false;
	time_t next_poll = 0, next_epoch = 0, end = 0, begin = 0, warn_at = 0;
	int rpc_failed = 0;

	(void)arg;
	/*
	 * slurmstepd forks the tasks right after user_init: keep out of
	 * Slurm's RPC and log code (and their locks) until that is done.
	 */
	next_poll = next_epoch = time(NULL) + CKPT_QUIET;
	while (!_st.stop) {
		time_t now = time(NULL), base;

		/* No RPC in the second before the warning: it may delay it. */
		if (_st.lead > 0 && now >= next_poll &&
		    !(end && !warned && warn_at >= now && warn_at - now <= 1)) {
			time_t e = 0, b = 0;

			if (_job_times(&b, &e) < 0) {
				if (!rpc_failed++)
					slurm_info("topoml: --ml-ckpt: job %u: "
						   "end time: %s (retrying)",
						   _st.job_id, slurm_strerror(
						   slurm_get_errno()));
				next_poll = now + 5;
				goto poll_done;
			}
			/* No time limit: a date years away. */
			end = (e > now && e - now < 10L * 365 * 86400) ? e : 0;
			begin = b;
			p->end_time = end;
			/*
			 * The end moves only with scontrol update: ask again
			 * every 5 min, often when the warning is near.
			 */
			if (end && end - _st.lead - now < 60)
				next_poll = now + 5;
			else if (end && end - _st.lead - now < 600)
				next_poll = now + (end - _st.lead - now) / 2;
			else
				next_poll = now + 300;
		}
poll_done:
		/*
		 * From the job's times, the same on every node, so that all
		 * nodes warn at the same moment.
		 */
		warn_at = end - _st.lead;
		if (warn_at < (begin ? begin : p->start_time) + CKPT_MIN_RUN)
			warn_at = (begin ? begin : p->start_time) +
				  CKPT_MIN_RUN;
		if (end && !warned && now >= warn_at) {
			warned = true;
			_raise(TOPOML_CKPT_R_LIMIT);
			slurm_info("topoml: --ml-ckpt: job %u ends in %lds: "
				   "checkpoint warning", _st.job_id,
				   (long)(end - now));
		}
		/*
		 * Requeue once a checkpoint answered the warning; failing
		 * that, shortly before the limit if this run committed any
		 * checkpoint.  A run without progress is left to time out:
		 * requeueing it would loop for ever.
		 */
		if (batch && warned && !requeued &&
		    ((__atomic_load_n(&p->commit_reason, __ATOMIC_SEQ_CST) &
		      TOPOML_CKPT_R_LIMIT) ||
		     now >= end - (_st.lead / 4 > 2 ? _st.lead / 4 : 2))) {
			requeued = true;
			if (!(__atomic_load_n(&p->commit_reason,
					      __ATOMIC_SEQ_CST) &
			      TOPOML_CKPT_R_LIMIT) && p->commit_time <= 0) {
				slurm_error("topoml: --ml-ckpt: job %u made no "
					    "checkpoint in this run: not "
					    "requeued (does the program call "
					    "the topoml checkpoint hook?)",
					    _st.job_id);
				__atomic_store_n(&p->requeued, 2,
						 __ATOMIC_SEQ_CST);
				goto requeue_done;
			}
			if (slurm_requeue(_st.job_id, 0) != SLURM_SUCCESS) {
				slurm_error("topoml: --ml-ckpt: requeue of job "
					    "%u failed: %s (is the job "
					    "requeue-able? JobRequeue=1 or "
					    "--requeue)", _st.job_id,
					    slurm_strerror(slurm_get_errno()));
				__atomic_store_n(&p->requeued, 2,
						 __ATOMIC_SEQ_CST);
			} else {
				slurm_info("topoml: --ml-ckpt: job %u requeued "
					   "(checkpoint of step %ld)",
					   _st.job_id, (long)p->commit_step);
				__atomic_store_n(&p->requeued, 1,
						 __ATOMIC_SEQ_CST);
			}
		}
requeue_done:
		if (_st.interval > 0) {
			base = p->commit_time > p->interval_time ?
			       p->commit_time : p->interval_time;
			if (base < p->start_time)
				base = p->start_time;
			if (now - base >= _st.interval) {
				p->interval_time = now;
				_raise(TOPOML_CKPT_R_INTERVAL);
			}
		}
		if (!fenced && now >= next_epoch) {
			next_epoch = now + 2;
			if (topoml_ckpt__read_epoch(_st.dir) > _st.restart) {
				fenced = true;
				slurm_error("topoml: --ml-ckpt: job %u runs "
					    "again elsewhere (restart %ld): "
					    "killing this stale run",
					    _st.job_id, topoml_ckpt__read_epoch(_st.dir));
				_kill_stale();
			}
		}
		ts.tv_sec = 0;
		ts.tv_nsec = CKPT_POLL_NS;
		if (end && !warned) {
			struct timespec rt;
			long long left;

			/* Wake on the second of the warning, not up to a
			 * poll period after it. */
			clock_gettime(CLOCK_REALTIME, &rt);
			left = ((long long)warn_at - rt.tv_sec) * 1000000000LL -
			       rt.tv_nsec;
			if (left > 0 && left < CKPT_POLL_NS)
				ts.tv_nsec = left;
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * SLURM_RESTART_COUNT: srun steps inherit it from the batch script, but the
 * batch step gets it only in its task (setup_env() in exec_task(), after
 * user_init), so there ask slurmctld once.
 */
static long _restart_count(spank_t sp)
{
	job_info_msg_t *info = NULL;
	char buf[32];
	long n = 0;

	if (spank_getenv(sp, "SLURM_RESTART_COUNT", buf, sizeof(buf)) ==
	    ESPANK_SUCCESS)
		return strtol(buf, NULL, 10);
	if (_st.step_id != SLURM_BATCH_SCRIPT)
		return 0;
	if (slurm_load_job(&info, _st.job_id, SHOW_ALL) == SLURM_SUCCESS &&
	    info && info->record_count > 0)
		n = info->job_array[0].restart_cnt;
	else
		slurm_info("topoml: --ml-ckpt: job %u: restart count unknown "
			   "(%s), taking 0", _st.job_id,
			   slurm_strerror(slurm_get_errno()));
	if (info)
		slurm_free_job_info_msg(info);
	return n;
}

static uint32_t _fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void _setenv_long(spank_t sp, const char *name, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	spank_setenv(sp, name, buf, 1);
}

int ml_ckpt_user_init(spank_t sp, const struct ml_ckpt_opts *o)
{
	uint32_t array_job = 0, array_task = NO_VAL;
	char buf[64], user[64] = "", dir[PATH_MAX], resume[PATH_MAX];
	const char *shm;

	if (!o || !o->set || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_UID, &_st.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &_st.gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &_st.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &_st.step_id) != ESPANK_SUCCESS) {
		slurm_error("topoml: --ml-ckpt: cannot read the job's ids");
		return -1;
	}
	spank_get_item(sp, S_JOB_NODEID, &_st.node_id);
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) != ESPANK_SUCCESS)
		array_job = 0;
	if (spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) !=
	    ESPANK_SUCCESS)
		array_task = NO_VAL;
	if (spank_getenv(sp, "SLURM_JOB_USER", user, sizeof(user)) !=
	    ESPANK_SUCCESS)
		snprintf(user, sizeof(user), "%u", (unsigned)_st.uid);
	_st.restart = _restart_count(sp);
	if (_expand_dir(o->dir, _st.job_id, array_job, array_task, user, dir,
			sizeof(dir)) < 0) {
		slurm_error("topoml: --ml-ckpt: %s: bad %%-pattern or too "
			    "long", o->dir);
		return -1;
	}
	/* slurmstepd is in the job's working directory (mgr.c chdir). */
	if (dir[0] != '/') {
		char cwd[PATH_MAX];

		int n = -1;

		if (getcwd(cwd, sizeof(cwd)))
			n = snprintf(_st.dir, sizeof(_st.dir), "%s/%s", cwd,
				     dir);
		if (n < 0 || (size_t)n >= sizeof(_st.dir)) {
			slurm_error("topoml: --ml-ckpt: %s: %m", dir);
			return -1;
		}
	} else {
		strcpy(_st.dir, dir);
	}
	_st.lead = o->lead;
	_st.interval = o->interval;
	if (_user_setup(resume, sizeof(resume)) < 0) {
		slurm_error("topoml: --ml-ckpt: cannot prepare %s as uid %u: "
			    "%m", _st.dir, (unsigned)_st.uid);
		return -1;
	}
	/*
	 * The host, not the Slurm node name: SLURMD_NODENAME is in the
	 * environment of srun steps but not yet in the batch step's at
	 * user_init, and both must find the same page.
	 */
	if (gethostname(buf, sizeof(buf)) < 0 || !buf[0])
		strcpy(buf, "host");
	buf[sizeof(buf) - 1] = '\0';
	for (char *c = buf; *c; c++)
		if (*c == '/' || *c == '.')
			*c = '\0';
	shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	/*
	 * One page per run of the job and node: a run stranded behind a dead
	 * slurmd must not share it with the next run.  DIR in the name too:
	 * job ids repeat across clusters on a host.
	 */
	snprintf(_st.page_path, sizeof(_st.page_path),
		 "%s/topoml-ckpt.%u.%u.%ld.%s.%08x", shm, (unsigned)_st.uid,
		 _st.job_id, _st.restart, buf, _fnv1a(_st.dir));
	if (_open_page() < 0)
		goto page_fail;
	spank_setenv(sp, "TOPOML_CKPT_DIR", _st.dir, 1);
	_setenv_long(sp, "TOPOML_CKPT_EVERY", o->every);
	_setenv_long(sp, "TOPOML_CKPT_INTERVAL", o->interval);
	_setenv_long(sp, "TOPOML_CKPT_KEEP", o->keep);
	_setenv_long(sp, "TOPOML_CKPT_LEAD", o->lead);
	_setenv_long(sp, "TOPOML_RESTART_COUNT", _st.restart);
	spank_setenv(sp, "TOPOML_RESUME", resume, 1);
	spank_setenv(sp, "TOPOML_CKPT_PAGE", _st.page_path, 1);
	_st.stop = 0;
	if (pthread_create(&_st.timer, NULL, _timer, NULL) != 0) {
		slurm_error("topoml: --ml-ckpt: no timer thread: %m");
		return -1;
	}
	_st.active = true;
	return 0;
page_fail:
	slurm_error("topoml: --ml-ckpt: shared page %s: %m", _st.page_path);
	return -1;
}

int ml_ckpt_task_init(spank_t sp, const struct ml_ckpt_opts *o)
{
	(void)sp;
	(void)o;
	return 0;
}

int ml_ckpt_exit(spank_t sp, const struct ml_ckpt_opts *o)
{
	(void)o;
	if (!_st.active || !spank_remote(sp))
		return 0;
	_st.active = false;
	_st.stop = 1;
	pthread_join(_st.timer, NULL);
	flock(_st.page_fd, LOCK_EX);
	{
		struct topoml_ckpt_page *p = _st.page;
		uint32_t i, n;

		for (i = n = 0; i < p->nstepd && i < TOPOML_CKPT_PAGE_STEPDS;
		     i++)
			if (p->stepd[i] != getpid() && _alive(p->stepd[i]))
				p->stepd[n++] = p->stepd[i];
		p->nstepd = n;
		/* The last one out removes it, still holding the lock. */
		if (n == 0)
			unlink(_st.page_path);
	}
	flock(_st.page_fd, LOCK_UN);
	munmap(_st.page, TOPOML_CKPT_PAGE_SIZE);
	close(_st.page_fd);
	_st.page_fd = -1;
	return 0;
}
