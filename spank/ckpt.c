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
#include <dirent.h>
#include <pwd.h>
#include <setjmp.h>
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
#include "secure.h"
#include "slurm_compat.h"
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
	char page_dir[PATH_MAX];	/* <cache_dir>/ckpt/<uid> */
	char page_path[PATH_MAX];
	struct ml_cred cred;
	int page_fd;
	volatile sig_atomic_t page_broken;
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
 * The page is the user's file, mapped by root: the user may truncate it,
 * and a later access would raise SIGBUS in slurmstepd.  Accesses by root
 * are made with the guard armed (one thread at a time: user_init and exit
 * run while the timer does not); a SIGBUS inside the page jumps back, any
 * other goes to the disposition slurmstepd had.
 */
static sigjmp_buf _bus_jmp;
static volatile sig_atomic_t _bus_armed;
static pthread_t _bus_thread;
static struct sigaction _bus_old;
static bool _bus_installed;

static void _bus_handler(int sig, siginfo_t *si, void *uc)
{
	char *a = si ? si->si_addr : NULL, *pg = (char *)_st.page;

	(void)uc;
	if (_bus_armed && pg && a >= pg && a < pg + TOPOML_CKPT_PAGE_SIZE &&
	    pthread_equal(pthread_self(), _bus_thread)) {
		_bus_armed = 0;
		siglongjmp(_bus_jmp, 1);
	}
	/* Not ours: the instruction faults again under the old action. */
	sigaction(sig, &_bus_old, NULL);
}

static void _bus_install(void)
{
	struct sigaction sa = { .sa_sigaction = _bus_handler,
				.sa_flags = SA_SIGINFO };

	if (_bus_installed)
		return;
	sigemptyset(&sa.sa_mask);
	if (!sigaction(SIGBUS, &sa, &_bus_old))
		_bus_installed = true;
}

static void _bus_uninstall(void)
{
	if (_bus_installed)
		sigaction(SIGBUS, &_bus_old, NULL);
	_bus_installed = false;
}

/*
 * Arm for this thread:
 *	_bus_thread = pthread_self();
 *	if (sigsetjmp(_bus_jmp, 1)) { the page was truncated }
 *	_bus_armed = 1; ...page accesses...; _bus_armed = 0;
 */

/*
 * Join the mapped page: keep the slurmstepds still alive, reset it when
 * none is (left by slurmstepds killed without their exit hook), list this
 * one.  -1 when the user truncated it meanwhile.
 */
