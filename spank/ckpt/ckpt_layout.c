/*
 * The checkpoint directory layout: see ckpt_layout.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

long topoml_ckpt__read_latest(const char *dir, char *path, size_t len)
{
	char link[PATH_MAX], lp[PATH_MAX + 8];
	struct stat st;
	ssize_t n;
	long step;
	char *end;

	path[0] = '\0';
	snprintf(lp, sizeof(lp), "%s/latest", dir);
	n = readlink(lp, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	if (strncmp(link, "step-", 5))
		return -1;
	step = strtol(link + 5, &end, 10);
	if (*end || step < 0)
		return -1;
	if ((size_t)snprintf(path, len, "%s/%s", dir, link) >= len ||
	    stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		path[0] = '\0';
		return -1;
	}
	return step;
}

long topoml_ckpt__read_epoch(const char *dir, uid_t owner)
{
	char p[PATH_MAX + 8], buf[32];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/epoch", dir);
	/*
	 * slurmstepd's timer reads it too (as the user, but in a root
	 * process): a symlink, FIFO or device there must neither redirect
	 * nor block it.
	 */
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		  O_CLOEXEC);
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
	return strtol(buf, NULL, 10);
}

int topoml_ckpt__write_epoch(const char *dir, long restart)
{
	char p[PATH_MAX + 32], t[PATH_MAX + 32], buf[32];
	int fd, n;

	if (topoml_ckpt__read_epoch(dir, geteuid()) >= restart)
		return 0;
	snprintf(p, sizeof(p), "%s/epoch", dir);
	snprintf(t, sizeof(t), "%s/.epoch.%d", dir, (int)getpid());
	unlink(t);	/* left by a killed run of the same pid */
	if ((fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0644)) < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", restart);
	if (write(fd, buf, n) != n || fsync(fd) < 0) {
		close(fd);
		unlink(t);
		return -1;
	}
	close(fd);
	if (rename(t, p) < 0) {
		unlink(t);
		return -1;
	}
	return 0;
}
