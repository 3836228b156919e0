/*
 * select/topoml's part of a job's SystemComment: other plugins' parts are
 * kept verbatim, ours is replaced (a requeued job begins again), never
 * repeated.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "comment.h"

static void _is(const char *old, const char *ours, const char *want)
{
	char *got = topoml_comment_merge(old, ours);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_empty)
{
	_is(NULL, "topoml: placed=topoml", "topoml: placed=topoml");
	_is("", "topoml: placed=topoml", "topoml: placed=topoml");
}
END_TEST

START_TEST(test_keeps_theirs)
{
	_is("burst_buffer: staged in", "topoml: placed=topoml leaves=1/1",
	    "burst_buffer: staged in; topoml: placed=topoml leaves=1/1");
	/* A foreign text that mentions topoml is not ours. */
	_is("note: see topoml: later", "topoml: x",
	    "note: see topoml: later; topoml: x");
}
END_TEST

START_TEST(test_replaces_ours)
{
	/* Requeued: job_begin runs again and the comment does not grow. */
	char *a = topoml_comment_merge("lua: a", "topoml: placed=topoml");
	char *b, *c;

	ck_assert_ptr_nonnull(a);
	b = topoml_comment_merge(a, "topoml: placed=cons_tres");
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(b, "lua: a; topoml: placed=cons_tres");
	c = topoml_comment_merge(b, "topoml: placed=cons_tres");
	ck_assert_str_eq(c, b);
	free(a);
	free(b);
	free(c);
	/* Ours in the middle: theirs stay in order, ours goes last. */
	_is("a; topoml: old one; b", "topoml: new", "a; b; topoml: new");
	_is("topoml: old", "topoml: new", "topoml: new");
	_is("topoml: 1; topoml: 2", "topoml: new", "topoml: new");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("comment");
	TCase *tc = tcase_create("merge");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_keeps_theirs);
	tcase_add_test(tc, test_replaces_ours);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
