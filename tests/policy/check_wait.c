/*
 * The locality wait (topology/topoml/wait.h): one decision for
 * select/topoml and the simulator.  On a generated 4x4x4 torus (exact
 * boxes), a block topology (Slurm's aligned groups), a generated fat-tree
 * (the fewest leaves), and the 576-node fat
 * tree with NVLink domains of tests/fixtures/hybrid (whole tensor
 * groups); and the job view
 * (topoml/jobview.h) from a SPANK environment.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "topoml.h"
#include "topoml/jobview.h"
#include "topoml/wait.h"

#define TPN 4

static void _pl(struct topoml_placement *pl, const int *v, int n)
{
	memset(pl, 0, sizeof(*pl));
	pl->nodes = malloc(sizeof(int) * n);
	ck_assert_ptr_nonnull(pl->nodes);
	memcpy(pl->nodes, v, sizeof(int) * n);
	pl->n = n;
}

/*
 * Of dragonfly groups g0 .. g0 + ng - 1, in node order, the nodes from
 * the skip-th to the (skip + per[g - g0])-th of each group: how many.
 */
static int _df_pick(const topoml_topo_t *t, int g0, int ng, const int *per,
		    int skip, int *out)
{
	int k = 0, c[16] = { 0 };

	ck_assert_int_le(ng, 16);
	for (int v = 0; v < t->nnodes; v++) {
		int g = t->nodes[v].group - g0;

		if (g < 0 || g >= ng)
			continue;
		if (c[g] >= skip && c[g] < skip + per[g])
			out[k++] = v;
		c[g]++;
	}
	return k;
}

/* The clock: up to bound seconds from since, then 0. */
START_TEST(wait_left)
{
	ck_assert(topoml_wait_left(100, 100, 60) == 60);
	ck_assert(topoml_wait_left(100, 159, 60) == 1);
	ck_assert(topoml_wait_left(100, 160, 60) == 0);
	ck_assert(topoml_wait_left(100, 500, 60) == 0);
	ck_assert(topoml_wait_left(100, 100, 0) == 0);
	/* the simulator's clock starts a hair after its first event */
	ck_assert(topoml_wait_left(100 + 1e-9, 160, 60) > 0);
}
END_TEST

/*
 * Torus 4x4x4, nodes a + 4 (b + 4 c): 0-7 are the 4x2x1 box; 0-6 and 20
 * span 4x2x2 = 16 nodes, no box.
 */
START_TEST(torus_box)
{
	static const int box[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const int loose[8] = { 0, 1, 2, 3, 4, 5, 6, 20 };
	topoml_topo_t *t = topoml_gen_torus("c", 4, 4, 4, true);
	struct topoml_wait_policy p = { .box_wait = 600, .box_span = 1 };
	struct topoml_wait_job j = { .nnodes = 8 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_placement pb, pl;
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), few = hwloc_bitmap_alloc();
	int64_t *at, when;

	ck_assert_ptr_nonnull(t);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	_pl(&pb, box, 8);
	_pl(&pl, loose, 8);

	/* no box, one possible: waits its 600 s from its first chance */
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1300,
				     &v) == 300);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_BOX);
	ck_assert(v.bound == 600);
	ck_assert_str_eq(v.what, "torus box of 8 nodes");
	ck_assert_str_eq(v.key, "LocalityWait");
	ck_assert(m.computed && m.box == 1);
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1600,
				     &v) == 0);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_BOX);
	ck_assert(!m.computed);		/* kept in the memo */

	/* a box: met */
	ck_assert(topoml_wait_decide(t, &p, &j, &pb, all, &m, -1, 0, &v) == 0);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_NONE);
	ck_assert(v.met);
	ck_assert_str_eq(v.met_what, "torus box of 8 nodes");

	/* a span the site accepts: met (2 x 8 >= 16) */
	p.box_span = 2;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	p.box_span = 1.5;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_BOX);

	/* never waits: the curve, pinned, no seconds, a size without box */
	p.torus_curve = true;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	p.torus_curve = false;
	j.pinned = true;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	j.pinned = false;
	p.box_wait = 0;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	p.box_wait = 600;
	j.nnodes = 7;
	pl.n = 7;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	j.nnodes = pl.n = 8;

	/* a universe (partition) that never holds a box: no wait */
	for (int i = 0; i < 8; i++)
		hwloc_bitmap_set(few, loose[i]);
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, few, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(m.computed && m.box == 0 && !v.met);

	/* will-run: the box that frees first (box at 200, the rest 1000) */
	at = calloc(t->nnodes, sizeof(*at));
	ck_assert_ptr_nonnull(at);
	for (int i = 0; i < t->nnodes; i++)
		at[i] = i < 8 ? 200 : 1000;
	v.kind = TOPOML_WAIT_BOX;
	when = topoml_wait_plan(t, &p, &j, &v, all, at, INT64_MAX, few);
	ck_assert_int_eq(when, 200);
	ck_assert_int_eq(hwloc_bitmap_weight(few), 8);
	ck_assert(hwloc_bitmap_isset(few, 7) && !hwloc_bitmap_isset(few, 20));
	free(at);
	topoml_placement_clear(&pb);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(few);
	topoml_free(t);
}
END_TEST

