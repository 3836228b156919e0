/*
 * select/topoml's pure helpers (select_plugin/job_req.c): the node count,
 * the --ml-comm hint and the will-run candidates the engine is asked for,
 * without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>
#include <time.h>

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

START_TEST(free_by_end_time_order)
{
	/* nodes 0-1 idle, 2-3 free at 100, 4 at 50, 5 at 300 */
	int64_t at[] = { 0, 0, 100, 100, 50, 300 };
	hwloc_bitmap_t avail = hwloc_bitmap_alloc(), out = hwloc_bitmap_alloc();

	hwloc_bitmap_set_range(avail, 0, 5);
	/* two nodes: the idle ones, now */
	ck_assert_int_eq(topoml_job_free_by(at, avail, 2, out), 0);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 2);
	ck_assert(hwloc_bitmap_isset(out, 0) && hwloc_bitmap_isset(out, 1));
	/* three: at 50, node 4 joins */
	ck_assert_int_eq(topoml_job_free_by(at, avail, 3, out), 50);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 3);
	ck_assert(hwloc_bitmap_isset(out, 4));
	/* four: at 100 both 2 and 3 are free (the engine chooses) */
	ck_assert_int_eq(topoml_job_free_by(at, avail, 4, out), 100);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 5);
	ck_assert(!hwloc_bitmap_isset(out, 5));
	/* only candidates count */
	hwloc_bitmap_clr(avail, 0);
	ck_assert_int_eq(topoml_job_free_by(at, avail, 6, out), -1);
	ck_assert(hwloc_bitmap_iszero(out));
	ck_assert_int_eq(topoml_job_free_by(at, avail, 5, out), 300);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 5);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(out);
}
END_TEST

/* The window-1501 case: 16 CPUs wanted, 8 idle now on nodes 0-1, nodes
 * 4-7 (4 CPUs each) free whole at 100, nodes 2-3 busy until 500. */
START_TEST(units_free_by_end_time_order)
{
	int64_t at[] = { 0, 0, 500, 500, 100, 100, 100, 100 };
	uint32_t cap[] = { 4, 4, 4, 4, 4, 4, 4, 4 };
	uint32_t fu[] = { 4, 4, 0, 0, 0, 0, 1, 0 };
	hwloc_bitmap_t avail = hwloc_bitmap_alloc(), out = hwloc_bitmap_alloc();

	hwloc_bitmap_set_range(avail, 0, 7);
	/* 9 units are free now: nothing changes */
	ck_assert_int_eq(topoml_job_units_free_by(at, cap, fu, avail, 9, out),
			 0);
	ck_assert(hwloc_bitmap_iszero(out));
	ck_assert_int_eq(fu[4], 0);
	/* 16: at 100 nodes 4-7 are idle, whole, and marked so */
	ck_assert_int_eq(topoml_job_units_free_by(at, cap, fu, avail, 16,
						  out), 100);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 4);
	ck_assert(hwloc_bitmap_isset(out, 4) && hwloc_bitmap_isset(out, 7));
	for (int v = 4; v < 8; v++)
		ck_assert_uint_eq(fu[v], 4);
	ck_assert_uint_eq(fu[2], 0);
	ck_assert_uint_eq(fu[0], 4);
	/* more than ever: -1, nothing changed */
	fu[4] = 0;
	ck_assert_int_eq(topoml_job_units_free_by(at, cap, fu, avail, 33,
						  out), -1);
	ck_assert(hwloc_bitmap_iszero(out));
	ck_assert_uint_eq(fu[4], 0);
	/* 32: everything, at 500 */
	ck_assert_int_eq(topoml_job_units_free_by(at, cap, fu, avail, 32,
						  out), 500);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 6);
	/* only candidates count */
	hwloc_bitmap_clr_range(avail, 4, 7);
	fu[2] = fu[3] = 0;
	ck_assert_int_eq(topoml_job_units_free_by(at, cap, fu, avail, 16,
						  out), 500);
	ck_assert_int_eq(hwloc_bitmap_weight(out), 2);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(out);
}
END_TEST

