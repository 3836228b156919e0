/*
 * topoml.so's log lines and job messages (spank/log.c) with what a job
 * can put in them: a bad TOPOML_* value in slurmstepd, an --ml-* option
 * value past srun's check.  The real option code (spank/options.c) runs
 * on a stubbed job environment; Slurm's log functions are replaced by
 * ones that keep each line, so the test sees exactly what slurmd's log
 * would get.  No newline, ESC, other control byte or byte outside
 * printable ASCII gets through; the escaped form is there.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "spank_stub.h"

struct ml_state ml;

/* What slurmd's log got: the lines, in order. */
static char _lines[16][4096];
static int _nlines;

static void _keep(const char *fmt, va_list ap)
{
	if (_nlines < 16)
		vsnprintf(_lines[_nlines++], sizeof(_lines[0]), fmt, ap);
}

#define LOG_STUB(name) \
	void name(const char *fmt, ...) \
	{ \
		va_list ap; \
		va_start(ap, fmt); \
		_keep(fmt, ap); \
		va_end(ap); \
	}
LOG_STUB(slurm_error)
LOG_STUB(slurm_info)
LOG_STUB(slurm_verbose)
LOG_STUB(slurm_debug)

/* The option table as Slurm keeps it: its callbacks are what slurmstepd
 * calls with the job's --ml-* values. */
static struct spank_option *_opts[ML_OPT_COUNT];

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	(void)sp;
	if (opt->val >= 0 && opt->val < ML_OPT_COUNT)
		_opts[opt->val] = opt;
	return ESPANK_SUCCESS;
}

const char *spank_strerror(spank_err_t err)
{
	(void)err;
	return "stub";
}

/* A forged log line, a terminal escape, a byte that is no UTF-8. */
#define FORGED "slurmd: error: forged by the job"
#define EVIL "auto\n" FORGED "\n\x1b[2J\x1b]0;owned\x07\r\t\x7f\xff\xc3("

/* Every byte of s a log line may hold: printable ASCII. */
static void _plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		ck_assert_msg(*p >= 0x20 && *p < 0x7f,
			      "byte 0x%02x in '%s'", *p, s);
}

static void _setup(void)
{
	memset(&ml, 0, sizeof(ml));
	for (int i = 0; i < ML_OPT_COUNT; i++)
		ml.val[i] = -1;
	ml_conf_init(&ml.conf);
	spank_stub_env_clear();
	_nlines = 0;
}

/* The escaped form of EVIL as the log shows it. */
#define EVIL_ESC "auto\\x0a" FORGED "\\x0a\\x1b[2J\\x1b]0;owned\\x07\\x0d" \
	"\\x09\\x7f\\xff\\xc3("

/* A bad TOPOML_* value in the job's environment, read in slurmstepd. */
START_TEST(test_env_twin)
{
	_setup();
	spank_setenv(NULL, "TOPOML_GPU_BIND", EVIL, 1);
	ck_assert_int_eq(ml_options_finish(NULL, true), -1);
	ck_assert_int_eq(_nlines, 1);
	_plain(_lines[0]);
	ck_assert_msg(strstr(_lines[0], "topoml: TOPOML_GPU_BIND: ") ==
		      _lines[0], "%s", _lines[0]);
	ck_assert_msg(strstr(_lines[0], EVIL_ESC), "%s", _lines[0]);
	/* the job's output (task_init prints it) */
	_plain(ml.user_error);
	ck_assert_msg(strstr(ml.user_error, EVIL_ESC), "%s", ml.user_error);
	ck_assert_ptr_null(strstr(ml.user_error, "\n"));
}
END_TEST

/* An --ml-* option value reaching slurmstepd's callback (remote). */
START_TEST(test_option_value)
{
	_setup();
	ck_assert_int_eq(ml_options_register(NULL), 0);
	ck_assert_ptr_nonnull(_opts[ML_OPT_NCCL]);
	/* 0: an error would make Slurm log the raw value itself */
	ck_assert_int_eq(_opts[ML_OPT_NCCL]->cb(ML_OPT_NCCL, "x\n" FORGED,
						 1), 0);
	ck_assert_int_eq(_nlines, 1);
	ck_assert(!ml.set[ML_OPT_NCCL]);
	_plain(_lines[0]);
	ck_assert_msg(strstr(_lines[0], "topoml: --ml-nccl: ") == _lines[0] &&
		      strstr(_lines[0], "x\\x0a" FORGED), "%s", _lines[0]);
	/* the first mistake is the one the job sees; each is logged */
	ml_user_error("--ml-ckpt: %s: second", "p\nq");
	ck_assert_int_eq(_nlines, 2);
	ck_assert_msg(strstr(_lines[1], "p\\x0aq: second"), "%s", _lines[1]);
	_plain(ml.user_error);
	ck_assert_msg(strstr(ml.user_error, "x\\x0a" FORGED), "%s",
		      ml.user_error);
	/* sbatch's own check (local): its error line escaped too */
	ck_assert_int_eq(_opts[ML_OPT_COMM]->cb(ML_OPT_COMM, "\x1b[31m", 0),
			 -1);
	ck_assert_int_eq(_nlines, 3);
	_plain(_lines[2]);
	ck_assert_msg(strstr(_lines[2], "\\x1b[31m"), "%s", _lines[2]);
}
END_TEST

/* ml_log and ML_ERR: each level, every byte 1..255, cuts. */
START_TEST(test_levels_bytes)
{
	char all[256], big[3000];

	_setup();
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	ml_log(ML_LOG_ERROR, "topoml: e %s", all);
	ml_log(ML_LOG_INFO, "topoml: i %s", all);
	ml_log(ML_LOG_VERBOSE, "topoml: v %s", all);
	ml_log(ML_LOG_DEBUG, "topoml: d %s", all);
	ML_ERR(ML_OPT_GPU_BIND, "%s", all);
	ck_assert_int_eq(_nlines, 5);
	for (int i = 0; i < 5; i++) {
		_plain(_lines[i]);
		/* 255 bytes, 160 of them escaped: whole, no cut */
		ck_assert_msg(strstr(_lines[i], "\\x01\\x02") &&
			      strstr(_lines[i], "\\xfe\\xff") &&
			      !strstr(_lines[i], "..."), "%s", _lines[i]);
	}
	ck_assert_msg(strstr(_lines[4], "topoml: --ml-gpu-bind: \\x01") ==
		      _lines[4], "%s", _lines[4]);
	/* fixed text as written */
	ml_log(ML_LOG_INFO, "topoml: job %u: plain (text) 'ok'", 7u);
	ck_assert_str_eq(_lines[5], "topoml: job 7: plain (text) 'ok'");
	/* a huge value: one bounded line, cut where it says so */
	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ml_user_error("--ml-ckpt: %s", big);
	_plain(_lines[6]);
	ck_assert_uint_lt(strlen(_lines[6]), 2100);
	ck_assert_msg(strstr(_lines[6], "\\x0a...") != NULL, "cut unmarked");
	_plain(ml.user_error);
	ck_assert_uint_lt(strlen(ml.user_error), sizeof(ml.user_error));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spank_log");
	TCase *tc = tcase_create("log");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_env_twin);
	tcase_add_test(tc, test_option_value);
	tcase_add_test(tc, test_levels_bytes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