static topoml_topo_t *_load(const char *name)
{
	const char *d = getenv("TESTS_DIR");
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *p = NULL;

	ck_assert_int_ge(asprintf(&p, "%s/fixtures/hybrid/%s",
				  d && *d ? d : TESTS_SRCDIR, name), 0);
	t = topoml_load(p, TOPOML_FMT_AUTO, &err);
	topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
	ck_assert_ptr_nonnull(t);
	free(p);
	return t;
}

/*
 * Blocks (tests/fixtures/block/small.conf: b1..b6 of 4 nodes, BlockSizes
 * 4, 8, 16).  Busy n1, n9, n17: every pair has 7 free, so the engine
 * takes a job of 8 on b2 and b4, across the pairs (two blocks, as few as
 * Slurm's); with a wait it waits for a pair, which n17 frees at 200.
 */
START_TEST(block_group)
{
	static const int pair[8] = { 16, 17, 18, 19, 20, 21, 22, 23 };
	const char *d = getenv("TESTS_DIR");
	struct topoml_wait_policy p = { .box_wait = 600 };
	struct topoml_wait_job j = { .nnodes = 8 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_place_req req = { .nnodes = 8 };
	struct topoml_placement pl = { 0 }, pa;
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), avail, then;
	topoml_topo_t *t;
	int64_t *at;
	char *path = NULL, why[256];

	ck_assert_int_ge(asprintf(&path, "%s/fixtures/block/small.conf",
				  d && *d ? d : TESTS_SRCDIR), 0);
	t = topoml_load(path, TOPOML_FMT_AUTO, NULL);
	free(path);
	ck_assert_ptr_nonnull(t);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	avail = hwloc_bitmap_dup(all);
	then = hwloc_bitmap_alloc();
	hwloc_bitmap_clr(avail, 0);
	hwloc_bitmap_clr(avail, 8);
	hwloc_bitmap_clr(avail, 16);
	req.avail = avail;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &req, &pl, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 8);
	ck_assert_int_eq(pl.nodes[0], 4);
	ck_assert_int_eq(pl.nodes[7], 15);

	/* across the pairs, a pair possible: waits 600 s */
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1300,
				     &v) == 300);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_BLOCK);
	ck_assert_str_eq(v.what, "aligned block group for 8 nodes");
	ck_assert(m.computed && m.box == 1);
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1600,
				     &v) == 0);
	/* in a pair: met */
	_pl(&pa, pair, 8);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	/* no seconds, the deprecated torus-only name, a pinned job */
	p.box_wait = 0;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	p.box_wait = 600;
	p.box_key = "TorusBoxWait";
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	p.box_key = NULL;
	j.pinned = true;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_NONE);
	j.pinned = false;
	/* a universe (partition) with no pair holding 8: no wait */
	hwloc_bitmap_zero(then);
	for (int i = 0; i < pl.n; i++)
		hwloc_bitmap_set(then, pl.nodes[i]);
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, then, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(m.computed && m.box == 0);

	/* will-run: n17 ends at 200, n1 and n9 at 500: (b5, b6) at 200 */
	at = calloc(t->nnodes, sizeof(*at));
	ck_assert_ptr_nonnull(at);
	at[0] = at[8] = 500;
	at[16] = 200;
	v.kind = TOPOML_WAIT_BLOCK;
	ck_assert_int_eq(topoml_wait_plan(t, &p, &j, &v, all, at, INT64_MAX,
					  then), 200);
	ck_assert(hwloc_bitmap_isset(then, 16) && !hwloc_bitmap_isset(then, 8));
	free(at);
	topoml_placement_clear(&pl);
	topoml_placement_clear(&pa);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(then);
	topoml_free(t);
}
END_TEST