/* TorusBoxWait's clock: per job, from its first call, then dropped. */
START_TEST(box_wait_clock)
{
	struct topoml_box_waits w = { 0 };

	/* 0 = never wait */
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1000, 0), 0);
	ck_assert_int_eq(w.n, 0);
	/* job 7 first seen at 1000 with a 60 s wait */
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1000, 60), 60);
	ck_assert_int_eq(topoml_box_wait_left(&w, 8, 1010, 60), 60);
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1030, 60), 30);
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1059, 60), 1);
	/* backfill's plan reads the clock and leaves it: no clock yet is
	 * the whole wait, an expired one none, and neither is made or
	 * dropped */
	ck_assert_int_eq(topoml_box_wait_peek(&w, 7, 1059, 60), 1);
	ck_assert_int_eq(topoml_box_wait_peek(&w, 7, 1070, 60), 0);
	ck_assert_int_eq(topoml_box_wait_peek(&w, 5, 1070, 60), 60);
	ck_assert_int_eq(topoml_box_wait_peek(&w, 7, 1059, 0), 0);
	ck_assert_int_eq(w.n, 2);
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1059, 60), 1);
	/* waited long enough: place it, clock gone */
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1060, 60), 0);
	ck_assert_int_eq(w.n, 1);
	/* a box freed for job 8: its clock is forgotten, a later need
	 * starts a new one */
	ck_assert_int_eq(topoml_box_wait_forget(&w, 8), 1010);
	ck_assert_int_eq(w.n, 0);
	ck_assert_int_eq(topoml_box_wait_forget(&w, 8), -1);
	ck_assert_int_eq(topoml_box_wait_left(&w, 8, 2000, 60), 60);
	/* a job that left the queue while waiting is dropped later */
	ck_assert_int_eq(topoml_box_wait_left(&w, 9, 2000 + 3721, 60), 60);
	ck_assert_int_eq(w.n, 1);
	ck_assert_uint_eq(w.job[0], 9);
	topoml_box_waits_clear(&w);
	ck_assert_int_eq(w.n, 0);
}
END_TEST

/*
 * The verdicts kept with a waiting job's clock (TorusBoxWait's "could the
 * partition ever give it a box", HybridWait's best locality): computed
 * once while the job waits, under the key of their inputs.
 */
START_TEST(box_wait_verdicts)
{
	struct topoml_box_waits w = { 0 };
	int64_t yes[TOPOML_WAIT_VALS] = { 1, 0 };
	int64_t best[TOPOML_WAIT_VALS] = { 3, 17 };
	int64_t val[TOPOML_WAIT_VALS] = { 0 };
	uint64_t in[3] = { 8, 1000, 2 }, k1, k2, k3;

	k1 = topoml_wait_key(in, 3);
	in[0] = 16;			/* another node count */
	k2 = topoml_wait_key(in, 3);
	in[0] = 8;
	in[1] = 1001;			/* partitions changed */
	k3 = topoml_wait_key(in, 3);
	ck_assert(k1 && k2 && k3);
	ck_assert(k1 != k2 && k1 != k3 && k2 != k3);
	in[1] = 1000;
	ck_assert(topoml_wait_key(in, 3) == k1);
	ck_assert(topoml_wait_key(in, 2) != k1);
	ck_assert(topoml_wait_key(NULL, 0) != 0);

	/* no clock yet: nothing kept, a miss */
	ck_assert(!topoml_box_wait_verdict_set(&w, 7, 0, k1, yes));
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	/* the job's clock starts: its slots are empty */
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1000, 60), 60);
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 1, k1, val));
	/* set, then get under the same key */
	ck_assert(topoml_box_wait_verdict_set(&w, 7, 0, k1, yes));
	ck_assert(topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	ck_assert_int_eq(val[0], 1);
	ck_assert_int_eq(val[1], 0);
	/* the other slot is its own */
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 1, k1, val));
	ck_assert(topoml_box_wait_verdict_set(&w, 7, 1, k2, best));
	ck_assert(topoml_box_wait_verdict_get(&w, 7, 1, k2, val));
	ck_assert_int_eq(val[0], 3);
	ck_assert_int_eq(val[1], 17);
	ck_assert(topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	ck_assert_int_eq(val[0], 1);
	/* a different key misses (inputs changed), and is then kept */
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k3, val));
	yes[0] = 0;
	ck_assert(topoml_box_wait_verdict_set(&w, 7, 0, k3, yes));
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	ck_assert(topoml_box_wait_verdict_get(&w, 7, 0, k3, val));
	ck_assert_int_eq(val[0], 0);
	/* key 0 is never kept; slots out of range are refused */
	ck_assert(!topoml_box_wait_verdict_set(&w, 7, 0, 0, yes));
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, 0, val));
	ck_assert(!topoml_box_wait_verdict_set(&w, 7, TOPOML_WAIT_SLOTS, k1,
					       yes));
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, -1, k1, val));
	/* another job's verdicts are its own */
	ck_assert_int_eq(topoml_box_wait_left(&w, 8, 1010, 60), 60);
	ck_assert(!topoml_box_wait_verdict_get(&w, 8, 0, k3, val));
	ck_assert(topoml_box_wait_verdict_set(&w, 8, 0, k2, best));
	/* forget drops them with the clock; a new clock starts empty */
	ck_assert_int_eq(topoml_box_wait_forget(&w, 7), 1000);
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k3, val));
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 1, k2, val));
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1020, 60), 60);
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k3, val));
	/* job 8's moved with its clock when job 7's was dropped */
	ck_assert(topoml_box_wait_verdict_get(&w, 8, 0, k2, val));
	ck_assert_int_eq(val[1], 17);
	/* the wait runs out: the clock and its verdicts go */
	ck_assert_int_eq(topoml_box_wait_left(&w, 8, 1070, 60), 0);
	ck_assert(!topoml_box_wait_verdict_get(&w, 8, 0, k2, val));
	/* clear drops them all */
	ck_assert(topoml_box_wait_verdict_set(&w, 7, 0, k1, best));
	topoml_box_waits_clear(&w);
	ck_assert_int_eq(w.n, 0);
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 2000, 60), 60);
	ck_assert(!topoml_box_wait_verdict_get(&w, 7, 0, k1, val));
	topoml_box_waits_clear(&w);
}
END_TEST

