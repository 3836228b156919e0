/*
 * spank/node/secure.c: root-trusted directories, atomic writes, per-thread
 * user credentials and owner-checked opens.  The ownership cases need root
 * (they chown to another uid); as another user they are skipped.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "secure.h"

#define OTHER_UID 4242
#define OTHER_GID 4242

static char base[256];

static void _setup(void)
{
	snprintf(base, sizeof(base), "/tmp/check_secure.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	chmod(base, 0755);
}

static void _teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", base);
}

static void _path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", base, rel);
}

START_TEST(test_root_dir_create)
{
	char p[512], err[256];
	struct stat st;
	int fd;

	if (geteuid() != 0)
		return;
	_path(p, sizeof(p), "a/b/c");
	fd = ml_root_dir_open(p, true, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_uid, 0);
	close(fd);
	/* Without create, a missing one is an error, not a mkdir. */
	_path(p, sizeof(p), "a/missing");
	ck_assert_int_lt(ml_root_dir_open(p, false, err, sizeof(err)), 0);
	ck_assert_int_ne(access(p, F_OK), 0);
	ck_assert_int_lt(ml_root_dir_open("relative", true, err,
					  sizeof(err)), 0);
}
END_TEST

START_TEST(test_root_dir_refuses)
{
	char p[512], q[512], err[256];

	if (geteuid() != 0)
		return;
	/* Owned by a user. */
	_path(p, sizeof(p), "user");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chown(p, OTHER_UID, OTHER_GID), 0);
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "not owned by root"), "%s", err);
	/* A user-owned parent: the user could rename root's dir away. */
	_path(p, sizeof(p), "user/sub");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	/* Writable by others, even sticky, as the last component. */
	_path(p, sizeof(p), "open");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chmod(p, 01777), 0);
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "writable"), "%s", err);
	/* The same spelt "open/." or "open/x/..". */
	_path(p, sizeof(p), "open/.");
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "open is writable by anybody"), "%s", err);
	_path(p, sizeof(p), "open/x/..");
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "open is writable by anybody"), "%s", err);
	/* ... but fine as a parent (like /tmp). */
	_path(p, sizeof(p), "open/rootdir");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	{
		int fd = ml_root_dir_open(p, false, err, sizeof(err));

		ck_assert_msg(fd >= 0, "%s", err);
		close(fd);
	}
	/* Group-writable without sticky as a parent. */
	_path(p, sizeof(p), "grp");
	ck_assert_int_eq(mkdir(p, 0775), 0);
	ck_assert_int_eq(chmod(p, 0775), 0);
	_path(q, sizeof(q), "grp/x");
	ck_assert_int_lt(ml_root_dir_open(q, true, err, sizeof(err)), 0);
	/* A user's symlink: resolves into the user's directory. */
	_path(p, sizeof(p), "user/target");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	_path(q, sizeof(q), "link");
	ck_assert_int_eq(symlink(p, q), 0);
	ck_assert_int_lt(ml_root_dir_open(q, true, err, sizeof(err)), 0);
}
END_TEST

/* REL (under base) holds nothing. */
static bool _empty(const char *rel)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s/%s')\"", base, rel);
	return system(cmd) == 0;
}

/*
 * Issue 28: root resolved cache_dir with realpath and checked only the
 * result, so a user's symlink on the way sent root's files where the
 * user chose.  Walked from "/" now: no symlink but root's is followed,
 * and no world-writable directory without the sticky bit is crossed.
 */
