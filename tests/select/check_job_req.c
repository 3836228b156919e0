/*
 * select/topoml's pure helpers (select_plugin/job_req.c): the node count
 * and the --ml-comm hint the engine is asked for, without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>

#include "../select_plugin/job_req.h"

START_TEST(nodes_wanted_from_counts)
{
	/* -N 4: four nodes; -N 2-6: the minimum */
	ck_assert_uint_eq(topoml_job_nodes_wanted(4, 4, 4, 0, 0), 4);
	ck_assert_uint_eq(topoml_job_nodes_wanted(2, 6, 0, 0, 0), 2);
	/* sbatch --nodes=2-6 with a requested count of 3 */
	ck_assert_uint_eq(topoml_job_nodes_wanted(2, 6, 3, 0, 0), 3);
	/* nothing given: one node */
	ck_assert_uint_eq(topoml_job_nodes_wanted(0, 0, 0, 0, 0), 1);
}
END_TEST

START_TEST(nodes_wanted_from_cpus)
{
	/* sbatch -n 80 on 32-CPU nodes: 3 nodes, not 1 */
	ck_assert_uint_eq(topoml_job_nodes_wanted(1, 0, 0, 80, 32), 3);
	/* exactly two nodes' worth */
	ck_assert_uint_eq(topoml_job_nodes_wanted(1, 0, 0, 64, 32), 2);
	/* -N 4 -n 8: the node count is larger */
	ck_assert_uint_eq(topoml_job_nodes_wanted(4, 0, 0, 8, 32), 4);
	/* capped by max_nodes (cons_tres then refuses or packs) */
	ck_assert_uint_eq(topoml_job_nodes_wanted(1, 2, 0, 200, 32), 2);
	/* unknown CPUs per node: the node count alone */
	ck_assert_uint_eq(topoml_job_nodes_wanted(1, 0, 0, 200, 0), 1);
	/* no wrap near the largest count */
	ck_assert_uint_eq(topoml_job_nodes_wanted(1, 0, 0, 0xfffffffeU, 2),
			  0x7fffffffU);
}
END_TEST

START_TEST(hint_from_job_env)
{
	/* as slurmctld keeps --ml-comm in the job's SPANK environment */
	const char *env[] = { "FOO=bar",
			      "SPANK_" TOPOML_COMM_JOB_ENV "=alltoall",
			      TOPOML_COMM_JOB_ENV "X=isolate",
			      "TOPOML_COMM=isolate" };
	const char *bad_env[] = { TOPOML_COMM_JOB_ENV "=isolate",
				  "SPANK_" TOPOML_COMM_JOB_ENV "=bogus" };
	const char *bad = "x";

	/* no entry: the partition/site default, nothing bad */
	ck_assert_int_eq(topoml_job_hint(TOPOML_HINT_ISOLATE, NULL, 0, &bad),
			 TOPOML_HINT_ISOLATE);
	ck_assert_ptr_null(bad);
	/* the --ml-comm entry, SPANK_ prefix or not; near names ignored */
	ck_assert_int_eq(topoml_job_hint(TOPOML_HINT_ALLREDUCE, env, 4, &bad),
			 TOPOML_HINT_ALLTOALL);
	ck_assert_ptr_null(bad);
	ck_assert_int_eq(topoml_job_hint(TOPOML_HINT_ALLREDUCE, env, 1, &bad),
			 TOPOML_HINT_ALLREDUCE);
	/* an unknown value keeps the hint so far and is reported */
	ck_assert_int_eq(topoml_job_hint(TOPOML_HINT_ALLREDUCE, bad_env, 2,
					 &bad), TOPOML_HINT_ISOLATE);
	ck_assert_str_eq(bad, "bogus");
	ck_assert_int_eq(topoml_job_hint(TOPOML_HINT_ALLREDUCE, bad_env + 1,
					 1, NULL), TOPOML_HINT_ALLREDUCE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("job_req");
	TCase *tc = tcase_create("helpers");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, nodes_wanted_from_counts);
	tcase_add_test(tc, nodes_wanted_from_cpus);
	tcase_add_test(tc, hint_from_job_env);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
