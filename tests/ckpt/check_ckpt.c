/*
 * Unit tests of the checkpoint hooks: the --ml-ckpt parser and the
 * plugin's user_init/exit (spank/ckpt/, against the stubbed SPANK handle
 * of tests/lib/spank_stub.c), the hook library's decision rule and atomic
 * commit, and a kill -9 torture of the commit.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "ckpt.h"
#include "ckpt_layout.h"
#include "../../contrib/ckpt/topoml_ckpt.h"
#include "topoml_ckpt_page.h"
#include "../lib/spank_stub.h"

/* ---- helpers --------------------------------------------------------- */
static char _tmpdir[PATH_MAX];

static void _mktmp(void)
{
	snprintf(_tmpdir, sizeof(_tmpdir), "%s/ckpt-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(_tmpdir));
}

static void _rmtmp(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", _tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", _tmpdir);
}

static void _clear_env(void)
{
	unsetenv("TOPOML_CKPT_DIR");
	unsetenv("TOPOML_CKPT_EVERY");
	unsetenv("TOPOML_CKPT_INTERVAL");
	unsetenv("TOPOML_CKPT_KEEP");
	unsetenv("TOPOML_CKPT_PAGE");
	unsetenv("TOPOML_RESTART_COUNT");
	setenv("TOPOML_CKPT_SIGNALS", "0", 1);
}

static void _write_file(const char *dir, const char *name, const char *s)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(s, f);
	fclose(f);
}

static int _count_steps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "step-", 5))
			n++;
	closedir(d);
	return n;
}

/* ---- parser ---------------------------------------------------------- */
START_TEST(parse_full)
{
	struct ml_ckpt_opts o;
	char err[256];

	ck_assert_int_eq(ml_ckpt_parse("/scratch/ck,every=100,interval=30m,"
				       "keep=2,lead=90", &o, err, sizeof(err)),
			 0);
	ck_assert(o.set);
	ck_assert_str_eq(o.dir, "/scratch/ck");
	ck_assert_int_eq(o.every, 100);
	ck_assert_int_eq(o.interval, 1800);
	ck_assert_int_eq(o.keep, 2);
	ck_assert_int_eq(o.lead, 90);
}
END_TEST

START_TEST(parse_defaults)
{
	struct ml_ckpt_opts o;
	char err[256];

	ck_assert_int_eq(ml_ckpt_parse("ckpt", &o, err, sizeof(err)), 0);
	ck_assert_str_eq(o.dir, "ckpt");
	ck_assert_int_eq(o.every, 0);
	ck_assert_int_eq(o.interval, 0);
	ck_assert_int_eq(o.keep, 3);
	ck_assert_int_eq(o.lead, 60);
	ck_assert_int_eq(ml_ckpt_parse("lead=2m,dir=/a/%j", &o, err,
				       sizeof(err)), 0);
	ck_assert_str_eq(o.dir, "/a/%j");
	ck_assert_int_eq(o.lead, 120);
	/* A '=' inside a path is part of DIR, not a key. */
	ck_assert_int_eq(ml_ckpt_parse("/scratch/a=b,every=5", &o, err,
				       sizeof(err)), 0);
	ck_assert_str_eq(o.dir, "/scratch/a=b");
	ck_assert_int_eq(o.every, 5);
	ck_assert_int_eq(o.resume, ML_CKPT_RESUME_OWN);
	ck_assert_int_eq(ml_ckpt_parse("/a,resume=any", &o, err,
				       sizeof(err)), 0);
	ck_assert_int_eq(o.resume, ML_CKPT_RESUME_ANY);
	ck_assert_int_eq(ml_ckpt_parse("/a,resume=123,every=2", &o, err,
				       sizeof(err)), 0);
	ck_assert_int_eq(o.resume, ML_CKPT_RESUME_JOB);
	ck_assert_int_eq(o.resume_job, 123);
	ck_assert_int_eq(o.every, 2);
	ck_assert_int_eq(ml_ckpt_parse("/a,resume=own", &o, err,
				       sizeof(err)), 0);
	ck_assert_int_eq(o.resume, ML_CKPT_RESUME_OWN);
}
END_TEST

static const struct {
	const char *arg, *msg;
} bad_args[] = {
	{ "", "empty value" },
	{ "every=5", "no DIR" },
	{ "/a,/b", "DIR given twice" },
	{ "/a,every=x", "every='x'" },
	{ "/a,every=-1", "every='-1'" },
	{ "/a,every=10,every=20", "'every' given twice" },
	{ "/a,keep=1000001", "keep='1000001'" },
	{ "/a,lead=10d", "lead='10d'" },
	{ "/a,interval=5x", "interval='5x'" },
	{ "/a,foo=1", "unknown key 'foo'" },
	{ "dir=", "empty DIR" },
	{ "/a,every=99999999999999999999999", "every=" },
	{ "/a\nb,every=5", "control character" },
	{ "/a\tb", "control character" },
	{ "/a,resume=x", "resume='x'" },
	{ "/a,resume=0", "resume='0'" },
	{ "/a,resume=4294967295", "resume='4294967295'" },
	{ "/a,resume=any,resume=own", "'resume' given twice" },
};

START_TEST(parse_errors)
{
	struct ml_ckpt_opts o;
	char err[256];

	err[0] = '\0';
	ck_assert_int_eq(ml_ckpt_parse(bad_args[_i].arg, &o, err,
				       sizeof(err)), -1);
	ck_assert_msg(strstr(err, bad_args[_i].msg), "'%s': got '%s'",
		      bad_args[_i].arg, err);
	ck_assert(!o.set);
}
END_TEST

