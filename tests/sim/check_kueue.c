/*
 * The Kueue TAS baselines (topology/sim/baselines/kueue_tas.c) on small
 * cases worked out by hand from Kueue's text: kubernetes-sigs/kueue
 * ff69552e79ad, pkg/cache/scheduler/tas_flavor_snapshot.go and
 * tas_balanced_placement.go, keps/2724-topology-aware-scheduling.
 *
 * The machine of most cases: topoml_gen_fat_tree("node", 16, 4, 2, 3),
 * two blocks (s1-0, s1-1) of two racks (leaf switches) of four nodes:
 *   block s1-0: rack s0-0 node1-4, rack s0-1 node5-8
 *   block s1-1: rack s0-2 node9-12, rack s0-3 node13-16
 * with node4-7 and node13-14 busy, so that the racks have 3, 1, 4 and 2
 * free nodes (R0 .. R3) and the blocks 4 (B0) and 6 (B1).
 * Kueue orders equal domains by their label values as strings: node10,
 * node11, node12 come before node9.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim.h"
#include "sim/baselines/baselines.h"

#define BUSY "node[4-7,13-14]"

static topoml_topo_t *_tree(void)
{
	topoml_topo_t *t = topoml_gen_fat_tree("node", 16, 4, 2, 3);

	ck_assert_ptr_nonnull(t);
	return t;
}

static hwloc_bitmap_t _free(const topoml_topo_t *t, const char *busy)
{
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();

	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	if (busy) {
		hwloc_bitmap_t b = topoml_nodeset_parse(t, busy, NULL);

		ck_assert_ptr_nonnull(b);
		hwloc_bitmap_andnot(avail, avail, b);
		hwloc_bitmap_free(b);
	}
	return avail;
}

/* The nodes as a host list in rank order, or NULL with why. */
static char *_order(const topoml_topo_t *t, struct topoml_placement *p)
{
	char *s = topoml_nodes_format(t, p->nodes, p->n);

	topoml_placement_clear(p);
	return s;
}

/* Policy pol for n whole nodes with busy taken. */
static char *_place(const topoml_topo_t *t, enum topoml_policy pol, int n,
		    const char *busy, char *why)
{
	hwloc_bitmap_t avail = _free(t, busy);
	struct topoml_place_req r = { .nnodes = n, .avail = avail };
	struct topoml_placement p = { 0 };
	int rc = topoml_place(t, pol, &r, &p, why, 256);

	hwloc_bitmap_free(avail);
	return rc ? NULL : _order(t, &p);
}

/* The same with the nodes in index order (a set). */
static char *_set(const topoml_topo_t *t, enum topoml_policy pol, int n,
		  const char *busy, char *why)
{
	hwloc_bitmap_t avail = _free(t, busy), set;
	struct topoml_place_req r = { .nnodes = n, .avail = avail };
	struct topoml_placement p = { 0 };
	char *s = NULL;

	if (!topoml_place(t, pol, &r, &p, why, 256)) {
		set = hwloc_bitmap_alloc();
		for (int i = 0; i < p.n; i++)
			hwloc_bitmap_set(set, p.nodes[i]);
		s = topoml_nodeset_format(t, set);
		hwloc_bitmap_free(set);
		topoml_placement_clear(&p);
	}
	hwloc_bitmap_free(avail);
	return s;
}

/* Kueue's assignment for an explicit request (kind, level up from
 * hostname), as a set. */
static char *_request(const topoml_topo_t *t, enum topoml_kueue_kind kind,
		      int level, bool balanced, int n, char *why)
{
	hwloc_bitmap_t avail = _free(t, BUSY), req = hwloc_bitmap_alloc();
	struct topoml_place_req r = { .nnodes = n, .avail = avail };
	struct place_in in = { .t = t, .req = &r, .avail = avail,
			       .required = req, .n = n, .k = 1 };
	struct topoml_kueue_req rq = { .kind = kind, .level = level,
				       .balanced = balanced };
	struct topoml_placement p = { 0 };
	char *s = NULL;

	if (!topoml__kueue_place(&in, &rq, &p, why, 256)) {
		hwloc_bitmap_t set = hwloc_bitmap_alloc();

		for (int i = 0; i < p.n; i++)
			hwloc_bitmap_set(set, p.nodes[i]);
		s = topoml_nodeset_format(t, set);
		hwloc_bitmap_free(set);
		topoml_placement_clear(&p);
	}
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(req);
	return s;
}

#define EXPECT(call, want)						\
	do {								\
		char why[256] = "", *got = (call);			\
		ck_assert_msg(got && !strcmp(got, (want)),		\
			      "%s: got %s, want %s (%s)", #call,	\
			      got ? got : "nothing", (want), why);	\
		free(got);						\
	} while (0)

