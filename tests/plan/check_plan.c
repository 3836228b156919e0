/*
 * topoml plan (issue 34): the memory and time model on cases worked out
 * by hand, and the plans for published large trainings against what
 * they reached.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topoml/plan.h"
#include "sim.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A made-up machine with round figures, to work cases by hand. */
static void _machine(struct topoml_plan_machine *m)
{
	memset(m, 0, sizeof(*m));
	m->gpu = "test";
	m->mem_gib = 80;
	m->tflops = 100;
	m->gpus_per_node = 8;
	m->bw[TOPOML_PLAN_NVLINK] = 100;
	m->bw[TOPOML_PLAN_LEAF] = 50;
	m->bw[TOPOML_PLAN_SPINE] = 25;
	m->bw[TOPOML_PLAN_GLOBAL] = 10;
	m->bw[TOPOML_PLAN_TORUS] = 20;
	m->efficiency = 0.5;
	m->reserve = 0.1;
}

/* 2 layers, h 1024, 8 heads, f 4096, V 1000, s 1024, batch 8. */
static void _tiny(struct topoml_plan_model *m)
{
	topoml_plan_model_init(m);
	m->layers = 2;
	m->hidden = 1024;
	m->heads = 8;
	m->ffn = 4096;
	m->vocab = 1000;
	m->seq = 1024;
	m->batch = 8;
}

#define REL(a, b) ck_assert_double_eq_tol((a), (b), fabs(b) * 1e-9 + 1e-15)

/*
 * One node, tp=8: per layer 4h^2 + 2hf = 12582912 weights, 2 layers and
 * h(V + s) = 2072576 of embeddings: 27238400 / 8 = 3404800 per GPU at
 * 2 + 4 + 12 bytes = 61286400 B.  Activations (sequence parallel, no
 * scores): 34 sbh / t = 4456448 B a layer, 2 layers, 1 micro-batch in
 * flight, + 4 s V / t = 512000 B of logits = 9424896 B.  FLOPs: per token
 * 2 (8h^2 + 4sh + 4hf) + 2hV = 60768256, x 3 x 8192 tokens / 8 GPUs /
 * 50 TFLOP/s = 3.73360164864 ms.  TP: 8 micro-batches x 2 layers x 4
 * all-reduces x 2 (7/8) x 2 MiB / 100 GB/s = 2.34881024 ms.
 */
START_TEST(hand_one_node)
{
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 2, 1, 2, 0);
	struct topoml_plan_machine mc;
	struct topoml_plan_model m;
	struct topoml_parallel p = { 8, 1, 0, 1, 1 };
	struct topoml_plan_ctx *c;
	struct topoml_plan pl;
	char why[256];

	ck_assert_ptr_nonnull(t);
	_machine(&mc);
	_tiny(&m);
	c = topoml_plan_new(t, 1, &mc, why, sizeof(why));
	ck_assert_msg(c, "%s", why);
	ck_assert_int_eq(topoml_plan_eval(c, &m, &p, 1, false, &pl, why,
					  sizeof(why)), 0);
	ck_assert_int_eq(pl.par.dp, 1);
	ck_assert_int_eq(pl.nmb, 8);
	REL(pl.mem_state_gib * GIB, 61286400.0);
	REL(pl.mem_act_gib * GIB, 9424896.0);
	REL(pl.t_compute, 3.73360164864e-3);
	ck_assert_double_eq(pl.t_bubble, 0);
	REL(pl.t_tp, 2.34881024e-3);
	ck_assert_double_eq(pl.t_dp, 0);
	ck_assert_double_eq(pl.t_pp, 0);
	ck_assert_int_eq(pl.level[TOPOML_KIND_TP], TOPOML_PLAN_NVLINK);
	REL(pl.t_step, 3.73360164864e-3 + 2.34881024e-3);
	ck_assert(topoml_plan_fits(c, &pl));

	/* recomputation: 4 passes, 6 all-reduces, only the layer inputs
	 * (2sbh / t) kept plus one layer in full */
	ck_assert_int_eq(topoml_plan_eval(c, &m, &p, 1, true, &pl, why,
					  sizeof(why)), 0);
	REL(pl.t_compute, 3.73360164864e-3 * 4 / 3);
	REL(pl.t_tp, 2.34881024e-3 * 6 / 4);
	REL(pl.mem_act_gib * GIB, 2 * 262144.0 + 4456448 + 512000);

	/* tp=4, pp=2: bubble 1/8 of the compute; 2 micro-batches in
	 * flight of 1 layer, logits 4 s V / 4; pipeline 2 x 2 MiB / 4 per
	 * micro-batch, 8 + 1 times, over NVLink */
	p = (struct topoml_parallel){ 4, 2, 0, 1, 1 };
	ck_assert_int_eq(topoml_plan_eval(c, &m, &p, 1, false, &pl, why,
					  sizeof(why)), 0);
	REL(pl.t_bubble, 3.73360164864e-3 / 8);
	REL(pl.t_pp, 9 * 2 * 2097152.0 / 4 / 100e9);
	REL(pl.mem_act_gib * GIB,
	    2 * 1024.0 * 1024 * 34 / 4 + 1024.0 * 1000);
	topoml_plan_free(c);
	topoml_free(t);
}
END_TEST

