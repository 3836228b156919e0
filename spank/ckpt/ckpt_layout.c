/*
 * The checkpoint directory layout: see ckpt_layout.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_layout.h"

int topoml_ckpt__mkdir_p(const char *dir)
{
	char buf[PATH_MAX], *s;

	if (strlen(dir) >= sizeof(buf))
		return errno = ENAMETOOLONG, -1;
	strcpy(buf, dir);
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* DIR for the *_at functions: search permission is enough. */
static int _dir_fd(const char *dir)
{
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

long topoml_ckpt__read_latest_at(int dfd, const char *dir, char *path,
				 size_t len)
{
	char link[PATH_MAX];
	struct stat st;
	ssize_t n;
	long step;
	char *end;

	path[0] = '\0';
	n = readlinkat(dfd, "latest", link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	if (strncmp(link, "step-", 5))
		return -1;
	step = strtol(link + 5, &end, 10);
	if (*end || step < 0)
		return -1;
	if ((size_t)snprintf(path, len, "%s/%s", dir, link) >= len ||
	    fstatat(dfd, link, &st, 0) < 0 || !S_ISDIR(st.st_mode)) {
		path[0] = '\0';
		return -1;
	}
	return step;
}

long topoml_ckpt__read_latest(const char *dir, char *path, size_t len)
{
	int dfd = _dir_fd(dir);
	long step;

	path[0] = '\0';
	if (dfd < 0)
		return -1;
	step = topoml_ckpt__read_latest_at(dfd, dir, path, len);
	close(dfd);
	return step;
}

/* "RESTART JOB\n" (JOB absent in directories of older versions: 0). */
long topoml_ckpt__read_epoch_job_at(int dfd, uid_t owner, uint32_t *job)
{
	char buf[64], *end;
	struct stat st;
	unsigned long j;
	ssize_t n;
	long e;
	int fd;

	*job = 0;
	/*
	 * slurmstepd's timer reads it too (as the user, but in a root
	 * process): a symlink, FIFO or device there must neither redirect
	 * nor block it.
	 */
	fd = openat(dfd, "epoch", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != owner) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	e = strtol(buf, &end, 10);
	if (*end == ' ') {
		errno = 0;
		j = strtoul(end + 1, &end, 10);
		if (!errno && j <= UINT32_MAX && (*end == '\n' || !*end))
			*job = (uint32_t)j;
	}
	return e;
}

long topoml_ckpt__read_epoch_at(int dfd, uid_t owner)
{
	uint32_t job;

	return topoml_ckpt__read_epoch_job_at(dfd, owner, &job);
}

long topoml_ckpt__read_epoch(const char *dir, uid_t owner)
{
	int dfd = _dir_fd(dir);
	long e;

	if (dfd < 0)
		return -1;
	e = topoml_ckpt__read_epoch_at(dfd, owner);
	close(dfd);
	return e;
}

int topoml_ckpt__write_epoch_at(int dfd, long restart, uid_t owner,
				uint32_t job)
{
	char t[64], buf[48];
	uint32_t cur_job;
	long cur;
	int fd, n;

	cur = topoml_ckpt__read_epoch_job_at(dfd, owner, &cur_job);
	if (!job)
		job = cur_job;	/* a helper: the plugin's record stays */
	/* Raised by a newer run of the same job; taken by another job. */
	if (job == cur_job && cur >= restart)
		return 0;
	snprintf(t, sizeof(t), ".epoch.%d", (int)getpid());
	unlinkat(dfd, t, 0);	/* left by a killed run of the same pid */
	if ((fd = openat(dfd, t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			 O_CLOEXEC, 0644)) < 0)
		return -1;
	if (job)
		n = snprintf(buf, sizeof(buf), "%ld %u\n", restart, job);
	else
		n = snprintf(buf, sizeof(buf), "%ld\n", restart);
	if (write(fd, buf, n) != n || fsync(fd) < 0) {
		close(fd);
		unlinkat(dfd, t, 0);
		return -1;
	}
	close(fd);
	if (renameat(dfd, t, dfd, "epoch") < 0) {
		unlinkat(dfd, t, 0);
		return -1;
	}
	return 0;
}

int topoml_ckpt__write_epoch(const char *dir, long restart)
{
	int dfd = _dir_fd(dir), rc;

	if (dfd < 0)
		return -1;
	rc = topoml_ckpt__write_epoch_at(dfd, restart, geteuid(), 0);
	close(dfd);
	return rc;
}