START_TEST(test_root_dir_links)
{
	char p[512], q[512], err[512];
	struct stat st, want;
	int fd;

	if (geteuid() != 0)
		return;
	/* A root directory the user would like root to write in. */
	_path(p, sizeof(p), "rootdir");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(stat(p, &want), 0);

	/* The user's link in a world-writable directory, no sticky bit. */
	_path(p, sizeof(p), "ww");
	ck_assert_int_eq(mkdir(p, 0777), 0);
	ck_assert_int_eq(chmod(p, 0777), 0);
	_path(p, sizeof(p), "ww/cache");
	ck_assert_int_eq(symlink("../rootdir", p), 0);
	ck_assert_int_eq(lchown(p, OTHER_UID, OTHER_GID), 0);
	_path(p, sizeof(p), "ww/cache/ckpt");
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "/ww is writable by anybody (no sticky "
			     "bit)"), "%s", err);
	ck_assert(_empty("rootdir"));

	/* The same link in a sticky one (/tmp with
	 * fs.protected_symlinks=0): not root's, not followed. */
	_path(p, sizeof(p), "st");
	ck_assert_int_eq(mkdir(p, 01777), 0);
	ck_assert_int_eq(chmod(p, 01777), 0);
	_path(q, sizeof(q), "rootdir");
	_path(p, sizeof(p), "st/cache");
	ck_assert_int_eq(symlink(q, p), 0);
	ck_assert_int_eq(lchown(p, OTHER_UID, OTHER_GID), 0);
	_path(p, sizeof(p), "st/cache/ckpt");
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "/st/cache is a symlink of another user "
			     "(uid 4242)"), "%s", err);
	ck_assert(_empty("rootdir"));
	/* Dangling: nothing is created at its target either. */
	_path(p, sizeof(p), "st/dangling");
	ck_assert_int_eq(symlink("../rootdir/made", p), 0);
	ck_assert_int_eq(lchown(p, OTHER_UID, OTHER_GID), 0);
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert(_empty("rootdir"));

	/* root's own links are followed, relative and absolute, ".."
	 * included; the fd is the target. */
	_path(p, sizeof(p), "st/rootlink");
	ck_assert_int_eq(symlink("../st/../rootdir", p), 0);
	_path(q, sizeof(q), "abs");
	_path(p, sizeof(p), "rootdir");
	ck_assert_int_eq(symlink(p, q), 0);
	_path(p, sizeof(p), "st/rootlink");
	for (int i = 0; i < 2; i++) {
		fd = ml_root_dir_open(i ? q : p, false, err, sizeof(err));
		ck_assert_msg(fd >= 0, "%s", err);
		ck_assert_int_eq(fstat(fd, &st), 0);
		ck_assert(st.st_ino == want.st_ino && st.st_dev == want.st_dev);
		close(fd);
	}
	/* A user's directory in the sticky one, on the way. */
	_path(p, sizeof(p), "st/udir");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chown(p, OTHER_UID, OTHER_GID), 0);
	_path(p, sizeof(p), "st/udir/cache");
	ck_assert_int_lt(ml_root_dir_open(p, true, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "in a directory anybody can write"), "%s",
		      err);
}
END_TEST

/* The walk as a user: what the user may not enter, or that only the
 * user's symlinks and directories count (ml_safe_dir_open). */
START_TEST(test_safe_dir_user)
{
	struct ml_cred u = { .uid = OTHER_UID, .gid = OTHER_GID, .ngids = 1,
			     .gids = { OTHER_GID } };
	struct ml_trust t = { .uid = OTHER_UID, .groups = &u, .create = true };
	char p[512], q[512], canon[512], err[512];
	struct ml_cred_saved sv;
	struct stat st;
	int fd;

	if (geteuid() != 0)
		return;
	_path(p, sizeof(p), "home");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chown(p, OTHER_UID, OTHER_GID), 0);
	_path(q, sizeof(q), "ulink");
	ck_assert_int_eq(symlink("home//./", q), 0);
	ck_assert_int_eq(lchown(q, OTHER_UID, OTHER_GID), 0);
	_path(p, sizeof(p), "rootlast");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	_path(p, sizeof(p), "home/file");
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	close(fd);
	_path(p, sizeof(p), "home/loop");
	ck_assert_int_eq(symlink("loop", p), 0);
	_path(p, sizeof(p), "closed");
	ck_assert_int_eq(mkdir(p, 0700), 0);

	/* As the user, as slurmstepd's thread does. */
	ck_assert_int_eq(ml_cred_enter(&u, &sv), 0);
	/* The user's link to the user's directory: made there as the
	 * user, and canon has no link. */
	_path(q, sizeof(q), "ulink/ck");
	fd = ml_safe_dir_open(q, &t, canon, sizeof(canon), err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_uid, OTHER_UID);
	close(fd);
	_path(p, sizeof(p), "home/ck");
	ck_assert_str_eq(canon, p);
	/* The last one must be the user's: root's is refused. */
	_path(p, sizeof(p), "rootlast");
	ck_assert_int_eq(ml_safe_dir_open(p, &t, NULL, 0, err, sizeof(err)),
			 -2);
	ck_assert_msg(strstr(err, "rootlast is root's, not the user's"), "%s",
		      err);
	/* A file on the way, a symlink loop, a directory the user cannot
	 * search (the user's permissions apply), a relative path. */
	_path(p, sizeof(p), "home/file/x");
	ck_assert_int_eq(ml_safe_dir_open(p, &t, NULL, 0, err, sizeof(err)),
			 -2);
	ck_assert_msg(strstr(err, "home/file is not a directory"), "%s", err);
	_path(p, sizeof(p), "home/loop");
	ck_assert_int_eq(ml_safe_dir_open(p, &t, NULL, 0, err, sizeof(err)),
			 -1);
	_path(p, sizeof(p), "closed/x");
	ck_assert_int_eq(ml_safe_dir_open(p, &t, NULL, 0, err, sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, "Permission denied"), "%s", err);
	ck_assert_int_eq(ml_safe_dir_open("rel/x", &t, NULL, 0, err,
					  sizeof(err)), -2);
	ml_cred_leave(&sv);
	_path(p, sizeof(p), "closed/x");
	ck_assert_int_ne(access(p, F_OK), 0);
}
END_TEST

