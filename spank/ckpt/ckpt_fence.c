/*
 * Fencing of a stale run: a requeued job's new run raises DIR/epoch
 * (ckpt_layout.c); a run still going behind a dead slurmd sees it and
 * kills the tasks its slurmstepd started, so that it neither commits nor
 * survives.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "ckpt_int.h"
#include "ckpt_layout.h"
#include "topoml_ckpt_page.h"

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
 * Kill pid if this slurmstepd started it.  A pidfd pins the process
 * first: while it is still there (a zombie too), its pid cannot have gone
 * to another process between the check and the signal.  Without pidfds
 * (Linux < 5.3), the plain check and kill.
 */
static void _kill_if_ours(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0) {
		if (_ours(pid))	/* a dead process: no signal, ESRCH */
			(void)syscall(SYS_pidfd_send_signal, fd, SIGKILL,
				      NULL, 0);
		close(fd);
		return;
	}
	if (errno != ENOSYS)
		return;		/* gone already */
#endif
	if (_ours(pid))
		kill(pid, SIGKILL);
}

/*
 * A newer run of the job started elsewhere: stop this one's tasks.  The
 * page's pid list is the user's to write, so only processes this
 * slurmstepd started are killed.
 */
static void _kill_stale(void)
{
	struct topoml_ckpt_page *p = ml_ck.page;
	int i;

	for (i = 0; i < p->npids && i < TOPOML_CKPT_PAGE_PIDS; i++) {
		pid_t pid = p->pids[i];

		if (pid > 1)
			_kill_if_ours(pid);
	}
}

/*
 * DIR/epoch, read with the user's credentials in the directory
 * user_init walked (its descriptor: nothing can redirect it since);
 * -1 when unreadable.
 */
static long _epoch(void)
{
	struct ml_cred_saved saved;
	long e;

	if (ml_cred_enter(&ml_ck.cred, &saved) < 0)
		return -1;
	e = ml_ck.dir_fd < 0 ? -1 :
	    topoml_ckpt__read_epoch_at(ml_ck.dir_fd, ml_ck.cred.uid);
	ml_cred_leave(&saved);
	return e;
}

bool ml_ckpt__fence(void)
{
	long e;

	if ((e = _epoch()) <= ml_ck.restart)
		return false;
	slurm_error("topoml: --ml-ckpt: job %u runs again elsewhere "
		    "(restart %ld): killing this stale run", ml_ck.job_id, e);
	_kill_stale();
	return true;
}