/*
 * --ml-parallel, tp=8 over two nodes: 34 nodes on two leaves (NVLink
 * domains) of 17 free nodes each split a tensor group; the machine,
 * free, splits none: the job waits, and plans on nodes that split none.
 */
START_TEST(hybrid_groups)
{
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc(), all = hwloc_bitmap_alloc();
	hwloc_bitmap_t then = hwloc_bitmap_alloc();
	struct topoml_place_req req = { .nnodes = 34, .avail = fr };
	struct topoml_placement pl = { 0 };
	struct topoml_parallel par = { 8, 1, 0, 1, 1 };
	double w[TOPOML_KIND_COUNT];
	struct topoml_wait_policy p = { .hybrid_wait = 300, .weights = w };
	struct topoml_wait_job j = { .nnodes = 34, .par = &par, .tpn = TPN };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	char why[256];
	int64_t *at;

	ck_assert_int_eq(topoml_parallel_resolve(&par, 34 * TPN, why,
						 sizeof(why)), 0);
	topoml_kind_weights_default(w);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	hwloc_bitmap_set_range(fr, 0, 16);
	hwloc_bitmap_set_range(fr, 18, 34);
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &par, TPN, w, &pl, NULL,
					     why, sizeof(why)), 0);
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 50, 100, &v) ==
		  250);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_HYBRID);
	ck_assert_int_eq(v.goal.tp_split, 0);
	ck_assert(m.hyb_known && m.computed);
	/* no box criterion on a fat tree, however long the box wait */
	p.box_wait = 600;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_HYBRID);
	ck_assert(v.bound == 300);
	/* the free machine as the universe only: what it waits for */
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, fr, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	/* will-run: everything else frees at 500: not before the deadline */
	at = calloc(t->nnodes, sizeof(*at));
	ck_assert_ptr_nonnull(at);
	for (int i = 0; i < t->nnodes; i++)
		at[i] = hwloc_bitmap_isset(fr, i) ? 0 : 500;
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, all, &m, &v),
			 TOPOML_WAIT_HYBRID);
	ck_assert_int_eq(topoml_wait_plan(t, &p, &j, &v, all, at, 499, then),
			 -1);
	ck_assert_int_eq(topoml_wait_plan(t, &p, &j, &v, all, at, 500, then),
			 500);
	ck_assert_int_ge(hwloc_bitmap_weight(then), 34);
	free(at);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(then);
	topoml_free(t);
}
END_TEST

