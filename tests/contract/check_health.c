/*
 * Node health records (topology/contract/health.c): the parser of a job's
 * health.jsonl (the user's file: only straggler lines with a node name
 * count, junk is counted and skipped, the size is bounded), the
 * "topoml-health:" comment part (round trip, merge keeps the others'
 * parts, junk refused), and the per-node table (one user never drains,
 * two users do under drain only, avoid ends on time, the oldest
 * sightings go, the state file reads back and refuses junk).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/health.h"

static int _parse(const char *s, struct topoml_health_names *n, int *bad)
{
	char err[128];

	return topoml_health_report_parse(s, strlen(s), n, bad, err,
					  sizeof(err));
}

START_TEST(test_report)
{
	struct topoml_health_names n;
	int bad;

	ck_assert_int_eq(_parse("{\"event\": \"straggler\", \"node\": \"n3\", "
				"\"ratio\": 1.5, \"ranks\": [1, 2]}\n"
				"{\"event\": \"straggler\", \"node\": \"n3\"}\n"
				"\n{\"node\": \"n9\", \"event\": \"straggler\"}",
				&n, &bad), 2);
	ck_assert_int_eq(bad, 0);
	ck_assert_str_eq(n.name[0], "n3");
	ck_assert_str_eq(n.name[1], "n9");
	/* other events skipped, junk counted */
	ck_assert_int_eq(_parse("{\"event\": \"other\", \"node\": \"n1\"}\n"
				"garbage\n[1]\n{\"event\": 3}\n"
				"{\"event\": \"straggler\"}\n"
				"{\"event\": \"straggler\", \"node\": \"../x\"}\n"
				"{\"event\": \"straggler\", \"node\": \"\"}\n"
				"{\"event\": \"straggler\", \"node\": 7}\n"
				"{\"event\": \"straggler\", \"node\": \"n1\"} x\n"
				"{\"event\": \"straggler\", \"node\": \"a b\"}\n",
				&n, &bad), 0);
	ck_assert_int_eq(bad, 9);
	/* a NUL inside the name */
	ck_assert_int_eq(topoml_health_report_parse(
		"{\"event\": \"straggler\", \"node\": \"n1\\u0000n2\"}", 45, &n,
		&bad, NULL, 0), 0);
	ck_assert_int_eq(bad, 1);
}
END_TEST

/* The lines the detectors write (contrib/ckpt: the C hook's fprintf and
 * the Python twin's json.dumps(sort_keys=True)). */
START_TEST(test_report_writers)
{
	const char *c_line = "{\"event\": \"straggler\", \"job\": \"12\", "
		"\"job_compute_ms\": 10.000, \"node\": \"n17\", "
		"\"node_compute_ms\": 13.100, \"ranks\": [8,9], "
		"\"ratio\": 1.310, \"since_step\": 4061, \"step\": 4100, "
		"\"threshold\": 1.2, \"time\": \"2026-12-05T05:36:04Z\", "
		"\"window\": 50}\n";
	const char *py_line = "{\"event\": \"straggler\", \"job\": \"12\", "
		"\"job_compute_ms\": 10.0, \"node\": \"gpu-a.3\", "
		"\"node_compute_ms\": 13.1, \"ranks\": [8, 9], "
		"\"ratio\": 1.31, \"since_step\": 4061, \"step\": 4100, "
		"\"threshold\": 1.2, \"time\": \"2026-12-05T05:36:04Z\", "
		"\"window\": 50}\n";
	struct topoml_health_names n;
	char buf[1024];
	int bad;

	snprintf(buf, sizeof(buf), "%s%s", c_line, py_line);
	ck_assert_int_eq(_parse(buf, &n, &bad), 2);
	ck_assert_int_eq(bad, 0);
	ck_assert_str_eq(n.name[0], "n17");
	ck_assert_str_eq(n.name[1], "gpu-a.3");
}
END_TEST

