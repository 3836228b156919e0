/*
 * The node's shared page of a --ml-ckpt job (topoml_ckpt_page.h, shared
 * with the hook library): the user's page directory that root makes
 * (post_opt), the page's name, joining it, raising events in it, leaving
 * it, and the pages earlier jobs left behind.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "ckpt_int.h"
#include "util/util.h"	/* topoml__hash(): the engine's FNV-1a */
#include "topoml_ckpt_page.h"

/* The longest root waits for the page's lock (_lock_wait). */
#define CKPT_LOCK_WAIT_MS	3000

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
 * The page's lock, waited for at most MS milliseconds.  It is a flock on
 * the user's own file: the user can hold it for ever (from another job on
 * the node too), and slurmstepd must not wait on that (a hung exit hook
 * leaves the job completing and the node with it).  The hook library
 * holds it for a few stores only.  0, or -1 with errno (EWOULDBLOCK:
 * still held).
 */
static int _lock_wait(int fd, int ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int waited = 0;; waited += 10) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (waited >= ms)
			return errno = EWOULDBLOCK, -1;
		nanosleep(&ts, NULL);
	}
}

/*
 * The page is the user's file, mapped by root: the user may truncate it,
 * and a later access would raise SIGBUS in slurmstepd.  Accesses by root
 * are made with the guard armed (one thread at a time: user_init and exit
 * run while the timer does not); a SIGBUS inside the page jumps back, any
 * other goes to the disposition slurmstepd had.  The guard's state is in
 * ml_ck (ckpt_int.h: how to arm it).
 */
static struct sigaction _bus_old;
static bool _bus_installed;

static void _bus_handler(int sig, siginfo_t *si, void *uc)
{
	char *a = si ? si->si_addr : NULL, *pg = (char *)ml_ck.page;

	(void)uc;
	if (ml_ck.bus_armed && pg && a >= pg &&
	    a < pg + TOPOML_CKPT_PAGE_SIZE &&
	    pthread_equal(pthread_self(), ml_ck.bus_thread)) {
		ml_ck.bus_armed = 0;
		siglongjmp(ml_ck.bus_jmp, 1);
	}
	/* Not ours: the instruction faults again under the old action. */
	sigaction(sig, &_bus_old, NULL);
}

void ml_ckpt__bus_install(void)
{
	struct sigaction sa = { .sa_sigaction = _bus_handler,
				.sa_flags = SA_SIGINFO };

	if (_bus_installed)
		return;
	sigemptyset(&sa.sa_mask);
	if (!sigaction(SIGBUS, &sa, &_bus_old))
		_bus_installed = true;
}

void ml_ckpt__bus_uninstall(void)
{
	if (_bus_installed)
		sigaction(SIGBUS, &_bus_old, NULL);
	_bus_installed = false;
}

/*
 * Join the mapped page: keep the slurmstepds still alive, reset it when
 * none is (left by slurmstepds killed without their exit hook), list this
 * one.  -1 when the user truncated it meanwhile.
 */
static int _page_join(struct topoml_ckpt_page *p)
{
	uint32_t i, n;
	bool live = false;

	ml_ck.bus_thread = pthread_self();
	if (sigsetjmp(ml_ck.bus_jmp, 1))
		return -1;
	ml_ck.bus_armed = 1;
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
	ml_ck.bus_armed = 0;
	return 0;
}

/*
 * Create (or join) the node's page, as the user (credentials switched by
 * the caller).  It is shared by the job's slurmstepds on the node (batch
 * step and srun steps).
 */