/*
 * Two nodes on two leaves: tp=8 stays in each node, the dp=2 gradient
 * ring crosses the spine: 2 (1/2) 3404800 x 4 B / 25 GB/s = 0.544768 ms.
 */
START_TEST(hand_two_nodes)
{
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 2, 1, 2, 0);
	struct topoml_plan_machine mc;
	struct topoml_plan_model m;
	struct topoml_parallel p = { 8, 1, 0, 1, 1 };
	struct topoml_plan_ctx *c;
	struct topoml_plan pl;
	char why[256];

	_machine(&mc);
	_tiny(&m);
	c = topoml_plan_new(t, 2, &mc, why, sizeof(why));
	ck_assert_msg(c, "%s", why);
	ck_assert_int_eq(topoml_plan_eval(c, &m, &p, 1, false, &pl, why,
					  sizeof(why)), 0);
	ck_assert_int_eq(pl.par.dp, 2);
	ck_assert_int_eq(pl.level[TOPOML_KIND_TP], TOPOML_PLAN_NVLINK);
	ck_assert_int_eq(pl.level[TOPOML_KIND_DP], TOPOML_PLAN_SPINE);
	REL(pl.t_dp, 0.544768e-3);
	REL(pl.t_compute, 3.73360164864e-3 / 2);
	/* tp=16 spans both nodes: its all-reduces go at the spine's pace */
	p = (struct topoml_parallel){ 16, 1, 0, 1, 1 };
	ck_assert_int_eq(topoml_plan_eval(c, &m, &p, 1, false, &pl, why,
					  sizeof(why)), -1);	/* 8 heads */
	m.heads = 16;
	ck_assert_int_eq(topoml_plan_eval(c, &m, &p, 1, false, &pl, why,
					  sizeof(why)), 0);
	ck_assert_int_eq(pl.level[TOPOML_KIND_TP], TOPOML_PLAN_SPINE);
	REL(pl.t_tp, 8 * 2 * 4 * 2 * (15.0 / 16) * 2097152 / 25e9);
	m.heads = 8;
	/* the search returns the fastest first, each one fitting */
	{
		struct topoml_plan best[4];
		long ev;
		int n = topoml_plan_search(c, &m, NULL, best, 4, &ev, why,
					   sizeof(why));

		ck_assert_int_gt(n, 1);
		ck_assert_int_gt(ev, 0);
		for (int i = 0; i < n; i++) {
			ck_assert(topoml_plan_fits(c, &best[i]));
			if (i)
				ck_assert(best[i - 1].t_step <=
					  best[i].t_step);
		}
		/* tiny model: no reason for tensor parallelism over the
		 * spine nor for recomputation */
		ck_assert_int_le(best[0].par.tp, 8);
		ck_assert(!best[0].recompute);
	}
	topoml_plan_free(c);
	topoml_free(t);
}
END_TEST