START_TEST(test_report_bounds)
{
	struct topoml_health_names n;
	size_t big = TOPOML_HEALTH_REPORT_MAX + 1;
	char *s = malloc(big + 1), err[128];
	int bad;

	memset(s, ' ', big);
	s[big] = '\0';
	ck_assert_int_eq(topoml_health_report_parse(s, big, &n, &bad, err,
						    sizeof(err)), -1);
	/* a long line is junk; many names stop at the bound */
	memset(s, 'x', TOPOML_HEALTH_LINE_MAX + 10);
	ck_assert_int_eq(topoml_health_report_parse(
		s, TOPOML_HEALTH_LINE_MAX + 10, &n, &bad, err, sizeof(err)), 0);
	ck_assert_int_eq(bad, 1);
	size_t at = 0;
	for (int i = 0; i < 100; i++)
		at += sprintf(s + at, "{\"event\": \"straggler\", "
			      "\"node\": \"n%d\"}\n", i);
	ck_assert_int_eq(topoml_health_report_parse(s, at, &n, &bad, err,
						    sizeof(err)),
			 TOPOML_HEALTH_NAMES_MAX);
	/* deep nesting is refused at depth 4, not recursed */
	at = 0;
	for (int i = 0; i < 1000; i++)
		s[at++] = '[';
	ck_assert_int_eq(topoml_health_report_parse(s, at, &n, &bad, err,
						    sizeof(err)), 0);
	ck_assert_int_eq(bad, 1);
	free(s);
}
END_TEST

