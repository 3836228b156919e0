/*
 * The volcano baseline (topology/sim/baselines/volcano.c) on small
 * machines, each answer worked out by hand from Volcano's text (commit
 * ed72c7c8: docs/design/Network Topology Aware Scheduling.md, the
 * network-topology-aware plugin and the allocate action):
 *  - the job is hard at the lowest tier with a HyperNode of >= N nodes,
 *    soft (the session's hard at the cluster top) when there is none;
 *  - gradients: tiers lowest first, HyperNodes with >= N free nodes;
 *  - the binpack score (busy + N) / size, highest wins (ties: first in
 *    file order, Volcano draws at random);
 *  - pods: first on the lowest free node, then the lowest HyperNode that
 *    is the allocated one, else the lowest tier of the common ancestor
 *    with it, ties to the one holding most of the job's pods, then the
 *    lowest index; the node list is that order.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topoml.h"
#include "sim.h"

/* Place n nodes with volcano, busy[0..nb) taken; the node list in got
 * (at most 32); 0 or -1 with why. */
static int _vol(const topoml_topo_t *t, const int *busy, int nb, int n,
		int *got, char *why)
{
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	struct topoml_place_req r = { .nnodes = n, .avail = avail };
	struct topoml_placement p = { 0 };
	int rc;

	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	for (int i = 0; i < nb; i++)
		hwloc_bitmap_clr(avail, busy[i]);
	rc = topoml_place(t, TOPOML_POLICY_VOLCANO, &r, &p, why, 256);
	if (!rc) {
		ck_assert_int_eq(p.n, n);
		ck_assert_int_le(n, 32);
		memcpy(got, p.nodes, n * sizeof(int));
	}
	topoml_placement_clear(&p);
	hwloc_bitmap_free(avail);
	return rc;
}

/* The node list (node indices, in order) must be want[0..n). */
static void _expect(const topoml_topo_t *t, const int *busy, int nb, int n,
		    const int *want)
{
	int got[32];
	char why[256];

	ck_assert_msg(!_vol(t, busy, nb, n, got, why), "N=%d: %s", n, why);
	for (int i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i],
			      "N=%d: rank %d on node %d, want %d", n, i,
			      got[i], want[i]);
}

/* The job waits: why must contain what. */
static void _waits(const topoml_topo_t *t, const int *busy, int nb, int n,
		   const char *what)
{
	int got[32];
	char why[256];

	ck_assert_int_eq(_vol(t, busy, nb, n, got, why), -1);
	ck_assert_msg(strstr(why, what), "N=%d: why: %s", n, why);
}

/*
 * 2 spines x 2 leaves x 4 nodes: leaves L0 n1-4, L1 n5-8 (spine S0),
 * L2 n9-12, L3 n13-16 (S1), root R.  Tiers: leaves 1, spines 2, R 3
 * (the cluster top 4).  Busy n5 n6 (L1), n9 (L2), n13-15 (L3): free
 * L0 4, L1 2, L2 3, L3 1; S0 6 of 8, S1 4 of 8; R 10.
 */
static const int busy_a[] = { 4, 5, 8, 12, 13, 14 };

START_TEST(fat_tree_by_hand)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 2, 0);
	const int nb = sizeof(busy_a) / sizeof(busy_a[0]);

	ck_assert_ptr_nonnull(t);
	topoml_sim_register_baselines();
	/* N=1: hard, tier 1 (a leaf holds 1).  Leaves with >= 1 free:
	 * L0 (0+1)/4, L1 (2+1)/4, L2 (1+1)/4, L3 (3+1)/4 = 1: L3, n16
	 * (first fit would take n1). */
	_expect(t, busy_a, nb, 1, (const int[]){ 15 });
	/* N=2: tier 1.  L0 2/4, L1 (2+2)/4 = 1, L2 3/4 (L3 has 1): L1. */
	_expect(t, busy_a, nb, 2, (const int[]){ 6, 7 });
	/* N=3: tier 1.  L0 3/4, L2 (1+3)/4 = 1: L2, not the empty L0. */
	_expect(t, busy_a, nb, 3, (const int[]){ 9, 10, 11 });
	/* N=4: tier 1.  Only L0 has 4 free. */
	_expect(t, busy_a, nb, 4, (const int[]){ 0, 1, 2, 3 });
	/* N=6: hard, tier 2 (leaves hold 4).  S0 has 6 free, S1 4: S0.
	 * First pod on n1 (lowest), L0 until full, then L1 (common
	 * ancestor S0). */
	_expect(t, busy_a, nb, 6, (const int[]){ 0, 1, 2, 3, 6, 7 });
	/* N=7: tier 2, no spine has 7 free: Pending, though R has 10. */
	_waits(t, busy_a, nb, 7, "highestTierAllowed 2");
	/* N=9: hard, tier 3: R.  n1-4 (L0), then L1 (ancestor S0, tier 2)
	 * before L2 and L3 (R, tier 3); then L2 and L3 tie (R, no pods of
	 * the job): the lowest node, n10.  n16 stays free. */
	_expect(t, busy_a, nb, 9,
		(const int[]){ 0, 1, 2, 3, 6, 7, 9, 10, 11 });
	topoml_free(t);
}
END_TEST

