/*
 * The rank order and placement of a hybrid-parallel job (issue 14 item
 * 5): pipeline stages kept inside top-level parts (spine subtrees,
 * dragonfly groups) so that fewer data-parallel rings cross the top, on
 * the 576-node machines with NVLink domains of tests/fixtures/hybrid.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"
#include "topoml/jobcomment.h"
#include "sim.h"
#include "topoml.h"

#define TPN 4		/* tasks (GPUs) per node, as on a GB200 node */

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

/* Top-level part of node v: spine subtree (fat tree) or group. */
static int _part(const topoml_topo_t *t, int v)
{
	int s = t->nodes[v].leaf;

	if (t->family == TOPOML_DRAGONFLY)
		return t->nodes[v].group;
	while (t->switches[s].level < t->nlevels - 2)
		s = t->switches[s].parents[0];
	return s;
}

/*
 * Fewest DP transfers through the top on these nodes when no tensor
 * group crosses it: stages that fit in no part each send their T*C rings
 * through the top at least twice (P > 1), or the job's rings cross once
 * per part they cover (P == 1).
 */
static long _bound(const topoml_topo_t *t, const int *nodes, int n,
		   const struct topoml_parallel *p)
{
	int *cnt = calloc(t->nswitches, sizeof(int)), parts = 0, fit = 0;

	ck_assert_ptr_nonnull(cnt);
	for (int i = 0; i < n; i++)
		parts += !cnt[_part(t, nodes[i])]++;
	for (int s = 0; s < t->nswitches; s++)
		fit += cnt[s] / (n / p->pp);
	free(cnt);
	if (p->dp < 2 || parts < 2)
		return 0;
	if (p->pp == 1)
		return (long)p->tp * p->cp * parts;
	return fit < p->pp ? 2L * p->tp * p->cp * (p->pp - fit) : 0;
}

static long _dp_top(const topoml_topo_t *t, const int *nodes, int n,
		    const struct topoml_parallel *p)
{
	struct topoml_hybrid_cost c;
	double w[TOPOML_KIND_COUNT];

	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_hybrid_cost(t, nodes, n, TPN, p, w, &c), 0);
	return c.kind[TOPOML_KIND_DP].cross_top;
}

/* The order select/topoml gives the job on exactly these nodes. */
static void _hybrid_order(const topoml_topo_t *t, int *nodes, int n,
			  const struct topoml_parallel *p)
{
	struct topoml_placement pl = { 0 };
	struct topoml_place_req req = { 0 };
	double w[TOPOML_KIND_COUNT];
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	for (int i = 0; i < n; i++)
		hwloc_bitmap_set(set, nodes[i]);
	pl.n = n;
	pl.nodes = malloc(sizeof(int) * n);	/* the call may replace it */
	ck_assert_ptr_nonnull(pl.nodes);
	memcpy(pl.nodes, nodes, sizeof(int) * n);
	req.nnodes = n;
	req.avail = set;	/* no other free node: nothing swapped */
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_hybrid_rank(t, &req, p, TPN, w, &pl, 1), 0);
	ck_assert_int_eq(pl.n, n);
	memcpy(nodes, pl.nodes, sizeof(int) * n);
	topoml_placement_clear(&pl);
	/* the same nodes, each once */
	for (int i = 0; i < n; i++) {
		ck_assert(hwloc_bitmap_isset(set, nodes[i]));
		hwloc_bitmap_clr(set, nodes[i]);
	}
	hwloc_bitmap_free(set);
}

static void _shape(struct topoml_parallel *p, int tp, int pp, int n)
{
	char err[128];

	*p = (struct topoml_parallel){ tp, pp, 0, 1, 1 };
	ck_assert_int_eq(topoml_parallel_resolve(p, n * TPN, err,
						 sizeof(err)), 0);
}

/*
 * A 96-node job (tp=8 over two nodes, pp=8, dp=6: stages of 12 nodes) on
 * 6 nodes of spine 1, all 72 of spine 2 and one leaf of spine 3.  In ring
 * order two stages straddle spines; kept in parts only the stage built
 * from spine 1's 6 and spine 3's last 6 must.
 */
START_TEST(stages_in_spines)
{
	topoml_topo_t *t = _load("fattree-nvl576.json");
	struct topoml_parallel p;
	int nodes[96], ring[96], n = 0;

	for (int v = 0; v < 6; v++)
		nodes[n++] = v;
	for (int v = 72; v < 144; v++)
		nodes[n++] = v;
	for (int v = 144; v < 162; v++)
		nodes[n++] = v;
	_shape(&p, 8, 8, n);
	ck_assert_int_eq(p.dp, 6);
	memcpy(ring, nodes, sizeof(nodes));
	topoml_ring_order(t, ring, n);
	_hybrid_order(t, nodes, n, &p);
	fprintf(stderr, "stages_in_spines: DP through the top: ring %ld, "
		"hybrid order %ld, bound %ld\n", _dp_top(t, ring, n, &p),
		_dp_top(t, nodes, n, &p), _bound(t, nodes, n, &p));
	ck_assert_int_eq(_dp_top(t, nodes, n, &p), _bound(t, nodes, n, &p));
	ck_assert_int_gt(_dp_top(t, ring, n, &p), _dp_top(t, nodes, n, &p));
	ck_assert_int_eq(_bound(t, nodes, n, &p), 2 * 8);
	/* tensor groups stay in their NVLink domain (a leaf here) */
	ck_assert_int_eq(topoml_hybrid_tp_split(t, nodes, n, TPN, &p), 0);
	topoml_free(t);
}
END_TEST

/*
 * A 48-node job (tp=8, pp=4, dp=6: stages of 12 nodes) on 24 nodes of
 * spine 5, which hold two stages, and 4, 6, 6 and 8 nodes of spines 1 to
 * 4.  Those 24 make the other two stages: filled in spine order the
 * first takes 4 + 6 + 2 (three spines, its 8 rings crossing the top 3
 * times each) and the second 4 + 8 (two): 40.  Built from remainders
 * that complete a stage exactly, 8 + 4 and 6 + 6: two spines each, 32,
 * the bound.
 */