#define REFUSED(call, text)						\
	do {								\
		char why[256] = "", *got = (call);			\
		ck_assert_msg(!got, "%s: placed %s", #call, got);	\
		ck_assert_msg(strstr(why, (text)), "%s: why %s", #call,	\
			      why);					\
	} while (0)

START_TEST(names)
{
	enum topoml_policy p;

	topoml_sim_register_baselines();
	ck_assert_int_eq(topoml_policy_parse("kueue-bestfit", &p), 0);
	ck_assert_int_eq(p, TOPOML_POLICY_KUEUE_BESTFIT);
	ck_assert_int_eq(p, 7);
	ck_assert_int_eq(topoml_policy_parse("kueue-leastfree", &p), 0);
	ck_assert_int_eq(p, 8);
	ck_assert_int_eq(topoml_policy_parse("kueue-balanced", &p), 0);
	ck_assert_int_eq(p, 9);
	ck_assert_str_eq(topoml_policy_name(TOPOML_POLICY_KUEUE_LEASTFREE),
			 "kueue-leastfree");
}
END_TEST

/*
 * kueue-bestfit: a job that fits a rack (4 nodes) asks for required rack,
 * one that fits a block (8) required block, a larger one preferred block.
 * findLevelWithFitDomains sorts the domains of the level by free nodes,
 * most first (R2 4, R0 3, R3 2, R1 1), and when the first holds the job
 * takes findBestFitDomain: the first with the fewest free nodes that
 * still holds it.
 */
START_TEST(bestfit)
{
	topoml_topo_t *t = _tree();
	enum topoml_policy bf = TOPOML_POLICY_KUEUE_BESTFIT;

	topoml_sim_register_baselines();
	/* N=2: R3 (2) is the tightest rack */
	EXPECT(_set(t, bf, 2, BUSY, why), "node[15-16]");
	/* N=3: R0 (3), not R2 (4), which has the most */
	EXPECT(_set(t, bf, 3, BUSY, why), "node[1-3]");
	/* N=4: only R2 holds 4 */
	EXPECT(_set(t, bf, 4, BUSY, why), "node[9-12]");
	/*
	 * N=5, required block: B1 (6) is the only block holding 5.  Down
	 * (updateCountsToMinimum): racks of B1 by most free, R2 4 taken
	 * whole, R3 holds the last 1; then the hosts of R2 and R3 pooled,
	 * in label order (node10, node11, node12, node9, node15, node16):
	 * the first five.
	 */
	EXPECT(_set(t, bf, 5, BUSY, why), "node[9-12,15]");
	/* N=6: B1 whole (4 + 2) */
	EXPECT(_set(t, bf, 6, BUSY, why), "node[9-12,15-16]");
	/* ranks follow the label values: node9 after node12 */
	EXPECT(_place(t, bf, 6, BUSY, why), "node[10-12,9,15-16]");
	/* N=7 fits a block by size, so required block: none holds 7 now,
	 * the job waits (Slurm's tree would take two blocks) */
	REFUSED(_set(t, bf, 7, BUSY, why), "required block");
	/*
	 * N=9, preferred block: no block holds 9 and block is the top
	 * label, so the job is split over blocks: B1 (6) whole, B0 the
	 * rest.  Racks of both pooled by most free: R2 4, R0 3, then the
	 * best fit for the last 2 among R3 (2) and R1 (1): R3.
	 */
	EXPECT(_set(t, bf, 9, BUSY, why), "node[1-3,9-12,15-16]");
	/* Kueue has one answer */
	{
		hwloc_bitmap_t avail = _free(t, BUSY);
		struct topoml_place_req r = { .nnodes = 3, .avail = avail,
					      .attempt = 1 };
		struct topoml_placement p = { 0 };
		char why[256];

		ck_assert_int_eq(topoml_place(t, bf, &r, &p, why,
					      sizeof(why)), -1);
		ck_assert_msg(strstr(why, "no alternative"), "%s", why);
		hwloc_bitmap_free(avail);
	}
	topoml_free(t);
}
END_TEST

/*
 * Required against preferred, the same algorithm (BestFit): preferred
 * climbs a level when no domain holds the job, required waits.
 */
START_TEST(required_preferred)
{
	topoml_topo_t *t = _tree();
	enum topoml_kueue_kind req = TOPOML_KUEUE_REQUIRED,
			       pref = TOPOML_KUEUE_PREFERRED;

	/* N=3 either way: R0 holds it */
	EXPECT(_request(t, req, 1, false, 3, why), "node[1-3]");
	EXPECT(_request(t, pref, 1, false, 3, why), "node[1-3]");
	/* N=6, rack: no rack holds 6; preferred climbs to block, B1 */
	REFUSED(_request(t, req, 1, false, 6, why), "required rack");
	EXPECT(_request(t, pref, 1, false, 6, why), "node[9-12,15-16]");
	/*
	 * N=7, block: no block holds 7.  Preferred splits at the top:
	 * B1 (6) whole and B0 1; but the racks below are chosen pooled,
	 * "without checking what we've assigned to parent domains": R2 4,
	 * then R0 (3) is the best fit for the last 3, so B0 gets 3 and
	 * B1 only 4.
	 */
	REFUSED(_request(t, req, 2, false, 7, why), "required block");
	EXPECT(_request(t, pref, 2, false, 7, why), "node[1-3,9-12]");
	/* a level the labels lack */
	REFUSED(_request(t, pref, 3, false, 3, why), "no label level");
	topoml_free(t);
}
END_TEST

/*
 * kueue-leastfree: the unconstrained request, the only one that gets
 * LeastFreeCapacity (KEP matrix since v0.15): hostnames sorted by free
 * pods, fewest first; the first that holds the job, else them all in
 * that order.  Whole free nodes all hold 1: label order.
 */
START_TEST(leastfree)
{
	topoml_topo_t *t = _tree();
	enum topoml_policy lf = TOPOML_POLICY_KUEUE_LEASTFREE;

	topoml_sim_register_baselines();
	EXPECT(_set(t, lf, 1, BUSY, why), "node1");
	EXPECT(_set(t, lf, 3, BUSY, why), "node[1-3]");
	/* node1-3, node8, then node10, node11 (before node9) */
	EXPECT(_set(t, lf, 6, BUSY, why), "node[1-3,8,10-11]");
	EXPECT(_place(t, lf, 6, BUSY, why), "node[1-3,8,10-11]");
	topoml_free(t);
}
END_TEST

/*
 * kueue-balanced (TASBalancedPlacement): a job that fits a rack asks for
 * required rack (BestFit); a larger one preferred block, balanced over
 * racks.  Threshold T = the greedy count's n / racks, no more than the
 * last rack's free; racks below T pruned; the block set with fewest
 * domains, then the least spare; T on each rack, the rest to the most
 * free first.
 */
START_TEST(balanced)
{
	topoml_topo_t *t = _tree();
	enum topoml_policy bal = TOPOML_POLICY_KUEUE_BALANCED;

	topoml_sim_register_baselines();
	EXPECT(_set(t, bal, 3, BUSY, why), "node[1-3]");
	EXPECT(_set(t, bal, 4, BUSY, why), "node[9-12]");
	/*
	 * N=5: greedy over all racks R2 4 + R0 3, T = min(5 / 2, 3) = 2;
	 * R1 (1) pruned; blocks B0 3, B1 6: one block, B1 (least spare of
	 * one-block sets).  Its racks R2, R3 get T = 2 each, the 1 left to
	 * R2 (most free): 3 + 2, where BestFit gives 4 + 1.
	 */
	EXPECT(_set(t, bal, 5, BUSY, why), "node[10-12,15-16]");
	/*
	 * N=6: greedy R2 4 + R0 3, T = 3; R1 and R3 pruned, blocks B0 3
	 * and B1 4: two blocks, 3 on R0 and 3 on R2, where BestFit packs
	 * B1 (4 + 2).
	 */
	EXPECT(_set(t, bal, 6, BUSY, why), "node[1-3,10-12]");
	/* N=9: T = min(9 / 3, R3's 2) = 2: R2 2+2, R0 2+1, R3 2 */
	EXPECT(_set(t, bal, 9, BUSY, why), "node[1-3,9-12,15-16]");
	/* the same request with the gate off is BestFit's */
	EXPECT(_request(t, TOPOML_KUEUE_PREFERRED, 2, false, 6, why),
	       "node[9-12,15-16]");
	EXPECT(_request(t, TOPOML_KUEUE_PREFERRED, 2, true, 6, why),
	       "node[1-3,10-12]");
	topoml_free(t);
}
END_TEST

/*
 * Pods by capacity (a job that shares nodes): the KEP's example, a rack
 * whose nodes hold 3, 3, 2 and 1 pods, a PodSet of 7.  BestFit takes
 * the two of 3 and then the node that holds exactly the last 1;
 * LeastFreeCapacity takes 1, 2, 3 and 1 of the last 3: all four nodes.
 */
START_TEST(shared_kep_example)
{
	topoml_topo_t *t = _tree();
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	uint32_t fu[16] = { 3, 3, 2, 1 };
	struct topoml_place_req r = { .nnodes = 1, .avail = avail,
				      .units = 7, .free_units = fu };
	struct topoml_placement p = { 0 };
	char why[256], *s;

	topoml_sim_register_baselines();
	hwloc_bitmap_set_range(avail, 0, 3);
	ck_assert_msg(!topoml_place(t, TOPOML_POLICY_KUEUE_BESTFIT, &r, &p,
				    why, sizeof(why)), "%s", why);
	s = _order(t, &p);
	ck_assert_str_eq(s, "node[1-2,4]");
	free(s);
	ck_assert_msg(!topoml_place(t, TOPOML_POLICY_KUEUE_LEASTFREE, &r,
				    &p, why, sizeof(why)), "%s", why);
	s = _order(t, &p);
	ck_assert_str_eq(s, "node[1-4]");
	free(s);
	/* 2 pods: LeastFree's first node that holds them, node3 (2) */
	r.units = 2;
	ck_assert_msg(!topoml_place(t, TOPOML_POLICY_KUEUE_LEASTFREE, &r,
				    &p, why, sizeof(why)), "%s", why);
	s = _order(t, &p);
	ck_assert_str_eq(s, "node3");
	free(s);
	/* 5 pods, BestFit: node1 3, then the best fit for 2: node3 */
	r.units = 5;
	ck_assert_msg(!topoml_place(t, TOPOML_POLICY_KUEUE_BESTFIT, &r, &p,
				    why, sizeof(why)), "%s", why);
	s = _order(t, &p);
	ck_assert_str_eq(s, "node[1,3]");
	free(s);
	/* Kueue counts pods, not nodes: 3 units fit node1 alone, so a job
	 * that must span 2 nodes is refused with the reason */
	r.units = 3;
	r.nnodes = 2;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_KUEUE_BESTFIT, &r, &p,
				      why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "fewer than the 2"), "%s", why);
	hwloc_bitmap_free(avail);
	topoml_free(t);
}
END_TEST