/* The verdicts kept with a job's clock: under the universe's salt. */
START_TEST(memo_cache)
{
	struct topoml_box_waits w = { 0 };
	struct topoml_wait_job j = { .nnodes = 8 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;

	m.box = 1;
	/* no clock: nothing kept */
	topoml_wait_memo_save(&w, 7, 42, &j, &m);
	topoml_wait_memo_load(&w, 7, 42, &j, &m);
	ck_assert_int_eq(m.box, -1);
	ck_assert_int_eq(topoml_box_wait_left(&w, 7, 1000, 60), 60);
	m.box = 1;
	topoml_wait_memo_save(&w, 7, 42, &j, &m);
	topoml_wait_memo_load(&w, 7, 42, &j, &m);
	ck_assert_int_eq(m.box, 1);
	ck_assert(!m.hyb_known);
	/* another universe, another size, or none to trust: a miss */
	topoml_wait_memo_load(&w, 7, 43, &j, &m);
	ck_assert_int_eq(m.box, -1);
	j.nnodes = 9;
	topoml_wait_memo_load(&w, 7, 42, &j, &m);
	ck_assert_int_eq(m.box, -1);
	j.nnodes = 8;
	topoml_wait_memo_load(&w, 7, 0, &j, &m);
	ck_assert_int_eq(m.box, -1);
	topoml_box_waits_clear(&w);
}
END_TEST

/* The job view: one pass, the last valid value of each option. */
START_TEST(job_view)
{
	const char *env[] = {
		"SLURM_JOB_NAME=x",
		TOPOML_PARALLEL_JOB_ENV "=tp=8,pp=2",
		"SPANK_" TOPOML_COMM_JOB_ENV "=bogus",
		"_SLURM_SPANK_OPTION_topoml_ml_spares=2",
		"_SLURM_SPANK_OPTION_topoml_ml_spares=x",
	};
	struct topoml_job_view v;
	struct topoml_parallel p;
	topoml_topo_t *t = _load("fattree-nvl576.json");
	int tpn, spares;

	/* --ml-comm given (a bad value): the default stays, said */
	topoml_job_view_init(&v, TOPOML_HINT_ALLTOALL, env, 5, TPN);
	ck_assert_int_eq(v.hint, TOPOML_HINT_ALLTOALL);
	ck_assert_str_eq(v.bad_hint, "bogus");
	ck_assert_str_eq(v.parallel, "tp=8,pp=2");
	ck_assert_int_eq(v.spares, 0);		/* the last one is bad */
	/* without --ml-comm: --ml-parallel is an allreduce job */
	topoml_job_view_init(&v, TOPOML_HINT_ALLTOALL, env, 2, TPN);
	ck_assert_int_eq(v.hint, TOPOML_HINT_ALLREDUCE);
	ck_assert_ptr_null(v.bad_hint);
	topoml_job_view_init(&v, TOPOML_HINT_ISOLATE, env, 4, TPN);
	ck_assert_int_eq(v.spares, 2);
	ck_assert(topoml_job_view_workers(&v, t, 10, &spares, &p, &tpn));
	ck_assert_int_eq(spares, 2);
	ck_assert_int_eq(tpn, TPN);
	ck_assert_int_eq(p.tp * p.pp * p.dp, 8 * TPN);
	/* spares that would leave no worker: none */
	ck_assert(!topoml_job_view_workers(&v, t, 2, &spares, &p, &tpn) &&
		  spares == 0);
	/* no tasks a node: no hybrid job */
	topoml_job_view_init(&v, TOPOML_HINT_ISOLATE, env, 2, 0);
	ck_assert(!topoml_job_view_parallel(&v, t, 8, &p, &tpn));
	topoml_job_view_init(&v, TOPOML_HINT_ISOLATE, NULL, 0, TPN);
	ck_assert_int_eq(v.hint, TOPOML_HINT_ISOLATE);
	ck_assert_ptr_null(v.parallel);
	topoml_free(t);
}
END_TEST

/*
 * Dragonfly (fixtures/hybrid/dragonfly-nvl576.json: 16 groups of 36).
 * Every group has its first 16 nodes busy: a job of 30 nodes fits in no
 * group, so the engine takes 20 + 10 of two; one group could hold it on
 * the machine, so with a wait it waits for one.  In one group it is met;
 * a job of 40 needs two groups, so two are as few as there can be, and
 * one that no group holds never waits, even over three groups (as
 * Kueue).  The busy nodes of group 3 end at 200, the others' at 500: its
 * group then.
 */
START_TEST(dragonfly_groups)
{
	struct topoml_wait_policy p = { .box_wait = 600 };
	struct topoml_wait_job j = { .nnodes = 30 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_place_req req = { .nnodes = 30 };
	struct topoml_placement pl = { 0 }, pa;
	topoml_topo_t *t = _load("dragonfly-nvl576.json");
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), avail, then;
	int one[30], two[40], gs[2] = { -1, -1 }, ngs = 0;
	int64_t *at;
	char why[256];

	ck_assert_int_eq(t->family, TOPOML_DRAGONFLY);
	ck_assert_int_eq(t->ngroups, 16);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	avail = hwloc_bitmap_dup(all);
	then = hwloc_bitmap_alloc();
	at = calloc(t->nnodes, sizeof(*at));
	ck_assert_ptr_nonnull(at);
	for (int g = 0, k = 0; g < t->ngroups; g++, k = 0)
		for (int v2 = 0; v2 < t->nnodes; v2++)
			if (t->nodes[v2].group == g && k++ < 16) {
				hwloc_bitmap_clr(avail, v2);
				at[v2] = g == 3 ? 200 : 500;
			}
	ck_assert_int_eq(hwloc_bitmap_weight(avail), 16 * 20);
	req.avail = avail;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &req, &pl, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 30);
	for (int i = 0; i < pl.n; i++) {
		int g = t->nodes[pl.nodes[i]].group;

		if (g != gs[0] && g != gs[1])
			ngs++;
		if (gs[0] < 0)
			gs[0] = g;
		else if (g != gs[0])
			gs[1] = g;
	}
	ck_assert_int_eq(ngs, 2);
	/* two groups where one could do: waits half of 600 s (one group
	 * more; dragonfly_two_groups) */
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1100,
				     &v) == 200);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_BLOCK);
	ck_assert_str_eq(v.what, "one dragonfly group for 30 nodes "
			 "(on two: half the wait)");
	ck_assert(m.computed && m.box == 1);
	/* in one group (the 30 first nodes of group 5): met */
	for (int v2 = 0, k = 0; v2 < t->nnodes && k < 30; v2++)
		if (t->nodes[v2].group == 5)
			one[k++] = v2;
	_pl(&pa, one, 30);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	topoml_placement_clear(&pa);
	/* 40 nodes: two groups are the fewest */
	for (int v2 = 0, k = 0; v2 < t->nnodes && k < 40; v2++)
		if (t->nodes[v2].group == 7 || t->nodes[v2].group == 8)
			two[k++] = v2;
	_pl(&pa, two, 40);
	j.nnodes = 40;
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	topoml_placement_clear(&pa);
	/* 40 nodes over three groups: no group holds them, so they start
	 * (as Kueue, on the fewest groups free then: no hold) */
	ck_assert_int_eq(_df_pick(t, 7, 3, (const int[]){ 15, 15, 10 }, 0,
				  two), 40);
	_pl(&pa, two, 40);
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(!v.met && !m.computed);
	ck_assert(topoml_wait_decide(t, &p, &j, &pa, all, &m, 1000, 1300,
				     &v) == 0);
	topoml_placement_clear(&pa);
	/* will-run: group 3 is free at 200 */
	j.nnodes = 30;
	v.kind = TOPOML_WAIT_BLOCK;
	ck_assert_int_eq(topoml_wait_plan(t, &p, &j, &v, all, at, INT64_MAX,
					  then), 200);
	for (int v2 = 0; v2 < t->nnodes; v2++)
		if (t->nodes[v2].group == 3)
			ck_assert(hwloc_bitmap_isset(then, v2));
	free(at);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(then);
	topoml_free(t);
}
END_TEST