START_TEST(remainders_packed)
{
	topoml_topo_t *t = _load("fattree-nvl576.json");
	struct topoml_parallel p;
	int nodes[48], n = 0;

	for (int v = 0; v < 4; v++)
		nodes[n++] = v;
	for (int v = 72; v < 78; v++)
		nodes[n++] = v;
	for (int v = 144; v < 150; v++)
		nodes[n++] = v;
	for (int v = 216; v < 224; v++)
		nodes[n++] = v;
	for (int v = 288; v < 312; v++)
		nodes[n++] = v;
	_shape(&p, 8, 4, n);
	ck_assert_int_eq(p.dp, 6);
	_hybrid_order(t, nodes, n, &p);
	fprintf(stderr, "remainders_packed: DP through the top %ld, "
		"bound %ld\n", _dp_top(t, nodes, n, &p),
		_bound(t, nodes, n, &p));
	ck_assert_int_eq(_bound(t, nodes, n, &p), 2 * 2 * 8);
	ck_assert_int_eq(_dp_top(t, nodes, n, &p), _bound(t, nodes, n, &p));
	ck_assert_int_eq(topoml_hybrid_tp_split(t, nodes, n, TPN, &p), 0);
	topoml_free(t);
}
END_TEST

/*
 * The stage packing's step limit reached by a real job: 2048 nodes
 * (tp=4 inside a node, pp=4, dp=512: stages of 512) on 64 spines of 48,
 * 40 nodes in each of the first 32 and 24 in the others, no spine
 * holding a stage.  Each stage opened costs 64 parts x (512 - 40 + 1)
 * steps of the subset sums, so the third passes 65536: two stages are
 * packed exactly (11 x 40 + 3 x 24), the other two filled in spine order
 * from what is left, cutting one spine's nodes: 65 (stage, spine) pairs,
 * each of the 4 rings of a stage crossing the top once per spine of it,
 * 260.  In spine order 3 cuts (268); without the limit none (256).
 */
START_TEST(packing_step_limit)
{
	topoml_topo_t *t = topoml_gen_fat_tree("c", 64 * 48, 24, 2, 3);
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	int *nodes = malloc(sizeof(int) * 2048), *ring, n = 0, pairs = 0;
	bool *seen;

	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(nodes);
	for (int q = 0; q < 64; q++)
		for (int i = 0; i < (q < 32 ? 40 : 24); i++)
			nodes[n++] = q * 48 + i;
	ck_assert_int_eq(n, 2048);
	ring = malloc(sizeof(int) * n);
	seen = calloc(t->nnodes, sizeof(bool));
	ck_assert_ptr_nonnull(ring);
	ck_assert_ptr_nonnull(seen);
	memcpy(ring, nodes, sizeof(int) * n);
	topoml_ring_order(t, ring, n);
	_shape(&p, 4, 4, n);
	ck_assert_int_eq(p.dp, 512);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_hybrid_order(t, nodes, n, TPN, &p, w), 0);
	fprintf(stderr, "packing_step_limit: DP through the top: ring %ld, "
		"hybrid order %ld\n", _dp_top(t, ring, n, &p),
		_dp_top(t, nodes, n, &p));
	/* the same nodes, each once; (stage, spine) pairs */
	for (int i = 0; i < n; i++) {
		ck_assert(!seen[nodes[i]]);
		seen[nodes[i]] = true;
		pairs += i % 512 == 0 ||
			 _part(t, nodes[i]) != _part(t, nodes[i - 1]);
	}
	ck_assert_int_eq(pairs, 65);
	ck_assert_int_eq(_dp_top(t, ring, n, &p), 4 * 67);
	ck_assert_int_eq(_dp_top(t, nodes, n, &p), 4 * 65);
	free(nodes);
	free(ring);
	free(seen);
	topoml_free(t);
}
END_TEST

/*
 * Random node sets and shapes on both machines: the order never splits
 * more tensor groups than the ring, never sends more DP transfers through
 * the top unless it splits fewer groups, never fewer than the bound.
 */
START_TEST(never_worse_than_ring)
{
	static const char *const files[] = { "fattree-nvl576.json",
		"dragonfly-nvl576.json" };
	static const int sizes[][3] = {	/* nodes, tp, pp */
		{ 96, 8, 8 }, { 192, 8, 8 }, { 48, 8, 4 }, { 34, 8, 1 },
		{ 8, 8, 2 }, { 64, 4, 4 }, { 40, 16, 2 },
	};
	long better = 0, fewer_split = 0;

	srand(14);
	for (size_t f = 0; f < 2; f++) {
		topoml_topo_t *t = _load(files[f]);
		int *all = malloc(sizeof(int) * t->nswitches);

		ck_assert_ptr_nonnull(all);
		for (int round = 0; round < 200; round++) {
			const int *sz = sizes[round % 7];
			int n = sz[0], ring[192], nodes[192];
			struct topoml_parallel p;
			long r, h, hs, rs;

			/* n nodes: even counts from leaves in random order */
			for (int l = 0; l < t->nswitches; l++)
				all[l] = l;
			for (int l = t->nswitches - 1; l > 0; l--) {
				int j = rand() % (l + 1), x = all[l];

				all[l] = all[j];
				all[j] = x;
			}
			for (int l = 0, k = 0; k < n; l++) {
				const struct topoml_switch *sw;
				int take;

				ck_assert_int_lt(l, t->nswitches);
				sw = &t->switches[all[l]];
				if (sw->nnodes < 2)
					continue;
				take = 2 * (1 + rand() % (sw->nnodes / 2));
				for (int i = 0; i < take && k < n; i++)
					nodes[k++] = sw->nodes[i];
			}
			_shape(&p, sz[1], sz[2], n);
			memcpy(ring, nodes, sizeof(int) * n);
			topoml_ring_order(t, ring, n);
			_hybrid_order(t, nodes, n, &p);
			r = _dp_top(t, ring, n, &p);
			h = _dp_top(t, nodes, n, &p);
			hs = topoml_hybrid_tp_split(t, nodes, n, TPN, &p);
			rs = topoml_hybrid_tp_split(t, ring, n, TPN, &p);
			ck_assert_int_le(hs, rs);
			/* a split tensor group weighs more than DP */
			if (hs == rs)
				ck_assert_int_le(h, r);
			fewer_split += hs < rs;
			if (topoml_hybrid_tp_split(t, nodes, n, TPN, &p) == 0)
				ck_assert_int_ge(h, _bound(t, nodes, n, &p));
			better += h < r;
		}
		free(all);
		topoml_free(t);
	}
	fprintf(stderr, "never_worse_than_ring: fewer DP transfers through "
		"the top than the ring in %ld of 400 cases, fewer split "
		"tensor groups in %ld\n", better, fewer_split);
	ck_assert_int_gt(better, 0);
}
END_TEST

