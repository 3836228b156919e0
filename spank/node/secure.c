/*
 * File access from root contexts: see secure.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
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

static bool _owner_ok(uid_t o, const struct ml_trust *t)
{
	return o == 0 || o == t->uid;
}

static bool _group_ok(gid_t g, const struct ml_trust *t)
{
	const struct ml_cred *c = t->groups;

	if (!c)
		return false;
	if (g == c->gid)
		return true;
	for (int i = 0; i < c->ngids && i < ML_CRED_MAX_GIDS; i++)
		if (c->gids[i] == g)
			return true;
	return false;
}

/* Who outside T can add, remove or rename entries of directory ST. */
static const char *_writers(const struct stat *st, const struct ml_trust *t,
			    char *buf, size_t len)
{
	if (st->st_mode & S_IWOTH)
		return "anybody";
	if ((st->st_mode & S_IWGRP) && !_group_ok(st->st_gid, t)) {
		snprintf(buf, len, "group %u", (unsigned)st->st_gid);
		return buf;
	}
	return NULL;
}

/* The walk's position: a directory, its path and who else may write it. */
struct _walk {
	int fd;
	struct stat st;
	char real[PATH_MAX];		/* "" for "/" */
	const char *writers;		/* NULL: only the trusted */
	char wbuf[32];
};

static const char *_shown(const struct _walk *w)
{
	return w->real[0] ? w->real : "/";
}