/*
 * Dragonfly: group = block (one label level), router = rack.  Three
 * groups g0-g2 of two routers of two nodes, node1 and node5 busy.
 */
START_TEST(dragonfly)
{
	topoml_topo_t *t = topoml_gen_dragonfly("node", 3, 2, 2,
						TOPOML_DF_ALL_TO_ALL);
	const char *busy = "node[1,5]";

	ck_assert_ptr_nonnull(t);
	topoml_sim_register_baselines();
	/* N=2 fits a router: required rack, the first router of two
	 * free in label order, g0r1 */
	EXPECT(_set(t, TOPOML_POLICY_KUEUE_BESTFIT, 2, busy, why),
	       "node[3-4]");
	/* LeastFree: the first free nodes, node2 (g0r0) and node3 */
	EXPECT(_set(t, TOPOML_POLICY_KUEUE_LEASTFREE, 2, busy, why),
	       "node[2-3]");
	/* N=3 fits a group: required block, g0 and g1 hold 3 (best fit,
	 * g2 holds 4), g0 first by name */
	EXPECT(_set(t, TOPOML_POLICY_KUEUE_BESTFIT, 3, busy, why),
	       "node[2-4]");
	/* N=5: no group holds 5, so preferred block splits: g2 4 whole,
	 * g0 the last 1; the routers of both pooled by most free: g0r1 2,
	 * g2r0 2, then the best fit for 1: g0r0 */
	EXPECT(_set(t, TOPOML_POLICY_KUEUE_BESTFIT, 5, busy, why),
	       "node[2-4,9-10]");
	topoml_free(t);
}
END_TEST

/* A torus has no label tree: refused with the reason. */
START_TEST(torus_refused)
{
	topoml_topo_t *t = topoml_gen_torus("t", 2, 2, 2, true);

	ck_assert_ptr_nonnull(t);
	topoml_sim_register_baselines();
	REFUSED(_set(t, TOPOML_POLICY_KUEUE_BESTFIT, 2, NULL, why),
		"torus");
	REFUSED(_set(t, TOPOML_POLICY_KUEUE_LEASTFREE, 2, NULL, why),
		"torus");
	topoml_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kueue");
	TCase *tc = tcase_create("tas");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, names);
	tcase_add_test(tc, bestfit);
	tcase_add_test(tc, required_preferred);
	tcase_add_test(tc, leastfree);
	tcase_add_test(tc, balanced);
	tcase_add_test(tc, shared_kep_example);
	tcase_add_test(tc, dragonfly);
	tcase_add_test(tc, torus_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
