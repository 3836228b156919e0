/*
 * topology/cost/cost_hybrid.c: every kind priced by closed forms and batches
 * over a group's nodes (issue 28 defect 1) counts exactly what pricing
 * each pair of ranks counts, on every family (fat trees that nest and
 * that do not, dragonflies with one and with many distances between
 * groups, tori and meshes, NVLink domains), and its cost no longer grows
 * with ep or with the ranks per node.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "topoml.h"

/* ---- the oracle: every pair of ranks, as the engine once priced ---- */

static void _pair(const topoml_topo_t *t, const int *nodes, int tpn, int a,
		  int b, struct topoml_kind_cost *c)
{
	int na = nodes[a / tpn], nb = nodes[b / tpn];
	const struct topoml_node *A = &t->nodes[na], *B = &t->nodes[nb];

	c->steps++;
	if (na == nb)
		return;
	c->off_node++;
	c->hops += topoml_hops(t, na, nb);
	if (A->leaf != B->leaf || A->leaf < 0)
		c->cross_leaf++;
	if (t->family == TOPOML_DRAGONFLY) {
		if (A->group != B->group)
			c->cross_top++;
	} else if (t->family != TOPOML_TORUS && t->nlevels > 1 &&
		   topoml_common_level(t, na, nb) >= t->nlevels - 1) {
		c->cross_top++;
	}
	if (t->nnvl > 0 && (A->nvl < 0 || A->nvl != B->nvl))
		c->cross_nvl++;
}

static void _ring(const topoml_topo_t *t, const int *nodes, int tpn,
		  const int *r, int m, struct topoml_kind_cost *c)
{
	for (int i = 0; m > 1 && i < m; i++)
		_pair(t, nodes, tpn, r[i], r[(i + 1) % m], c);
}

/* Every kind, rank pair by rank pair. */
static void _oracle(const topoml_topo_t *t, const int *nodes, int tpn,
		    const struct topoml_parallel *p,
		    struct topoml_kind_cost *k)
{
	int T = p->tp, C = p->cp, D = p->dp, P = p->pp, E = p->ep;
	int world = T * C * D * P, *r = malloc(sizeof(int) * world);

	ck_assert_ptr_nonnull(r);
	memset(k, 0, sizeof(*k) * TOPOML_KIND_COUNT);
	for (int g = 0; g < world / T; g++) {
		for (int i = 0; i < T; i++)
			r[i] = g * T + i;
		_ring(t, nodes, tpn, r, T, &k[TOPOML_KIND_TP]);
	}
	for (int pp = 0; pp < P; pp++)
		for (int tp = 0; tp < T; tp++) {
			for (int dp = 0; dp < D; dp++) {
				for (int i = 0; i < C; i++)
					r[i] = topoml_parallel_rank(p, tp, i,
								    dp, pp);
				_ring(t, nodes, tpn, r, C, &k[TOPOML_KIND_CP]);
			}
			for (int cp = 0; cp < C; cp++) {
				for (int i = 0; i < D; i++)
					r[i] = topoml_parallel_rank(p, tp, cp,
								    i, pp);
				_ring(t, nodes, tpn, r, D, &k[TOPOML_KIND_DP]);
			}
			for (int g = 0; E > 1 && g < C * D / E; g++)
				for (int i = 0; i < E; i++)
					for (int j = i + 1; j < E; j++)
						_pair(t, nodes, tpn,
						      tp + T * (g * E + i) +
						      T * C * D * pp,
						      tp + T * (g * E + j) +
						      T * C * D * pp,
						      &k[TOPOML_KIND_EP]);
		}
	for (int pp = 0; pp + 1 < P; pp++)
		for (int m = 0; m < T * C * D; m++)
			_pair(t, nodes, tpn, m + T * C * D * pp,
			      m + T * C * D * (pp + 1), &k[TOPOML_KIND_PP]);
	free(r);
}

/* ---- topologies ---------------------------------------------------- */

static char dir[] = "/tmp/check_cost_hybridXXXXXX";

static topoml_topo_t *_load_text(const char *name, const char *text)
{
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *p = NULL;
	FILE *f;

	ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	t = topoml_load(p, TOPOML_FMT_AUTO, &err);
	topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
	ck_assert_ptr_nonnull(t);
	unlink(p);
	free(p);
	return t;
}

static topoml_topo_t *_fixture(const char *name)
{
	const char *d = getenv("TESTS_DIR");
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *p = NULL;

	ck_assert_int_ge(asprintf(&p, "%s/fixtures/hybrid/%s",
				  d && *d ? d : TESTS_SRCDIR, name), 0);
	t = topoml_load(p, TOPOML_FMT_AUTO, &err);
	topoml_errors_clear(&err);
	ck_assert_ptr_nonnull(t);
	free(p);
	return t;
}