/*
 * Dragonfly (as above): a job of 30 nodes that one group holds, placed on
 * two groups (15 + 15: one group more than it needs), waits half the
 * wait; on three (10 + 10 + 10), the whole wait.  At 350 s of 600 the
 * first starts, the second still waits 250 s.  As an --ml-parallel job
 * (tp=4 a node, two stages of 15) on the two groups, whose pipeline or
 * data-parallel rings cross them (every rank of a node sends over the
 * global link), it waits the whole wait.
 */
START_TEST(dragonfly_two_groups)
{
	struct topoml_wait_policy p = { .box_wait = 600 };
	struct topoml_wait_job j = { .nnodes = 30 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_placement p2, p3;
	topoml_topo_t *t = _load("dragonfly-nvl576.json");
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	int two[30], three[30];
	struct topoml_parallel par = { 4, 2, 0, 1, 1 };
	char why[128];

	ck_assert_int_eq(t->family, TOPOML_DRAGONFLY);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	ck_assert_int_eq(_df_pick(t, 1, 2, (const int[]){ 15, 15 }, 0, two),
			 30);
	ck_assert_int_eq(_df_pick(t, 4, 3, (const int[]){ 10, 10, 10 }, 0,
				  three), 30);
	_pl(&p2, two, 30);
	_pl(&p3, three, 30);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 300);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p3, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	ck_assert_str_eq(v.what, "one dragonfly group for 30 nodes");
	ck_assert(topoml_wait_decide(t, &p, &j, &p2, all, &m, 1000, 1350,
				     &v) == 0);
	ck_assert(topoml_wait_decide(t, &p, &j, &p3, all, &m, 1000, 1350,
				     &v) == 250);
	ck_assert_int_eq(topoml_parallel_resolve(&par, 30 * TPN, why,
						 sizeof(why)), 0);
	j.par = &par;
	j.tpn = TPN;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	ck_assert_str_eq(v.what, "one dragonfly group for 30 nodes");
	ck_assert(topoml_wait_decide(t, &p, &j, &p2, all, &m, 1000, 1350,
				     &v) == 250);
	topoml_placement_clear(&p2);
	topoml_placement_clear(&p3);
	hwloc_bitmap_free(all);
	topoml_free(t);
}
END_TEST