/*
 * The placement itself (topoml_hybrid_rank over the engine's choice, as
 * select/topoml runs it): a 48-node job (tp=8, pp=4: stages of 12 nodes)
 * on a machine with 6, 12 or 18 nodes free on some leaves.  Six spines
 * hold 2 + 1 + 1 + 1 + 2 + 2 whole stages: no data-parallel ring need
 * cross the top.  The engine's choice, made for one ring, fewest leaves
 * first, sent 16 DP transfers through it when this test was written.
 */
START_TEST(placed_for_stages)
{
	static const int free_per_leaf[32] = {
		12, 6, 12, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 12, 0, 0, 0, 0, 18, 0, 6, 12, 0, 6, 18, 0, 12, 0,
	};
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc(), own = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 }, req_own;
	struct topoml_placement pl = { 0 }, eng = { 0 };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (int l = 0; l < 32; l++)
		if (free_per_leaf[l])
			hwloc_bitmap_set_range(fr, l * 18,
					       l * 18 + free_per_leaf[l] - 1);
	req.nnodes = 48;
	req.avail = fr;
	_shape(&p, 8, 4, 48);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &req, &pl, why,
				      sizeof(why)), 0);
	/* the engine's nodes in their best order */
	eng.n = pl.n;
	eng.nodes = malloc(sizeof(int) * pl.n);
	ck_assert_ptr_nonnull(eng.nodes);
	memcpy(eng.nodes, pl.nodes, sizeof(int) * pl.n);
	for (int i = 0; i < pl.n; i++)
		hwloc_bitmap_set(own, pl.nodes[i]);
	req_own = req;
	req_own.avail = own;
	ck_assert_int_eq(topoml_hybrid_rank(t, &req_own, &p, TPN, w, &eng, 1),
			 0);
	ck_assert_int_eq(topoml_hybrid_rank(t, &req, &p, TPN, w, &pl, 1), 0);
	fprintf(stderr, "placed_for_stages: DP through the top: engine's "
		"nodes %ld, hybrid placement %ld\n",
		_dp_top(t, eng.nodes, eng.n, &p),
		_dp_top(t, pl.nodes, pl.n, &p));
	ck_assert_int_eq(pl.n, 48);
	for (int i = 0; i < pl.n; i++) {
		ck_assert(hwloc_bitmap_isset(fr, pl.nodes[i]));
		hwloc_bitmap_clr(fr, pl.nodes[i]);	/* each once */
	}
	ck_assert_int_eq(_dp_top(t, pl.nodes, pl.n, &p), 0);
	ck_assert_int_le(_dp_top(t, pl.nodes, pl.n, &p),
			 _dp_top(t, eng.nodes, eng.n, &p));
	ck_assert_int_eq(topoml_hybrid_tp_split(t, pl.nodes, pl.n, TPN, &p),
			 0);
	topoml_placement_clear(&pl);
	topoml_placement_clear(&eng);
	hwloc_bitmap_free(fr);
	hwloc_bitmap_free(own);
	topoml_free(t);
}
END_TEST

/*
 * Tensor groups of two nodes (tp=8 at 4 tasks a node) for a 34-node job
 * when two leaves (NVLink domains here) have 17 free nodes each: the
 * engine takes both, an odd count in each, and neither has a free node
 * to complete it.  With 2 nodes free on a third leaf the job gives up
 * one node of each and takes those two: no group split.  Without them a
 * split is forced, and only one group is.
 */
START_TEST(whole_groups)
{
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	hwloc_bitmap_set_range(fr, 0, 16);
	hwloc_bitmap_set_range(fr, 18, 34);
	req.nnodes = 34;
	req.avail = fr;
	_shape(&p, 8, 1, 34);
	topoml_kind_weights_default(w);
	for (int third = 1; third >= 0; third--) {
		hwloc_bitmap_t left = hwloc_bitmap_dup(fr);
		long split;

		if (third)
			hwloc_bitmap_set_range(fr, 90, 91);
		hwloc_bitmap_copy(left, fr);
		ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl,
						     NULL, why, sizeof(why)),
				 0);
		ck_assert_int_eq(pl.n, 34);
		for (int i = 0; i < pl.n; i++) {
			ck_assert(hwloc_bitmap_isset(left, pl.nodes[i]));
			hwloc_bitmap_clr(left, pl.nodes[i]);
		}
		split = topoml_hybrid_tp_split(t, pl.nodes, pl.n, TPN, &p);
		fprintf(stderr, "whole_groups: %s: %ld tensor groups split\n",
			third ? "2 nodes free on a third leaf" : "none",
			split);
		ck_assert_int_eq(split, third ? 0 : 1);
		topoml_placement_clear(&pl);
		hwloc_bitmap_free(left);
		hwloc_bitmap_clr_range(fr, 90, 91);
	}
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * Stages built from whole tensor groups: a 16-node job (tp=8 over two
 * nodes, pp=2: stages of 8 nodes, 4 groups).  Free per leaf (each leaf an
 * NVLink domain, spines of 4 leaves): spine 0 has 2 + 1 + 5 nodes, 8 but
 * only 6 in whole groups; spine 1 6 + 3 (8 in whole groups); spine 2
 * 4 + 4.  Counting free nodes, spine 0 holds a stage and is the
 * tightest; counting whole groups only spines 1 and 2 do: one stage in
 * each, no DP ring through the top and no group split.
 */