/* mkfile REL MODE UID: a file of BASE/REL with that mode and owner. */
static void _mkfile(const char *rel, mode_t mode, uid_t uid)
{
	char p[512];
	int fd;

	_path(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x\n", 2), 2);
	close(fd);
	ck_assert_int_eq(chmod(p, mode), 0);
	ck_assert_int_eq(chown(p, uid, uid), 0);
}

/* open REL as T: the fd's result, the reason in err */
static int _user_open(const char *rel, const struct ml_trust *t, char *err,
		      size_t errlen)
{
	char p[512];
	int fd;

	_path(p, sizeof(p), rel);
	fd = ml_user_file_open(p, t, err, errlen);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd;
}

START_TEST(test_user_file_open)
{
	struct ml_cred u = { .uid = OTHER_UID, .gid = OTHER_GID, .ngids = 1,
			     .gids = { OTHER_GID } };
	struct ml_trust t = { .uid = OTHER_UID, .groups = &u };
	char p[512], q[512], err[512];
	struct ml_cred_saved sv;
	const uid_t evil = OTHER_UID + 1;

	if (geteuid() != 0)
		return;
	/* root's shared directory and file; the user's own; another
	 * user's directory and symlink; a directory everybody writes with
	 * and without the sticky bit */
	_mkfile("shared.txt", 0644, 0);
	_path(p, sizeof(p), "home");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chown(p, OTHER_UID, OTHER_GID), 0);
	_mkfile("home/m.txt", 0644, OTHER_UID);
	_mkfile("home/gw.txt", 0666, OTHER_UID);
	_path(p, sizeof(p), "home/ln");
	ck_assert_int_eq(symlink("m.txt", p), 0);
	ck_assert_int_eq(lchown(p, OTHER_UID, OTHER_GID), 0);
	_path(p, sizeof(p), "evil");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(chown(p, evil, evil), 0);
	_mkfile("evil/m.txt", 0644, evil);
	_path(p, sizeof(p), "elink");
	ck_assert_int_eq(symlink("home", p), 0);
	ck_assert_int_eq(lchown(p, evil, evil), 0);
	_path(p, sizeof(p), "open");
	ck_assert_int_eq(mkdir(p, 0777), 0);
	ck_assert_int_eq(chmod(p, 0777), 0);
	_mkfile("open/m.txt", 0644, 0);
	_path(p, sizeof(p), "tmp");
	ck_assert_int_eq(mkdir(p, 01777), 0);
	ck_assert_int_eq(chmod(p, 01777), 0);
	_mkfile("tmp/mine.txt", 0644, OTHER_UID);
	_mkfile("tmp/theirs.txt", 0644, evil);

	ck_assert_int_eq(ml_cred_enter(&u, &sv), 0);
	ck_assert_msg(!_user_open("shared.txt", &t, err, sizeof(err)), "%s",
		      err);
	ck_assert_msg(!_user_open("home/m.txt", &t, err, sizeof(err)), "%s",
		      err);
	ck_assert_msg(!_user_open("tmp/mine.txt", &t, err, sizeof(err)), "%s",
		      err);
	/* another user could redirect or change it */
	ck_assert_int_eq(_user_open("elink/m.txt", &t, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "elink is a symlink of another user"), "%s",
		      err);
	ck_assert_int_eq(_user_open("evil/m.txt", &t, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "evil is another user's directory"), "%s",
		      err);
	ck_assert_int_eq(_user_open("open/m.txt", &t, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "open is writable by anybody (no sticky"),
		      "%s", err);
	ck_assert_int_eq(_user_open("tmp/theirs.txt", &t, err, sizeof(err)),
			 -2);
	ck_assert_msg(strstr(err, "another user's file"), "%s", err);
	ck_assert_int_eq(_user_open("home/gw.txt", &t, err, sizeof(err)), -2);
	ck_assert_str_eq(err, "writable by anybody");
	ck_assert_int_eq(_user_open("home/ln", &t, err, sizeof(err)), -2);
	ck_assert_str_eq(err, "a symbolic link (not followed)");
	ck_assert_int_eq(_user_open("home/none", &t, err, sizeof(err)), -1);
	ck_assert_str_eq(err, strerror(ENOENT));
	ck_assert_int_eq(ml_user_file_open("rel/m.txt", &t, err, sizeof(err)),
			 -2);
	_path(q, sizeof(q), "home/");
	ck_assert_int_eq(ml_user_file_open(q, &t, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, "not a file name"), "%s", err);
	ml_cred_leave(&sv);
}
END_TEST