/*
 * Dragonfly (as above), the --ml-parallel hold alone (tp=4 a node, two
 * stages): a job of 40 nodes, which no group holds, on three groups
 * (15 + 15 + 10, its first stage over two) sends data-parallel rings
 * through the top where two groups, a stage in each, would send none;
 * it starts all the same (it crosses the global links on any two).  Of
 * four stages it waits.  A job of 30, which one group holds, on three
 * groups (10 + 10 + 10) still waits the whole wait.
 */
START_TEST(dragonfly_hybrid_one_group)
{
	struct topoml_parallel par = { 4, 2, 0, 1, 1 };
	double w[TOPOML_KIND_COUNT];
	struct topoml_wait_policy p = { .hybrid_wait = 600, .weights = w };
	struct topoml_wait_job j = { .nnodes = 40, .par = &par, .tpn = TPN };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_hybrid_locality now;
	struct topoml_placement pa;
	topoml_topo_t *t = _load("dragonfly-nvl576.json");
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	int big[40], small[30];
	char why[128];

	ck_assert_int_eq(t->family, TOPOML_DRAGONFLY);
	topoml_kind_weights_default(w);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	ck_assert_int_eq(_df_pick(t, 7, 3, (const int[]){ 15, 15, 10 }, 0,
				  big), 40);
	ck_assert_int_eq(_df_pick(t, 11, 3, (const int[]){ 10, 10, 10 }, 0,
				  small), 30);
	ck_assert_int_eq(topoml_parallel_resolve(&par, 40 * TPN, why,
						 sizeof(why)), 0);
	_pl(&pa, big, 40);
	/* it falls short of what the machine allows ... */
	ck_assert_int_eq(topoml_hybrid_locality(t, pa.nodes, 40, TPN, &par, w,
						&now), 0);
	ck_assert_int_gt(now.dp_top, 0);
	/* ... but no group holds it: it starts */
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(!m.computed);
	ck_assert(topoml_wait_decide(t, &p, &j, &pa, all, &m, 1000, 1100,
				     &v) == 0);
	/* four stages of 10 (the second over two groups) waits: the engine
	 * stripes only two */
	par = (struct topoml_parallel){ 4, 4, 0, 1, 1 };
	ck_assert_int_eq(topoml_parallel_resolve(&par, 40 * TPN, why,
						 sizeof(why)), 0);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_HYBRID);
	ck_assert(v.bound == 600);
	topoml_placement_clear(&pa);
	/* 30 nodes, which one group holds, on three: the whole wait */
	par = (struct topoml_parallel){ 4, 2, 0, 1, 1 };
	ck_assert_int_eq(topoml_parallel_resolve(&par, 30 * TPN, why,
						 sizeof(why)), 0);
	j.nnodes = 30;
	_pl(&pa, small, 30);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_HYBRID);
	ck_assert(v.bound == 600);
	ck_assert(topoml_wait_decide(t, &p, &j, &pa, all, &m, 1000, 1100,
				     &v) == 500);
	topoml_placement_clear(&pa);
	hwloc_bitmap_free(all);
	topoml_free(t);
}
END_TEST

/*
 * A generated dragonfly without NVLink (16 groups of 4 routers of 9
 * nodes), owners known: an --ml-parallel job of 30 nodes (tp=4 a node,
 * one stage), which one group holds, on two groups (15 + 15) sends 4
 * ring transfers each way over the pair's global link, no more than one
 * node sends over its own: with no job spanning groups (one in group 3
 * only) it starts at once.  Where a job spans groups 2 and 5 (its rings
 * cross group 2's links too) it waits the whole wait, as it does with
 * owners not known, on three groups, with two stages (a stage a group:
 * 60 pipeline sends over the pair), or where NVLink joins nodes
 * (dragonfly-nvl576.json: in one group it could talk over NVLink).
 */