/*
 * Many waiting jobs (every user may keep some): the clocks agree with a
 * plain table through inserts, forgets, runs-out and stale sweeps in a
 * random order, and one scheduling pass over them all costs linear time
 * (a linear search and a sweep per call made it quadratic).
 */
static unsigned long _seed = 99;

static unsigned _rnd(unsigned n)
{
	_seed = _seed * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)(_seed >> 33) % n;
}

START_TEST(box_wait_many_agree)
{
	enum { J = 5000 };
	static int64_t since[J];	/* reference: 0 = no clock */
	struct topoml_box_waits w = { 0 };
	int64_t now = 1000, swept = 0;

	for (int step = 0; step < 200000; step++) {
		uint32_t job = 1 + _rnd(J - 1);
		unsigned op = _rnd(10);

		now += _rnd(3);
		if (op == 0) {
			ck_assert_int_eq(topoml_box_wait_forget(&w, job),
					 since[job] ? since[job] : -1);
			since[job] = 0;
		} else if (op == 1) {
			int64_t got = topoml_box_wait_peek(&w, job, now, 600);
			int64_t want = !since[job] ? 600 :
				now - since[job] >= 600 ? 0 :
				since[job] + 600 - now;

			ck_assert_int_eq(got, want);
		} else {
			int64_t got = topoml_box_wait_left(&w, job, now, 600);
			int64_t want;

			/* stale clocks go at most once a minute */
			if (!swept || now - swept >= 60) {
				swept = now;
				for (int k = 0; k < J; k++)
					if (k != (int)job && since[k] &&
					    now - since[k] > 2 * 600 + 3600)
						since[k] = 0;
			}
			if (!since[job])
				since[job] = now;
			want = now - since[job] >= 600 ? 0 :
			       since[job] + 600 - now;
			if (!want)
				since[job] = 0;
			ck_assert_int_eq(got, want);
		}
	}
	/* a sweep long after: only the job asking keeps a clock */
	now += 2 * 600 + 3601;
	ck_assert_int_eq(topoml_box_wait_left(&w, J + 1, now, 600), 600);
	ck_assert_int_eq(w.n, 1);
	topoml_box_waits_clear(&w);
}
END_TEST

static double _pass_secs(int jobs)
{
	struct topoml_box_waits w = { 0 };
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int pass = 0; pass < 3; pass++)
		for (int j = 1; j <= jobs; j++)
			ck_assert_int_gt(topoml_box_wait_left(&w, j * 7919,
							      1000 + pass,
							      600), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	topoml_box_waits_clear(&w);
	return (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}

START_TEST(box_wait_many_linear)
{
	double small = _pass_secs(10000), big = _pass_secs(80000);

	/* 8x the jobs: 8x the time if linear, 64x if quadratic */
	ck_assert_msg(big < 20 * small + 0.01,
		      "10000 jobs %.4f s, 80000 jobs %.4f s", small, big);
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
	tcase_add_test(tc, free_by_end_time_order);
	tcase_add_test(tc, units_free_by_end_time_order);
	tcase_add_test(tc, box_wait_clock);
	tcase_add_test(tc, box_wait_verdicts);
	tcase_add_test(tc, box_wait_many_agree);
	tcase_add_test(tc, box_wait_many_linear);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