/* LinkSpeed of the site file: a spine at half the leaves' speed. */
START_TEST(site_link_speed)
{
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 2, 1, 2, 0);
	struct topoml_plan_machine mc;

	_machine(&mc);
	/* not given everywhere: nothing changes */
	t->switches[0].link_speed = 200;
	ck_assert_double_eq(topoml_plan_site_bw(t, &mc), 1);
	ck_assert_double_eq(mc.bw[TOPOML_PLAN_SPINE], 25);
	for (int i = 0; i < t->nswitches; i++)
		t->switches[i].link_speed = t->switches[i].level ? 100 : 200;
	ck_assert_double_eq(topoml_plan_site_bw(t, &mc), 0.5);
	ck_assert_double_eq(mc.bw[TOPOML_PLAN_SPINE], 12.5);
	ck_assert_double_eq(mc.bw[TOPOML_PLAN_LEAF], 50);
	/* a faster spine does not beat the NICs */
	_machine(&mc);
	for (int i = 0; i < t->nswitches; i++)
		t->switches[i].link_speed = t->switches[i].level ? 400 : 200;
	ck_assert_double_eq(topoml_plan_site_bw(t, &mc), 1);
	ck_assert_double_eq(mc.bw[TOPOML_PLAN_SPINE], 25);
	topoml_free(t);
}
END_TEST

/* Memory decides: a model whose state needs more than one GPU. */
START_TEST(hand_memory)
{
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 4, 2, 2, 0);
	struct topoml_plan_machine mc;
	struct topoml_plan_model m;
	struct topoml_plan best[3];
	struct topoml_plan_ctx *c;
	char why[256];
	int n;

	_machine(&mc);
	mc.mem_gib = 16;
	_tiny(&m);
	/* 4 x 12582912 x 48 layers ~ 2.4e9 weights x 18 B = 43 GB */
	m.layers = 48;
	m.hidden = 4096;
	m.heads = 32;
	m.ffn = 16384;
	m.batch = 64;
	c = topoml_plan_new(t, 4, &mc, why, sizeof(why));
	ck_assert_msg(c, "%s", why);
	n = topoml_plan_search(c, &m, NULL, best, 3, NULL, why, sizeof(why));
	ck_assert_int_gt(n, 0);
	for (int i = 0; i < n; i++) {
		ck_assert_double_le(best[i].mem_gib, 16 * 0.9);
		ck_assert_int_gt(best[i].par.tp * best[i].par.pp, 2);
	}
	/* on one GPU's worth of memory nothing fits */
	mc.mem_gib = 1;
	topoml_plan_free(c);
	c = topoml_plan_new(t, 1, &mc, why, sizeof(why));
	ck_assert_int_eq(topoml_plan_search(c, &m, NULL, best, 3, NULL, why,
					    sizeof(why)), 0);
	topoml_plan_free(c);
	topoml_free(t);
}
END_TEST

/*
 * Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
 * Clusters Using Megatron-LM", SC'21, Table 1 (weak scaling, GPT, vocab
 * 51200, sequence 2048, A100 80GB on DGX A100 nodes of Selene, mixed
 * precision, full activation recomputation): heads, hidden, layers,
 * TP, PP, GPUs, global batch, achieved TFLOP/s per GPU.
 */
struct published {
	const char *name;
	int heads, hidden, layers, tp, pp, gpus, batch;
	double tflops;
	const char *why;	/* when the model is off by more than 25 % */
};