START_TEST(stages_of_whole_groups)
{
	static const int free_per_leaf[12] = {
		2, 1, 5, 0, 6, 0, 3, 0, 4, 0, 4, 0,
	};
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (int l = 0; l < 12; l++)
		if (free_per_leaf[l])
			hwloc_bitmap_set_range(fr, l * 18,
					       l * 18 + free_per_leaf[l] - 1);
	req.nnodes = 16;
	req.avail = fr;
	_shape(&p, 8, 2, 16);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl, NULL,
					     why, sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 16);
	fprintf(stderr, "stages_of_whole_groups: DP through the top %ld, "
		"tensor groups split %ld\n", _dp_top(t, pl.nodes, pl.n, &p),
		topoml_hybrid_tp_split(t, pl.nodes, pl.n, TPN, &p));
	for (int i = 0; i < pl.n; i++) {
		ck_assert(hwloc_bitmap_isset(fr, pl.nodes[i]));
		hwloc_bitmap_clr(fr, pl.nodes[i]);	/* each once */
		ck_assert_int_ne(_part(t, pl.nodes[i]), _part(t, 0));
	}
	ck_assert_int_eq(_dp_top(t, pl.nodes, pl.n, &p), 0);
	ck_assert_int_eq(topoml_hybrid_tp_split(t, pl.nodes, pl.n, TPN, &p),
			 0);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * One free node on each of seven leaves (NVLink domains): c1, c19 under
 * spine 1, c91, c109, c127 under spine 2, c145, c199 under spine 3.  A
 * 4-node job of two tensor groups of two nodes must split both over
 * NVLink domains, but not over the top: each group's two nodes share a
 * spine (a group over the top all-reduces through it every layer; the
 * placement then pays the data-parallel pair through the top instead).
 */
START_TEST(forced_split_below_the_top)
{
	static const int fr_idx[] = { 0, 18, 90, 108, 126, 144, 198 };
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_hybrid_cost c;
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (size_t i = 0; i < sizeof(fr_idx) / sizeof(fr_idx[0]); i++)
		hwloc_bitmap_set(fr, fr_idx[i]);
	req.nnodes = 4;
	req.avail = fr;
	_shape(&p, 8, 1, 4);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl, &c,
					     why, sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 4);
	fprintf(stderr, "forced_split_below_the_top: TP over NVLink domains "
		"%ld, through the top %ld\n",
		c.kind[TOPOML_KIND_TP].cross_nvl,
		c.kind[TOPOML_KIND_TP].cross_top);
	ck_assert_int_eq(topoml_hybrid_tp_split(t, pl.nodes, pl.n, TPN, &p),
			 2);
	ck_assert_int_eq(c.kind[TOPOML_KIND_TP].cross_top, 0);
	for (int g = 0; g < 2; g++)
		ck_assert_int_eq(_part(t, pl.nodes[2 * g]),
				 _part(t, pl.nodes[2 * g + 1]));
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * A tensor group over the top counts as two split groups: 4 nodes, tp=8
 * (two groups of two nodes).  X = nodes 0 (leaf 1, spine 1) and 72
 * (leaf 5, spine 2) as one group, 90-91 (leaf 6) the other: one group
 * off NVLink, over the top.  Y = one node of each leaf of spine 1: two
 * groups off NVLink, none over the top.  Y first, X second (by split
 * groups alone X would win).
 */
