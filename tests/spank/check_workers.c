/*
 * One task per node that starts its own workers (torchrun, issue 29 item
 * 9): the per-worker maps ml_env_workers exports are, entry by entry, the
 * bindings of the same local rank under --ntasks-per-node=N (ml_bind_
 * compute with N tasks); the count comes from the job's TOPOML_WORKERS
 * when it is sane; a job's own NCCL_IB_HCA keeps the HCA map out; GPUs
 * are positions in a list Slurm renumbered; torchrun's PET_* defaults
 * carry the ring position only with one task per node.  The node is the
 * synthetic 8-GPU, 4-HCA server of tests/fixtures/spank.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml.h"

static struct hw_node *_n;
static hwloc_topology_t _topo;

static const char *_dir(void)
{
	const char *d = getenv("TESTS_DIR");

	return d && *d ? d : TESTS_SRCDIR;
}

static void _setup(void)
{
	char err[1024], *xml = NULL, *sysfs = NULL;

	ck_assert_int_ge(asprintf(&xml, "%s/fixtures/spank/hwloc/"
				  "synth-2s8g4n.xml", _dir()), 0);
	ck_assert_int_ge(asprintf(&sysfs, "%s/fixtures/spank/sysfs",
				  _dir()), 0);
	_topo = hw_hwloc_load(xml, err, sizeof(err));
	ck_assert_msg(_topo != NULL, "%s", err);
	_n = hw_node_new();
	ck_assert_int_eq(hw_node_from_hwloc(_n, _topo, err, sizeof(err)), 0);
	hw_ib_sysfs(_n, sysfs, err, sizeof(err));
	hw_ib_default_ports(_n);
	free(xml);
	free(sysfs);
}

static void _teardown(void)
{
	hw_node_free(_n);
	hwloc_topology_destroy(_topo);
}

/* The job's environment for the getenv callback: "NAME=value\0...". */
static bool _get(void *arg, const char *name, char *buf, size_t len)
{
	for (const char *p = arg; p && *p; p += strlen(p) + 1)
		if (!strncmp(p, name, strlen(name)) &&
		    p[strlen(name)] == '=') {
			snprintf(buf, len, "%s", p + strlen(name) + 1);
			return true;
		}
	return false;
}

/* Entry i of a ';' list, in buf. */
static const char *_entry(const char *list, int i, char *buf, size_t len)
{
	const char *p = list;

	for (; i > 0 && p; i--)
		if ((p = strchr(p, ';')))
			p++;
	ck_assert_ptr_nonnull(p);
	snprintf(buf, len, "%.*s", (int)strcspn(p, ";"), p);
	return buf;
}

static int _count(const char *list)
{
	int k = 1;

	for (; *list; list++)
		k += *list == ';';
	return k;
}

/*
 * One task on all GPUs (POOL/NPOOL or the node's), then its workers' maps
 * (job environment ENV) against NW tasks per node, local rank by local
 * rank.  Returns the workers' environment for more checks.
 */
static void _check(const int *pool, int npool, const char *visible,
		   bool from_slurm, const char *env, int nw, struct ml_env *e)
{
	struct ml_task_bind task, *tasks = calloc(nw, sizeof(*tasks));
	struct ml_workers w = {
		.node = _n, .mode = ML_GPU_BIND_AUTO, .task = &task,
		.pool = pool, .npool = npool, .from_slurm = from_slurm,
		.cpus = true, .net = true, .get = _get, .arg = (void *)env,
	};
	char err[256], a[1024], b[1040];	/* b: "=" and an ib_hca */
	const char *v;

	ck_assert_ptr_nonnull(tasks);
	ck_assert_msg(!ml_bind_compute(_n, ML_GPU_BIND_AUTO, 1, pool, npool,
				       &task, err, sizeof(err)), "%s", err);
	ck_assert_msg(!ml_bind_compute(_n, ML_GPU_BIND_AUTO, nw, pool, npool,
				       tasks, err, sizeof(err)), "%s", err);
	w.nworkers = task.ngpus;
	w.visible = visible ? visible : task.cuda_visible;
	ck_assert_int_eq(ml_env_workers(&w, e), 0);
	v = ml_env_get(e, "TOPOML_WORKER_GPUS");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(_count(v), nw);
	for (int i = 0; i < nw; i++) {
		char own[256];

		/* Where task i's GPUs are in the list the worker sees. */
		ck_assert_int_eq(ml_own_in_visible(_n, &tasks[i], w.visible,
						   pool, npool, from_slurm,
						   own, sizeof(own)), 0);
		ck_assert_str_eq(_entry(v, i, a, sizeof(a)), own);
		/* With one GPU each, as tasks: entry i is its own. */
		if (nw == task.ngpus && !visible)
			ck_assert_int_eq(atoi(own), i);
	}
	v = ml_env_get(e, "TOPOML_WORKER_CPUS");
	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < nw; i++) {
		hwloc_bitmap_list_snprintf(b, sizeof(b), tasks[i].cpuset);
		ck_assert_str_eq(_entry(v, i, a, sizeof(a)), b);
	}
	if ((v = ml_env_get(e, "TOPOML_WORKER_HCAS")))
		for (int i = 0; i < nw; i++) {
			snprintf(b, sizeof(b), "=%s", tasks[i].ib_hca);
			ck_assert_str_eq(_entry(v, i, a, sizeof(a)), b);
		}
	ml_bind_free(&task, 1);
	ml_bind_free(tasks, nw);
	free(tasks);
}