START_TEST(dragonfly_pair_free)
{
	struct topoml_parallel par = { 4, 1, 0, 1, 1 };
	struct topoml_wait_policy p = { .box_wait = 600 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_placement p2, p3;
	double w[TOPOML_KIND_COUNT];
	topoml_topo_t *t = topoml_gen_dragonfly("d", 16, 4, 9,
						TOPOML_DF_ALL_TO_ALL);
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	uint32_t *owner = calloc(t->nnodes, sizeof(*owner));
	struct topoml_wait_job j = { .nnodes = 30, .par = &par, .tpn = TPN,
				     .owner = owner };
	int two[30], three[30], busy[10];
	char why[128];

	ck_assert_int_eq(t->family, TOPOML_DRAGONFLY);
	ck_assert_ptr_nonnull(owner);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	ck_assert_int_eq(_df_pick(t, 1, 2, (const int[]){ 15, 15 }, 0, two),
			 30);
	ck_assert_int_eq(_df_pick(t, 4, 3, (const int[]){ 10, 10, 10 }, 0,
				  three), 30);
	/* busy: 10 nodes of group 3 (job 7), later 5 of 2 and 5 (job 9),
	 * past the placements' nodes */
	ck_assert_int_eq(_df_pick(t, 3, 1, (const int[]){ 10 }, 0, busy), 10);
	for (int i = 0; i < 10; i++)
		owner[busy[i]] = 7;
	ck_assert_int_eq(topoml_parallel_resolve(&par, 30 * TPN, why,
						 sizeof(why)), 0);
	_pl(&p2, two, 30);
	_pl(&p3, three, 30);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	ck_assert_str_eq(v.met_what, "two dragonfly groups no other job spans");
	ck_assert(topoml_wait_decide(t, &p, &j, &p2, all, &m, 1000, 1000,
				     &v) == 0);
	/* the hybrid hold alone: as soon */
	topoml_kind_weights_default(w);
	p = (struct topoml_wait_policy){ .hybrid_wait = 600, .weights = w };
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_NONE);
	p = (struct topoml_wait_policy){ .box_wait = 600 };
	/* three groups: the whole wait */
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p3, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	/* owners not known: the whole wait, as before */
	j.owner = NULL;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	j.owner = owner;
	/* two stages, a stage a group: 60 sends over the pair */
	par = (struct topoml_parallel){ 4, 2, 0, 1, 1 };
	ck_assert_int_eq(topoml_parallel_resolve(&par, 30 * TPN, why,
						 sizeof(why)), 0);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	par = (struct topoml_parallel){ 4, 1, 0, 1, 1 };
	ck_assert_int_eq(topoml_parallel_resolve(&par, 30 * TPN, why,
						 sizeof(why)), 0);
	/* a job spanning groups 2 and 5: the whole wait */
	ck_assert_int_eq(_df_pick(t, 2, 4, (const int[]){ 5, 0, 0, 5 }, 20,
				  busy), 10);
	for (int i = 0; i < 10; i++)
		owner[busy[i]] = 9;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	ck_assert(topoml_wait_decide(t, &p, &j, &p2, all, &m, 1000, 1350,
				     &v) == 250);
	topoml_placement_clear(&p2);
	topoml_placement_clear(&p3);
	/* NVLink domains (the same shape): the whole wait, owners free */
	topoml_free(t);
	t = _load("dragonfly-nvl576.json");
	ck_assert_int_eq(t->family, TOPOML_DRAGONFLY);
	ck_assert_int_gt(t->nnvl, 0);
	memset(owner, 0, sizeof(*owner) * t->nnodes);
	ck_assert_int_eq(_df_pick(t, 1, 2, (const int[]){ 15, 15 }, 0, two),
			 30);
	_pl(&p2, two, 30);
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &p2, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert(v.bound == 600);
	topoml_placement_clear(&p2);
	hwloc_bitmap_free(all);
	free(owner);
	topoml_free(t);
}
END_TEST

/*
 * A plain fat-tree (generated: 16 nodes, 4 a leaf, nodes 4k .. 4k + 3 on
 * leaf k).  Busy 0, 4, 8 and 12: every leaf has 3 free, so the engine
 * takes a job of 4 on two leaves; one leaf holds it on the machine, so
 * with a wait it waits for one (as Kueue holds a job for one domain).
 * On one leaf it is met; 8 nodes on two leaves are as few as there can
 * be, on three they wait.  Node 8 ends at 200, the others at 500: leaf 2
 * then.  A partition with no whole leaf never waits.
 */