/* ---- plugin: local check, user_init, exit ---------------------------- */
START_TEST(plugin_local_check)
{
	struct ml_ckpt_opts o;
	char err[256], arg[PATH_MAX + 64];

	_mktmp();
	snprintf(arg, sizeof(arg), "%s/new/deeper,every=5", _tmpdir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(ml_ckpt_local(NULL, &o), 0);
	snprintf(arg, sizeof(arg), "%s/f/x", _tmpdir);
	_write_file(_tmpdir, "f", "not a dir");
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(ml_ckpt_local(NULL, &o), -1);
	if (geteuid() != 0) {
		snprintf(arg, sizeof(arg), "%s/ro", _tmpdir);
		ck_assert_int_eq(mkdir(arg, 0555), 0);
		strcat(arg, "/sub");
		ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
		ck_assert_int_eq(ml_ckpt_local(NULL, &o), -1);
	}
	_rmtmp();
}
END_TEST

static const char *_stub_env(const char *v)
{
	const char *s = spank_stub_env(v);

	ck_assert_msg(s != NULL, "%s not exported", v);
	return s;
}

START_TEST(plugin_user_init)
{
	struct ml_ckpt_opts o;
	char err[256], arg[PATH_MAX + 64], want[PATH_MAX + 64];
	struct stat st;
	char page[PATH_MAX], cache[PATH_MAX], udir[PATH_MAX + 64];
	int fd;

	_mktmp();
	spank_stub_env_clear();
	/* The job's environment is the user's: never the restart count. */
	spank_setenv(NULL, "SLURM_RESTART_COUNT", "9", 1);
	spank_setenv(NULL, "SLURMD_NODENAME", "n1", 1);
	ml_ckpt_restart_lookup = spank_stub_restart;
	spank_stub.restarts = 2;
	snprintf(cache, sizeof(cache), "%s/cache", _tmpdir);
	snprintf(arg, sizeof(arg), "%s/ck,every=10,keep=4,lead=0,interval=0",
		 _tmpdir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	/* No page directory (post_opt not run or failed): an error. */
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "page directory"), "%s", err);
	ck_assert_int_eq(ml_ckpt_post_opt(NULL, &o, cache, err, sizeof(err)),
			 0);
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/ck/4242", _tmpdir);
	ck_assert_str_eq(_stub_env("TOPOML_CKPT_DIR"), want);
	ck_assert_int_eq(stat(want, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_str_eq(_stub_env("TOPOML_CKPT_EVERY"), "10");
	ck_assert_str_eq(_stub_env("TOPOML_CKPT_KEEP"), "4");
	ck_assert_str_eq(_stub_env("TOPOML_RESTART_COUNT"), "2");
	ck_assert_str_eq(_stub_env("TOPOML_RESUME"), "");
	ck_assert_str_eq(_stub_env("TOPOML_RESUME_WORLD_SIZE"), "");
	snprintf(page, sizeof(page), "%s", _stub_env("TOPOML_CKPT_PAGE"));
	/* The page is in the user's own 0700 directory of cache_dir. */
	snprintf(udir, sizeof(udir), "%s/ckpt/%u/", cache, (unsigned)getuid());
	ck_assert_msg(!strncmp(page, udir, strlen(udir)), "%s", page);
	ck_assert_int_eq(stat(udir, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(st.st_uid, getuid());
	ck_assert_int_eq(stat(page, &st), 0);
	ck_assert_int_eq(st.st_uid, getuid());
	ck_assert_int_eq(st.st_size, TOPOML_CKPT_PAGE_SIZE);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* The epoch of this run fences older ones. */
	snprintf(arg, sizeof(arg), "%s/epoch", want);
	ck_assert_int_ge(fd = open(arg, O_RDONLY), 0);
	ck_assert_int_eq(read(fd, err, 2), 2);
	close(fd);
	ck_assert_int_eq(err[0], '2');
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	ck_assert_int_eq(stat(page, &st), -1);

	/*
	 * A page left by a slurmstepd killed without its exit hook, with a
	 * stop warning in it: the next run must not inherit the warning.
	 */
	{
		struct topoml_ckpt_page stale;
		pid_t dead = fork();

		if (dead == 0)
			_exit(0);
		waitpid(dead, NULL, 0);
		memset(&stale, 0, sizeof(stale));
		stale.magic = TOPOML_CKPT_PAGE_MAGIC;
		stale.version = TOPOML_CKPT_PAGE_VERSION;
		stale.reason = TOPOML_CKPT_R_LIMIT;
		stale.gen = 5;
		stale.nstepd = 1;
		stale.stepd[0] = dead;
		ck_assert_int_ge(fd = open(page, O_RDWR | O_CREAT, 0600), 0);
		ck_assert_int_eq(ftruncate(fd, TOPOML_CKPT_PAGE_SIZE), 0);
		ck_assert_int_eq(pwrite(fd, &stale, sizeof(stale), 0),
				 (ssize_t)sizeof(stale));
		ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
		ck_assert_str_eq(_stub_env("TOPOML_CKPT_PAGE"), page);
		ck_assert_int_eq(pread(fd, &stale, sizeof(stale), 0),
				 (ssize_t)sizeof(stale));
		ck_assert_int_eq(stale.reason, 0);
		ck_assert_int_eq(stale.gen, 0);
		ck_assert_int_eq(stale.nstepd, 1);
		ck_assert_int_eq(stale.stepd[0], getpid());
		close(fd);
		ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
		ck_assert_int_eq(stat(page, &st), -1);
	}

	/* Second start with a checkpoint: TOPOML_RESUME names it. */
	snprintf(arg, sizeof(arg), "%s/step-000000000030", want);
	ck_assert_int_eq(mkdir(arg, 0755), 0);
	snprintf(arg, sizeof(arg), "%s/latest", want);
	ck_assert_int_eq(symlink("step-000000000030", arg), 0);
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	snprintf(arg, sizeof(arg), "%s/step-000000000030", want);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME"), arg);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME_WORLD_SIZE"), "");
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	/* The Python helper's record of the world size: exported; junk is
	 * no size. */
	snprintf(arg, sizeof(arg), "%s/step-000000000030/.topoml-meta", want);
	ck_assert_int_ge(fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
	ck_assert_int_eq(write(fd, "world_size=6\n", 13), 13);
	close(fd);
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME_WORLD_SIZE"), "6");
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	ck_assert_int_ge(fd = open(arg, O_WRONLY | O_TRUNC), 0);
	ck_assert_int_eq(write(fd, "world_size=6x\n", 14), 14);
	close(fd);
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME_WORLD_SIZE"), "");
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	/* A FIFO planted there does not block the read. */
	ck_assert_int_eq(unlink(arg), 0);
	ck_assert_int_eq(mkfifo(arg, 0644), 0);
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME_WORLD_SIZE"), "");
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	ck_assert_int_eq(unlink(arg), 0);

	/* Array task and %-patterns. */
	spank_stub.array_job = 77;
	spank_stub.array_task = 3;
	snprintf(arg, sizeof(arg), "%s/ar", _tmpdir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	o.lead = 0;
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/ar/77_3", _tmpdir);
	ck_assert_str_eq(_stub_env("TOPOML_CKPT_DIR"), want);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	snprintf(arg, sizeof(arg), "%s/p/%%A-%%a-%%j%%%%", _tmpdir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	o.lead = 0;
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/p/77-3-4242%%", _tmpdir);
	ck_assert_str_eq(_stub_env("TOPOML_CKPT_DIR"), want);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	snprintf(arg, sizeof(arg), "%s/p/%%q", _tmpdir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), -1);
	spank_stub.array_job = 0;
	spank_stub.array_task = NO_VAL;
	_rmtmp();
}
END_TEST

/* _epoch_is CKDIR TEXT: DIR/epoch holds TEXT. */
static void _epoch_is(const char *dir, const char *text)
{
	char path[PATH_MAX + 16], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/epoch", dir);
	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, text);
}

static char _cache[PATH_MAX];

/* _start JOB RESTARTS ARG: post_opt and user_init of job JOB's run
 * (restart RESTARTS) on ARG. */
static int _start(uint32_t job, long restarts, const char *arg, char *err,
		  size_t errlen)
{
	struct ml_ckpt_opts o;

	spank_stub.job_id = job;
	spank_stub.restarts = restarts;
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, errlen), 0);
	o.lead = 0;
	ck_assert_int_eq(ml_ckpt_post_opt(NULL, &o, _cache, err, errlen), 0);
	if (ml_ckpt_user_init(NULL, &o, err, errlen))
		return -1;
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	return 0;
}

/*
 * A DIR the jobs of a user share (no %j): a job resumes the run of
 * another job only when the user names it (issue 29 item 5); a requeue
 * (same job id, more restarts) resumes its own.  DIR/epoch records whose
 * run DIR holds.
 */
START_TEST(plugin_resume_owner)
{
	struct ml_ckpt_opts o = { 0 };
	char err[512], arg[PATH_MAX + 64], dir[PATH_MAX + 64];
	char step[PATH_MAX + 64], want[PATH_MAX + 256];

	_mktmp();
	spank_stub_env_clear();
	ml_ckpt_restart_lookup = spank_stub_restart;
	snprintf(_cache, sizeof(_cache), "%s/cache", _tmpdir);
	snprintf(dir, sizeof(dir), "%s/shared%%", _tmpdir);
	snprintf(step, sizeof(step), "%s/step-000000000040", dir);
	snprintf(arg, sizeof(arg), "%s/shared%%%%,every=10", _tmpdir);

	/* Job 100 starts afresh and leaves a checkpoint. */
	ck_assert_int_eq(_start(100, 0, arg, err, sizeof(err)), 0);
	ck_assert_str_eq(ml_ckpt_resume_note(), "");
	ck_assert_str_eq(_stub_env("TOPOML_RESUME"), "");
	_epoch_is(dir, "0 100\n");
	ck_assert_int_eq(mkdir(step, 0755), 0);
	snprintf(want, sizeof(want), "%s/latest", dir);
	ck_assert_int_eq(symlink("step-000000000040", want), 0);
	/* Its requeue resumes it, and says so. */
	ck_assert_int_eq(_start(100, 1, arg, err, sizeof(err)), 0);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME"), step);
	snprintf(want, sizeof(want), "resuming from %s (step 40): the run of "
		 "this job, 100", step);
	ck_assert_str_eq(ml_ckpt_resume_note(), want);
	_epoch_is(dir, "1 100\n");

	/* Job 200, resubmitted: refused, DIR's record unchanged. */
	ck_assert_int_eq(_start(200, 0, arg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s holds the run of job 100 (latest "
		 "checkpoint: step 40); a job resumes only its own run: add "
		 "resume=100 to --ml-ckpt", dir);
	ck_assert_msg(strstr(err, want), "%s", err);
	_epoch_is(dir, "1 100\n");
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	/* resume=own is the default; resume= another job: refused too. */
	snprintf(want, sizeof(want), "%s,resume=own", arg);
	ck_assert_int_eq(_start(200, 0, want, err, sizeof(err)), -1);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	snprintf(want, sizeof(want), "%s,resume=99", arg);
	ck_assert_int_eq(_start(200, 0, want, err, sizeof(err)), -1);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	/* resume=100: job 200 takes the run over (its own restart count). */
	snprintf(want, sizeof(want), "%s,resume=100", arg);
	ck_assert_int_eq(_start(200, 0, want, err, sizeof(err)), 0);
	ck_assert_str_eq(_stub_env("TOPOML_RESUME"), step);
	snprintf(want, sizeof(want), "resuming from %s (step 40): the run of "
		 "job 100, as resume=100 asks", step);
	ck_assert_str_eq(ml_ckpt_resume_note(), want);
	_epoch_is(dir, "0 200\n");
	/* resume=any: whoever's run. */
	snprintf(want, sizeof(want), "%s,resume=any", arg);
	ck_assert_int_eq(_start(300, 0, want, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "resuming from %s (step 40): the run of "
		 "job 200, as resume=any asks", step);
	ck_assert_str_eq(ml_ckpt_resume_note(), want);
	_epoch_is(dir, "0 300\n");

	/* A directory of an older version (no job recorded): another's. */
	_write_file(dir, "epoch", "3\n");
	ck_assert_int_eq(_start(300, 0, arg, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds the run of a job not recorded"),
		      "%s", err);
	ck_assert_msg(strstr(err, "add resume=any"), "%s", err);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	/* The helpers raise the count and keep the job recorded. */
	_write_file(dir, "epoch", "1 300\n");
	ck_assert_int_eq(topoml_ckpt__write_epoch(dir, 2), 0);
	_epoch_is(dir, "2 300\n");
	ck_assert_int_eq(topoml_ckpt__read_epoch(dir, geteuid()), 2);

	/* No checkpoint: a new job takes DIR, whoever's it was. */
	snprintf(want, sizeof(want), "%s/latest", dir);
	ck_assert_int_eq(unlink(want), 0);
	ck_assert_int_eq(_start(400, 0, arg, err, sizeof(err)), 0);
	ck_assert_str_eq(ml_ckpt_resume_note(), "");
	_epoch_is(dir, "0 400\n");
	spank_stub.job_id = 4242;
	spank_stub.restarts = 0;
	_rmtmp();
}
END_TEST

/*
 * What a user can do to the files the plugin's root threads touch: a FIFO
 * or symlink as DIR/epoch neither blocks nor redirects the read; a page
 * truncated under slurmstepd's mapping stops the timer, not the process;
 * a squatted or loosened page directory is taken back; a cache_dir owned
 * by somebody else is refused.
 */
START_TEST(plugin_hostile_files)
{
	struct ml_ckpt_opts o;
	char err[256], arg[PATH_MAX + 64], cache[PATH_MAX], p2[PATH_MAX + 64];
	char page[PATH_MAX];
	struct stat st;
	time_t t0;
	int fd;

	_mktmp();
	spank_stub_env_clear();
	ml_ckpt_restart_lookup = spank_stub_restart;
	spank_stub.restarts = 0;
	snprintf(cache, sizeof(cache), "%s/cache", _tmpdir);

	/* epoch: a FIFO (no writer: a blocking open would hang) ... */
	snprintf(arg, sizeof(arg), "%s/epoch", _tmpdir);
	ck_assert_int_eq(mkfifo(arg, 0600), 0);
	t0 = time(NULL);
	ck_assert_int_eq(topoml_ckpt__read_epoch(_tmpdir, geteuid()), -1);
	ck_assert_int_le(time(NULL) - t0, 1);
	unlink(arg);
	/* ... a symlink to a file with a number in it ... */
	snprintf(p2, sizeof(p2), "%s/secret", _tmpdir);
	_write_file(_tmpdir, "secret", "424242\n");
	ck_assert_int_eq(symlink(p2, arg), 0);
	ck_assert_int_eq(topoml_ckpt__read_epoch(_tmpdir, geteuid()), -1);
	unlink(arg);
	/* ... a file of another owner; and the real thing. */
	_write_file(_tmpdir, "epoch", "7\n");
	ck_assert_int_eq(topoml_ckpt__read_epoch(_tmpdir, geteuid() + 1), -1);
	ck_assert_int_eq(topoml_ckpt__read_epoch(_tmpdir, geteuid()), 7);

	/* The page directory: loosened (as if squatted) is taken back. */
	snprintf(arg, sizeof(arg), "%s/ckpt/%u", cache, (unsigned)getuid());
	snprintf(p2, sizeof(p2), "mkdir -p '%s' && chmod 0777 '%s'", arg,
		 arg);
	ck_assert_int_eq(system(p2), 0);
	snprintf(arg, sizeof(arg), "%s/ck,every=10,lead=0,interval=1",
		 _tmpdir);
	ck_assert_int_eq(ml_ckpt_parse(arg, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(ml_ckpt_post_opt(NULL, &o, cache, err, sizeof(err)),
			 0);
	snprintf(arg, sizeof(arg), "%s/ckpt/%u", cache, (unsigned)getuid());
	ck_assert_int_eq(stat(arg, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);

	/* A page truncated under the timer: the process lives on. */
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	snprintf(page, sizeof(page), "%s", _stub_env("TOPOML_CKPT_PAGE"));
	ck_assert_int_eq(truncate(page, 0), 0);
	sleep(2);	/* interval=1: the timer reads the page */
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);
	/* Fresh start after that works. */
	ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(ml_ckpt_exit(NULL, &o), 0);

	/* A cache_dir somebody else owns is refused (root only). */
	if (geteuid() == 0) {
		snprintf(arg, sizeof(arg), "%s/theirs", _tmpdir);
		ck_assert_int_eq(mkdir(arg, 0755), 0);
		ck_assert_int_eq(chown(arg, 4242, 4242), 0);
		ck_assert_int_eq(ml_ckpt_post_opt(NULL, &o, arg, err,
						  sizeof(err)), -1);
		ck_assert_msg(strstr(err, "not owned by root"), "%s", err);
		ck_assert_int_eq(ml_ckpt_user_init(NULL, &o, err,
						   sizeof(err)), -1);
		ck_assert_int_ne(stat(arg, &st), -1);
		snprintf(p2, sizeof(p2), "%s/ckpt", arg);
		ck_assert_int_eq(stat(p2, &st), -1);
	}
	(void)fd;
	_rmtmp();
}
END_TEST

/* ---- library: decision rule ----------------------------------------- */
static topoml_ckpt_t *_open(long every)
{
	char err[256], ev[32];
	topoml_ckpt_t *c;

	_clear_env();
	snprintf(ev, sizeof(ev), "%ld", every);
	setenv("TOPOML_CKPT_EVERY", ev, 1);
	c = topoml_ckpt_open(_tmpdir, err, sizeof(err));
	ck_assert_msg(c != NULL, "open: %s", err);
	return c;
}

START_TEST(should_every)
{
	topoml_ckpt_t *c;
	long s, n = 0;

	_mktmp();
	c = _open(25);
	for (s = 1; s <= 100; s++)
		if (topoml_ckpt_should_checkpoint(c, s)) {
			ck_assert_int_eq(s % 25, 0);
			n++;
		}
	ck_assert_int_eq(n, 4);
	topoml_ckpt_close(c);
	c = _open(0);
	for (s = 1; s <= 100; s++)
		ck_assert(!topoml_ckpt_should_checkpoint(c, s));
	topoml_ckpt_close(c);
	_rmtmp();
}
END_TEST

/* A fresh page file, as the plugin makes it. */
static int _make_page(const char *path)
{
	struct topoml_ckpt_page p;
	int fd;

	memset(&p, 0, sizeof(p));
	p.magic = TOPOML_CKPT_PAGE_MAGIC;
	p.version = TOPOML_CKPT_PAGE_VERSION;
	p.size = TOPOML_CKPT_PAGE_SIZE;
	p.target_step = -1;
	p.commit_step = -1;
	unlink(path);
	ck_assert_int_ge(fd = open(path, O_RDWR | O_CREAT, 0600), 0);
	ck_assert_int_eq(ftruncate(fd, TOPOML_CKPT_PAGE_SIZE), 0);
	ck_assert_int_eq(pwrite(fd, &p, sizeof(p), 0), (ssize_t)sizeof(p));
	return fd;
}

static void _bump(int fd, uint32_t why)
{
	struct topoml_ckpt_page p;

	ck_assert_int_eq(pread(fd, &p, sizeof(p), 0), (ssize_t)sizeof(p));
	p.gen++;
	p.reason |= why;
	ck_assert_int_eq(pwrite(fd, &p.gen, 8, 16), 8);
	ck_assert_int_eq(pwrite(fd, &p.reason, 4, 24), 4);
}

static void _add_step(char *buf, size_t len, long step)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%ld,", step);
}

/*
 * Two processes of one node on one page, b one step behind a (a loop with
 * a collective per step): the event seen first by either gives both the
 * same checkpoint step, whatever step it arrives at.
 */
START_TEST(should_event_agree)
{
	char err[256], page[PATH_MAX + 16];
	static const long every[] = { 0, 1, 4, 10 };
	long s, at = 3 + _i % 17;
	topoml_ckpt_t *a, *b;
	char ev[32];
	size_t k;
	int fd;

	_mktmp();
	snprintf(page, sizeof(page), "%s/page", _tmpdir);
	for (k = 0; k < sizeof(every) / sizeof(every[0]); k++) {
		char sa[512] = "", sb[512] = "";
		long last_a = -1, last_b = -1;

		fd = _make_page(page);
		_clear_env();
		setenv("TOPOML_CKPT_PAGE", page, 1);
		snprintf(ev, sizeof(ev), "%ld", every[k]);
		setenv("TOPOML_CKPT_EVERY", ev, 1);
		ck_assert_ptr_nonnull(a = topoml_ckpt_open(_tmpdir, err,
							   sizeof(err)));
		ck_assert_ptr_nonnull(b = topoml_ckpt_open(_tmpdir, err,
							   sizeof(err)));
		for (s = 1; s <= 41; s++) {
			if (s == at)
				_bump(fd, TOPOML_CKPT_R_REQUEST);
			/* b is evaluated first half the time */
			if (_i % 2 && s > 1 &&
			    topoml_ckpt_should_checkpoint(b, s - 1))
				_add_step(sb, sizeof(sb), last_b = s - 1);
			if (topoml_ckpt_should_checkpoint(a, s))
				_add_step(sa, sizeof(sa), last_a = s);
			if (!(_i % 2) && s > 1 &&
			    topoml_ckpt_should_checkpoint(b, s - 1))
				_add_step(sb, sizeof(sb), last_b = s - 1);
		}
		if (topoml_ckpt_should_checkpoint(b, 41))
			_add_step(sb, sizeof(sb), 41);
		ck_assert_msg(!strcmp(sa, sb), "every=%ld event at %ld: a %s "
			      "b %s", every[k], at, sa, sb);
		/* The event was answered within two `every` periods. */
		if (every[k] == 0)
			ck_assert_msg(strlen(sa) > 0 && atol(sa) <= at + 2,
				      "every=0: %s", sa);
		(void)last_a;
		(void)last_b;
		topoml_ckpt_close(a);
		topoml_ckpt_close(b);
		close(fd);
	}
	_rmtmp();
}
END_TEST

static int _or_calls;
static int _reduce_or(int local, void *arg)
{
	_or_calls++;
	return local || *(int *)arg;
}

START_TEST(should_reduce)
{
	topoml_ckpt_t *c;
	int other = 0;
	long s;

	_mktmp();
	c = _open(10);
	topoml_ckpt_set_reduce(c, _reduce_or, &other);
	_or_calls = 0;
	for (s = 1; s <= 100; s++) {
		/* another node's rank wants step 30 */
		other = (s == 30);
		if (topoml_ckpt_should_checkpoint(c, s))
			ck_assert_int_eq(s % 10, 0);
	}
	/* Called at boundaries only. */
	ck_assert_int_eq(_or_calls, 10);
	topoml_ckpt_close(c);
	_rmtmp();
}
END_TEST

START_TEST(signal_is_event)
{
	topoml_ckpt_t *c;
	char err[256];
	long s, got = -1;

	_mktmp();
	_clear_env();
	setenv("TOPOML_CKPT_SIGNALS", "1", 1);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGTERM, SIG_DFL);	/* Check installs its own */
	ck_assert_ptr_nonnull(c = topoml_ckpt_open(_tmpdir, err, sizeof(err)));
	for (s = 1; s <= 20 && got < 0; s++) {
		if (s == 5)
			raise(SIGUSR1);
		if (topoml_ckpt_should_checkpoint(c, s))
			got = s;
	}
	ck_assert_int_eq(got, 7);
	ck_assert(!topoml_ckpt_stopping(c));
	raise(SIGTERM);
	ck_assert(topoml_ckpt_stopping(c));
	ck_assert(topoml_ckpt_should_checkpoint(c, 30) == 0);
	ck_assert(topoml_ckpt_should_checkpoint(c, 32) == 1);
	ck_assert_ptr_nonnull(topoml_ckpt_begin(c, 32));
	ck_assert_int_eq(topoml_ckpt_commit(c), TOPOML_CKPT_STOP);
	topoml_ckpt_close(c);
	/* Closed: SIGTERM terminates again. */
	{
		struct sigaction sa;

		ck_assert_int_eq(sigaction(SIGTERM, NULL, &sa), 0);
		ck_assert(sa.sa_handler == SIG_DFL);
	}
	_rmtmp();
}
END_TEST

START_TEST(interval_private)
{
	topoml_ckpt_t *c;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	long s, got = -1;

	_mktmp();
	c = _open(0);
	topoml_ckpt_set_interval(c, 1);
	for (s = 1; s < 400 && got < 0; s++) {
		nanosleep(&ts, NULL);
		if (topoml_ckpt_should_checkpoint(c, s))
			got = s;
	}
	/* time() granularity: the first tick comes within 0..1 s. */
	ck_assert_int_gt(got, 0);
	ck_assert_int_lt(got, 250);
	topoml_ckpt_close(c);
	_rmtmp();
}
END_TEST

/* ---- library: commit ------------------------------------------------- */
START_TEST(commit_layout)
{
	char err[256], link[64], p[PATH_MAX + 64];
	topoml_ckpt_t *c;
	const char *d;
	ssize_t n;
	long s;

	_mktmp();
	c = _open(10);
	topoml_ckpt_set_keep(c, 2);
	ck_assert_ptr_null(topoml_ckpt_resume_path(c));
	ck_assert_int_eq(topoml_ckpt_resume_step(c), -1);
	for (s = 10; s <= 50; s += 10) {
		ck_assert_ptr_nonnull(d = topoml_ckpt_begin(c, s));
		ck_assert(strstr(d, "/.tmp-step-"));
		_write_file(d, "state", "x");
		ck_assert_int_eq(topoml_ckpt_commit(c), 0);
	}
	snprintf(p, sizeof(p), "%s/latest", _tmpdir);
	ck_assert_int_gt(n = readlink(p, link, sizeof(link) - 1), 0);
	link[n] = '\0';
	ck_assert_str_eq(link, "step-000000000050");
	ck_assert_int_eq(_count_steps(_tmpdir), 2);
	/* Same step again: the first copy stays. */
	ck_assert_ptr_nonnull(d = topoml_ckpt_begin(c, 50));
	ck_assert_int_eq(topoml_ckpt_commit(c), 0);
	snprintf(p, sizeof(p), "%s/step-000000000050/state", _tmpdir);
	ck_assert_int_eq(access(p, R_OK), 0);
	/* Abort leaves nothing behind. */
	ck_assert_ptr_nonnull(d = topoml_ckpt_begin(c, 60));
	_write_file(d, "state", "y");
	topoml_ckpt_abort(c);
	ck_assert_int_eq(access(d, F_OK), -1);
	topoml_ckpt_close(c);

	c = topoml_ckpt_open(_tmpdir, err, sizeof(err));
	ck_assert_int_eq(topoml_ckpt_resume_step(c), 50);
	snprintf(p, sizeof(p), "%s/step-000000000050", _tmpdir);
	ck_assert_str_eq(topoml_ckpt_resume_path(c), p);
	topoml_ckpt_close(c);
	_rmtmp();
}
END_TEST

START_TEST(commit_fenced)
{
	topoml_ckpt_t *old, *new;
	char err[256];

	_mktmp();
	_clear_env();
	setenv("TOPOML_RESTART_COUNT", "1", 1);
	ck_assert_ptr_nonnull(old = topoml_ckpt_open(_tmpdir, err,
						     sizeof(err)));
	setenv("TOPOML_RESTART_COUNT", "2", 1);
	ck_assert_ptr_nonnull(new = topoml_ckpt_open(_tmpdir, err,
						     sizeof(err)));
	ck_assert_ptr_nonnull(topoml_ckpt_begin(old, 10));
	ck_assert_int_eq(topoml_ckpt_commit(old), -1);
	ck_assert_int_eq(errno, ESTALE);
	ck_assert_ptr_nonnull(topoml_ckpt_begin(new, 10));
	ck_assert_int_eq(topoml_ckpt_commit(new), 0);
	topoml_ckpt_close(old);
	topoml_ckpt_close(new);
	_rmtmp();
}
END_TEST

/*
 * A stop warning that lands on the loop's last step: that commit marks the
 * page finished (before commit_reason, which the plugin's timer reads
 * first) and returns 0, so the loop ends and the job is not requeued only
 * to run no step.  An earlier step answering the same warning stops.
 */
START_TEST(commit_last_step)
{
	struct topoml_ckpt_page pg;
	char err[256], page[PATH_MAX + 16];
	topoml_ckpt_t *c;
	uint32_t one = 1;
	int fd;

	_mktmp();
	snprintf(page, sizeof(page), "%s/page", _tmpdir);
	fd = _make_page(page);
	/* The plugin already requeued: commit() does not wait for it. */
	ck_assert_int_eq(pwrite(fd, &one, 4, 28), 4);
	_clear_env();
	setenv("TOPOML_CKPT_PAGE", page, 1);
	ck_assert_ptr_nonnull(c = topoml_ckpt_open(_tmpdir, err, sizeof(err)));
	topoml_ckpt_set_last_step(c, 20);
	_bump(fd, TOPOML_CKPT_R_LIMIT);
	ck_assert_ptr_nonnull(topoml_ckpt_begin(c, 10));
	ck_assert_int_eq(topoml_ckpt_commit(c), TOPOML_CKPT_STOP);
	ck_assert_int_eq(pread(fd, &pg, sizeof(pg), 0), (ssize_t)sizeof(pg));
	ck_assert_uint_eq(pg.finished, 0);
	ck_assert_ptr_nonnull(topoml_ckpt_begin(c, 20));
	ck_assert_int_eq(topoml_ckpt_commit(c), 0);
	ck_assert_int_eq(pread(fd, &pg, sizeof(pg), 0), (ssize_t)sizeof(pg));
	ck_assert_uint_eq(pg.finished, 1);
	ck_assert_int_eq(pg.commit_step, 20);
	ck_assert(pg.commit_reason & TOPOML_CKPT_R_LIMIT);
	topoml_ckpt_close(c);
	close(fd);

	/* finish() after the loop marks it too; open() alone does not. */
	fd = _make_page(page);
	ck_assert_ptr_nonnull(c = topoml_ckpt_open(_tmpdir, err, sizeof(err)));
	ck_assert_int_eq(pread(fd, &pg, sizeof(pg), 0), (ssize_t)sizeof(pg));
	ck_assert_uint_eq(pg.finished, 0);
	topoml_ckpt_finish(c);
	ck_assert_int_eq(pread(fd, &pg, sizeof(pg), 0), (ssize_t)sizeof(pg));
	ck_assert_uint_eq(pg.finished, 1);
	topoml_ckpt_close(c);
	close(fd);
	_rmtmp();
}
END_TEST

/*
 * Sharded commit, 4 processes: every rank writes its own shard into the
 * same directory, the last ones slowly; rank 0 commits only when all are
 * complete, and every rank's commit() returns after that commit.
 */
#define SHARD_RANKS 4
START_TEST(commit_shards)
{
	char p[PATH_MAX + 64], buf[64];
	pid_t pid[SHARD_RANKS];
	int r, st, k;
	long s;

	_mktmp();
	for (r = 0; r < SHARD_RANKS; r++) {
		ck_assert_int_ge(pid[r] = fork(), 0);
		if (pid[r] == 0) {
			topoml_ckpt_t *c = _open(0);
			struct timespec ts = { 0, 30 * 1000 * 1000 * r };
			const char *d;
			FILE *f;

			topoml_ckpt_set_shards(c, r, SHARD_RANKS);
			for (s = 10; s <= 30; s += 10) {
				if (!(d = topoml_ckpt_begin(c, s)))
					_exit(10);
				snprintf(p, sizeof(p), "%s/shard-%d", d, r);
				if (!(f = fopen(p, "w")))
					_exit(11);
				fprintf(f, "%ld ", s);
				fflush(f);
				/* Later ranks are still writing when rank 0
				 * has finished its shard. */
				nanosleep(&ts, NULL);
				fprintf(f, "%d\n", r);
				if (fclose(f))
					_exit(12);
				if (topoml_ckpt_commit(c) != 0)
					_exit(13);
				/* Returned: every shard is complete. */
				for (k = 0; k < SHARD_RANKS; k++) {
					snprintf(p, sizeof(p),
						 "%s/step-%012ld/shard-%d",
						 _tmpdir, s, k);
					if (!(f = fopen(p, "r")))
						_exit(14);
					if (!fgets(buf, sizeof(buf), f) ||
					    atol(strchr(buf, ' ') ?
						 strchr(buf, ' ') + 1 : "-1")
					    != k)
						_exit(15);
					fclose(f);
				}
			}
			topoml_ckpt_close(c);
			_exit(0);
		}
	}
	for (r = 0; r < SHARD_RANKS; r++) {
		ck_assert_int_eq(waitpid(pid[r], &st, 0), pid[r]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "rank %d: status %#x", r, st);
	}
	for (s = 10; s <= 30; s += 10) {
		for (k = 0; k < SHARD_RANKS; k++) {
			FILE *f;

			snprintf(p, sizeof(p), "%s/step-%012ld/shard-%d",
				 _tmpdir, s, k);
			ck_assert_ptr_nonnull(f = fopen(p, "r"));
			ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
			fclose(f);
			snprintf(p, sizeof(p), "%ld %d\n", s, k);
			ck_assert_str_eq(buf, p);
		}
		/* The markers are not part of the checkpoint. */
		snprintf(p, sizeof(p), "%s/step-%012ld/.shard-1", _tmpdir, s);
		ck_assert_int_eq(access(p, F_OK), -1);
	}
	ck_assert_int_eq(topoml_ckpt__read_latest(_tmpdir, p, sizeof(p)), 30);
	_rmtmp();
}
END_TEST

/* A shard that never comes: rank 0 gives up after the timeout. */
START_TEST(commit_shard_timeout)
{
	topoml_ckpt_t *c;
	char p[PATH_MAX + 64];

	_mktmp();
	setenv("TOPOML_CKPT_SHARD_TIMEOUT", "1", 1);
	c = _open(0);
	unsetenv("TOPOML_CKPT_SHARD_TIMEOUT");
	topoml_ckpt_set_shards(c, 0, 2);
	ck_assert_ptr_nonnull(topoml_ckpt_begin(c, 5));
	ck_assert_int_eq(topoml_ckpt_commit(c), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_eq(topoml_ckpt__read_latest(_tmpdir, p, sizeof(p)), -1);
	topoml_ckpt_close(c);
	_rmtmp();
}
END_TEST

START_TEST(open_errors)
{
	char err[256];

	_clear_env();
	ck_assert_ptr_null(topoml_ckpt_open(NULL, err, sizeof(err)));
	ck_assert(strstr(err, "TOPOML_CKPT_DIR"));
	setenv("TOPOML_CKPT_EVERY", "ten", 1);
	ck_assert_ptr_null(topoml_ckpt_open("/tmp", err, sizeof(err)));
	ck_assert(strstr(err, "TOPOML_CKPT_EVERY='ten'"));
	_clear_env();
	setenv("TOPOML_CKPT_PAGE", "/nonexistent/page", 1);
	ck_assert_ptr_null(topoml_ckpt_open("/tmp", err, sizeof(err)));
	ck_assert(strstr(err, "/nonexistent/page"));
}
END_TEST

/*
 * kill -9 at random points of commits: `latest` always names a complete
 * checkpoint (three files, each holding the step, the last one large).
 */
#define BIG (256 * 1024)

static void _committer(int ready)
{
	topoml_ckpt_t *c;
	char err[256], p[PATH_MAX + 64], *big;
	long s;
	FILE *f;

	c = topoml_ckpt_open(_tmpdir, err, sizeof(err));
	if (!c)
		_exit(2);
	topoml_ckpt_set_keep(c, 2);
	big = malloc(BIG);
	s = topoml_ckpt_resume_step(c);
	if (write(ready, "r", 1) != 1)
		_exit(6);
	for (s = s < 0 ? 1 : s + 1;; s++) {
		const char *d = topoml_ckpt_begin(c, s);
		int i;

		if (!d)
			_exit(3);
		for (i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s/part%d", d, i);
			if (!(f = fopen(p, "w")))
				_exit(4);
			fprintf(f, "%ld\n", s);
			if (i == 2) {
				memset(big, 'a' + s % 26, BIG);
				fwrite(big, 1, BIG, f);
			}
			fclose(f);
		}
		if (topoml_ckpt_commit(c) < 0)
			_exit(5);
	}
}

static long _verify_latest(void)
{
	char p[PATH_MAX + 64], line[64], *buf;
	long step = -1, s;
	struct stat st;
	topoml_ckpt_t *c;
	char err[256];
	int i;
	FILE *f;

	c = topoml_ckpt_open(_tmpdir, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	step = topoml_ckpt_resume_step(c);
	if (step < 0) {
		snprintf(p, sizeof(p), "%s/latest", _tmpdir);
		ck_assert_msg(lstat(p, &st) < 0, "latest dangles");
		topoml_ckpt_close(c);
		return -1;
	}
	buf = malloc(BIG);
	for (i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/part%d", topoml_ckpt_resume_path(c),
			 i);
		f = fopen(p, "r");
		ck_assert_msg(f != NULL, "%s missing", p);
		ck_assert(fgets(line, sizeof(line), f));
		s = strtol(line, NULL, 10);
		ck_assert_int_eq(s, step);
		if (i == 2) {
			ck_assert_int_eq(fread(buf, 1, BIG, f), BIG);
			ck_assert_int_eq(buf[0], 'a' + step % 26);
			ck_assert_int_eq(buf[BIG - 1], 'a' + step % 26);
		}
		fclose(f);
	}
	free(buf);
	topoml_ckpt_close(c);
	return step;
}

START_TEST(kill9_torture)
{
	const char *n_env = getenv("CKPT_TORTURE");
	int n = n_env ? atoi(n_env) : 300, i, kills = 0, torn = 0;
	long prev = -1, step;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();

	_mktmp();
	_clear_env();
	for (i = 0; i < n; i++) {
		struct timespec ts;
		int st, pfd[2];
		pid_t pid;
		char r;
		DIR *d;
		struct dirent *e;

		ck_assert_int_eq(pipe(pfd), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(pfd[0]);
			_committer(pfd[1]);
		}
		close(pfd[1]);
		/* Kill at a random point once the commits run. */
		ck_assert_int_eq(read(pfd[0], &r, 1), 1);
		close(pfd[0]);
		ts.tv_sec = 0;
		ts.tv_nsec = (rand_r(&seed) % 20000) * 1000L;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (WIFSIGNALED(st))
			kills++;
		else
			ck_abort_msg("committer exited %d", WEXITSTATUS(st));
		/* A temporary directory left: killed inside a checkpoint. */
		ck_assert_ptr_nonnull(d = opendir(_tmpdir));
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, ".tmp-", 5))
				torn++;
		closedir(d);
		step = _verify_latest();
		ck_assert_int_ge(step, prev);
		prev = step;
	}
	ck_assert_int_eq(kills, n);
	ck_assert_int_gt(prev, 0);
	ck_assert_int_gt(torn, n / 4);
	printf("kill9_torture: %d kills (%d inside a checkpoint), reached "
	       "step %ld, latest always complete\n", kills, torn, prev);
	_rmtmp();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ckpt");
	TCase *tp = tcase_create("parse"), *tl = tcase_create("library"),
	      *tk = tcase_create("kill9");
	SRunner *sr;
	int nf;

	tcase_add_test(tp, parse_full);
	tcase_add_test(tp, parse_defaults);
	tcase_add_loop_test(tp, parse_errors, 0,
			    sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_test(tp, plugin_local_check);
	tcase_add_test(tp, plugin_user_init);
	tcase_add_test(tp, plugin_hostile_files);
	tcase_add_test(tp, plugin_resume_owner);
	suite_add_tcase(s, tp);
	tcase_add_test(tl, should_every);
	tcase_add_loop_test(tl, should_event_agree, 0, 34);
	tcase_add_test(tl, should_reduce);
	tcase_add_test(tl, signal_is_event);
	tcase_add_test(tl, interval_private);
	tcase_add_test(tl, commit_layout);
	tcase_add_test(tl, commit_fenced);
	tcase_add_test(tl, commit_last_step);
	tcase_add_test(tl, commit_shards);
	tcase_add_test(tl, commit_shard_timeout);
	tcase_add_test(tl, open_errors);
	suite_add_tcase(s, tl);
	tcase_set_timeout(tk, 300);
	tcase_add_test(tk, kill9_torture);
	suite_add_tcase(s, tk);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
