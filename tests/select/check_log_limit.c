/*
 * select/topoml's log limit (select_plugin/log_limit.c): what bounds the
 * lines that many jobs with a forged option can write to slurmctld's log
 * (issue 28, defect 6), without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdio.h>

#include "log_limit.h"

static const char *const BAD = "JobId=%u: unknown --ml-comm value '%s'";
static const char *const OTHER = "engine chose node %d";

/* limit.l's verdict on the text of kind key for job id at now. */
static bool _say(struct topoml_log_limit *l, const void *key, unsigned id,
		 time_t now, unsigned long *dropped)
{
	char text[128];

	snprintf(text, sizeof(text), "JobId=%u: unknown --ml-comm 'x'", id);
	return topoml_log_limit(l, key, text, now, dropped);
}

/* 80 jobs, each re-tested every second for ten minutes: 5 lines a
 * minute at most, the dropped ones counted (the old limit: 1024). */
START_TEST(test_many_jobs)
{
	static struct topoml_log_limit l = TOPOML_LOG_LIMIT_INIT(5, 60);
	unsigned long dropped, total_dropped = 0;
	int shown = 0, per_min[10] = { 0 };

	for (time_t t = 1000; t < 1600; t++)
		for (unsigned id = 1; id <= 80; id++)
			if (_say(&l, BAD, id, t, &dropped)) {
				shown++;
				per_min[(t - 1000) / 60]++;
				total_dropped += dropped;
			}
	/* 80 texts: 5 shown, 75 counted once each, then all are recent */
	ck_assert_int_eq(shown, 5);
	for (int m = 0; m < 10; m++)
		ck_assert_int_le(per_min[m], 5);
	ck_assert_uint_eq(total_dropped, 0);
	/* a new text of that kind, a minute on, says what was dropped */
	ck_assert(_say(&l, BAD, 81, 1600, &dropped));
	ck_assert_uint_eq(dropped, 75);
	ck_assert(!_say(&l, BAD, 81, 1700, &dropped));
}
END_TEST

/* Endless distinct texts (job ids keep growing): still 5 a minute. */
START_TEST(test_endless_texts)
{
	static struct topoml_log_limit l = TOPOML_LOG_LIMIT_INIT(5, 60);
	unsigned long dropped, sum = 0;
	unsigned id = 1;
	int shown = 0;

	for (time_t t = 0; t < 600; t++)
		for (int j = 0; j < 100; j++)
			if (_say(&l, BAD, id++, t, &dropped)) {
				shown++;
				sum += dropped;
			}
	ck_assert_int_eq(shown, 50);
	/* every text not shown is counted in a later line (but the last
	 * window's, which no line followed) */
	ck_assert_uint_eq(sum, 60000 - 50 - (6000 - 5));
}
END_TEST

/* Kinds apart: a flood of one leaves another's lines alone. */
START_TEST(test_kinds)
{
	static struct topoml_log_limit l = TOPOML_LOG_LIMIT_INIT(2, 60);
	unsigned long dropped;

	for (unsigned id = 0; id < 50; id++)
		(void)_say(&l, BAD, id, 5, &dropped);
	ck_assert(topoml_log_limit(&l, OTHER, "engine chose node 3", 5,
				   &dropped));
	ck_assert_uint_eq(dropped, 0);
	ck_assert(!topoml_log_limit(&l, OTHER, "engine chose node 3", 6,
				    &dropped));
	/* more kinds than slots: the extra ones share the last slot, so
	 * the lines stay bounded */
	int shown = 0;
	static const char keys[64];

	for (int k = 0; k < 64; k++)
		for (unsigned id = 0; id < 10; id++) {
			char text[64];

			snprintf(text, sizeof(text), "kind %d id %u", k, id);
			shown += topoml_log_limit(&l, &keys[k], text, 7,
						  &dropped);
		}
	ck_assert_int_le(shown, TOPOML_LOG_LIMIT_KINDS * 2);
}
END_TEST

/* The recent texts are a ring: an old text may be said again; a clock
 * that goes back opens a new window. */
START_TEST(test_ring_clock)
{
	static struct topoml_log_limit l = TOPOML_LOG_LIMIT_INIT(1000, 60);
	unsigned long dropped;

	ck_assert(_say(&l, BAD, 1, 0, &dropped));
	ck_assert(!_say(&l, BAD, 1, 0, &dropped));
	for (unsigned id = 2; id < 2 + TOPOML_LOG_LIMIT_SEEN; id++)
		ck_assert(_say(&l, BAD, id, 0, &dropped));
	ck_assert(_say(&l, BAD, 1, 0, &dropped));	/* forgotten */

	static struct topoml_log_limit c = TOPOML_LOG_LIMIT_INIT(1, 60);

	ck_assert(_say(&c, BAD, 1, 100, &dropped));
	ck_assert(!_say(&c, BAD, 2, 100, &dropped));
	ck_assert(_say(&c, BAD, 3, 50, &dropped));	/* clock back */
	ck_assert_uint_eq(dropped, 1);
	/* burst 0: nothing, however long */
	static struct topoml_log_limit z = TOPOML_LOG_LIMIT_INIT(0, 60);

	ck_assert(!_say(&z, BAD, 1, 0, &dropped));
	ck_assert(!_say(&z, BAD, 2, 1000, &dropped));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log_limit");
	TCase *tc = tcase_create("log_limit");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_many_jobs);
	tcase_add_test(tc, test_endless_texts);
	tcase_add_test(tc, test_kinds);
	tcase_add_test(tc, test_ring_clock);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