START_TEST(test_part)
{
	struct topoml_health_names n = { 0 }, back;
	char err[128], *w, *m;

	topoml_health_names_add(&n, "n3");
	topoml_health_names_add(&n, "gpu-a.01");
	ck_assert(!topoml_health_names_add(&n, "n3"));
	ck_assert(!topoml_health_names_add(&n, "-x"));
	w = topoml_health_part_write(&n);
	ck_assert_str_eq(w, "topoml-health: straggler=n3,gpu-a.01");
	m = topoml_health_part_merge("site: x; topoml-health: straggler=n1; "
				     "topoml: placed=topoml", w);
	ck_assert_str_eq(m, "site: x; topoml: placed=topoml; "
			 "topoml-health: straggler=n3,gpu-a.01");
	ck_assert_int_eq(topoml_health_part_parse(m, &back, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(back.n, 2);
	ck_assert_str_eq(back.name[1], "gpu-a.01");
	free(m);
	m = topoml_health_part_drop("site: x; topoml-health: straggler=n1; "
				    "topoml: placed=topoml");
	ck_assert_str_eq(m, "site: x; topoml: placed=topoml");
	free(m);
	m = topoml_health_part_drop("topoml-health: straggler=n1");
	ck_assert_str_eq(m, "");
	free(m);
	m = topoml_health_part_merge(NULL, w);
	ck_assert_str_eq(m, w);
	free(m);
	free(w);
	ck_assert_int_eq(topoml_health_part_parse("topoml: placed=x", &back,
						  err, sizeof(err)), 1);
	ck_assert_int_eq(topoml_health_part_parse(NULL, &back, err,
						  sizeof(err)), 1);
	const char *junk[] = {
		"topoml-health: straggler=",
		"topoml-health: straggler=n1,",
		"topoml-health: straggler=,n1",
		"topoml-health: straggler=n1 x",
		"topoml-health: drain=n1",
		"topoml-health: straggler=n1; topoml-health: straggler=n2",
		"topoml-health: straggler=../etc",
	};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		ck_assert_msg(topoml_health_part_parse(junk[i], &back, err,
						       sizeof(err)) == -1,
			      "%s", junk[i]);
}
END_TEST

START_TEST(test_table)
{
	struct topoml_health_table t = { 0 };
	struct topoml_health_node *n;

	/* report: recorded, nothing done */
	ck_assert_int_eq(topoml_health_record(&t, "n1", 10, 1000, 100,
					      TOPOML_HEALTH_REPORT, 60),
			 TOPOML_HEALTH_ACT_NONE);
	n = topoml_health_find(&t, "n1");
	ck_assert(!topoml_health_avoided(n, 101));
	/* avoid: for avoid_time, then not */
	ck_assert_int_eq(topoml_health_record(&t, "n1", 11, 1000, 100,
					      TOPOML_HEALTH_AVOID, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	ck_assert(topoml_health_avoided(n, 159));
	ck_assert(!topoml_health_avoided(n, 160));
	/* drain: one user, many jobs: never */
	for (uint32_t j = 20; j < 40; j++)
		ck_assert_int_eq(topoml_health_record(&t, "n2", j, 1000, 200 + j,
						      TOPOML_HEALTH_DRAIN, 60),
				 TOPOML_HEALTH_ACT_AVOID);
	n = topoml_health_find(&t, "n2");
	ck_assert_int_eq(n->nseen, TOPOML_HEALTH_SEEN_MAX);
	ck_assert_int_eq(topoml_health_uids(n, 0), 1);
	/* a second user within the window: drain */
	ck_assert_int_eq(topoml_health_record(&t, "n2", 50, 1001, 250,
					      TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_DRAIN);
	/* the oldest went: job 20 and 21 are gone */
	for (int i = 0; i < n->nseen; i++)
		ck_assert_uint_gt(n->seen[i].job, 21);
	/* two users, but the first outside the window: no drain */
	ck_assert_int_eq(topoml_health_record(&t, "n3", 60, 1000, 300,
					      TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	ck_assert_int_eq(topoml_health_record(&t, "n3", 61, 1001, 400,
					      TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	/* two users under avoid: no drain */
	ck_assert_int_eq(topoml_health_record(&t, "n4", 70, 1000, 300,
					      TOPOML_HEALTH_AVOID, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	ck_assert_int_eq(topoml_health_record(&t, "n4", 71, 1001, 300,
					      TOPOML_HEALTH_AVOID, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	/* the same job again: one sighting */
	topoml_health_record(&t, "n4", 71, 1001, 310, TOPOML_HEALTH_AVOID, 60);
	ck_assert_int_eq(topoml_health_find(&t, "n4")->nseen, 2);
	ck_assert_int_eq(topoml_health_record(&t, "bad name", 1, 1, 1,
					      TOPOML_HEALTH_AVOID, 60), -1);
	ck_assert_int_eq(t.n, 4);
	topoml_health_table_clear(&t);
}
END_TEST

START_TEST(test_state)
{
	struct topoml_health_table t = { 0 }, back = { 0 };
	char *buf = NULL, err[128];
	size_t len = 0;
	FILE *f;

	topoml_health_record(&t, "n1", 10, 1000, 100, TOPOML_HEALTH_AVOID,
			     60);
	topoml_health_record(&t, "n1", 11, 1001, 101, TOPOML_HEALTH_DRAIN,
			     60);
	topoml_health_record(&t, "n2", 12, 1000, 102, TOPOML_HEALTH_REPORT,
			     60);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(topoml_health_save(f, &t), 0);
	fclose(f);
	ck_assert_int_eq(topoml_health_load(buf, len, &back, err,
					    sizeof(err)), 0);
	ck_assert_int_eq(back.n, 2);
	ck_assert_int_eq(memcmp(back.node, t.node, 2 * sizeof(*t.node)), 0);
	free(buf);
	const char *junk[] = {
		"",
		"topoml-health 2\n",
		"topoml-health 1\nnode=n1 action=avoid at=1 until=2 seen= why=x",
		"topoml-health 1\nnode=n1 action=maybe at=1 until=2 seen= why=\n",
		"topoml-health 1\nnode=n1 action=avoid at=-1 until=2 seen= why=\n",
		"topoml-health 1\nnode=n1 action=avoid at=1 until=2 seen=1/2 why=\n",
		"topoml-health 1\nnode=n1 action=avoid at=1 until=2 seen=1/2/3, why=\n",
		"topoml-health 1\nnode=n1 action=avoid at=1 until=2 seen= why=\n"
		"node=n1 action=avoid at=1 until=2 seen= why=\n",
		"topoml-health 1\nnode=../x action=avoid at=1 until=2 seen= why=\n",
	};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		ck_assert_msg(topoml_health_load(junk[i], strlen(junk[i]),
						 &back, err, sizeof(err)) == -1,
			      "%zu", i);
	const char *ok = "topoml-health 1\nnode=n1 action=drain at=1 "
			 "until=2 seen=1/2/3,4/5/6 why=two users\n";
	ck_assert_int_eq(topoml_health_load(ok, strlen(ok), &back, err,
					    sizeof(err)), 0);
	ck_assert_int_eq(back.node[0].nseen, 2);
	ck_assert_str_eq(back.node[0].why, "two users");
	topoml_health_table_clear(&back);
	topoml_health_table_clear(&t);
}
END_TEST

/* Root-side preflight findings: the part's preflight= key (round trip,
 * strict), never from the user's report, acted on alone under drain. */
START_TEST(test_pf)
{
	struct topoml_health_names n = { 0 }, back;
	struct topoml_health_pf pf = { 0 }, pback;
	struct topoml_health_table t = { 0 }, tb = { 0 };
	char err[128], *w, *m, *buf = NULL;
	size_t len = 0;
	int bad;
	FILE *f;

	ck_assert(topoml_health_pf_add(&pf, "n2", TOPOML_HEALTH_PF_ECC));
	ck_assert(topoml_health_pf_add(&pf, "n2", TOPOML_HEALTH_PF_PORT));
	ck_assert(topoml_health_pf_add(&pf, "n5", TOPOML_HEALTH_PF_PAGES));
	ck_assert(!topoml_health_pf_add(&pf, "n6", 0x8));
	ck_assert(!topoml_health_pf_add(&pf, "a b", TOPOML_HEALTH_PF_ECC));
	w = topoml_health_part_write_pf(NULL, &pf);
	ck_assert_str_eq(w, "topoml-health: preflight=n2:ecc+port,n5:pages");
	ck_assert_int_eq(topoml_health_part_parse_pf(w, &back, &pback, err,
						     sizeof(err)), 0);
	ck_assert_int_eq(back.n, 0);
	ck_assert_int_eq(pback.n, 2);
	ck_assert_str_eq(pback.name[1], "n5");
	ck_assert_uint_eq(pback.checks[0], TOPOML_HEALTH_PF_ECC |
			  TOPOML_HEALTH_PF_PORT);
	free(w);
	topoml_health_names_add(&n, "n1");
	w = topoml_health_part_write_pf(&n, &pf);
	ck_assert_str_eq(w, "topoml-health: straggler=n1 "
			 "preflight=n2:ecc+port,n5:pages");
	m = topoml_health_part_merge("site: x; topoml-health: straggler=n9",
				     w);
	ck_assert_int_eq(topoml_health_part_parse_pf(m, &back, &pback, err,
						     sizeof(err)), 0);
	ck_assert_int_eq(back.n, 1);
	ck_assert_int_eq(pback.n, 2);
	/* the straggler-only reader accepts the key and leaves it out */
	ck_assert_int_eq(topoml_health_part_parse(m, &back, err,
						  sizeof(err)), 0);
	ck_assert_str_eq(back.name[0], "n1");
	free(m);
	free(w);
	const char *junk[] = {
		"topoml-health: preflight=n2",
		"topoml-health: preflight=n2:",
		"topoml-health: preflight=n2:ecc+",
		"topoml-health: preflight=n2:ecc+ecc",
		"topoml-health: preflight=n2:fan",
		"topoml-health: preflight=:ecc",
		"topoml-health: preflight=n2:ecc,",
		"topoml-health: preflight=",
		"topoml-health: preflight=n2:ecc straggler=n1",
		"topoml-health: straggler=n1 ",
		"topoml-health: straggler=n1  preflight=n2:ecc",
		"topoml-health: straggler=n1 preflight=n2:ecc x",
		"topoml-health: straggler=n1 preflight=n2:ecc preflight=n3:ecc",
		"topoml-health: straggler=n1 other=n2",
	};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		ck_assert_msg(topoml_health_part_parse_pf(junk[i], &back,
							  &pback, err,
							  sizeof(err)) == -1,
			      "%zu: %s", i, junk[i]);
	/* the user's report cannot carry one: only straggler node names,
	 * which hold no space, '=' or ':' */
	ck_assert_int_eq(_parse("{\"event\": \"preflight\", \"node\": \"n2\", "
				"\"check\": \"ecc\"}\n"
				"{\"event\": \"straggler\", \"node\": "
				"\"n1 preflight=n2:ecc\"}\n"
				"{\"event\": \"straggler\", \"node\": "
				"\"n2:ecc\"}\n", &n, &bad), 0);
	ck_assert_int_eq(bad, 2);

	/* the table: one finding drains under drain, avoids under avoid */
	ck_assert_int_eq(topoml_health_record_pf(&t, "n2", 40,
						 TOPOML_HEALTH_PF_ECC, 100,
						 TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_DRAIN);
	ck_assert_str_eq(topoml_health_find(&t, "n2")->why,
			 "root-side preflight: ecc");
	ck_assert_int_eq(topoml_health_record_pf(&t, "n3", 41,
						 TOPOML_HEALTH_PF_PORT, 100,
						 TOPOML_HEALTH_AVOID, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	ck_assert(topoml_health_avoided(topoml_health_find(&t, "n3"), 159));
	ck_assert_int_eq(topoml_health_record_pf(&t, "n4", 42,
						 TOPOML_HEALTH_PF_PAGES, 100,
						 TOPOML_HEALTH_REPORT, 60),
			 TOPOML_HEALTH_ACT_NONE);
	ck_assert_int_eq(topoml_health_record_pf(&t, "n4", 42, 0, 100,
						 TOPOML_HEALTH_DRAIN, 60), -1);
	/* one user's straggler report after it, within the time: drain;
	 * on a node without one: avoid only */
	ck_assert_int_eq(topoml_health_record(&t, "n3", 43, 1000, 150,
					      TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_DRAIN);
	ck_assert_int_eq(topoml_health_record(&t, "n3", 44, 1000, 200,
					      TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	ck_assert_int_eq(topoml_health_record(&t, "n7", 45, 1000, 200,
					      TOPOML_HEALTH_DRAIN, 60),
			 TOPOML_HEALTH_ACT_AVOID);
	/* the state file keeps it */
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(topoml_health_save(f, &t), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, " pf=40/100/ecc why="), "%s", buf);
	ck_assert_int_eq(topoml_health_load(buf, len, &tb, err,
					    sizeof(err)), 0);
	ck_assert_int_eq(tb.n, t.n);
	ck_assert_int_eq(memcmp(tb.node, t.node, t.n * sizeof(*t.node)), 0);
	free(buf);
	const char *sj[] = {
		"topoml-health 1\nnode=n1 action=drain at=1 until=2 seen= "
		"pf=1/2/fan why=\n",
		"topoml-health 1\nnode=n1 action=drain at=1 until=2 seen= "
		"pf=1/0/ecc why=\n",
		"topoml-health 1\nnode=n1 action=drain at=1 until=2 seen= "
		"pf=1/2 why=\n",
	};
	for (size_t i = 0; i < sizeof(sj) / sizeof(sj[0]); i++)
		ck_assert_msg(topoml_health_load(sj[i], strlen(sj[i]), &tb,
						 err, sizeof(err)) == -1,
			      "%zu", i);
	topoml_health_table_clear(&tb);
	topoml_health_table_clear(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("health");
	TCase *tc = tcase_create("health");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_report);
	tcase_add_test(tc, test_report_writers);
	tcase_add_test(tc, test_report_bounds);
	tcase_add_test(tc, test_part);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_state);
	tcase_add_test(tc, test_pf);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