/*
 * Middle switches over overlapping pairs of leaves: leaf 2 meets leaf 1
 * at level 1 and leaf 3 at level 1, but 1 and 3 only at the top, so no
 * class of leaves at level 1 is one switch's.
 */
static const char overlap_conf[] =
	"SwitchName=top Switches=m[1-4]\n"
	"SwitchName=m1 Switches=s[1-2]\n"
	"SwitchName=m2 Switches=s[2-3]\n"
	"SwitchName=m3 Switches=s[3-4]\n"
	"SwitchName=m4 Switches=s[5-6]\n"
	"SwitchName=s1 Nodes=c[1-4]\n"
	"SwitchName=s2 Nodes=c[5-8]\n"
	"SwitchName=s3 Nodes=c[9-12]\n"
	"SwitchName=s4 Nodes=c[13-16]\n"
	"SwitchName=s5 Nodes=c[17-20]\n"
	"SwitchName=s6 Nodes=c[21-24]\n"
	"SwitchName=s7 Nodes=c[25-28]\n";	/* under no one: no top */

/* Groups in a chain: 1, 2 and 3 global hops apart. */
static const char chain_json[] =
	"{ \"family\": \"dragonfly\", \"groups\": [\n"
	" { \"name\": \"g1\", \"routers\": [\n"
	"  { \"name\": \"r1\", \"nodes\": \"c[1-3]\" },\n"
	"  { \"name\": \"r2\", \"nodes\": \"c[4-6]\" } ] },\n"
	" { \"name\": \"g2\", \"routers\": [\n"
	"  { \"name\": \"r3\", \"nodes\": \"c[7-9]\" },\n"
	"  { \"name\": \"r4\", \"nodes\": \"c[10-12]\" } ] },\n"
	" { \"name\": \"g3\", \"routers\": [\n"
	"  { \"name\": \"r5\", \"nodes\": \"c[13-15]\" } ] },\n"
	" { \"name\": \"g4\", \"routers\": [\n"
	"  { \"name\": \"r6\", \"nodes\": \"c[16-20]\" } ] } ],\n"
	" \"global_links\": [ [\"g1\", \"g2\"], [\"g2\", \"g3\"],\n"
	"                     [\"g3\", \"g4\"] ] }\n";

/* ---- random jobs --------------------------------------------------- */

static unsigned long seed = 12345;

static int _rand(int n)
{
	seed = seed * 6364136223846793005UL + 1442695040888963407UL;
	return (int)((seed >> 33) % (unsigned long)n);
}

static int _divisor(int m)
{
	int d[64], k = 0;

	for (int i = 1; i <= m && k < 64; i++)
		if (m % i == 0)
			d[k++] = i;
	return d[_rand(k)];
}

/* n distinct nodes in random order (a repeat now and then, as a
 * caller's list may hold), a shape that fits n * tpn ranks. */
static void _job(const topoml_topo_t *t, int *nodes, int *n, int *tpn,
		 struct topoml_parallel *p)
{
	int *perm = malloc(sizeof(int) * t->nnodes), rest;

	ck_assert_ptr_nonnull(perm);
	for (int i = 0; i < t->nnodes; i++)
		perm[i] = i;
	for (int i = t->nnodes - 1; i > 0; i--) {
		int j = _rand(i + 1), s = perm[i];

		perm[i] = perm[j];
		perm[j] = s;
	}
	*n = 1 + _rand(t->nnodes < 40 ? t->nnodes : 40);
	for (int i = 0; i < *n; i++)
		nodes[i] = perm[i];
	if (*n > 2 && !_rand(8))
		nodes[*n - 1] = nodes[0];
	*tpn = 1 + _rand(4);
	rest = *n * *tpn;
	p->tp = _divisor(rest);
	rest /= p->tp;
	p->pp = _divisor(rest);
	rest /= p->pp;
	p->cp = _divisor(rest);
	p->dp = rest / p->cp;
	p->ep = _divisor(rest);
	free(perm);
}