START_TEST(over_top_counts_twice)
{
	static const int x[] = { 0, 72, 90, 91 }, y[] = { 0, 18, 36, 54 };
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement c[2] = { { 0 } };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];

	for (int k = 0; k < 2; k++) {
		c[k].nodes = malloc(sizeof(int) * 4);
		ck_assert_ptr_nonnull(c[k].nodes);
		memcpy(c[k].nodes, k ? y : x, sizeof(int) * 4);
		c[k].n = 4;
		for (int i = 0; i < 4; i++)
			hwloc_bitmap_set(fr, c[k].nodes[i]);
	}
	req.nnodes = 4;
	req.avail = fr;
	_shape(&p, 8, 1, 4);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_hybrid_tp_over_top(t, x, 4, TPN, &p), 1);
	ck_assert_int_eq(topoml_hybrid_tp_over_top(t, y, 4, TPN, &p), 0);
	ck_assert_int_eq(topoml_hybrid_rank(t, &req, &p, TPN, w, c, 2), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(_part(t, c[0].nodes[i]), _part(t, 0));
	ck_assert_int_eq(topoml_hybrid_tp_split(t, c[0].nodes, 4, TPN, &p),
			 2);
	ck_assert_int_eq(topoml_hybrid_tp_over_top(t, c[0].nodes, 4, TPN,
						   &p), 0);
	topoml_placement_clear(&c[0]);
	topoml_placement_clear(&c[1]);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * One stage of 4 groups (8 nodes, tp=8, dp=4): leaves 1 and 2 hold 1
 * and 2 free nodes (spine 1), leaf 5 3 (spine 2), leaf 9 2 (spine 3):
 * three whole groups and one over the top (leaf 1's node and one of
 * leaf 5; the ring order would split two).  The data-parallel ring of
 * a group's first node and that of its second each run through the four
 * groups in order: with the group over the top between the two it
 * joins, each ring enters and leaves every spine once (the order by hand
 * below); last, where the leftovers go, one ring crosses twice more.
 */
START_TEST(over_group_between_its_parts)
{
	static const int fr_idx[] = { 0, 18, 19, 72, 73, 74, 144, 145 };
	static const int best[] = { 18, 19, 0, 74, 72, 73, 144, 145 };
	static const int last[] = { 18, 19, 72, 73, 144, 145, 0, 74 };
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_hybrid_cost c, hb, hl;
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (size_t i = 0; i < sizeof(fr_idx) / sizeof(fr_idx[0]); i++)
		hwloc_bitmap_set(fr, fr_idx[i]);
	req.nnodes = 8;
	req.avail = fr;
	_shape(&p, 8, 1, 8);
	ck_assert_int_eq(p.dp, 4);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_hybrid_cost(t, best, 8, TPN, &p, w, &hb), 0);
	ck_assert_int_eq(topoml_hybrid_cost(t, last, 8, TPN, &p, w, &hl), 0);
	ck_assert_int_lt(hb.kind[TOPOML_KIND_DP].cross_top,
			 hl.kind[TOPOML_KIND_DP].cross_top);
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl, &c,
					     why, sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 8);
	ck_assert_int_eq(topoml_hybrid_tp_over_top(t, pl.nodes, 8, TPN, &p),
			 1);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_top,
			 hb.kind[TOPOML_KIND_DP].cross_top);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * Two stages of 2 groups (8 nodes, tp=8, pp=2, dp=2) on free nodes with
 * a whole group only in leaf 29 (spine 8, which holds one node more);
 * the others split, one of them over the top (a node of spine 1 and
 * spine 8's last).  Counted in its first node's part, that group joins
 * a stage of other spines and all 8 rings of both stages cross the top
 * (32); counted in spine 8, where it completes the stage of leaf 29's
 * group, only the rings of its chunk in spine 1 leave that stage (8),
 * and the other stage's cross (16): 24, the least with one group over
 * the top.
 */
START_TEST(over_group_completes_stage)
{
	static const int fr_idx[] = { 71, 89, 125, 161, 179, 359, 431,
				      520, 521, 575 };
	static const int chosen[] = { 71, 89, 125, 161, 179, 520, 521, 575 };
	static const int by_hand[] = { 520, 521, 575, 71, 89, 125, 161, 179 };
	topoml_topo_t *t = _load("fattree-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_hybrid_cost c;
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	int nodes[8];
	char why[256];

	for (size_t i = 0; i < sizeof(fr_idx) / sizeof(fr_idx[0]); i++)
		hwloc_bitmap_set(fr, fr_idx[i]);
	_shape(&p, 8, 2, 8);
	ck_assert_int_eq(p.dp, 2);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(_dp_top(t, by_hand, 8, &p), 24);
	ck_assert_int_eq(topoml_hybrid_tp_over_top(t, by_hand, 8, TPN, &p), 1);
	/* the order select/topoml gives these nodes */
	memcpy(nodes, chosen, sizeof(nodes));
	ck_assert_int_eq(topoml_hybrid_order(t, nodes, 8, TPN, &p, w), 0);
	ck_assert_int_eq(topoml_hybrid_tp_over_top(t, nodes, 8, TPN, &p), 1);
	ck_assert_int_eq(topoml_hybrid_tp_split(t, nodes, 8, TPN, &p), 3);
	ck_assert_int_eq(_dp_top(t, nodes, 8, &p), 24);
	/* and the placement on the free nodes */
	req.nnodes = 8;
	req.avail = fr;
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl, &c,
					     why, sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 8);
	ck_assert_int_le(topoml_hybrid_tp_over_top(t, pl.nodes, 8, TPN, &p),
			 1);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_top, 24);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * A job of 8 stages of 12 nodes (96 nodes, tp=8 over two nodes, dp=6)
 * on Mira's free dragonfly nodes: 24 in group 1 and 30 in each of groups
 * 2, 8, 10 and 12 (in NVLink domains of 12 and 18), 12 in four others:
 * every stage fits in one group, two in each of four.  Taking 24 of a
 * group's 30 may leave a domain an odd count; evened out over the whole
 * job, the domain took a free node and another group gave one up, and
 * a stage straddled two groups (16 transfers through the top).  Evened
 * out inside its group, none.
 */
START_TEST(stage_groups_whole_in_part)
{
	static const int lo[] = { 6, 15, 54, 168, 252, 270, 312, 342, 396,
				  414, 492, 564 };
	static const int hi[] = { 8, 47, 71, 179, 263, 287, 335, 359, 407,
				  431, 503, 575 };
	topoml_topo_t *t = _load("dragonfly-nvl576.json");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_hybrid_cost c;
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (size_t i = 0; i < sizeof(lo) / sizeof(lo[0]); i++)
		hwloc_bitmap_set_range(fr, lo[i], hi[i]);
	ck_assert_int_eq(hwloc_bitmap_weight(fr), 192);
	req.nnodes = 96;
	req.avail = fr;
	_shape(&p, 8, 8, 96);
	ck_assert_int_eq(p.dp, 6);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl, &c,
					     why, sizeof(why)), 0);
	ck_assert_int_eq(pl.n, 96);
	ck_assert_int_eq(topoml_hybrid_tp_split(t, pl.nodes, 96, TPN, &p), 0);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_top, 0);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * Two stages over two dragonfly groups (tp=4 inside a node).  72 nodes,
 * all of groups 1 and 2 (stages of 36 nodes, dp=36): one stage per group
 * sends 36 x 4 pipeline transfers over the global links; striped (each
 * stage half in each group, a rank's pipeline peer in its own group) the
 * 8 data-parallel rings cross twice each, 16 transfers of about 4 sends'
 * worth: striped.  8 nodes (4 in each group, stages of 4): 16 sends
 * against 16 ring crossings: one stage per group stays.  34 nodes (17 in
 * each, stages of 17): 68 sends against 16 crossings of rings of 17
 * ranks (16/17 of 4 sends each) and one pair's 4 sends: striped (in
 * topoml-netsim 205 ms a step against 264 ms).
 */