static const struct published sc21[] = {
	{ "1.7B", 24, 2304, 24, 1, 1, 32, 512, 137, NULL },
	{ "3.6B", 32, 3072, 30, 2, 1, 64, 512, 138, NULL },
	{ "7.5B", 32, 4096, 36, 4, 1, 128, 512, 142, NULL },
	{ "18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135, NULL },
	{ "39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138, NULL },
	{ "76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140, NULL },
	{ "145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148, NULL },
	{ "310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155, NULL },
	{ "529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163, NULL },
	{ "1008.0B", 160, 25600, 128, 8, 64, 3072, 3072, 163, NULL },
};

START_TEST(published_sc21)
{
	const struct published *r = &sc21[_i];
	int nodes = r->gpus / 8;
	/* Selene: DGX A100 nodes, 20 a leaf (a SuperPOD unit) */
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, nodes, 20, 0, 0);
	struct topoml_plan_fix fix = { r->tp, r->pp, 1, 1, 0, 1 };
	struct topoml_plan_machine mc;
	struct topoml_plan_model m;
	struct topoml_plan best, pub;
	struct topoml_plan_ctx *c;
	char why[256];
	double err;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(topoml_plan_machine_init(&mc, "dgx-a100"), 0);
	topoml_plan_model_init(&m);
	m.layers = r->layers;
	m.hidden = r->hidden;
	m.heads = r->heads;
	m.ffn = 4 * r->hidden;
	m.vocab = 51200;
	m.seq = 2048;
	m.batch = r->batch;
	/* 2021 Megatron: no sequence parallelism, no flash attention */
	m.seq_parallel = false;
	m.flash = false;
	c = topoml_plan_new(t, nodes, &mc, why, sizeof(why));
	ck_assert_msg(c, "%s", why);
	ck_assert_int_eq(topoml_plan_search(c, &m, NULL, &best, 1, NULL, why,
					    sizeof(why)), 1);
	/* the published layout, as run: recomputation on */
	ck_assert_msg(topoml_plan_search(c, &m, &fix, &pub, 1, NULL, why,
					 sizeof(why)) == 1,
		      "%s: published tp=%d pp=%d does not fit", r->name,
		      r->tp, r->pp);
	ck_assert(topoml_plan_fits(c, &best));
	ck_assert(best.t_step <= pub.t_step * (1 + 1e-12));
	err = (pub.tflops - r->tflops) / r->tflops;
	printf("%-8s published tp=%d pp=%d %5.0f TFLOP/s/GPU, estimated "
	       "%5.1f (%+5.1f %%), mb=%d %.1f GiB; plan tp=%d pp=%d dp=%d "
	       "mb=%d%s %.1f GiB %5.1f TFLOP/s (%.3f s vs %.3f s)\n",
	       r->name, r->tp, r->pp, r->tflops, pub.tflops, 100 * err,
	       pub.mb, pub.mem_gib, best.par.tp, best.par.pp, best.par.dp,
	       best.mb, best.recompute ? " recompute" : "", best.mem_gib,
	       best.tflops, best.t_step, pub.t_step);
	ck_assert_msg(fabs(err) <= 0.25 || r->why,
		      "%s: estimate off by %.0f %% and no reason given",
		      r->name, 100 * err);
	topoml_plan_free(c);
	topoml_free(t);
}
END_TEST

/* A coarse bound (make bench has the target, 1 s): 1024 DGX H100. */
START_TEST(search_1024_nodes)
{
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 1024, 32, 32, 0);
	struct topoml_plan_machine mc;
	struct topoml_plan_model m;
	struct topoml_plan best[5];
	struct topoml_plan_ctx *c;
	struct timespec a, b;
	char why[256];
	double s;
	long ev;

	ck_assert_int_eq(topoml_plan_machine_init(&mc, "dgx-h100"), 0);
	topoml_plan_model_init(&m);
	m.layers = 96;
	m.hidden = 12288;
	m.heads = 96;
	m.ffn = 4 * 12288;
	m.vocab = 51200;
	m.seq = 2048;
	m.batch = 2048;
	clock_gettime(CLOCK_MONOTONIC, &a);
	c = topoml_plan_new(t, 1024, &mc, why, sizeof(why));
	ck_assert_msg(c, "%s", why);
	ck_assert_int_eq(topoml_plan_search(c, &m, NULL, best, 5, &ev, why,
					    sizeof(why)), 5);
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("1024 nodes: %ld layouts priced in %.3f s\n", ev, s);
	ck_assert_double_lt(s, 10);
	topoml_plan_free(c);
	topoml_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("model");
	SRunner *sr;
	int nfail;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, hand_one_node);
	tcase_add_test(tc, hand_two_nodes);
	tcase_add_test(tc, hand_memory);
	tcase_add_test(tc, site_link_speed);
	tcase_add_loop_test(tc, published_sc21, 0,
			    sizeof(sc21) / sizeof(sc21[0]));
	tcase_add_test(tc, search_1024_nodes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail ? 1 : 0;
}
