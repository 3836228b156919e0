/*
 * select/topoml's part of a job's SystemComment
 * (topology/contract/jobcomment.c): other plugins' parts are kept
 * verbatim, ours is replaced (a requeued job begins again), never
 * repeated; what the writer writes the parser reads back; junk is refused
 * (topoml.so then loads its own topology); a step's ring order is the
 * job's order restricted to the step's nodes.  And the way there
 * (topoml/contract.h): the options in a job's SPANK environment.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/jobcomment.h"

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

/* Writer -> parser: every field comes back. */
START_TEST(test_roundtrip)
{
	struct topoml_comment w = {
		.placed = "topoml", .hint = "alltoall", .choice = 2,
		.family = 2, .span = 3, .span_lb = 2, .ring = 14,
		.ring_lb = 12, .global_hops = 4,
		.order = (char *)"n[1,3,5,7,2,4,6,8]",
	}, r;
	char err[256] = "", *s = topoml_comment_write(&w), *all;

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "topoml: placed=topoml hint=alltoall choice=2 "
			 "groups=3/2 ring=14/12 global_hops=4 "
			 "order=n[1,3,5,7,2,4,6,8]");
	all = topoml_comment_merge("bb: staged", s);
	ck_assert_int_eq(topoml_comment_parse(all, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.placed, "topoml");
	ck_assert_str_eq(r.hint, "alltoall");
	ck_assert_int_eq(r.choice, 2);
	ck_assert_int_eq(r.family, 2);
	ck_assert_int_eq(r.span, 3);
	ck_assert_int_eq(r.span_lb, 2);
	ck_assert(r.ring == 14 && r.ring_lb == 12);
	ck_assert_int_eq(r.global_hops, 4);
	ck_assert_str_eq(r.order, "n[1,3,5,7,2,4,6,8]");
	topoml_comment_clear(&r);
	free(all);
	free(s);
	/* Fallback placement, fat-tree, no hint known: what 22.05 shows. */
	ck_assert_int_eq(topoml_comment_parse(
		"topoml: placed=cons_tres leaves=2/1 ring=8/4 order=c[1-8]; "
		"lua: x", &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.placed, "cons_tres");
	ck_assert_ptr_null(r.hint);
	ck_assert_int_eq(r.global_hops, -1);
	ck_assert_str_eq(r.order, "c[1-8]");
	topoml_comment_clear(&r);
}
END_TEST

/* An order longer than the bound is not written: the tasks fall back. */
START_TEST(test_long_order)
{
	size_t n = TOPOML_COMMENT_ORDER_MAX + 1;
	char *big = malloc(n + 1), *s;
	struct topoml_comment w = { .placed = "topoml", .global_hops = -1,
				    .order = big };

	memset(big, 'a', n);
	big[n] = '\0';
	s = topoml_comment_write(&w);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(strstr(s, "order="));
	free(s);
	big[n - 1] = '\0';
	s = topoml_comment_write(&w);
	ck_assert_ptr_nonnull(strstr(s, "order="));
	free(s);
	free(big);
}
END_TEST

static void _none(const char *sc)
{
	struct topoml_comment r;
	char err[128];

	ck_assert_int_eq(topoml_comment_parse(sc, &r, err, sizeof(err)), 1);
	ck_assert_ptr_null(r.order);
}

static void _junk(const char *sc, const char *why)
{
	struct topoml_comment r;
	char err[256] = "";

	ck_assert_msg(topoml_comment_parse(sc, &r, err, sizeof(err)) == -1,
		      "accepted '%s'", sc);
	ck_assert_ptr_null(r.order);
	ck_assert_msg(strstr(err, why), "'%s': err '%s', want '%s'", sc, err,
		      why);
}

START_TEST(test_not_ours)
{
	_none(NULL);
	_none("");
	_none("slurm_cred_create failure, holding job.");
	/* Only a part that begins with the tag is ours. */
	_none("note: see topoml: placed=topoml order=n1");
	_none("topoml:placed=topoml");
}
END_TEST

START_TEST(test_junk)
{
	_junk("topoml: placed=topoml; topoml: placed=topoml", "two topoml");
	_junk("topoml: placed=slurm order=n1", "placed=slurm: unknown");
	_junk("topoml: placed=topoml hint=gossip", "hint=gossip: unknown");
	_junk("topoml: leaves=2/2 order=n1", "no placed=");
	_junk("topoml: placed=topoml leaves=2", "leaves: not A/B");
	_junk("topoml: placed=topoml ring=x/1", "ring: not A/B");
	_junk("topoml: placed=topoml ring=1234567890123456/1", "ring: not");
	_junk("topoml: placed=topoml choice=", "choice: not a number");
	_junk("topoml: placed=topoml order=n[1-2] order=n3", "order= twice");
	_junk("topoml: placed=topoml order=", "not a host list");
	_junk("topoml: placed=topoml order=n1;rm", "not a host list");
	_junk("topoml: placed=topoml order=n1$(id)", "not a host list");
	_junk("topoml: placed=topoml  order=n1", "is not key=value");
	_junk("topoml: placed=topoml Order=n1", "is not key=value");
	_junk("topoml: placed=topoml junk", "is not key=value");
	_junk("topoml: =x placed=topoml", "is not key=value");
}
END_TEST

/* A newer writer's key is skipped; the rest still counts. */
START_TEST(test_unknown_key)
{
	struct topoml_comment r;
	char err[128];

	ck_assert_int_eq(topoml_comment_parse("topoml: placed=topoml "
		"nvl=2/1 order=n[2,1]", &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.order, "n[2,1]");
	topoml_comment_clear(&r);
}
END_TEST

START_TEST(test_too_long)
{
	size_t n = TOPOML_COMMENT_MAX + 8;
	char *sc = malloc(n + 1);

	memcpy(sc, "topoml: placed=topoml order=", 28);
	memset(sc + 28, 'a', n - 28);
	sc[n] = '\0';
	_junk(sc, "longer than");
	/* Within the comment bound but an order over its own. */
	sc[28 + TOPOML_COMMENT_ORDER_MAX + 1] = '\0';
	_junk(sc, "not a host list of at most");
	free(sc);
}
END_TEST

static void _step(const char *order, const char *const *names, int n,
		  const int *want)
{
	int got[16];
	char err[256] = "";

	ck_assert_msg(!topoml_comment_step_order(order, (char *const *)names,
						 n, got, err, sizeof(err)),
		      "%s: %s", order, err);
	for (int i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "%s: position %d: %d, want %d",
			      order, i, got[i], want[i]);
}

static void _step_bad(const char *order, const char *const *names, int n,
		      const char *why)
{
	int got[16];
	char err[256] = "";

	ck_assert_msg(topoml_comment_step_order(order, (char *const *)names,
						n, got, err, sizeof(err)) == -1,
		      "accepted %s", order);
	ck_assert_msg(strstr(err, why), "%s: err '%s', want '%s'", order, err,
		      why);
}

START_TEST(test_step_order)
{
	static const char *const all[] = { "n1", "n2", "n3", "n4" };
	static const char *const sub[] = { "n2", "n4" };
	static const char *const rev[] = { "n4", "n3", "n2", "n1" };
	static const char *const out[] = { "n2", "n9" };
	static const char *const dup[] = { "n2", "n2" };

	/* The whole job: indices into the step's list, in ring order. */
	_step("n[1,4,2,3]", all, 4, (const int[]){ 0, 3, 1, 2 });
	_step("n[1,4,2,3]", rev, 4, (const int[]){ 3, 0, 2, 1 });
	/* A step on part of the job: the job's ring, restricted. */
	_step("n[1,4,2,3]", sub, 2, (const int[]){ 1, 0 });
	_step("n1,n4,n2,n3", sub, 2, (const int[]){ 1, 0 });
	_step_bad("n[1,4,2,3]", out, 2, "holds 1 of the step's 2");
	_step_bad("n[1-3]", all, 4, "order holds 3 of the step's 4 nodes");
	_step_bad("n[1,2,2,3]", all, 4, "node n2 twice in the order");
	_step_bad("n[1-4]", dup, 2, "node n2 twice in the step");
	/* Slurm reads an open bracket as part of one host name. */
	_step_bad("n[1-", all, 4, "holds 0 of the step's 4");
	/* Slurm refuses a falling range (and leaks on it: never given). */
	_step_bad("n[4-1]", all, 4, "not a host list");
	/* Past the bound of hosts: refused before anything is expanded. */
	_step_bad("x[0-65535],y[0-65535],z[0-65535],w[0-65535],"
		  "v[0-65535],u[0-65535],t[0-65535],s[0-65535],"
		  "r[0-65535],q[0-65535],p[0-65535],o[0-65535],"
		  "m[0-65535],l[0-65535],k[0-65535],j[0-65535],n[1-4]",
		  all, 4, "not a host list (expands to too many");
	_step_bad("n[1-4];x", all, 4, "not a host list");
	_step_bad("", all, 4, "no order");
}
END_TEST

/*
 * The other direction (topoml/contract.h): a job's placement options as
 * select/topoml reads them from its SPANK environment, in either form,
 * the last entry winning; a bad value is told from none.
 */
START_TEST(test_contract)
{
	const char *env[] = {
		"SLURM_JOB_NAME=x",
		"SPANK_" TOPOML_COMM_JOB_ENV "=isolate",
		TOPOML_COMM_JOB_ENV "=alltoall",
		TOPOML_PARALLEL_JOB_ENV "X=tp=2",
		"SPANK_" TOPOML_PARALLEL_JOB_ENV "=tp=2,pp=4",
		TOPOML_SPARES_JOB_ENV "=3",
	};
	const char *bad_env[] = {
		TOPOML_COMM_JOB_ENV "=ring",
		TOPOML_PARALLEL_JOB_ENV "=tp=0",
		TOPOML_SPARES_JOB_ENV "=-1",
	};
	enum topoml_hint h = TOPOML_HINT_ALLREDUCE;
	struct topoml_parallel p = { 0 };
	const char *bad = "x";
	int k = -1;

	ck_assert_int_eq(topoml_job_comm(env, 6, &h, &bad), 1);
	ck_assert_int_eq(h, TOPOML_HINT_ALLTOALL);
	ck_assert_ptr_null(bad);
	ck_assert_int_eq(topoml_job_parallel(env, 6, &p, NULL), 1);
	ck_assert_int_eq(p.tp, 2);
	ck_assert_int_eq(p.pp, 4);
	ck_assert_int_eq(topoml_job_spares(env, 6, &k, NULL), 1);
	ck_assert_int_eq(k, 3);
	/* none given */
	ck_assert_int_eq(topoml_job_comm(env, 1, &h, &bad), 0);
	ck_assert_int_eq(topoml_job_spares(NULL, 0, &k, NULL), 0);
	ck_assert_int_eq(k, 3);
	/* given, not valid: the value as given, the output untouched */
	ck_assert_int_eq(topoml_job_comm(bad_env, 3, &h, &bad), -1);
	ck_assert_str_eq(bad, "ring");
	ck_assert_int_eq(h, TOPOML_HINT_ALLTOALL);
	ck_assert_int_eq(topoml_job_parallel(bad_env, 3, &p, &bad), -1);
	ck_assert_str_eq(bad, "tp=0");
	ck_assert_int_eq(topoml_job_spares(bad_env, 3, &k, &bad), -1);
	ck_assert_str_eq(bad, "-1");
	ck_assert_int_eq(k, 3);
	/* the per-entry accessors select/topoml calls today */
	ck_assert_str_eq(topoml_comm_job_env(env[1]), "isolate");
	ck_assert_ptr_null(topoml_parallel_job_env(env[3]));
	ck_assert_str_eq(topoml_spares_job_env(env[5]), "3");
	ck_assert_int_eq(topoml_spares_parse("0001024", &k), 0);
	ck_assert_int_eq(k, 1024);
	ck_assert_int_eq(topoml_spares_parse("1025", &k), -1);
	ck_assert_int_eq(topoml_spares_parse("", &k), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jobcomment");
	TCase *tc = tcase_create("merge");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_keeps_theirs);
	tcase_add_test(tc, test_replaces_ours);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_long_order);
	tcase_add_test(tc, test_not_ours);
	tcase_add_test(tc, test_junk);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_step_order);
	tcase_add_test(tc, test_contract);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
