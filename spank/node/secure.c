/*
 * File access from root contexts: see secure.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "secure.h"

/*
 * The raw system call: glibc's setgroups() applies to every thread of the
 * process (slurmstepd's too); the kernel's applies to the caller only.
 */
static int _thread_setgroups(int n, const gid_t *gids)
{
	return (int)syscall(SYS_setgroups, (size_t)n, gids);
}

int ml_cred_enter(const struct ml_cred *u, struct ml_cred_saved *s)
{
	int n;

	memset(s, 0, sizeof(*s));
	if (geteuid() != 0)
		return 0;	/* already the user (or never root) */
	n = getgroups(ML_CRED_MAX_GIDS, s->gids);
	if (n < 0 || u->ngids < 0 || u->ngids > ML_CRED_MAX_GIDS)
		return errno = EINVAL, -1;
	s->ngids = n;
	s->fsgid = (gid_t)setfsgid((gid_t)-1);
	s->fsuid = (uid_t)setfsuid((uid_t)-1);
	if (_thread_setgroups(u->ngids, u->gids) < 0)
		return -1;
	setfsgid(u->gid);
	setfsuid(u->uid);
	/* setfs*id report the previous value: read back to be sure. */
	if ((uid_t)setfsuid((uid_t)-1) != u->uid ||
	    (gid_t)setfsgid((gid_t)-1) != u->gid) {
		setfsuid(s->fsuid);
		setfsgid(s->fsgid);
		_thread_setgroups(s->ngids, s->gids);
		return errno = EPERM, -1;
	}
	s->switched = true;
	return 0;
}

void ml_cred_leave(struct ml_cred_saved *s)
{
	if (!s->switched)
		return;
	setfsuid(s->fsuid);
	setfsgid(s->fsgid);
	_thread_setgroups(s->ngids, s->gids);
	s->switched = false;
}

bool ml_plain_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

bool ml_node_name_ok(const char *node)
{
	if (!ml_plain_name(node) || node[0] == '.' ||
	    strlen(node) > ML_NODE_NAME_MAX)
		return false;
	for (const char *p = node; *p; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return false;
	return true;
}

/*
 * A directory root may trust; last: no write bit for others at all.  The
 * owner is root, or whoever runs this when that is not root (the unit
 * tests as a developer: there is nobody to protect).
 */
static int _trusted(const struct stat *st, bool last)
{
	if (!S_ISDIR(st->st_mode) ||
	    (st->st_uid != 0 && st->st_uid != geteuid()))
		return -1;
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	/* /tmp-like: others cannot replace root's entries in it. */
	return !last && (st->st_mode & S_ISVTX) ? 0 : -1;
}

int ml_root_dir_open(const char *dir, bool create, char *err, size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX], *tail = NULL, *comp, *next_comp,
	     *save;
	struct stat st;
	int fd, next;

	if (!dir || dir[0] != '/' || strlen(dir) >= sizeof(path)) {
		snprintf(err, errlen, "'%s': not an absolute path",
			 dir ? dir : "");
		return -1;
	}
	/*
	 * Resolve symlinks of the existing part as root: a symlink there is
	 * either root's own or sits in a directory the walk below refuses.
	 */
	strcpy(path, dir);
	while (!realpath(path, real)) {
		char *slash;

		if (errno != ENOENT) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		slash = strrchr(path, '/');
		if (!slash || slash == path) {
			strcpy(real, "/");
			tail = (char *)dir + 1;
			break;
		}
		*slash = '\0';
		tail = (char *)dir + (slash - path) + 1;
	}
	if (tail) {
		size_t l = strlen(real);

		if (l + 1 + strlen(tail) >= sizeof(real)) {
			snprintf(err, errlen, "%s: path too long", dir);
			return -1;
		}
		if (l > 1)
			real[l++] = '/';
		strcpy(real + l, tail);
	}
	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "/: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || _trusted(&st, false)) {
		snprintf(err, errlen, "/ is not owned by root");
		goto fail;
	}
	for (comp = strtok_r(real, "/", &save); comp; comp = next_comp) {
		bool last;

		next_comp = strtok_r(NULL, "/", &save);
		last = !next_comp;
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			snprintf(err, errlen, "%s: '%s' in the path", dir,
				 comp);
			goto fail;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
				snprintf(err, errlen, "%s: mkdir %s: %s", dir,
					 comp, strerror(errno));
				goto fail;
			}
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY |
				      O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			snprintf(err, errlen, "%s: %s: %s", dir, comp,
				 errno == ELOOP ? "a symlink appeared" :
				 strerror(errno));
			goto fail;
		}
		close(fd);
		fd = next;
		if (fstat(fd, &st) < 0 || _trusted(&st, last)) {
			snprintf(err, errlen, "%s: %s is %s", dir, comp,
				 st.st_uid != 0 ? "not owned by root" :
				 !S_ISDIR(st.st_mode) ? "not a directory" :
				 "writable by group or others");
			goto fail;
		}
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int ml_write_atomic(int dirfd, const char *name, mode_t mode,
		    int (*fill)(FILE *f, void *arg), void *arg)
{
	char tmp[NAME_MAX + 1];
	unsigned char rnd[8];
	FILE *f = NULL;
	int fd = -1, e, tries;

	if (!ml_plain_name(name) || strlen(name) > NAME_MAX - 24)
		return errno = EINVAL, -1;
	for (tries = 0; tries < 16; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -1;
		snprintf(tmp, sizeof(tmp), ".%s.%02x%02x%02x%02x%02x%02x%02x"
			 "%02x", name, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
			 rnd[5], rnd[6], rnd[7]);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -1;
	if (!(f = fdopen(fd, "w"))) {
		e = errno;
		close(fd);
		goto fail;
	}
	if (fill(f, arg) || fflush(f) || fchmod(fd, mode) || fsync(fd)) {
		e = errno ? errno : EIO;
		fclose(f);
		goto fail;
	}
	if (fclose(f)) {
		e = errno;
		goto fail;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		e = errno;
		goto fail;
	}
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	errno = e;
	return -1;
}

int ml_open_owned(int dirfd, const char *name, int flags, mode_t mode,
		  uid_t owner)
{
	struct stat st;
	int fd, fl;

	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		    O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != owner) {
		close(fd);
		return errno = EPERM, -1;
	}
	/* Regular file: O_NONBLOCK only guarded the open. */
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}
