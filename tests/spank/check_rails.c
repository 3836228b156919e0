/*
 * Rail-optimised fabrics (issue 14 item 4): with plugstack rails=yes every
 * task of a node with several HCAs gets NCCL_CROSS_NIC=0 beside its own
 * rail's HCA in NCCL_IB_HCA; not without it, not with one HCA, and a
 * site nccl_env= value still wins.  The node is the synthetic 8-GPU
 * server of tests/fixtures/spank (hwloc XML plus a fake sysfs: mlx5_1's
 * port 1 down, mlx5_2 RoCE on the host bridge).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml.h"

#define NTASKS 8

struct run {
	struct hw_node *n;
	hwloc_topology_t topo;
	struct ml_task_bind b[NTASKS];
	struct ml_env e[NTASKS];
};

static const char *_dir(void)
{
	const char *d = getenv("TESTS_DIR");

	return d && *d ? d : TESTS_SRCDIR;
}

/* The node, one task per GPU, and each task's NCCL environment under
 * the plugstack.conf arguments av; down: HCAs whose ports go down. */
static void _run(struct run *r, int ac, char **av, const char *down)
{
	struct ml_conf c;
	char err[1024], *xml = NULL, *sysfs = NULL;

	ck_assert_int_ge(asprintf(&xml, "%s/fixtures/spank/hwloc/"
				  "synth-2s8g4n.xml", _dir()), 0);
	ck_assert_int_ge(asprintf(&sysfs, "%s/fixtures/spank/sysfs",
				  _dir()), 0);
	ml_conf_init(&c);
	ck_assert_msg(!ml_conf_parse(&c, ac, av, err, sizeof(err)), "%s",
		      err);
	r->topo = hw_hwloc_load(xml, err, sizeof(err));
	ck_assert_msg(r->topo != NULL, "%s", err);
	r->n = hw_node_new();
	ck_assert_int_eq(hw_node_from_hwloc(r->n, r->topo, err,
					    sizeof(err)), 0);
	hw_ib_sysfs(r->n, sysfs, err, sizeof(err));
	hw_ib_default_ports(r->n);
	for (int j = 0; down && j < r->n->nnics; j++)
		if (strstr(down, r->n->nics[j].name))
			for (int p = 0; p < r->n->nics[j].nports; p++)
				r->n->nics[j].ports[p].state = 1;
	memset(r->b, 0, sizeof(r->b));
	memset(r->e, 0, sizeof(r->e));
	ck_assert_msg(!ml_bind_compute(r->n, ML_GPU_BIND_AUTO, NTASKS, NULL,
				       0, r->b, err, sizeof(err)), "%s", err);
	for (int t = 0; t < NTASKS; t++)
		ml_env_nccl(&c, r->n, &r->b[t], true, NULL, &r->e[t]);
	free(xml);
	free(sysfs);
}

static void _done(struct run *r)
{
	for (int t = 0; t < NTASKS; t++)
		ml_env_clear(&r->e[t]);
	ml_bind_free(r->b, NTASKS);
	hw_node_free(r->n);
	hwloc_topology_destroy(r->topo);
}

START_TEST(rails_yes)
{
	/* GPU g's nearest HCA is its rail: two GPUs per PCIe switch. */
	static const char *const rail[NTASKS] = {
		"=mlx5_0:1", "=mlx5_0:1", "=mlx5_1:2", "=mlx5_1:2",
		"=mlx5_3:1", "=mlx5_3:1", "=mlx5_4:1", "=mlx5_4:1",
	};
	char *av[] = { "rails=yes" };
	struct run r;

	_run(&r, 1, av, NULL);
	for (int t = 0; t < NTASKS; t++) {
		const char *x = ml_env_get(&r.e[t], "NCCL_CROSS_NIC");
		const char *h = ml_env_get(&r.e[t], "NCCL_IB_HCA");

		ck_assert_msg(x && !strcmp(x, "0"), "task %d: NCCL_CROSS_NIC "
			      "%s", t, x ? x : "unset");
		ck_assert_msg(h && !strcmp(h, rail[t]), "task %d: "
			      "NCCL_IB_HCA %s, not %s", t, h ? h : "unset",
			      rail[t]);
	}
	_done(&r);
}
END_TEST

START_TEST(rails_off)
{
	char *no[] = { "rails=no" };
	struct run r;

	/* the default, and rails=no */
	for (int k = 0; k < 2; k++) {
		_run(&r, k, no, NULL);
		for (int t = 0; t < NTASKS; t++) {
			ck_assert_ptr_null(ml_env_get(&r.e[t],
						      "NCCL_CROSS_NIC"));
			ck_assert_ptr_nonnull(ml_env_get(&r.e[t],
							 "NCCL_IB_HCA"));
		}
		_done(&r);
	}
}
END_TEST

START_TEST(rails_one_hca)
{
	char *av[] = { "rails=yes" };
	struct run r;

	/* Only mlx5_0 left up (mlx5_2 is RoCE, a verbs HCA too: down). */
	_run(&r, 1, av, "mlx5_1 mlx5_2 mlx5_3 mlx5_4");
	for (int t = 0; t < NTASKS; t++)
		ck_assert_ptr_null(ml_env_get(&r.e[t], "NCCL_CROSS_NIC"));
	ck_assert_ptr_nonnull(ml_env_get(&r.e[0], "NCCL_IB_HCA"));
	_done(&r);
}
END_TEST

START_TEST(rails_site_value_wins)
{
	char *av[] = { "rails=yes", "nccl_env=NCCL_CROSS_NIC=2" };
	struct run r;

	_run(&r, 2, av, NULL);
	for (int t = 0; t < NTASKS; t++)
		ck_assert_str_eq(ml_env_get(&r.e[t], "NCCL_CROSS_NIC"), "2");
	_done(&r);
}
END_TEST

START_TEST(rails_bad_value)
{
	struct ml_conf c;
	char *av[] = { "rails=auto" }, err[256];

	ml_conf_init(&c);
	ck_assert_int_ne(ml_conf_parse(&c, 1, av, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "rails"), "error does not name the key: "
		      "%s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rails");
	TCase *tc = tcase_create("nccl");
	SRunner *sr;
	int nfail;

	tcase_add_test(tc, rails_yes);
	tcase_add_test(tc, rails_off);
	tcase_add_test(tc, rails_one_hca);
	tcase_add_test(tc, rails_site_value_wins);
	tcase_add_test(tc, rails_bad_value);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail ? 1 : 0;
}