START_TEST(two_stages_striped_when_wide)
{
	topoml_topo_t *t = _load("dragonfly-nvl576.json");
	struct topoml_hybrid_cost c;
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	int nodes[72], n = 0;

	topoml_kind_weights_default(w);
	for (int v = 0; v < 72; v++)
		nodes[n++] = v;
	_shape(&p, 4, 2, 72);
	ck_assert_int_eq(p.dp, 36);
	_hybrid_order(t, nodes, n, &p);
	ck_assert_int_eq(topoml_hybrid_cost(t, nodes, n, TPN, &p, w, &c), 0);
	fprintf(stderr, "two_stages_striped_when_wide: 72 nodes: PP through "
		"the top %ld, DP %ld\n", c.kind[TOPOML_KIND_PP].cross_top,
		c.kind[TOPOML_KIND_DP].cross_top);
	ck_assert_int_eq(c.kind[TOPOML_KIND_PP].cross_top, 0);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_top, 16);
	n = 0;
	for (int v = 0; v < 4; v++) {
		nodes[n++] = v;
		nodes[n++] = 36 + v;
	}
	_shape(&p, 4, 2, 8);
	_hybrid_order(t, nodes, n, &p);
	ck_assert_int_eq(topoml_hybrid_cost(t, nodes, n, TPN, &p, w, &c), 0);
	ck_assert_int_eq(c.kind[TOPOML_KIND_PP].cross_top, 16);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_top, 0);
	n = 0;
	for (int v = 0; v < 17; v++) {
		nodes[n++] = v;
		nodes[n++] = 36 + v;
	}
	_shape(&p, 4, 2, 34);
	_hybrid_order(t, nodes, n, &p);
	ck_assert_int_eq(topoml_hybrid_cost(t, nodes, n, TPN, &p, w, &c), 0);
	ck_assert_int_eq(c.kind[TOPOML_KIND_PP].cross_top, 4);
	ck_assert_int_eq(c.kind[TOPOML_KIND_DP].cross_top, 16);
	topoml_free(t);
}
END_TEST

/* The most pipeline pairs (stage 0 and 1 at one position) between one
 * ordered pair of routers: the sends one local link carries one way. */
static int _pp_local_max(const topoml_topo_t *t, const int *nodes, int S)
{
	int best = 0;

	for (int i = 0; i < S; i++) {
		int k = 0;

		for (int j = 0; j < S; j++)
			k += t->nodes[nodes[j]].leaf ==
			     t->nodes[nodes[i]].leaf &&
			     t->nodes[nodes[S + j]].leaf ==
			     t->nodes[nodes[S + i]].leaf &&
			     t->nodes[nodes[i]].leaf !=
			     t->nodes[nodes[S + i]].leaf;
		if (k > best)
			best = k;
	}
	return best;
}

/*
 * Two stages of 8 nodes (tp=4 a node, dp=8) on 4 whole routers of 4
 * nodes of one dragonfly group: stages of whole routers at the same
 * offsets pair each router's 4 nodes with one other router's (4 sends on
 * one local link); offset by half a router, 2 (topoml-netsim: a 34-node
 * job's step 124 ms against 103 ms), at the same hops.
 */
START_TEST(pp_pairs_spread_over_local_links)
{
	topoml_topo_t *t = topoml_gen_dragonfly(NULL, 2, 8, 4,
						TOPOML_DF_ALL_TO_ALL);
	struct topoml_parallel p;
	int nodes[16], n = 0;

	ck_assert_ptr_nonnull(t);
	for (int v = 0; v < t->nnodes && n < 16; v++)
		if (t->nodes[v].group == 0 && t->nodes[v].leaf % 2 == 0)
			nodes[n++] = v;
	ck_assert_int_eq(n, 16);
	_shape(&p, 4, 2, 16);
	ck_assert_int_eq(p.dp, 8);
	_hybrid_order(t, nodes, n, &p);
	ck_assert_int_eq(_pp_local_max(t, nodes, 8), 2);
	topoml_free(t);
}
END_TEST

/* The candidate of nodes v[0..n) named n1..n8 on t, as the engine's. */
static void _cand(const topoml_topo_t *t, struct topoml_placement *pl,
		  const char *const *names, int n)
{
	memset(pl, 0, sizeof(*pl));
	pl->nodes = malloc(sizeof(int) * n);
	ck_assert_ptr_nonnull(pl->nodes);
	for (int i = 0; i < n; i++) {
		pl->nodes[i] = topoml_node_by_name(t, names[i]);
		ck_assert_int_ge(pl->nodes[i], 0);
	}
	pl->n = n;
}

/* The number in node v's name nN, and its spine (n1-n4: 0, n5-n8: 1). */
static int _nr(const topoml_topo_t *t, int v)
{
	return atoi(t->nodes[v].name + 1);
}

static int _spine(const topoml_topo_t *t, int v)
{
	return (_nr(t, v) - 1) / 4;
}

/*
 * --ml-spares with --ml-parallel (select/topoml's _hybrid_rank): -N6
 * --ml-spares=2, tp=1,pp=2 at one task a node: 4 workers, stages of 2.
 * Spines of leaves n1,n2|n3,n4 and n5,n6|n7,n8.  Choice X =
 * n[1-5,7]: its spares are n1,n2 (the fullest leaf, topoml_spares_last),
 * its workers n3,n4 | n5,n7: each stage in one spine.  Choice Y =
 * n[1-3,5-7]: spares n1,n2 again, workers n3 | n5,n6,n7: a stage must
 * straddle the spines.  Ranked as if all 6 nodes were workers (dp=3,
 * stages of 3: the plugin's sizes before) Y wins (3+3 per spine); ranked
 * on the workers X must.
 */