static int _page_join(struct topoml_ckpt_page *p)
{
	uint32_t i, n;
	bool live = false;

	_bus_thread = pthread_self();
	if (sigsetjmp(_bus_jmp, 1))
		return -1;
	_bus_armed = 1;
	if (p->magic == TOPOML_CKPT_PAGE_MAGIC) {
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
	_bus_armed = 0;
	return 0;
}

/*
 * Create (or join) the node's page, as the user (credentials switched by
 * the caller).  It is shared by the job's slurmstepds on the node (batch
 * step and srun steps).
 */
static int _open_page(void)
{
	struct stat st, st2;
	void *m;
	int fd;

again:
	fd = ml_open_owned(AT_FDCWD, _st.page_path, O_RDWR | O_CREAT, 0600,
			   _st.cred.uid);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	flock(fd, LOCK_EX);
	/* The last user may have unlinked it between open and flock. */
	if (lstat(_st.page_path, &st2) < 0 || st2.st_ino != st.st_ino) {
		close(fd);
		goto again;
	}
	if (fstat(fd, &st) < 0 ||
	    (st.st_size != TOPOML_CKPT_PAGE_SIZE &&
	     ftruncate(fd, TOPOML_CKPT_PAGE_SIZE) < 0) ||
	    (m = mmap(NULL, TOPOML_CKPT_PAGE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0)) == MAP_FAILED)
		goto fail;
	_st.page = m;
	if (_page_join(m) < 0) {
		munmap(m, TOPOML_CKPT_PAGE_SIZE);
		_st.page = NULL;
		errno = EBUSY;
		goto fail;
	}
	flock(fd, LOCK_UN);
	_st.page_fd = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

/*
 * Pages of this user's earlier jobs whose slurmstepds all died without
 * their exit hook (slurmstepd killed, node rebooted without a tmpfs):
 * removed, as the user, when nobody holds their lock.
 */
static void _clean_stale_pages(void)
{
	const char *mine = strrchr(_st.page_path, '/') + 1;
	time_t now = time(NULL);
	struct dirent *e;
	DIR *d;
	int dfd;

	if ((dfd = open(_st.page_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC)) < 0)
		return;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		struct topoml_ckpt_page pg;
		struct stat st;
		bool live = false;
		int fd;

		if (strncmp(e->d_name, "job.", 4) || !strcmp(e->d_name, mine))
			continue;
		fd = ml_open_owned(dfd, e->d_name, O_RDONLY, 0, _st.cred.uid);
		if (fd < 0)
			continue;
		/* Young or locked: being set up or used right now. */
		if (fstat(fd, &st) < 0 || now - st.st_mtime < 60 ||
		    flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			continue;
		}
		if (pread(fd, &pg, sizeof(pg), 0) == (ssize_t)sizeof(pg) &&
		    pg.magic == TOPOML_CKPT_PAGE_MAGIC)
			for (uint32_t i = 0; i < pg.nstepd &&
			     i < TOPOML_CKPT_PAGE_STEPDS; i++)
				live = live || _alive(pg.stepd[i]);
		if (!live)
			unlinkat(dfd, e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

/*
 * As the user: DIR, its epoch, the latest checkpoint, the page.  err says
 * what went wrong, for the job's output.
 */
static int _user_setup(char *resume, size_t len, char *err, size_t errlen)
{
	struct ml_cred_saved saved;
	int rc = -1;

	if (ml_cred_enter(&_st.cred, &saved) < 0) {
		snprintf(err, errlen, "cannot take uid %u's identity: %s",
			 (unsigned)_st.cred.uid, strerror(errno));
		return -1;
	}
	if (_mkdir_user(_st.dir) < 0) {
		snprintf(err, errlen, "cannot use %s as uid %u: %s", _st.dir,
			 (unsigned)_st.cred.uid, strerror(errno));
		goto out;
	}
	topoml_ckpt__write_epoch(_st.dir, _st.restart);
	_resume_path(_st.dir, resume, len);
	if (_open_page() < 0) {
		snprintf(err, errlen, "shared page %s: %s", _st.page_path,
			 errno == EPERM || errno == ELOOP ?
			 "not a regular file of the job's user" :
			 strerror(errno));
		goto out;
	}
	_clean_stale_pages();
	rc = 0;
out:
	ml_cred_leave(&saved);
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

/* PID's parent, from /proc; -1 when it is gone. */
static pid_t _ppid(pid_t pid)
{
	char path[64], buf[512], *s;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything but not the last ')' */
	if (!(s = strrchr(buf, ')')) || s[1] != ' ' || !s[2] || s[3] != ' ')
		return -1;
	return (pid_t)strtol(s + 4, NULL, 10);
}

/* PID was started by this slurmstepd (a task or a task's child). */
static bool _ours(pid_t pid)
{
	pid_t me = getpid();

	for (int depth = 0; pid > 1 && depth < 256; depth++) {
		if ((pid = _ppid(pid)) == me)
			return true;
	}
	return false;
}

/*
 * A newer run of the job started elsewhere: stop this one's tasks.  The
 * page's pid list is the user's to write, so only processes this
 * slurmstepd started are killed.
 */
static void _kill_stale(void)
{
	struct topoml_ckpt_page *p = _st.page;
	int i;

	for (i = 0; i < p->npids && i < TOPOML_CKPT_PAGE_PIDS; i++) {
		pid_t pid = p->pids[i];

		if (pid > 1 && _ours(pid))
			kill(pid, SIGKILL);
	}
}

/* DIR/epoch, read with the user's credentials; -1 when unreadable. */
static long _epoch(void)
{
	struct ml_cred_saved saved;
	long e;

	if (ml_cred_enter(&_st.cred, &saved) < 0)
		return -1;
	e = topoml_ckpt__read_epoch(_st.dir, _st.cred.uid);
	ml_cred_leave(&saved);
	return e;
}

/* The current run's start and expected end, from slurmctld. */
static int _job_times(time_t *start, time_t *end)
{
	job_info_msg_t *info = NULL;
	int rc = -1;

	if (ml_load_job(&info, _st.job_id) == SLURM_SUCCESS &&
	    info && info->record_count > 0) {
		*start = info->job_array[0].start_time;
		*end = info->job_array[0].end_time;
		rc = 0;
	}
	if (info)
		slurm_free_job_info_msg(info);
	return rc;
}

static void _timer_loop(void)
{
	struct topoml_ckpt_page *p = _st.page;
	struct timespec ts = { 0, CKPT_POLL_NS };
	bool batch = _st.step_id == SLURM_BATCH_SCRIPT;
	bool warned = false, requeued = false, fenced = false;
	time_t next_poll = 0, next_epoch = 0, end = 0, begin = 0, warn_at = 0;
	int rpc_failed = 0;

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
						   errno));
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
			/*
			 * The program ended its loop (topoml_ckpt_finish, or
			 * a commit of its last step, which sets `finished`
			 * before commit_reason): a requeue would run no step.
			 */
			if (__atomic_load_n(&p->finished, __ATOMIC_SEQ_CST)) {
				slurm_info("topoml: --ml-ckpt: job %u finished "
					   "its loop: not requeued",
					   _st.job_id);
				__atomic_store_n(&p->requeued, 2,
						 __ATOMIC_SEQ_CST);
				goto requeue_done;
			}
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
			if (ml_requeue(_st.job_id) != SLURM_SUCCESS) {
				slurm_error("topoml: --ml-ckpt: requeue of job "
					    "%u failed: %s (is the job "
					    "requeue-able? JobRequeue=1 or "
					    "--requeue)", _st.job_id,
					    slurm_strerror(errno));
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
			long e;

			next_epoch = now + 2;
			if ((e = _epoch()) > _st.restart) {
				fenced = true;
				slurm_error("topoml: --ml-ckpt: job %u runs "
					    "again elsewhere (restart %ld): "
					    "killing this stale run",
					    _st.job_id, e);
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
}

static void *_timer(void *arg)
{
	(void)arg;
	_bus_thread = pthread_self();
	if (sigsetjmp(_bus_jmp, 1)) {
		slurm_error("topoml: --ml-ckpt: job %u: %s was truncated: no "
			    "more checkpoint warnings in this step",
			    _st.job_id, _st.page_path);
		return NULL;
	}
	_bus_armed = 1;
	_timer_loop();
	_bus_armed = 0;
	return NULL;
}

/*
 * The job's restart count, from slurmctld: SLURM_RESTART_COUNT is in the
 * job's environment (a user's srun can set anything there), and Slurm
 * 22.05's S_SLURM_RESTART_COUNT item is never filled in slurmstepd.
 * -1 when slurmctld does not answer.  A variable so that unit tests,
 * without a slurmctld, can answer instead.
 */
static long _restart_from_ctld(uint32_t job_id)
{
	job_info_msg_t *info = NULL;
	long n = -1;

	if (ml_load_job(&info, job_id) == SLURM_SUCCESS &&
	    info && info->record_count > 0)
		n = info->job_array[0].restart_cnt;
	if (info)
		slurm_free_job_info_msg(info);
	return n;
}

long (*ml_ckpt_restart_lookup)(uint32_t job_id) = _restart_from_ctld;

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

/*
 * Root, before user_init: <cache_dir>/ckpt/<uid>, the user's own page
 * directory inside a root-owned one, so that nobody else can create,
 * read or write the user's pages, and no user can redirect root there.
 */
int ml_ckpt_post_opt(spank_t sp, const struct ml_ckpt_opts *o,
		     const char *cache_dir, char *err, size_t errlen)
{
	char base[PATH_MAX], name[32];
	struct stat st;
	uid_t uid;
	gid_t gid;
	int dfd, fd = -1, rc = -1;

	_st.page_dir[0] = '\0';
	if (!o || !o->set || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &_st.job_id) != ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot read the job's ids");
		return -1;
	}
	/*
	 * Here, not in user_init: from Slurm 23.11 on, slurmstepd holds the
	 * auth plugin's lock while privileges are dropped for user_init, and
	 * an RPC there is fatal.
	 */
	if ((_st.restart = ml_ckpt_restart_lookup(_st.job_id)) < 0) {
		snprintf(err, errlen, "job %u: slurmctld did not give the "
			 "job's restart count: %s", _st.job_id,
			 slurm_strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(base, sizeof(base), "%s/ckpt", cache_dir) >=
	    sizeof(base)) {
		snprintf(err, errlen, "cache_dir too long");
		return -1;
	}
	if ((dfd = ml_root_dir_open(base, true, err, errlen)) < 0)
		return -1;
	snprintf(name, sizeof(name), "%u", (unsigned)uid);
	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		goto fail;
	/* Only root makes entries here: whatever it is, it is ours to set. */
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			 O_CLOEXEC)) < 0 || fstat(fd, &st) < 0 ||
	    ((st.st_uid != uid || st.st_gid != gid) &&
	     fchown(fd, uid, gid) < 0) ||
	    ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0))
		goto fail;
	if ((size_t)snprintf(_st.page_dir, sizeof(_st.page_dir), "%s/%s",
			     base, name) >= sizeof(_st.page_dir)) {
		_st.page_dir[0] = '\0';
		errno = ENAMETOOLONG;
		goto fail;
	}
	rc = 0;
	goto out;
fail:
	snprintf(err, errlen, "page directory %s/%s: %s", base, name,
		 strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

/* The user's credentials, from Slurm. */
static int _job_cred(spank_t sp)
{
	gid_t *gids = NULL;
	int n = 0;

	memset(&_st.cred, 0, sizeof(_st.cred));
	_st.cred.uid = _st.uid;
	_st.cred.gid = _st.gid;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &n) !=
	    ESPANK_SUCCESS || !gids || n < 0)
		n = 0;
	if (n > ML_CRED_MAX_GIDS)
		n = ML_CRED_MAX_GIDS;
	for (int i = 0; i < n; i++)
		_st.cred.gids[i] = gids[i];
	if (!n)
		_st.cred.gids[n++] = _st.gid;
	_st.cred.ngids = n;
	return 0;
}

int ml_ckpt_user_init(spank_t sp, const struct ml_ckpt_opts *o, char *err,
		      size_t errlen)
{
	uint32_t array_job = 0, array_task = NO_VAL;
	char buf[64], user[256], dir[PATH_MAX], resume[PATH_MAX];
	char pwbuf[4096];
	struct passwd pw, *pwp = NULL;

	if (!o || !o->set || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_UID, &_st.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &_st.gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &_st.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &_st.step_id) != ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot read the job's ids");
		return -1;
	}
	if (!_st.page_dir[0]) {
		snprintf(err, errlen, "no page directory (cache_dir of "
			 "plugstack.conf; see the slurmd log)");
		return -1;
	}
	_job_cred(sp);
	spank_get_item(sp, S_JOB_NODEID, &_st.node_id);
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) != ESPANK_SUCCESS)
		array_job = 0;
	if (spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) !=
	    ESPANK_SUCCESS)
		array_task = NO_VAL;
	/* %u: the uid's name in passwd, as Slurm's own %u. */
	if (getpwuid_r(_st.uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp &&
	    ml_plain_name(pw.pw_name))
		snprintf(user, sizeof(user), "%s", pw.pw_name);
	else
		snprintf(user, sizeof(user), "%u", (unsigned)_st.uid);
	if (_expand_dir(o->dir, _st.job_id, array_job, array_task, user, dir,
			sizeof(dir)) < 0) {
		snprintf(err, errlen, "%s: bad %%-pattern or too long",
			 o->dir);
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
			snprintf(err, errlen, "%s: %s", dir, n < 0 ?
				 strerror(errno) : "path too long");
			return -1;
		}
	} else {
		strcpy(_st.dir, dir);
	}
	_st.lead = o->lead;
	_st.interval = o->interval;
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
	/*
	 * One page per run of the job and node: a run stranded behind a dead
	 * slurmd must not share it with the next run.  DIR in the name too:
	 * job ids repeat across clusters on a host.
	 */
	if ((size_t)snprintf(_st.page_path, sizeof(_st.page_path),
			     "%s/job.%u.%ld.%s.%08x", _st.page_dir, _st.job_id,
			     _st.restart, buf, _fnv1a(_st.dir)) >=
	    sizeof(_st.page_path)) {
		snprintf(err, errlen, "page path too long");
		return -1;
	}
	_bus_install();
	if (_user_setup(resume, sizeof(resume), err, errlen) < 0)
		return -1;
	spank_setenv(sp, "TOPOML_CKPT_DIR", _st.dir, 1);
	_setenv_long(sp, "TOPOML_CKPT_EVERY", o->every);
	_setenv_long(sp, "TOPOML_CKPT_INTERVAL", o->interval);
	_setenv_long(sp, "TOPOML_CKPT_KEEP", o->keep);
	_setenv_long(sp, "TOPOML_CKPT_LEAD", o->lead);
	_setenv_long(sp, "TOPOML_RESTART_COUNT", _st.restart);
	spank_setenv(sp, "TOPOML_RESUME", resume, 1);
	spank_setenv(sp, "TOPOML_CKPT_PAGE", _st.page_path, 1);
	_st.stop = 0;
	_st.page_broken = 0;
	if (pthread_create(&_st.timer, NULL, _timer, NULL) != 0) {
		snprintf(err, errlen, "no timer thread: %s", strerror(errno));
		return -1;
	}
	_st.active = true;
	return 0;
}