static void _agree(const topoml_topo_t *t, int jobs)
{
	int *nodes = malloc(sizeof(int) * t->nnodes);
	double w[TOPOML_KIND_COUNT];

	ck_assert_ptr_nonnull(nodes);
	topoml_kind_weights_default(w);
	for (int j = 0; j < jobs; j++) {
		struct topoml_parallel p;
		struct topoml_hybrid_cost c;
		struct topoml_kind_cost o[TOPOML_KIND_COUNT];
		int n, tpn;

		_job(t, nodes, &n, &tpn, &p);
		ck_assert_int_eq(topoml_hybrid_cost(t, nodes, n, tpn, &p, w,
						    &c), 0);
		_oracle(t, nodes, tpn, &p, o);
		for (int k = 0; k < TOPOML_KIND_COUNT; k++) {
			const struct topoml_kind_cost *e = &c.kind[k];

			if (!memcmp(&o[k], e, sizeof(o[k])))
				continue;
			ck_abort_msg("job %d: %d nodes x %d, tp=%d pp=%d "
				     "cp=%d dp=%d ep=%d, %s: steps %ld/%ld "
				     "off %ld/%ld leaf %ld/%ld top %ld/%ld "
				     "nvl %ld/%ld hops %ld/%ld (batched/"
				     "pairs)", j, n, tpn, p.tp, p.pp, p.cp,
				     p.dp, p.ep, topoml_kind_name(k),
				     e->steps, o[k].steps, e->off_node,
				     o[k].off_node, e->cross_leaf,
				     o[k].cross_leaf, e->cross_top,
				     o[k].cross_top, e->cross_nvl,
				     o[k].cross_nvl, e->hops, o[k].hops);
		}
	}
	free(nodes);
}

START_TEST(fat_trees_agree)
{
	topoml_topo_t *t = topoml_gen_fat_tree("c", 64, 4, 4, 3);

	ck_assert_ptr_nonnull(t);
	_agree(t, 300);
	topoml_free(t);
	t = _fixture("fattree-nvl576.json");
	_agree(t, 300);
	topoml_free(t);
	t = _load_text("overlap.conf", overlap_conf);
	_agree(t, 300);
	topoml_free(t);
}
END_TEST

START_TEST(dragonflies_agree)
{
	topoml_topo_t *t = topoml_gen_dragonfly("c", 6, 3, 2,
						TOPOML_DF_ALL_TO_ALL);

	ck_assert_ptr_nonnull(t);
	_agree(t, 300);
	topoml_free(t);
	t = _fixture("dragonfly-nvl576.json");
	_agree(t, 300);
	topoml_free(t);
	t = _load_text("chain.json", chain_json);
	_agree(t, 300);
	topoml_free(t);
}
END_TEST

START_TEST(tori_agree)
{
	topoml_topo_t *t = topoml_gen_torus("c", 5, 4, 3, true);

	ck_assert_ptr_nonnull(t);
	_agree(t, 300);
	topoml_free(t);
	t = topoml_gen_torus("c", 6, 3, 2, false);
	ck_assert_ptr_nonnull(t);
	_agree(t, 300);
	topoml_free(t);
}
END_TEST

static double _secs(const topoml_topo_t *t, const int *nodes, int n, int tpn,
		    int tp, int ep)
{
	struct topoml_parallel p = { tp, 1, 0, ep, 1 };
	struct topoml_hybrid_cost c;
	double w[TOPOML_KIND_COUNT];
	struct timespec a, b;
	char err[128];

	topoml_kind_weights_default(w);
	ck_assert_int_eq(topoml_parallel_resolve(&p, n * tpn, err,
						 sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(topoml_hybrid_cost(t, nodes, n, tpn, &p, w, &c), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}

/*
 * The audit's shape: 1024 nodes of 64 ranks, one all-to-all over all of
 * them, priced as fast as the plain job (pairs of ranks took 34 s); the
 * ratio, not a time, so that a slow or sanitized build passes alike.
 */
START_TEST(cost_independent_of_ep)
{
	topoml_topo_t *t = topoml_gen_fat_tree("c", 1024, 32, 8, 3);
	int nodes[1024];
	double plain, worst = 0;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 1024; i++)
		nodes[i] = i;
	plain = _secs(t, nodes, 1024, 64, 1, 1);
	for (int rep = 0; rep < 3; rep++) {
		double s = _secs(t, nodes, 1024, 64, 1, 1);

		plain = s < plain ? s : plain;
	}
	for (int ep = 2; ep <= 65536; ep *= 8) {
		double s = _secs(t, nodes, 1024, 64, 1, ep);

		worst = s > worst ? s : worst;
	}
	worst = worst > _secs(t, nodes, 1024, 64, 1, 65536) ?
		worst : _secs(t, nodes, 1024, 64, 1, 65536);
	ck_assert_msg(worst < 10 * plain + 0.01,
		      "ep pricing %.4f s, plain %.4f s", worst, plain);
	topoml_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cost_hybrid");
	TCase *tc = tcase_create("ep");
	SRunner *sr;
	int failed;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fat_trees_agree);
	tcase_add_test(tc, dragonflies_agree);
	tcase_add_test(tc, tori_agree);
	tcase_add_test(tc, cost_independent_of_ep);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rmdir(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