START_TEST(one_per_gpu)
{
	struct ml_env e = { 0 };
	char a[64], b[64];
	const char *h;

	_check(NULL, 0, NULL, false, NULL, 8, &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_WORKERS"), "8");
	/* Eight workers, not all on one HCA or one CPU set. */
	h = ml_env_get(&e, "TOPOML_WORKER_HCAS");
	ck_assert_ptr_nonnull(h);
	ck_assert_str_ne(_entry(h, 0, a, sizeof(a)), _entry(h, 7, b,
							     sizeof(b)));
	h = ml_env_get(&e, "TOPOML_WORKER_CPUS");
	ck_assert_str_ne(_entry(h, 0, a, sizeof(a)), _entry(h, 7, b,
							     sizeof(b)));
	/* No job: no torchrun defaults. */
	ck_assert_ptr_null(ml_env_get(&e, "PET_NODE_RANK"));
	ml_env_clear(&e);
}
END_TEST

START_TEST(user_count)
{
	struct ml_env e = { 0 };

	/* The job's TOPOML_WORKERS=2: two workers of four GPUs each. */
	_check(NULL, 0, NULL, false, "TOPOML_WORKERS=2\0", 2, &e);
	ck_assert_ptr_null(ml_env_get(&e, "TOPOML_WORKERS"));
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_WORKER_GPUS"),
			 "0,1,2,3;4,5,6,7");
	ml_env_clear(&e);
	/* Three workers on eight GPUs: 3+3+2 as tasks would get. */
	_check(NULL, 0, NULL, false, "TOPOML_WORKERS=3\0", 3, &e);
	ml_env_clear(&e);
}
END_TEST

START_TEST(bad_count)
{
	static const char *const bad[] = { "TOPOML_WORKERS=0\0",
					   "TOPOML_WORKERS=4x\0",
					   "TOPOML_WORKERS=\0",
					   "TOPOML_WORKERS=99999999999\0" };
	struct ml_task_bind task;
	struct ml_job j = { .nnodes = 2, .world_size = 2, .node_rank = 1,
			    .master_port = 29501 };
	char err[256];

	ck_assert(!ml_bind_compute(_n, ML_GPU_BIND_AUTO, 1, NULL, 0, &task,
				   err, sizeof(err)));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ml_env e = { 0 };
		struct ml_workers w = {
			.node = _n, .mode = ML_GPU_BIND_AUTO, .task = &task,
			.job = &j, .nworkers = 8, .visible = task.cuda_visible,
			.get = _get, .arg = (void *)bad[i],
		};

		ck_assert_int_eq(ml_env_workers(&w, &e), 0);
		ck_assert_ptr_null(ml_env_get(&e, "TOPOML_WORKER_GPUS"));
		ck_assert_ptr_null(ml_env_get(&e, "PET_NPROC_PER_NODE"));
		ck_assert_str_eq(ml_env_get(&e, "PET_NODE_RANK"), "1");
		ml_env_clear(&e);
	}
	ml_bind_free(&task, 1);
}
END_TEST

START_TEST(user_hca)
{
	struct ml_env e = { 0 };

	/* The job's own NCCL_IB_HCA stays for every worker. */
	_check(NULL, 0, NULL, false, "NCCL_IB_HCA=mlx5_0\0", 8, &e);
	ck_assert_ptr_null(ml_env_get(&e, "TOPOML_WORKER_HCAS"));
	ml_env_clear(&e);
}
END_TEST

START_TEST(slurm_list)
{
	/* Slurm's GRES gave the step GPUs 4-7 and, with ConstrainDevices,
	 * CUDA_VISIBLE_DEVICES=0,1,2,3: positions in that list. */
	int pool[] = { 4, 5, 6, 7 };
	struct ml_env e = { 0 };

	_check(pool, 4, "0,1,2,3", true, NULL, 4, &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_WORKER_GPUS"), "0;1;2;3");
	ml_env_clear(&e);
	_check(pool, 4, "4,5,6,7", true, "TOPOML_WORKERS=2\0", 2, &e);
	ck_assert_str_eq(ml_env_get(&e, "TOPOML_WORKER_GPUS"), "0,1;2,3");
	ml_env_clear(&e);
}
END_TEST

START_TEST(torchrun_defaults)
{
	struct ml_job j = { .nnodes = 4, .world_size = 4, .node_rank = 2,
			    .master_addr = "n7", .master_port = 29512 };
	struct ml_workers w = { .job = &j, .nworkers = 8 };
	struct ml_env e = { 0 };

	ck_assert_int_eq(ml_env_workers(&w, &e), 0);
	ck_assert_str_eq(ml_env_get(&e, "PET_NNODES"), "4");
	ck_assert_str_eq(ml_env_get(&e, "PET_NODE_RANK"), "2");
	ck_assert_str_eq(ml_env_get(&e, "PET_MASTER_ADDR"), "n7");
	ck_assert_str_eq(ml_env_get(&e, "PET_MASTER_PORT"), "29512");
	ck_assert_str_eq(ml_env_get(&e, "PET_NPROC_PER_NODE"), "8");
	/* No task binding: no maps. */
	ck_assert_ptr_null(ml_env_get(&e, "TOPOML_WORKER_GPUS"));
	ml_env_clear(&e);
	/* Several tasks on some node: a node rank is no group rank. */
	j.world_size = 5;
	ck_assert_int_eq(ml_env_workers(&w, &e), 0);
	ck_assert_ptr_null(ml_env_get(&e, "PET_NODE_RANK"));
	ml_env_clear(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workers");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, one_per_gpu);
	tcase_add_test(tc, user_count);
	tcase_add_test(tc, bad_count);
	tcase_add_test(tc, user_hca);
	tcase_add_test(tc, slurm_list);
	tcase_add_test(tc, torchrun_defaults);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
