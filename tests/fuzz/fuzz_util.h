/*
 * Helpers shared by the libFuzzer targets: the loaders read paths, so each
 * input is put in one memfd per process and read back through
 * /proc/self/fd/N (no disk, no temporary file to clean up), and every run
 * checks that the code under test closed what it opened.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FUZZ_UTIL_H
#define TOPOML_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_memfd = -1;

/* The input as a file; returns its path (static buffer). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static char path[64];
	size_t off = 0;

	if (fuzz_memfd < 0) {
		fuzz_memfd = memfd_create("topoml-fuzz", MFD_CLOEXEC);
		if (fuzz_memfd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fuzz_memfd);
	}
	if (ftruncate(fuzz_memfd, 0))
		abort();
	while (off < size) {
		ssize_t w = pwrite(fuzz_memfd, data + off, size - off, off);

		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	return path;
}

/* The input as a NUL-terminated string (malloc'd; embedded NULs kept). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The lowest free descriptor: taken before and after the code under test. */
static inline int fuzz_fd_mark(void)
{
	int fd = dup(0);

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fd);
	return fd;
}

/*
 * Abort when the code under test leaked a file descriptor.  Compared
 * within one input only: libFuzzer itself opens pipes between inputs (its
 * symbolizer).
 */
static inline void fuzz_check_fds(int mark)
{
	int fd = fuzz_fd_mark();

	if (fd != mark) {
		char link[64], what[256] = "?";
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", mark);
		n = readlink(link, what, sizeof(what) - 1);
		what[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "fuzz: file descriptor leak: fd %d (%s) is "
			"still open\n", mark, what);
		abort();
	}
}

#endif