START_TEST(test_log_once)
{
	char key[32];

	ck_assert(ml_log_once("/run/topoml"));
	ck_assert(!ml_log_once("/run/topoml"));
	ck_assert(ml_log_once("/tmp/other"));
	/* A bounded table: past it, silence rather than a flood. */
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "/k%d", i);
		ml_log_once(key);
	}
	ck_assert(!ml_log_once("/k99"));
	ck_assert(!ml_log_once("/run/topoml"));
}
END_TEST

static int _fill(FILE *f, void *arg)
{
	return fputs(arg, f) < 0;
}

START_TEST(test_write_atomic)
{
	char p[512], secret[512], buf[64] = "";
	struct stat st;
	int dfd, fd;
	ssize_t n;

	dfd = open(base, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	/* A symlink planted at the name is replaced, its target kept. */
	_path(secret, sizeof(secret), "secret");
	fd = open(secret, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "root only\n", 10), 10);
	close(fd);
	_path(p, sizeof(p), "node.xml");
	ck_assert_int_eq(symlink(secret, p), 0);
	ck_assert_int_eq(ml_write_atomic(dfd, "node.xml", 0644, _fill,
					 "<xml/>\n"), 0);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(stat(secret, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	fd = open(secret, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_eq(n, 10);
	ck_assert_str_eq(buf, "root only\n");
	/* No temporary file is left, and bad names are refused. */
	ck_assert_int_eq(ml_write_atomic(dfd, "../x", 0644, _fill, "x"), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ml_write_atomic(dfd, "..", 0644, _fill, "x"), -1);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s' | "
			 "grep '^\\.')\"", base);
		ck_assert_int_eq(system(cmd), 0);
	}
	close(dfd);
}
END_TEST

static void _alarm(int sig)
{
	(void)sig;
}

START_TEST(test_open_owned)
{
	char p[512], q[512];
	struct sigaction sa = { .sa_handler = _alarm };
	int fd;

	/* A FIFO never blocks the opener. */
	_path(p, sizeof(p), "fifo");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	sigaction(SIGALRM, &sa, NULL);
	alarm(5);
	fd = ml_open_owned(AT_FDCWD, p, O_RDONLY, 0, geteuid());
	alarm(0);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(errno, EPERM);
	/* A symlink is not followed. */
	_path(q, sizeof(q), "file");
	fd = open(q, O_WRONLY | O_CREAT, 0600);
	close(fd);
	_path(p, sizeof(p), "sym");
	ck_assert_int_eq(symlink(q, p), 0);
	ck_assert_int_eq(ml_open_owned(AT_FDCWD, p, O_RDONLY, 0, geteuid()),
			 -1);
	ck_assert_int_eq(errno, ELOOP);
	/* Owned by someone else. */
	ck_assert_int_eq(ml_open_owned(AT_FDCWD, q, O_RDONLY, 0,
				       geteuid() + 1), -1);
	ck_assert_int_eq(errno, EPERM);
	/* The right file. */
	fd = ml_open_owned(AT_FDCWD, q, O_RDWR, 0, geteuid());
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}
END_TEST

struct thr {
	const char *path;
	int open_errno;		/* errno of open as the user, 0 = opened */
	uid_t fsuid_after;
};

static void *_as_user(void *arg)
{
	struct thr *t = arg;
	struct ml_cred u = { .uid = OTHER_UID, .gid = OTHER_GID, .ngids = 1,
			     .gids = { OTHER_GID } };
	struct ml_cred_saved s;
	int fd;

	if (ml_cred_enter(&u, &s) < 0) {
		t->open_errno = -1;
		return NULL;
	}
	fd = open(t->path, O_RDONLY);
	t->open_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	ml_cred_leave(&s);
	fd = open(t->path, O_RDONLY);	/* root again */
	t->fsuid_after = fd >= 0 ? 0 : 1;
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(test_cred_thread)
{
	char p[512];
	struct thr t = { .path = p };
	pthread_t th;
	int fd;

	if (geteuid() != 0)
		return;
	_path(p, sizeof(p), "rootonly");
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(pthread_create(&th, NULL, _as_user, &t), 0);
	pthread_join(th, NULL);
	/* As the user the root-only file is refused, CAP_DAC_OVERRIDE
	 * included; root again afterwards. */
	ck_assert_int_eq(t.open_errno, EACCES);
	ck_assert_int_eq(t.fsuid_after, 0);
	/* The other threads (here: this one) never changed. */
	fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
}
END_TEST

START_TEST(test_plain_name)
{
	ck_assert(ml_plain_name("n1.model"));
	ck_assert(!ml_plain_name(""));
	ck_assert(!ml_plain_name("."));
	ck_assert(!ml_plain_name(".."));
	ck_assert(!ml_plain_name("../n1"));
	ck_assert(!ml_plain_name("a/b"));
	ck_assert(!ml_plain_name(NULL));
}
END_TEST

START_TEST(test_node_name)
{
	char longname[ML_NODE_NAME_MAX + 2];

	ck_assert(ml_node_name_ok("n1"));
	ck_assert(ml_node_name_ok("gpu-node_07.rack3"));
	ck_assert(!ml_node_name_ok(NULL));
	ck_assert(!ml_node_name_ok(""));
	ck_assert(!ml_node_name_ok(".."));
	ck_assert(!ml_node_name_ok(".hidden"));
	ck_assert(!ml_node_name_ok("../../etc/shadow"));
	ck_assert(!ml_node_name_ok("n1/../x"));
	ck_assert(!ml_node_name_ok("n 1"));
	ck_assert(!ml_node_name_ok("n1\n"));
	ck_assert(!ml_node_name_ok("n\xc3\xa9"));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert(!ml_node_name_ok(longname));
	longname[ML_NODE_NAME_MAX] = '\0';
	ck_assert(ml_node_name_ok(longname));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secure");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, test_root_dir_create);
	tcase_add_test(tc, test_root_dir_refuses);
	tcase_add_test(tc, test_root_dir_links);
	tcase_add_test(tc, test_safe_dir_user);
	tcase_add_test(tc, test_user_file_open);
	tcase_add_test(tc, test_log_once);
	tcase_add_test(tc, test_write_atomic);
	tcase_add_test(tc, test_open_owned);
	tcase_add_test(tc, test_cred_thread);
	tcase_add_test(tc, test_plain_name);
	tcase_add_test(tc, test_node_name);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
