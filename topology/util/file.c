/*
 * Opening a file a user names: a regular file only (no FIFO, device or
 * directory that could block or mislead a reader running as root).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

int topoml__open_regular(const char *path)
{
	struct stat st;
	int fd, flags;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	/* Regular files never block; plain reads from here on. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

FILE *topoml__fopen_regular(const char *path)
{
	int fd = topoml__open_regular(path), e;
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f) {
		e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

const char *topoml__open_error(int e)
{
	return e == EINVAL ? "not a regular file" : strerror(e);
}
