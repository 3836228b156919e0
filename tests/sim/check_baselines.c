/*
 * The Slurm baselines live in libtopoml_sim and reach topoml_place() only
 * through topoml_sim_register_baselines() (issue 11 item 6): before it, a
 * baseline policy fails with a reason naming that call while topoml's own
 * engine and Slurm's _eval_nodes() (core) place as usual; after it, every
 * baseline places.  One process in order: Check's fork mode would hide a
 * registration done by another test.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim.h"

static int _place(const topoml_topo_t *t, enum topoml_policy pol, int n,
		  char *why)
{
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	struct topoml_place_req r = { .nnodes = n, .avail = avail };
	struct topoml_placement p = { 0 };
	int rc;

	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	rc = topoml_place(t, pol, &r, &p, why, 256);
	if (!rc)
		ck_assert_int_eq(p.n, n);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(avail);
	return rc;
}

START_TEST(baselines_only_once_registered)
{
	topoml_topo_t *tree = topoml_gen_fat_tree("n", 16, 4, 2, 0);
	topoml_topo_t *df = topoml_gen_dragonfly("d", 4, 2, 2,
						 TOPOML_DF_ALL_TO_ALL);
	topoml_topo_t *torus = topoml_gen_torus("t", 4, 4, 4, true);
	char why[256];

	ck_assert_ptr_nonnull(tree);
	ck_assert_ptr_nonnull(df);
	ck_assert_ptr_nonnull(torus);

	/* the core's policies need nothing */
	ck_assert_int_eq(_place(tree, TOPOML_POLICY_TOPOML, 6, why), 0);
	ck_assert_int_eq(_place(tree, TOPOML_POLICY_LINEAR, 6, why), 0);
	ck_assert_int_eq(_place(torus, TOPOML_POLICY_SLURM_HILBERT, 8, why),
			 0);
	/* the baselines of libtopoml_sim are not there yet */
	ck_assert_int_eq(_place(tree, TOPOML_POLICY_SLURM_TREE, 6, why), -1);
	ck_assert_msg(strstr(why, "policy 1:") &&
		      strstr(why, "topoml_sim_register_baselines"),
		      "why: %s", why);
	/* nor are their names */
	ck_assert_str_eq(topoml_policy_name(TOPOML_POLICY_SLURM_TREE),
			 "unknown");
	ck_assert_int_eq(_place(df, TOPOML_POLICY_SLURM_DRAGONFLY, 4, why),
			 -1);
	ck_assert_int_eq(_place(torus, TOPOML_POLICY_SLURM_TORUS3D, 8, why),
			 -1);
	ck_assert_msg(strstr(why, "policy 5:"), "why: %s", why);

	topoml_sim_register_baselines();
	ck_assert_str_eq(topoml_policy_name(TOPOML_POLICY_SLURM_TREE),
			 "slurm-tree");
	ck_assert_msg(!_place(tree, TOPOML_POLICY_SLURM_TREE, 6, why), "%s",
		      why);
	ck_assert_msg(!_place(df, TOPOML_POLICY_SLURM_DRAGONFLY, 4, why),
		      "%s", why);
	ck_assert_msg(!_place(torus, TOPOML_POLICY_SLURM_TORUS3D, 8, why),
		      "%s", why);
	/* the baselines' own checks still apply */
	ck_assert_int_eq(_place(torus, TOPOML_POLICY_SLURM_TREE, 8, why), -1);
	ck_assert_msg(strstr(why, "needs switches"), "why: %s", why);
	/* registering twice changes nothing */
	topoml_sim_register_baselines();
	ck_assert_int_eq(_place(tree, TOPOML_POLICY_SLURM_TREE, 6, why), 0);

	topoml_free(tree);
	topoml_free(df);
	topoml_free(torus);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("baselines");
	TCase *tc = tcase_create("registration");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, baselines_only_once_registered);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