/*
 * The same tree, busy n9 and n16: S0 8 free (0 busy), S1 6 free (2
 * busy).  N=5: tier 2; S0 (0+5)/8 < S1 (2+5)/8: S1, the fuller one.
 * Inside: n10 first (lowest free of S1), L2 to its end (n10-12), then
 * L3 (ancestor S1): n13 n14.
 */
START_TEST(binpack_prefers_fuller_spine)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 2, 0);
	const int busy[] = { 8, 15 };

	ck_assert_ptr_nonnull(t);
	topoml_sim_register_baselines();
	_expect(t, busy, 2, 5, (const int[]){ 9, 10, 11, 12, 13 });
	/* N=8: tier 2, only S0 has 8 free */
	_expect(t, busy, 2, 8, (const int[]){ 0, 1, 2, 3, 4, 5, 6, 7 });
	topoml_free(t);
}
END_TEST

/*
 * Spines that do not follow node order: S0 = {l0 c1-4, l2 c9-12}, S1 =
 * {l1 c5-8, l3 c13-16}, root r.  Busy c1.  N=9: hard, tier 3 (spines
 * hold 8): r.  c2-4 (l0, lowest free), then l2 (ancestor S0, tier 2)
 * before l1 (r, tier 3): c9-12; then l1 and l3 tie (r): the lowest, c5
 * c6.  The node list is the pods' order, not node index order.
 */
/* A topology.conf text as a model (NULL on failure). */
static topoml_topo_t *_conf(const char *text)
{
	char path[] = "/tmp/check_volcano.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;

	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	t = topoml_load_conf(path, &err);
	unlink(path);
	topoml_errors_clear(&err);
	return t;
}

START_TEST(nearest_leaf_not_index_order)
{
	topoml_topo_t *t = _conf("SwitchName=l0 Nodes=c[1-4]\n"
				 "SwitchName=l1 Nodes=c[5-8]\n"
				 "SwitchName=l2 Nodes=c[9-12]\n"
				 "SwitchName=l3 Nodes=c[13-16]\n"
				 "SwitchName=s0 Switches=l0,l2\n"
				 "SwitchName=s1 Switches=l1,l3\n"
				 "SwitchName=r Switches=s[0-1]\n");
	const int busy[] = { 0 };

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(topoml_node_by_name(t, "c1"), 0);
	ck_assert_int_eq(topoml_node_by_name(t, "c9"), 8);
	topoml_sim_register_baselines();
	_expect(t, busy, 1, 9,
		(const int[]){ 1, 2, 3, 8, 9, 10, 11, 4, 5 });
	topoml_free(t);
}
END_TEST

/*
 * The first tree without its root: two parts, no HyperNode of 9 nodes.
 * Busy as busy_a (S0 6 free, S1 4).  N=8: hard at tier 2, no spine has
 * 8 free: Pending.  N=9: no HyperNode holds 9: soft, the cluster top
 * (10 free): n1-4 (L0), L1 (S0), then L2 and L3 tie (the top): n10-12.
 */
START_TEST(forest_soft)
{
	topoml_topo_t *t = _conf("SwitchName=l0 Nodes=n[1-4]\n"
				 "SwitchName=l1 Nodes=n[5-8]\n"
				 "SwitchName=l2 Nodes=n[9-12]\n"
				 "SwitchName=l3 Nodes=n[13-16]\n"
				 "SwitchName=s0 Switches=l[0-1]\n"
				 "SwitchName=s1 Switches=l[2-3]\n");
	const int nb = sizeof(busy_a) / sizeof(busy_a[0]);

	ck_assert_ptr_nonnull(t);
	topoml_sim_register_baselines();
	_waits(t, busy_a, nb, 8, "highestTierAllowed 2");
	_expect(t, busy_a, nb, 9,
		(const int[]){ 0, 1, 2, 3, 6, 7, 9, 10, 11 });
	topoml_free(t);
}
END_TEST