int ml_ckpt__page_open(void)
{
	struct stat st, st2;
	int fd, tries = 0;
	void *m;

again:
	fd = ml_open_owned(AT_FDCWD, ml_ck.page_path, O_RDWR | O_CREAT, 0600,
			   ml_ck.cred.uid);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || _lock_wait(fd, CKPT_LOCK_WAIT_MS) < 0)
		goto fail;
	/* The last user may have unlinked it between open and flock (the
	 * user too, as often as they like: a bounded number of times). */
	if (lstat(ml_ck.page_path, &st2) < 0 || st2.st_ino != st.st_ino) {
		close(fd);
		if (++tries < 16)
			goto again;
		return errno = EBUSY, -1;
	}
	if (fstat(fd, &st) < 0 ||
	    (st.st_size != TOPOML_CKPT_PAGE_SIZE &&
	     ftruncate(fd, TOPOML_CKPT_PAGE_SIZE) < 0) ||
	    (m = mmap(NULL, TOPOML_CKPT_PAGE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0)) == MAP_FAILED)
		goto fail;
	ml_ck.page = m;
	if (_page_join(m) < 0) {
		munmap(m, TOPOML_CKPT_PAGE_SIZE);
		ml_ck.page = NULL;
		errno = EBUSY;
		goto fail;
	}
	flock(fd, LOCK_UN);
	ml_ck.page_fd = fd;
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
void ml_ckpt__page_clean_stale(void)
{
	const char *mine = strrchr(ml_ck.page_path, '/') + 1;
	time_t now = time(NULL);
	struct dirent *e;
	DIR *d;
	int dfd;

	if ((dfd = open(ml_ck.page_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
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
		fd = ml_open_owned(dfd, e->d_name, O_RDONLY, 0, ml_ck.cred.uid);
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

void ml_ckpt__raise(uint32_t why)
{
	struct topoml_ckpt_page *p = ml_ck.page;
	/*
	 * Never waited for (_lock_wait): without it, the event is raised
	 * as the hook's signal handlers raise theirs (topoml_ckpt_page.h).
	 */
	bool locked = !flock(ml_ck.page_fd, LOCK_EX | LOCK_NB);

	__atomic_fetch_or(&p->reason, why, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&p->gen, 1, __ATOMIC_SEQ_CST);
	if (locked)
		flock(ml_ck.page_fd, LOCK_UN);
}

/*
 * Root, before user_init: <cache_dir>/ckpt/<uid>, the user's own page
 * directory inside a root-owned one, so that nobody else can create,
 * read or write the user's pages, and no user can redirect root there.
 */
int ml_ckpt_post_opt(spank_t sp, const struct ml_ckpt_opts *o,
		     const char *cache_dir, char *err, size_t errlen)
{
	char base[PATH_MAX], name[32], why[PATH_MAX + 256];
	struct stat st;
	uid_t uid;
	gid_t gid;
	int dfd, fd = -1, rc = -1;

	ml_ck.page_dir[0] = '\0';
	if (!o || !o->set || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &ml_ck.job_id) != ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot read the job's ids");
		return -1;
	}
	/*
	 * Here, not in user_init: from Slurm 23.11 on, slurmstepd holds the
	 * auth plugin's lock while privileges are dropped for user_init, and
	 * an RPC there is fatal.
	 */
	ml_ck.job_at = 0;
	ml_ck.job_batch = -1;
	if ((ml_ck.restart = ml_ckpt_restart_lookup(ml_ck.job_id)) < 0) {
		snprintf(err, errlen, "job %u: slurmctld did not give the "
			 "job's restart count: %s", ml_ck.job_id,
			 slurm_strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(base, sizeof(base), "%s/ckpt", cache_dir) >=
	    sizeof(base)) {
		snprintf(err, errlen, "cache_dir too long");
		return -1;
	}
	if ((dfd = ml_root_dir_open(base, true, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "page directory %s/%u: %s", base,
			 (unsigned)uid, why);
		return -1;
	}
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
	if ((size_t)snprintf(ml_ck.page_dir, sizeof(ml_ck.page_dir), "%s/%s",
			     base, name) >= sizeof(ml_ck.page_dir)) {
		ml_ck.page_dir[0] = '\0';
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

/*
 * One page per run of the job and node: a run stranded behind a dead
 * slurmd must not share it with the next run.  DIR in the name too: job
 * ids repeat across clusters on a host.
 */
int ml_ckpt__page_path(char *err, size_t errlen)
{
	uint32_t dir_hash = topoml__hash(ml_ck.dir);
	char buf[64];

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
	if ((size_t)snprintf(ml_ck.page_path, sizeof(ml_ck.page_path),
			     "%s/job.%u.%ld.%s.%08x", ml_ck.page_dir,
			     ml_ck.job_id, ml_ck.restart, buf,
			     dir_hash) >= sizeof(ml_ck.page_path)) {
		snprintf(err, errlen, "page path too long");
		return -1;
	}
	return 0;
}

void ml_ckpt__page_leave(void)
{
	struct ml_cred_saved saved;
	struct topoml_ckpt_page *p = ml_ck.page;

	/* Held by somebody else for long: leave the list as it is (the
	 * next join drops this slurmstepd, dead by then) and the page to
	 * ml_ckpt__page_clean_stale. */
	if (_lock_wait(ml_ck.page_fd, CKPT_LOCK_WAIT_MS) < 0)
		goto unmap;
	ml_ck.bus_thread = pthread_self();
	if (sigsetjmp(ml_ck.bus_jmp, 1))
		goto unlock;	/* truncated by the user: just let go */
	ml_ck.bus_armed = 1;
	{
		uint32_t i, n;

		for (i = n = 0; i < p->nstepd && i < TOPOML_CKPT_PAGE_STEPDS;
		     i++)
			if (p->stepd[i] != getpid() && _alive(p->stepd[i]))
				p->stepd[n++] = p->stepd[i];
		p->nstepd = n;
		ml_ck.bus_armed = 0;
		/* The last one out removes it, still holding the lock, as
		 * the user (slurmstepd is root again here). */
		if (n == 0 && ml_cred_enter(&ml_ck.cred, &saved) == 0) {
			unlink(ml_ck.page_path);
			ml_cred_leave(&saved);
		}
	}
unlock:
	ml_ck.bus_armed = 0;
	flock(ml_ck.page_fd, LOCK_UN);
unmap:
	munmap(ml_ck.page, TOPOML_CKPT_PAGE_SIZE);
	ml_ck.page = NULL;
	close(ml_ck.page_fd);
	ml_ck.page_fd = -1;
	ml_ckpt__bus_uninstall();
}