int ml_ckpt_task_init(spank_t sp, const struct ml_ckpt_opts *o)
{
	(void)sp;
	(void)o;
	return 0;
}

int ml_ckpt_exit(spank_t sp, const struct ml_ckpt_opts *o)
{
	struct ml_cred_saved saved;
	struct topoml_ckpt_page *p = _st.page;

	(void)o;
	if (!_st.active || !spank_remote(sp))
		return 0;
	_st.active = false;
	_st.stop = 1;
	pthread_join(_st.timer, NULL);
	flock(_st.page_fd, LOCK_EX);
	_bus_thread = pthread_self();
	if (sigsetjmp(_bus_jmp, 1))
		goto unlock;	/* truncated by the user: just let go */
	_bus_armed = 1;
	{
		uint32_t i, n;

		for (i = n = 0; i < p->nstepd && i < TOPOML_CKPT_PAGE_STEPDS;
		     i++)
			if (p->stepd[i] != getpid() && _alive(p->stepd[i]))
				p->stepd[n++] = p->stepd[i];
		p->nstepd = n;
		_bus_armed = 0;
		/* The last one out removes it, still holding the lock, as
		 * the user (slurmstepd is root again here). */
		if (n == 0 && ml_cred_enter(&_st.cred, &saved) == 0) {
			unlink(_st.page_path);
			ml_cred_leave(&saved);
		}
	}
unlock:
	_bus_armed = 0;
	flock(_st.page_fd, LOCK_UN);
	munmap(_st.page, TOPOML_CKPT_PAGE_SIZE);
	_st.page = NULL;
	close(_st.page_fd);
	_st.page_fd = -1;
	_bus_uninstall();
	return 0;
}