START_TEST(spares_workers_ranked)
{
	static const char *const x[] = { "n1", "n2", "n3", "n4", "n5", "n7" };
	static const char *const y[] = { "n1", "n2", "n3", "n5", "n6", "n7" };
	char path[] = "/tmp/check_hybrid_spares.XXXXXX";
	const char *conf =
		"SwitchName=leaf1 Nodes=n[1-2]\n"
		"SwitchName=leaf2 Nodes=n[3-4]\n"
		"SwitchName=leaf3 Nodes=n[5-6]\n"
		"SwitchName=leaf4 Nodes=n[7-8]\n"
		"SwitchName=spine1 Switches=leaf[1-2]\n"
		"SwitchName=spine2 Switches=leaf[3-4]\n"
		"SwitchName=core Switches=spine[1-2]\n";
	topoml_errors_t err = { 0 };
	struct topoml_place_req req = { 0 };
	struct topoml_placement c[2];
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	topoml_topo_t *t;
	char e[128];
	int fd = mkstemp(path), nw, in_x;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, conf, strlen(conf)), (long)strlen(conf));
	close(fd);
	t = topoml_load(path, TOPOML_FMT_AUTO, &err);
	topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
	unlink(path);
	ck_assert_ptr_nonnull(t);
	topoml_kind_weights_default(w);

	/* The workers of X, as _publish finds them. */
	_cand(t, &c[0], x, 6);
	nw = topoml_spares_workers(t, c[0].nodes, 6, 2);
	ck_assert_int_eq(nw, 4);
	for (int i = 4; i < 6; i++)
		ck_assert_int_le(_nr(t, c[0].nodes[i]), 2);
	topoml_placement_clear(&c[0]);

	for (int i = 0; i < 6; i++) {
		hwloc_bitmap_set(avail, topoml_node_by_name(t, x[i]));
		hwloc_bitmap_set(avail, topoml_node_by_name(t, y[i]));
	}
	req.nnodes = 6;
	req.avail = avail;
	req.unscored = true;
	for (int spares = 0; spares <= 2; spares += 2) {
		/* Y is the engine's first choice: X must overtake it. */
		_cand(t, &c[0], y, 6);
		_cand(t, &c[1], x, 6);
		p = (struct topoml_parallel){ 1, 2, 0, 1, 1 };
		ck_assert_int_eq(topoml_parallel_resolve(&p, 6 - spares, e,
							 sizeof(e)), 0);
		ck_assert_int_eq(topoml_hybrid_rank_spares(t, &req, &p, 1, w, c,
							   2, spares), 0);
		ck_assert_int_eq(c[0].n, 6);
		in_x = 0;
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 6; j++)
				in_x += c[0].nodes[i] ==
					topoml_node_by_name(t, x[j]);
		fprintf(stderr, "spares_workers_ranked: spares=%d dp=%d: "
			"first choice %s (%d of 6 nodes of X)\n", spares, p.dp,
			in_x == 6 ? "X" : "not X", in_x);
		if (!spares) {
			ck_assert_int_lt(in_x, 6);
		} else {
			ck_assert_int_eq(in_x, 6);
			/* workers: 2 stages, each in one spine; spares last */
			for (int s = 0; s < 4; s += 2)
				ck_assert_int_eq(_spine(t, c[0].nodes[s]),
						 _spine(t, c[0].nodes[s + 1]));
			for (int i = 4; i < 6; i++)
				ck_assert_int_le(_nr(t, c[0].nodes[i]), 2);
		}
		topoml_placement_clear(&c[0]);
		topoml_placement_clear(&c[1]);
	}
	hwloc_bitmap_free(avail);
	topoml_free(t);
}
END_TEST

/*
 * HybridWait's measure: a 36-node job (tp=8 over two nodes, pp=1,
 * dp=18) on the free machine stays in one spine subtree (no DP ring through the top, no split tensor group); on
 * 18 free nodes of each of two spines it must cross the top, so it falls
 * short of the best and a site's wait is worth it; the best itself and a
 * placement as good do not.
 */
START_TEST(locality_falls_short)
{
	topoml_topo_t *t = _load("fattree-nvl576.json");
	struct topoml_hybrid_locality best, now;
	struct topoml_parallel p;
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	double w[TOPOML_KIND_COUNT];
	int nodes[36], n = 0;

	topoml_kind_weights_default(w);
	_shape(&p, 8, 1, 36);
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	ck_assert_int_eq(topoml_hybrid_best_locality(t, all, 36, &p, TPN, w,
						     &best), 0);
	ck_assert_int_eq(best.dp_top, 0);
	ck_assert_int_eq(best.tp_split, 0);
	/* one leaf of spine 1, one of spine 2 */
	for (int v = 0; v < 18; v++)
		nodes[n++] = v;
	for (int v = 72; v < 90; v++)
		nodes[n++] = v;
	_hybrid_order(t, nodes, n, &p);
	ck_assert_int_eq(topoml_hybrid_locality(t, nodes, n, TPN, &p, w,
						&now), 0);
	ck_assert_int_gt(now.dp_top, 0);
	ck_assert_int_eq(now.tp_split, 0);
	ck_assert(topoml_hybrid_falls_short(&now, &best));
	ck_assert(!topoml_hybrid_falls_short(&best, &best));
	/* two leaves of spine 1: as good as the best */
	for (int i = 0; i < 36; i++)
		nodes[i] = i;
	_hybrid_order(t, nodes, n, &p);
	ck_assert_int_eq(topoml_hybrid_locality(t, nodes, n, TPN, &p, w,
						&now), 0);
	ck_assert(!topoml_hybrid_falls_short(&now, &best));
	/* a tensor group over two domains (leaves) falls short too */
	now.dp_top = 0;
	now.tp_split = 1;
	ck_assert(topoml_hybrid_falls_short(&now, &best));
	/* the best of a partition without a whole spine crosses the top */
	hwloc_bitmap_zero(all);
	hwloc_bitmap_set_range(all, 0, 17);
	hwloc_bitmap_set_range(all, 72, 89);
	ck_assert_int_eq(topoml_hybrid_best_locality(t, all, 36, &p, TPN, w,
						     &best), 0);
	ck_assert_int_gt(best.dp_top, 0);
	hwloc_bitmap_free(all);
	topoml_free(t);
}
END_TEST