/*
 * Dragonfly, 3 groups x 2 routers x 2 nodes: routers R0 d1-2, R1 d3-4
 * (G0), R2 d5-6, R3 d7-8 (G1), R4 d9-10, R5 d11-12 (G2).  HyperNodes:
 * routers tier 1, groups tier 2, nothing above but the cluster top
 * (tier 3).
 */
START_TEST(dragonfly_groups_and_soft)
{
	topoml_topo_t *t = topoml_gen_dragonfly("d", 3, 2, 2,
						TOPOML_DF_ALL_TO_ALL);
	const int busy1[] = { 0, 8, 9, 11 };
	const int busy2[] = { 0, 4, 8, 9, 11 };

	ck_assert_ptr_nonnull(t);
	topoml_sim_register_baselines();
	/* Busy d1, d9, d10, d12: G0 3 free, G1 4, G2 1.  N=3: hard, tier
	 * 2 (a group holds 4).  G0 (1+3)/4 = 1 beats G1 (0+3)/4: G0; d2
	 * (lowest) then R1 (ancestor G0): d3 d4. */
	_expect(t, busy1, 4, 3, (const int[]){ 1, 2, 3 });
	/* N=4: tier 2, only G1 has 4 free */
	_expect(t, busy1, 4, 4, (const int[]){ 4, 5, 6, 7 });
	/* Busy d5 too: G0 3, G1 3, G2 1.  N=4: hard at tier 2, no group
	 * has 4 free: Pending, though 7 nodes are free. */
	_waits(t, busy2, 5, 4, "highestTierAllowed 2");
	/* N=5: no group holds 5: soft, the cluster top.  d2 (R0), R1
	 * (ancestor G0): d3 d4; then R2, R3, R5 tie (the top): d6 (R2,
	 * lowest); R3 and R5 tie again: d7. */
	_expect(t, busy2, 5, 5, (const int[]){ 1, 2, 3, 5, 6 });
	topoml_free(t);
}
END_TEST

START_TEST(refusals_and_names)
{
	topoml_topo_t *torus = topoml_gen_torus("t", 2, 2, 2, true);
	topoml_topo_t *tree = topoml_gen_fat_tree("n", 8, 4, 2, 0);
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	hwloc_bitmap_t req = hwloc_bitmap_alloc();
	struct topoml_place_req r = { .nnodes = 2, .avail = avail };
	struct topoml_placement p = { 0 };
	enum topoml_policy pol;
	char why[256];
	int got[32];

	ck_assert_ptr_nonnull(torus);
	ck_assert_ptr_nonnull(tree);
	topoml_sim_register_baselines();
	ck_assert_str_eq(topoml_policy_name(TOPOML_POLICY_VOLCANO),
			 "volcano");
	ck_assert_int_eq(topoml_policy_parse("Volcano", &pol), 0);
	ck_assert_int_eq(pol, TOPOML_POLICY_VOLCANO);
	/* a torus has no HyperNode tree */
	ck_assert_int_eq(_vol(torus, NULL, 0, 2, got, why), -1);
	ck_assert_msg(strstr(why, "torus"), "why: %s", why);
	/* one answer per state */
	hwloc_bitmap_set_range(avail, 0, tree->nnodes - 1);
	r.attempt = 1;
	ck_assert_int_eq(topoml_place(tree, TOPOML_POLICY_VOLCANO, &r, &p,
				      why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "no alternative"), "why: %s", why);
	/* no srun -w */
	r.attempt = 0;
	hwloc_bitmap_set(req, 5);
	r.required = req;
	ck_assert_int_eq(topoml_place(tree, TOPOML_POLICY_VOLCANO, &r, &p,
				      why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "required"), "why: %s", why);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(req);
	topoml_free(torus);
	topoml_free(tree);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("volcano");
	TCase *tc = tcase_create("by hand");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, fat_tree_by_hand);
	tcase_add_test(tc, binpack_prefers_fuller_spine);
	tcase_add_test(tc, nearest_leaf_not_index_order);
	tcase_add_test(tc, forest_soft);
	tcase_add_test(tc, dragonfly_groups_and_soft);
	tcase_add_test(tc, refusals_and_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