START_TEST(fattree_leaves)
{
	static const int one[4] = { 4, 5, 6, 7 };
	static const int two[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const int three[8] = { 0, 1, 2, 3, 4, 5, 8, 9 };
	struct topoml_wait_policy p = { .box_wait = 600 };
	struct topoml_wait_job j = { .nnodes = 4 };
	struct topoml_wait_memo m = TOPOML_WAIT_MEMO_INIT;
	struct topoml_wait_verdict_info v;
	struct topoml_place_req req = { .nnodes = 4 };
	struct topoml_placement pl = { 0 }, pa;
	topoml_topo_t *t = topoml_gen_fat_tree("c", 16, 4, 8, 2);
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), avail, then;
	int64_t at[16] = { 0 };
	char why[256];

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->family, TOPOML_FAT_TREE);
	for (int v2 = 0; v2 < 16; v2++)
		ck_assert_int_eq(t->nodes[v2].leaf, t->nodes[v2 / 4 * 4].leaf);
	ck_assert_int_ne(t->nodes[0].leaf, t->nodes[4].leaf);
	hwloc_bitmap_set_range(all, 0, 15);
	avail = hwloc_bitmap_dup(all);
	then = hwloc_bitmap_alloc();
	for (int k = 0; k < 4; k++) {
		hwloc_bitmap_clr(avail, 4 * k);
		at[4 * k] = k == 2 ? 200 : 500;
	}
	req.avail = avail;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &req, &pl, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 4);
	ck_assert_int_ne(t->nodes[pl.nodes[0]].leaf,
			 t->nodes[pl.nodes[3]].leaf);
	/* two leaves where one could do: waits 600 s */
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1300,
				     &v) == 300);
	ck_assert_int_eq(v.kind, TOPOML_WAIT_BLOCK);
	ck_assert_str_eq(v.what, "fewest fat-tree leaves for 4 nodes");
	ck_assert(m.computed && m.box == 1);
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1600,
				     &v) == 0);
	/* no wait set: starts at once */
	p.box_wait = 0;
	ck_assert(topoml_wait_decide(t, &p, &j, &pl, all, &m, 1000, 1300,
				     &v) == 0);
	p.box_wait = 600;
	/* on one leaf: met */
	_pl(&pa, one, 4);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(v.met);
	topoml_placement_clear(&pa);
	/* 8 nodes: two leaves are the fewest, three are not */
	j.nnodes = 8;
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	_pl(&pa, two, 8);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_NONE);
	topoml_placement_clear(&pa);
	_pl(&pa, three, 8);
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pa, all, &m, &v),
			 TOPOML_WAIT_BLOCK);
	ck_assert_str_eq(v.what, "fewest fat-tree leaves for 8 nodes");
	topoml_placement_clear(&pa);
	/* will-run: leaf 2 is whole at 200 */
	j.nnodes = 4;
	v.kind = TOPOML_WAIT_BLOCK;
	ck_assert_int_eq(topoml_wait_plan(t, &p, &j, &v, all, at, INT64_MAX,
					  then), 200);
	for (int v2 = 8; v2 < 12; v2++)
		ck_assert(hwloc_bitmap_isset(then, v2));
	/* a partition with no whole leaf: never waits */
	m = (struct topoml_wait_memo)TOPOML_WAIT_MEMO_INIT;
	ck_assert_int_eq(topoml_wait_criterion(t, &p, &j, &pl, avail, &m, &v),
			 TOPOML_WAIT_NONE);
	ck_assert(m.computed && m.box == 0);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(then);
	topoml_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("wait");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wait_left);
	tcase_add_test(tc, torus_box);
	tcase_add_test(tc, block_group);
	tcase_add_test(tc, dragonfly_groups);
	tcase_add_test(tc, dragonfly_two_groups);
	tcase_add_test(tc, dragonfly_hybrid_one_group);
	tcase_add_test(tc, dragonfly_pair_free);
	tcase_add_test(tc, fattree_leaves);
	tcase_add_test(tc, hybrid_groups);
	tcase_add_test(tc, memo_cache);
	tcase_add_test(tc, job_view);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