/* Checks of a directory the walk enters; -2 with err when refused. */
static int _enter_dir(struct _walk *w, const struct ml_trust *t, bool last,
		      char *err, size_t errlen)
{
	const char *who = _writers(&w->st, t, w->wbuf, sizeof(w->wbuf));

	if (!S_ISDIR(w->st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", _shown(w));
		return -2;
	}
	if (t->read)
		last = false;	/* read only: like a directory on the way */
	if (!_owner_ok(w->st.st_uid, t) || (last && w->st.st_uid != t->uid)) {
		if (!t->groups)		/* root's own path */
			snprintf(err, errlen, "%s is not owned by root (uid "
				 "%u)", _shown(w), (unsigned)w->st.st_uid);
		else
			snprintf(err, errlen, "%s is %s directory (uid %u)",
				 _shown(w), w->st.st_uid ? "another user's" :
				 "root's, not the user's",
				 (unsigned)w->st.st_uid);
		return -2;
	}
	/* Sticky: others cannot replace what the trusted own in it. */
	if (who && (last || !(w->st.st_mode & S_ISVTX))) {
		snprintf(err, errlen, "%s is writable by %s%s", _shown(w), who,
			 last ? "" : " (no sticky bit)");
		return -2;
	}
	w->writers = who;
	return 0;
}

static int _walk_root(struct _walk *w, const struct ml_trust *t, bool last,
		      char *err, size_t errlen)
{
	if (w->fd >= 0)
		close(w->fd);
	w->real[0] = '\0';
	if ((w->fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fstat(w->fd, &w->st) < 0) {
		snprintf(err, errlen, "/: %s", strerror(errno));
		return -1;
	}
	return _enter_dir(w, t, last, err, errlen);
}

/*
 * TODO (the components still to walk) becomes HEAD, then the rest of
 * TODO from REST on: a symlink's target, or the parent for "..".
 */
static int _splice(char *todo, size_t len, const char *head,
		   const char *rest)
{
	char tmp[2 * PATH_MAX];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", head, rest) >=
	    sizeof(tmp) || strlen(tmp) >= len)
		return errno = ENAMETOOLONG, -1;
	strcpy(todo, tmp);
	return 0;
}

/*
 * NAME in DFD itself, never what a symlink names: a directory (asked as
 * one first, so that an automount point is mounted), else the symlink
 * or file, for fstat.
 */
static int _open_entry(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);

	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
		fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* TODO from P: no component left (only slashes). */
static bool _none_left(const char *p)
{
	return !p[strspn(p, "/")];
}

int ml_safe_dir_open(const char *path, const struct ml_trust *t,
		     char *canon, size_t canonlen, char *err, size_t errlen)
{
	char todo[2 * PATH_MAX], name[NAME_MAX + 1], target[PATH_MAX];
	struct _walk w = { .fd = -1 };
	int rc, next = -1, hops = 0, links = 0;
	const char *p;

	if (!path || path[0] != '/' || strlen(path) >= PATH_MAX) {
		snprintf(err, errlen, "'%s': not an absolute path",
			 path ? path : "");
		return -2;
	}
	strcpy(todo, path);
	if ((rc = _walk_root(&w, t, _none_left(todo), err, errlen)))
		goto fail;
	for (p = todo;;) {
		size_t n;
		bool last;
		struct stat st;
		char shown[PATH_MAX + NAME_MAX + 2];

		p += strspn(p, "/");
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			snprintf(err, errlen, "%s/%.*s...: %s", w.real, 32, p,
				 strerror(ENAMETOOLONG));
			rc = -1;
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		last = _none_left(p);
		if (!strcmp(name, "."))
			continue;
		if (++hops > 4096) {
			snprintf(err, errlen, "%s: %s", path, strerror(ELOOP));
			rc = -1;
			goto fail;
		}
		if (!strcmp(name, "..")) {
			/* The parent of a walked path: walk it again. */
			char *slash = strrchr(w.real, '/');

			if (slash)
				*slash = '\0';
			if (_splice(todo, sizeof(todo), w.real, p) < 0) {
				snprintf(err, errlen, "%s: %s", path,
					 strerror(errno));
				rc = -1;
				goto fail;
			}
			p = todo;
			if ((rc = _walk_root(&w, t, _none_left(todo), err,
					     errlen)))
				goto fail;
			continue;
		}
		snprintf(shown, sizeof(shown), "%s/%s", w.real, name);
		next = _open_entry(w.fd, name);
		if (next < 0 && errno == ENOENT && t->create) {
			if (mkdirat(w.fd, name, 0755) < 0 && errno != EEXIST) {
				snprintf(err, errlen, "%s: mkdir: %s", shown,
					 strerror(errno));
				rc = -1;
				goto fail;
			}
			next = _open_entry(w.fd, name);
		}
		if (next < 0 || fstat(next, &st) < 0) {
			snprintf(err, errlen, "%s: %s", shown, strerror(errno));
			rc = -1;
			goto fail;
		}
		if (S_ISLNK(st.st_mode) && !_owner_ok(st.st_uid, t)) {
			snprintf(err, errlen, "%s is a symlink of another user "
				 "(uid %u)", shown, (unsigned)st.st_uid);
			rc = -2;
			goto fail;
		}
		/* Sticky and open to others: only the trusted's entries
		 * cannot be replaced by someone else. */
		if (w.writers && !_owner_ok(st.st_uid, t)) {
			snprintf(err, errlen, "%s is another user's (uid %u), "
				 "in a directory %s can write", shown,
				 (unsigned)st.st_uid, w.writers);
			rc = -2;
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t l;

			if (++links > 40) {	/* the kernel's own bound */
				snprintf(err, errlen, "%s: %s", shown,
					 strerror(ELOOP));
				rc = -1;
				goto fail;
			}
			/* The link fstat saw, not one put there since. */
			l = readlinkat(next, "", target, sizeof(target));
			close(next);
			next = -1;
			if (l > 0 && (size_t)l < sizeof(target))
				target[l] = '\0';
			if (l <= 0 || (size_t)l >= sizeof(target) ||
			    _splice(todo, sizeof(todo), target, p) < 0) {
				snprintf(err, errlen, "%s: %s", shown,
					 l < 0 ? strerror(errno) :
					 "symlink target too long");
				rc = -1;
				goto fail;
			}
			p = todo;
			if (target[0] == '/' &&
			    (rc = _walk_root(&w, t, _none_left(todo), err,
					     errlen)))
				goto fail;
			continue;
		}
		if (strlen(shown) >= sizeof(w.real)) {
			snprintf(err, errlen, "%s: %s", path,
				 strerror(ENAMETOOLONG));
			rc = -1;
			goto fail;
		}
		close(w.fd);
		w.fd = next;
		next = -1;
		w.st = st;
		memcpy(w.real, shown, strlen(shown) + 1);
		if ((rc = _enter_dir(&w, t, last, err, errlen)))
			goto fail;
	}
	/* Ended on "." or a trailing "..": the last one's rules. */
	if ((rc = _enter_dir(&w, t, true, err, errlen)))
		goto fail;
	/* The walked directory itself, readable: fsync, getdents. */
	next = openat(w.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (next < 0) {
		snprintf(err, errlen, "%s: %s", _shown(&w), strerror(errno));
		rc = -1;
		goto fail;
	}
	close(w.fd);
	if (canon && (size_t)snprintf(canon, canonlen, "%s", _shown(&w)) >=
	    canonlen) {
		close(next);
		snprintf(err, errlen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	return next;
fail:
	if (next >= 0)
		close(next);
	if (w.fd >= 0)
		close(w.fd);
	return rc;
}

int ml_user_file_open(const char *path, const struct ml_trust *t,
		      char *err, size_t errlen)
{
	struct ml_trust rt = *t;
	char dir[PATH_MAX], wbuf[32];
	const char *slash, *base, *who;
	struct stat st;
	int dfd, fd, fl;

	if (!path || path[0] != '/' || strlen(path) >= PATH_MAX) {
		snprintf(err, errlen, "'%s': not an absolute path",
			 path ? path : "");
		return -2;
	}
	slash = strrchr(path, '/');
	base = slash + 1;
	if (!ml_plain_name(base)) {
		snprintf(err, errlen, "%s: not a file name", path);
		return -2;
	}
	if (slash == path) {
		strcpy(dir, "/");
	} else {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	rt.read = true;
	rt.create = false;
	if ((dfd = ml_safe_dir_open(dir, &rt, NULL, 0, err, errlen)) < 0)
		return dfd;
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_NOCTTY | O_CLOEXEC);
	close(dfd);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s", e == ELOOP ?
			 "a symbolic link (not followed)" : strerror(e));
		return e == ELOOP ? -2 : -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	who = _writers(&st, &rt, wbuf, sizeof(wbuf));
	if (!S_ISREG(st.st_mode))
		snprintf(err, errlen, "not a regular file");
	else if (!_owner_ok(st.st_uid, &rt))
		snprintf(err, errlen, "another user's file (uid %u)",
			 (unsigned)st.st_uid);
	else if (who)
		snprintf(err, errlen, "writable by %s", who);
	else {
		/* Regular file: O_NONBLOCK only guarded the open. */
		if ((fl = fcntl(fd, F_GETFL)) >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		return fd;
	}
	close(fd);
	return -2;
}

int ml_root_dir_open(const char *dir, bool create, char *err, size_t errlen)
{
	struct ml_trust t = { .uid = geteuid(), .create = create };
	int fd = ml_safe_dir_open(dir, &t, NULL, 0, err, errlen);

	return fd < 0 ? -1 : fd;
}

bool ml_log_once(const char *key)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t seen[64];
	static int nseen;
	uint64_t h = 1469598103934665603ULL;
	bool first = false;
	int i;

	for (const unsigned char *c = (const unsigned char *)key; *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nseen && seen[i] != h; i++)
		;
	if (i == nseen && nseen < (int)(sizeof(seen) / sizeof(seen[0]))) {
		seen[nseen++] = h;
		first = true;
	}
	pthread_mutex_unlock(&lock);
	return first;
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
