/*
 * What the job's user, or another user, can do to --ml-ckpt's root side
 * (more in tests/ckpt/check_ckpt.c, plugin_hostile_files).
 *
 * The page's lock is a flock on the job user's own file: the
 * user can hold it for ever (a process of theirs, in this job or another
 * one on the node).  slurmstepd (user_init, the root timer thread, the
 * exit hook) must not wait on it: a hung exit hook leaves the job
 * completing and its node out of use.  Against spank/ckpt/ with the
 * stubbed SPANK handle of tests/lib/spank_stub.c, as tests/ckpt/check_ckpt.c.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "ckpt.h"
#include "topoml_ckpt_page.h"
#include "../lib/spank_stub.h"

static char _tmp[PATH_MAX];

static double _now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A process of the user's that takes the page's lock and keeps it. */
static pid_t _hold_lock(const char *page)
{
	int p[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(page, O_RDWR);

		if (fd < 0 || flock(fd, LOCK_EX) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

START_TEST(page_lock_held_by_user)
{
	struct topoml_ckpt_page pg;
	struct ml_ckpt_opts o;
	char err[512], arg[PATH_MAX + 64], cache[PATH_MAX + 16];
	char page[PATH_MAX];
	struct stat st;
	double t0;
	pid_t holder;
	int fd, rc;

	snprintf(_tmp, sizeof(_tmp), "%s/ckpt-lock.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(_tmp));
	chmod(_tmp, 0755);
	setenv("TOPOML_CKPT_SIGNALS", "0", 1);
	ml_ckpt_restart_lookup = spank_stub_restart;
	snprintf(cache, sizeof(cache), "%s/cache", _tmp);
	snprintf(arg, sizeof(arg), "%s/ck,lead=0,interval=1", _tmp);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(ml_ckpt_post_opt(NULL, &o, cache, err, sizeof(err)),
			 0);
	ck_assert_msg(ml_ckpt_user_init(NULL, &o, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(spank_getenv(NULL, "TOPOML_CKPT_PAGE", page,
				      sizeof(page)), ESPANK_SUCCESS);

	/* The user holds the lock; interval=1: the root timer raises an
	 * event meanwhile, and the exit hook stops it and leaves. */
	holder = _hold_lock(page);
	sleep(2);
	t0 = _now();
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	ck_assert_msg(_now() - t0 < 10, "exit hook took %.1f s",
		      _now() - t0);
	ck_assert_int_ge(fd = open(page, O_RDONLY), 0);
	ck_assert_int_eq(pread(fd, &pg, sizeof(pg), 0), (ssize_t)sizeof(pg));
	close(fd);
	ck_assert_msg(pg.gen >= 1 && (pg.reason & TOPOML_CKPT_R_INTERVAL),
		      "interval event not raised under the user's lock "
		      "(gen %llu reason %u)", (unsigned long long)pg.gen,
		      pg.reason);

	/* The next step's user_init: an error for the job's output, not a
	 * slurmstepd that waits for ever before its tasks. */
	t0 = _now();
	rc = ml_ckpt_user_init(NULL, &o, err, sizeof(err));
	ck_assert_msg(_now() - t0 < 10, "user_init took %.1f s", _now() - t0);
	ck_assert_int_eq(rc, -1);
	ck_assert_msg(strstr(err, "locked"), "%s", err);

	/* Let go: the page works again, and the last one out removes it. */
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	ck_assert_msg(ml_ckpt_user_init(NULL, &o, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	ck_assert_int_eq(stat(page, &st), -1);

	snprintf(arg, sizeof(arg), "rm -rf '%s'", _tmp);
	ck_assert_int_eq(system(arg), 0);
}
END_TEST

/*
 * The job resumes from DIR/latest (TOPOML_RESUME): in a world-writable
 * place (/tmp, a scratch root) another user can make DIR, or the
 * directory above it, before the job does (job ids are easy to guess)
 * and plant a checkpoint there.  Refused, with the reason; the user's
 * own directories and a group's project directory are fine.  Root only:
 * it needs a directory of another uid.
 */
#define OTHER_UID 4242

static int _init_in(const char *dir, char *err, size_t errlen)
{
	struct ml_ckpt_opts o;
	char arg[PATH_MAX + 64];
	int rc;

	snprintf(arg, sizeof(arg), "%s,lead=0", dir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, errlen), 0);
	snprintf(arg, sizeof(arg), "%s/cache", _tmp);
	ck_assert_int_eq(ml_ckpt_post_opt(NULL, &o, arg, err, errlen), 0);
	rc = ml_ckpt_user_init(NULL, &o, err, errlen);
	if (!rc)
		ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	return rc;
}

static void _mkdir_as(const char *rel, mode_t mode, uid_t uid)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", _tmp, rel);
	ck_assert_int_eq(mkdir(p, mode), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	ck_assert_int_eq(chown(p, uid, uid), 0);
}

START_TEST(dir_of_another_user)
{
	char err[512], dir[PATH_MAX + 64], p[PATH_MAX + 128];
	char resume[PATH_MAX];

	if (geteuid() != 0)
		return;
	snprintf(_tmp, sizeof(_tmp), "%s/ckpt-user.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(_tmp));
	chmod(_tmp, 0755);
	setenv("TOPOML_CKPT_SIGNALS", "0", 1);
	ml_ckpt_restart_lookup = spank_stub_restart;
	spank_stub_env_clear();
	_mkdir_as("pub", 01777, 0);

	/* The job's own directory, made ahead by another user, with a
	 * checkpoint of theirs as the latest. */
	_mkdir_as("pub/ck", 0755, 0);
	_mkdir_as("pub/ck/4343", 0777, OTHER_UID);
	_mkdir_as("pub/ck/4343/step-000000000005", 0755, OTHER_UID);
	snprintf(p, sizeof(p), "%s/pub/ck/4343/latest", _tmp);
	ck_assert_int_eq(symlink("step-000000000005", p), 0);
	snprintf(dir, sizeof(dir), "%s/pub/ck", _tmp);
	ck_assert_msg(_init_in(dir, err, sizeof(err)) == -1,
		      "resumes from another user's checkpoint: %s",
		      spank_getenv(NULL, "TOPOML_RESUME", resume,
				   sizeof(resume)) ? "?" : resume);
	ck_assert_msg(strstr(err, "another user's directory"), "%s", err);

	/* The directory above it, another user's in a world-writable
	 * place: they could swap the job's directory later. */
	_mkdir_as("pub/theirs", 0755, OTHER_UID);
	snprintf(dir, sizeof(dir), "%s/pub/theirs", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "in a directory anybody can write"), "%s",
		      err);

	/* World-writable without the sticky bit: anybody renames. */
	_mkdir_as("open", 0777, 0);
	snprintf(dir, sizeof(dir), "%s/open/ck", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no sticky bit"), "%s", err);

	/* The job's directory writable by anybody. */
	_mkdir_as("loose", 0755, 0);
	_mkdir_as("loose/4343", 0777, 0);
	snprintf(dir, sizeof(dir), "%s/loose", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "writable by anybody"), "%s", err);

	/* A directory of another owner on the way: its owner could swap
	 * what lies below (a project's group directory is fine when root
	 * owns it: symlink_on_the_way). */
	_mkdir_as("proj", 02775, OTHER_UID);
	snprintf(dir, sizeof(dir), "%s/proj/ck", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "proj is another user's directory (uid "
			     "4242)"), "%s", err);

	/* Fine: made by the job in /tmp-like pub, through a symlink of the
	 * user's. */
	snprintf(dir, sizeof(dir), "%s/pub/mine", _tmp);
	ck_assert_msg(_init_in(dir, err, sizeof(err)) == 0, "%s", err);
	snprintf(p, sizeof(p), "%s/link", _tmp);
	ck_assert_int_eq(symlink("pub/mine", p), 0);
	ck_assert_msg(_init_in(p, err, sizeof(err)) == 0, "%s", err);

	snprintf(p, sizeof(p), "rm -rf '%s'", _tmp);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

/*
 * Issue 28: a path checked only as realpath(DIR) never shows who owns
 * the links and directories on the way.  Here the job's user is VICTIM
 * (not root), OTHER_UID the attacker; each refusal names the component,
 * and nothing of the victim's lands in the attacker's directory.
 */
#define VICTIM 4545

static void _mkdir_own(const char *rel, mode_t mode, uid_t uid, gid_t gid)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", _tmp, rel);
	ck_assert_int_eq(mkdir(p, mode), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	ck_assert_int_eq(chown(p, uid, gid), 0);
}

static void _symlink_as(const char *target, const char *rel, uid_t uid)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", _tmp, rel);
	ck_assert_int_eq(symlink(target, p), 0);
	ck_assert_int_eq(lchown(p, uid, uid), 0);
}

/* REL (under _tmp) holds nothing. */
static void _empty(const char *rel)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s/%s')\"", _tmp, rel);
	ck_assert_msg(system(cmd) == 0, "something landed in %s", rel);
}

START_TEST(symlink_on_the_way)
{
	char err[1024], dir[PATH_MAX + 64], loot[PATH_MAX + 64], want[PATH_MAX];
	char real[PATH_MAX];
	const char *got;

	if (geteuid() != 0)
		return;
	snprintf(_tmp, sizeof(_tmp), "%s/ckpt-walk.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(_tmp));
	chmod(_tmp, 0755);
	setenv("TOPOML_CKPT_SIGNALS", "0", 1);
	ml_ckpt_restart_lookup = spank_stub_restart;
	spank_stub_env_clear();
	spank_stub.uid = VICTIM;
	spank_stub.gid = VICTIM;
	_mkdir_own("att", 0755, OTHER_UID, OTHER_UID);
	_mkdir_own("att/loot", 01777, OTHER_UID, OTHER_UID);
	_mkdir_own("v", 0755, VICTIM, VICTIM);
	snprintf(loot, sizeof(loot), "%s/att/loot", _tmp);

	/* The attacker's link in a world-writable directory without the
	 * sticky bit (fs.protected_symlinks does not cover it). */
	_mkdir_own("ww", 0777, 0, 0);
	_symlink_as(loot, "ww/ck", OTHER_UID);
	snprintf(dir, sizeof(dir), "%s/ww/ck", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/ww is writable by anybody (no sticky "
			     "bit)"), "%s", err);
	_empty("att/loot");

	/* The same link in a sticky one (/tmp): not root's, not the
	 * victim's, so not followed. */
	_mkdir_own("st", 01777, 0, 0);
	_symlink_as(loot, "st/ck", OTHER_UID);
	snprintf(dir, sizeof(dir), "%s/st/ck", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/st/ck is a symlink of another user (uid "
			     "4242)"), "%s", err);
	_empty("att/loot");

	/* Below a directory of the attacker's (who could rename what the
	 * victim makes there), even a sticky one. */
	_mkdir_own("att/pub", 01777, OTHER_UID, OTHER_UID);
	snprintf(dir, sizeof(dir), "%s/att/pub/ck", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/att is another user's directory (uid "
			     "4242)"), "%s", err);
	_empty("att/pub");

	/* Writable by a group that is not the job's. */
	_mkdir_own("grp", 0775, 0, OTHER_UID);
	snprintf(dir, sizeof(dir), "%s/grp/ck", _tmp);
	ck_assert_int_eq(_init_in(dir, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/grp is writable by group 4242 (no sticky "
			     "bit)"), "%s", err);
	_empty("grp");

	/* Fine: the victim's own relative link with "..", in the sticky
	 * directory; the job gets the path without the link. */
	_symlink_as("../v/ck", "st/mine", VICTIM);
	snprintf(dir, sizeof(dir), "%s/st/mine", _tmp);
	ck_assert_msg(_init_in(dir, err, sizeof(err)) == 0, "%s", err);
	snprintf(want, sizeof(want), "%s/v/ck/4343", _tmp);
	got = spank_stub_env("TOPOML_CKPT_DIR");
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	ck_assert_ptr_nonnull(realpath(got, real));
	ck_assert_str_eq(real, got);
	{
		struct stat st;

		ck_assert_int_eq(stat(want, &st), 0);
		ck_assert_int_eq(st.st_uid, VICTIM);
	}

	/* Fine: a project directory root owns, writable by the job's
	 * group. */
	_mkdir_own("proj", 02775, 0, VICTIM);
	snprintf(dir, sizeof(dir), "%s/proj/ck", _tmp);
	ck_assert_msg(_init_in(dir, err, sizeof(err)) == 0, "%s", err);

	spank_stub.uid = -1;
	spank_stub.gid = -1;
	snprintf(dir, sizeof(dir), "rm -rf '%s'", _tmp);
	ck_assert_int_eq(system(dir), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ckpt_user");
	TCase *t = tcase_create("page");
	SRunner *r;
	int failed;

	/* Job 4343, step 0, not an array, never restarted. */
	spank_stub.job_id = 4343;
	spank_stub.step_id = 0;

	/* A hook that waits for ever: the timeout turns it into an error. */
	tcase_set_timeout(t, 60);
	tcase_add_test(t, page_lock_held_by_user);
	tcase_add_test(t, dir_of_another_user);
	tcase_add_test(t, symlink_on_the_way);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