/*
 * On NVLink blocks (nvl72x18.conf: top-level parts of 8 blocks of 18) a
 * 76-node job (tp=8 over two nodes, pp=2: stages of 38 nodes) on 18, 18
 * and 4 free nodes of blocks 51-53 (part 6), the same of blocks 59-61
 * (part 7), 2 of each of blocks 0-19: each part holds a stage.  The
 * engine takes the job on five blocks of both parts, one stage over the
 * two.  The candidate built for the stages asks the engine for 38 nodes
 * inside each part, which no aligned group of 4 blocks holds: that must
 * go into the part's group of 8, not wait as the whole job would on a
 * crowded row, else the stages straddle the top.
 */
START_TEST(block_stages_in_parts)
{
	static const int full[] = { 51, 52, 59, 60 };
	topoml_topo_t *t = _load("../block/nvl72x18.conf");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (int i = 0; i < 4; i++)
		hwloc_bitmap_set_range(fr, full[i] * 18, full[i] * 18 + 17);
	hwloc_bitmap_set_range(fr, 53 * 18, 53 * 18 + 3);
	hwloc_bitmap_set_range(fr, 61 * 18, 61 * 18 + 3);
	for (int b = 0; b < 20; b++)
		hwloc_bitmap_set_range(fr, b * 18, b * 18 + 1);
	req.nnodes = 76;
	req.avail = fr;
	_shape(&p, 8, 2, 76);
	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl, NULL,
					     why, sizeof(why)), 0);
	fprintf(stderr, "block_stages_in_parts: DP through the top %ld\n",
		_dp_top(t, pl.nodes, pl.n, &p));
	ck_assert_int_eq(pl.n, 76);
	for (int i = 0; i < pl.n; i++) {
		ck_assert(hwloc_bitmap_isset(fr, pl.nodes[i]));
		hwloc_bitmap_clr(fr, pl.nodes[i]);	/* each once */
	}
	ck_assert_int_eq(_dp_top(t, pl.nodes, pl.n, &p), 0);
	ck_assert_int_eq(topoml_hybrid_tp_split(t, pl.nodes, pl.n, TPN, &p),
			 0);
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

/*
 * A stage's part must give the share it can, on more blocks than an idle
 * row would use where its free nodes allow no fewer, and a part taken
 * whole gives all its free nodes.  nvl72x18.conf: a 27-node job of one
 * stage (tp=4 on one node, dp=27) with 12 free nodes in each of blocks
 * 0-2 (part 0: 36, on three blocks) and 18 in blocks 8 and 16 (parts 1,
 * 2).  The engine takes 2 blocks over two parts (its rings through the
 * top twice each); in part 0 the job takes 3 blocks, no ring through the
 * top.  The 36-node job of the same free nodes in part 0 and 18 more
 * in part 1 takes part 0 whole.
 */
START_TEST(block_share_on_more_blocks)
{
	topoml_topo_t *t = _load("../block/nvl72x18.conf");
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT];
	char why[256];

	for (int b = 0; b < 3; b++)
		hwloc_bitmap_set_range(fr, b * 18, b * 18 + 11);
	hwloc_bitmap_set_range(fr, 8 * 18, 8 * 18 + 17);
	hwloc_bitmap_set_range(fr, 16 * 18, 16 * 18 + 17);
	req.avail = fr;
	topoml_kind_weights_default(w);
	/* 36 nodes: the 36 of part 0, no other choice there */
	for (int n = 27; n <= 36; n += 9) {
		req.nnodes = n;
		_shape(&p, 4, 1, n);
		ck_assert_int_eq(topoml_place_hybrid(t, &req, &p, TPN, w, &pl,
						     NULL, why, sizeof(why)), 0);
		ck_assert_int_eq(pl.n, n);
		for (int i = 0; i < pl.n; i++)
			ck_assert_int_lt(t->nodes[pl.nodes[i]].leaf, 3);
		ck_assert_int_eq(_dp_top(t, pl.nodes, pl.n, &p), 0);
		topoml_placement_clear(&pl);
	}
	hwloc_bitmap_free(fr);
	topoml_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hybrid");
	TCase *tc = tcase_create("order");
	SRunner *sr;
	int nfail;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, stages_in_spines);
	tcase_add_test(tc, remainders_packed);
	tcase_add_test(tc, packing_step_limit);
	tcase_add_test(tc, never_worse_than_ring);
	tcase_add_test(tc, placed_for_stages);
	tcase_add_test(tc, whole_groups);
	tcase_add_test(tc, stages_of_whole_groups);
	tcase_add_test(tc, forced_split_below_the_top);
	tcase_add_test(tc, over_top_counts_twice);
	tcase_add_test(tc, over_group_between_its_parts);
	tcase_add_test(tc, over_group_completes_stage);
	tcase_add_test(tc, stage_groups_whole_in_part);
	tcase_add_test(tc, two_stages_striped_when_wide);
	tcase_add_test(tc, pp_pairs_spread_over_local_links);
	tcase_add_test(tc, spares_workers_ranked);
	tcase_add_test(tc, locality_falls_short);
	tcase_add_test(tc, block_stages_in_parts);
	tcase_add_test(tc, block_share_on_more_blocks);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail ? 1 : 0;
}
