/*
 * Model queries on small hand-built topologies: levels, hops, common
 * level (multi-parent fat-trees included), dragonfly, torus and mesh.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "topoml/build.h"

static bool _has(const topoml_errors_t *e, const char *sub)
{
	for (int i = 0; i < e->n; i++)
		if (strstr(e->msg[i], sub))
			return true;
	return false;
}

/* Leaves l0..l(nl-1) with per nodes each, named n0.. */
static topoml_topo_t *_leaves(int nl, int per, topoml_errors_t *e)
{
	topoml_topo_t *t = topoml_new(TOPOML_FAT_TREE, "test");
	char name[32];

	for (int l = 0; l < nl; l++) {
		snprintf(name, sizeof(name), "l%d", l);
		int s = topoml_add_switch(t, name, l + 1, e);
		for (int k = 0; k < per; k++) {
			snprintf(name, sizeof(name), "n%d", l * per + k);
			int n = topoml_add_node(t, name, l + 1, e);
			ck_assert_int_ge(n, 0);
			ck_assert_int_eq(topoml_attach_node(t, s, n, e), 0);
		}
	}
	return t;
}

static int _sw(topoml_topo_t *t, const char *name, topoml_errors_t *e)
{
	return topoml_add_switch(t, name, 0, e);
}

START_TEST(test_three_level_tree)
{
	topoml_errors_t e = { 0 };
	/* 4 leaves x 2 nodes; a0 over l0,l1; a1 over l2,l3; root over a0,a1 */
	topoml_topo_t *t = _leaves(4, 2, &e);
	int a0 = _sw(t, "a0", &e), a1 = _sw(t, "a1", &e);
	int root = _sw(t, "root", &e);

	topoml_link_switches(t, a0, 0);
	topoml_link_switches(t, a0, 1);
	topoml_link_switches(t, a1, 2);
	topoml_link_switches(t, a1, 3);
	topoml_link_switches(t, root, a0);
	topoml_link_switches(t, root, a1);
	topoml_link_switches(t, root, a1);	/* twice = once */
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_int_eq(t->nlevels, 3);
	ck_assert_int_eq(t->switches[root].level, 2);
	ck_assert_int_eq(t->switches[root].nchildren, 2);
	ck_assert_int_eq(t->switches[a1].level, 1);
	ck_assert_int_eq(hwloc_bitmap_weight(t->switches[root].desc), 8);
	ck_assert_int_eq(hwloc_bitmap_weight(t->switches[a0].desc), 4);
	ck_assert(hwloc_bitmap_isset(t->switches[a1].desc, 5));
	ck_assert(!hwloc_bitmap_isset(t->switches[a1].desc, 3));

	int n0 = topoml_node_by_name(t, "n0"), n1 = topoml_node_by_name(t, "n1");
	int n3 = topoml_node_by_name(t, "n3"), n7 = topoml_node_by_name(t, "n7");
	ck_assert_int_eq(topoml_common_level(t, n0, n0), -1);
	ck_assert_int_eq(topoml_hops(t, n0, n0), 0);
	ck_assert_int_eq(topoml_common_level(t, n0, n1), 0);
	ck_assert_int_eq(topoml_hops(t, n0, n1), 2);
	ck_assert_int_eq(topoml_common_level(t, n0, n3), 1);
	ck_assert_int_eq(topoml_hops(t, n0, n3), 4);
	ck_assert_int_eq(topoml_common_level(t, n0, n7), 2);
	ck_assert_int_eq(topoml_hops(t, n7, n0), 6);
	ck_assert_int_eq(topoml_global_hops(t, n0, n7), 0);
	ck_assert_int_eq(topoml_switch_by_name(t, "a1"), a1);
	ck_assert_int_eq(topoml_switch_by_name(t, "nope"), -1);
	ck_assert_int_eq(topoml_node_by_name(t, "nope"), -1);
	ck_assert_int_eq(t->nodes[n7].leaf, 3);

	char buf[256];
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_str_eq(buf,
		"fat-tree: 8 nodes, 7 switches (4 leaves), 3 levels");
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

/*
 * Multi-parent: l0,l1 under a0 and a1; l2 under a1 only; l3 under a2;
 * roots: c0 over a0,a1,a2.  l0-l1 meet at level 1; l0-l2 at a1 (level 1,
 * though l0's first parent a0 does not hold l2); l0-l3 at c0.
 */
START_TEST(test_multi_parent)
{
	topoml_errors_t e = { 0 };
	topoml_topo_t *t = _leaves(4, 1, &e);
	int a0 = _sw(t, "a0", &e), a1 = _sw(t, "a1", &e), a2 = _sw(t, "a2", &e);
	int c0 = _sw(t, "c0", &e);

	topoml_link_switches(t, a0, 0);
	topoml_link_switches(t, a0, 1);
	topoml_link_switches(t, a1, 0);
	topoml_link_switches(t, a1, 1);
	topoml_link_switches(t, a1, 2);
	topoml_link_switches(t, a2, 3);
	topoml_link_switches(t, c0, a0);
	topoml_link_switches(t, c0, a1);
	topoml_link_switches(t, c0, a2);
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(topoml_common_level(t, 0, 1), 1);
	ck_assert_int_eq(topoml_common_level(t, 0, 2), 1);
	ck_assert_int_eq(topoml_common_level(t, 2, 1), 1);
	ck_assert_int_eq(topoml_common_level(t, 0, 3), 2);
	ck_assert_int_eq(topoml_hops(t, 3, 0), 6);
	ck_assert_int_eq(t->switches[0].nparents, 2);
	ck_assert_int_eq(hwloc_bitmap_weight(t->switches[a1].desc), 3);
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

/* A parent one level above its highest child, not its lowest. */
START_TEST(test_uneven_levels)
{
	topoml_errors_t e = { 0 };
	topoml_topo_t *t = _leaves(3, 1, &e);
	int a = _sw(t, "a", &e), top = _sw(t, "top", &e);

	topoml_link_switches(t, a, 0);
	topoml_link_switches(t, a, 1);
	topoml_link_switches(t, top, a);
	topoml_link_switches(t, top, 2);
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(t->switches[top].level, 2);
	ck_assert_int_eq(topoml_common_level(t, 0, 2), 2);
	ck_assert_int_eq(topoml_common_level(t, 2, 1), 2);
	ck_assert_int_eq(topoml_common_level(t, 0, 1), 1);
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

/* Slurm accepts leaves without a common parent: they meet at nlevels. */
START_TEST(test_unconnected_parts)
{
	topoml_errors_t e = { 0 };
	topoml_topo_t *t = _leaves(3, 2, &e);
	int a = _sw(t, "a", &e);
	char buf[256];

	topoml_link_switches(t, a, 0);
	topoml_link_switches(t, a, 1);
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(t->nlevels, 2);
	ck_assert_int_eq(topoml_common_level(t, 0, 2), 1);
	ck_assert_int_eq(topoml_common_level(t, 0, 4), 2);
	ck_assert_int_eq(topoml_hops(t, 0, 4), 6);
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "2 unconnected parts"));
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

START_TEST(test_errors)
{
	topoml_errors_t e = { 0 };
	topoml_topo_t *t = _leaves(2, 2, &e);
	int a = _sw(t, "a", &e), b = _sw(t, "b", &e);

	/* duplicates */
	ck_assert_int_eq(topoml_add_node(t, "n1", 9, &e), -1);
	ck_assert(_has(&e, "test:9: node n1: duplicate name (first at line 1)"));
	ck_assert_int_eq(topoml_add_switch(t, "l1", 7, &e), -1);
	ck_assert(_has(&e, "test:7: switch l1: duplicate name (first at line 2)"));
	ck_assert_int_eq(topoml_add_node(t, "bad name", 3, &e), -1);
	ck_assert(_has(&e, "invalid node name 'bad name'"));
	/* node on two leaves names both switches and lines */
	ck_assert_int_eq(topoml_attach_node(t, 1, 0, &e), -1);
	ck_assert(_has(&e, "test:2: node n0 is on two leaf switches: l0 (line 1) and l1 (line 2)"));
	topoml_errors_clear(&e);
	/* loop a -> b -> a, both without nodes */
	topoml_link_switches(t, a, b);
	topoml_link_switches(t, b, a);
	int lonely = topoml_add_switch(t, "lonely", 12, &e);
	ck_assert_int_ge(lonely, 0);
	int orphan = topoml_add_node(t, "orphan", 13, &e);
	ck_assert_int_ge(orphan, 0);
	ck_assert_int_eq(topoml_finalize(t, &e), -1);
	ck_assert(_has(&e, "loop in the switch hierarchy: a -> b -> a") ||
		  _has(&e, "loop in the switch hierarchy: b -> a -> b"));
	ck_assert(!_has(&e, "lonely"));
	ck_assert(_has(&e, "test:13: node orphan is not attached to any switch"));
	topoml_free(t);
	topoml_errors_clear(&e);

	/* a switch with both nodes and switches */
	t = _leaves(2, 1, &e);
	topoml_link_switches(t, 0, 1);
	ck_assert_int_eq(topoml_finalize(t, &e), -1);
	ck_assert(_has(&e, "switch l0 has both nodes and child switches"));
	topoml_free(t);
	topoml_errors_clear(&e);

	/* a switch with neither nodes nor children: an empty leaf, as
	 * Slurm keeps one whose nodes all sit on other leaves */
	t = _leaves(2, 1, &e);
	int empty = topoml_add_switch(t, "empty", 5, &e);
	int up = topoml_add_switch(t, "up", 6, &e);
	topoml_link_switches(t, up, 0);
	topoml_link_switches(t, up, empty);
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(t->switches[empty].level, 0);
	ck_assert_int_eq(hwloc_bitmap_weight(t->switches[empty].desc), 0);
	ck_assert_int_eq(t->switches[up].level, 1);
	ck_assert_int_eq(topoml_common_level(t, 0, 1), 2);
	char buf[128];
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "4 switches (3 leaves), 2 levels"));
	topoml_free(t);
	ck_assert_int_eq(e.n, 0);

	t = topoml_new(TOPOML_FAT_TREE, "empty");
	ck_assert_int_eq(topoml_finalize(t, &e), -1);
	ck_assert(_has(&e, "empty: the topology has no nodes"));
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

/* 3 groups x 2 routers x 2 nodes; explicit links g0-g1, g1-g2 only. */
static topoml_topo_t *_dragonfly(enum topoml_df_arrangement arr,
				 topoml_errors_t *e)
{
	topoml_topo_t *t = topoml_new(TOPOML_DRAGONFLY, "df");
	char name[32];
	int node = 0;

	for (int g = 0; g < 3; g++) {
		snprintf(name, sizeof(name), "g%d", g);
		int gi = topoml_add_group(t, name, 10 * g + 1, e);
		for (int r = 0; r < 2; r++) {
			snprintf(name, sizeof(name), "g%dr%d", g, r);
			int ri = topoml_add_switch(t, name, 10 * g + 2 + r, e);
			topoml_group_add_router(t, gi, ri);
			for (int k = 0; k < 2; k++) {
				snprintf(name, sizeof(name), "c%d", node++);
				int n = topoml_add_node(t, name, 0, e);
				topoml_attach_node(t, ri, n, e);
			}
		}
	}
	t->df_arrangement = arr;
	if (arr == TOPOML_DF_EXPLICIT) {
		t->global_links = calloc(9, sizeof(int));
		t->global_links[0 * 3 + 1] = 2;
		t->global_links[2 * 3 + 1] = 1;	/* one direction is enough */
	}
	return t;
}

START_TEST(test_dragonfly)
{
	topoml_errors_t e = { 0 };
	topoml_topo_t *t = _dragonfly(TOPOML_DF_EXPLICIT, &e);
	char buf[256];

	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_int_eq(t->nodes[5].group, 1);
	ck_assert_int_eq(t->nodes[5].leaf, 2);
	ck_assert_int_eq(hwloc_bitmap_weight(t->groups[2].desc), 4);
	ck_assert_int_eq(t->global_links[1 * 3 + 2], 1);
	ck_assert_int_eq(topoml_common_level(t, 0, 1), 0);
	ck_assert_int_eq(topoml_hops(t, 0, 1), 2);
	ck_assert_int_eq(topoml_common_level(t, 0, 2), 1);
	ck_assert_int_eq(topoml_hops(t, 0, 3), 3);
	ck_assert_int_eq(topoml_common_level(t, 0, 4), 2);
	ck_assert_int_eq(topoml_global_hops(t, 0, 4), 1);
	ck_assert_int_eq(topoml_hops(t, 0, 4), 5);
	/* g0 -> g2 through g1: two global hops */
	ck_assert_int_eq(topoml_global_hops(t, 0, 9), 2);
	ck_assert_int_eq(topoml_hops(t, 9, 0), 7);
	ck_assert_int_eq(topoml_global_hops(t, 0, 2), 0);
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_str_eq(buf, "dragonfly: 12 nodes, 3 groups, 6 routers, "
			 "explicit global links");
	topoml_free(t);

	t = _dragonfly(TOPOML_DF_ALL_TO_ALL, &e);
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(topoml_global_hops(t, 0, 9), 1);
	ck_assert_int_eq(topoml_hops(t, 0, 9), 5);
	topoml_free(t);

	/* g2 unreachable */
	t = _dragonfly(TOPOML_DF_EXPLICIT, &e);
	t->global_links[2 * 3 + 1] = 0;
	ck_assert_int_eq(topoml_finalize(t, &e), -1);
	ck_assert(_has(&e, "df:21: group g2 is not connected to group g0 by global links"));
	topoml_errors_clear(&e);
	/* router in two groups, router in none */
	topoml_group_add_router(t, 0, 3);
	topoml_add_switch(t, "stray", 40, &e);
	ck_assert_int_eq(topoml_finalize(t, &e), -1);
	ck_assert(_has(&e, "df:13: router g1r1 is in two groups: g0 (line 1) and g1 (line 11)"));
	ck_assert(_has(&e, "df:40: router stray is in no group"));
	ck_assert_int_eq(topoml_add_group(t, "g1", 50, &e), -1);
	ck_assert(_has(&e, "df:50: group g1: duplicate name (first at line 11)"));
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

static topoml_topo_t *_torus(int x, int y, int z, bool wrap)
{
	topoml_topo_t *t = topoml_new(TOPOML_TORUS, "torus");
	char name[32];
	int i = 0;

	t->dims[0] = x;
	t->dims[1] = y;
	t->dims[2] = z;
	t->wrap[0] = t->wrap[1] = t->wrap[2] = wrap;
	for (int c = 0; c < z; c++)
		for (int b = 0; b < y; b++)
			for (int a = 0; a < x; a++) {
				snprintf(name, sizeof(name), "t%d", i++);
				int n = topoml_add_node(t, name, i, NULL);
				t->nodes[n].coord[0] = a;
				t->nodes[n].coord[1] = b;
				t->nodes[n].coord[2] = c;
			}
	return t;
}

START_TEST(test_torus)
{
	topoml_errors_t e = { 0 };
	topoml_topo_t *t = _torus(4, 3, 2, true);
	int a[3] = { 0, 0, 0 }, b[3] = { 3, 2, 1 };
	char buf[256];

	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(topoml_torus_distance(t, a, b), 1 + 1 + 1);
	/* node 23 = (3,2,1) */
	ck_assert_int_eq(topoml_hops(t, 0, 23), 3);
	ck_assert_int_eq(topoml_common_level(t, 0, 23), 3);
	ck_assert_int_eq(topoml_hops(t, 0, 2), 2);	/* x: 2 either way */
	ck_assert_int_eq(t->coord_node[3 + 4 * (2 + 3 * 1)], 23);
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_str_eq(buf, "torus: 24 nodes, 4x3x2, wrap xyz");
	topoml_free(t);

	t = _torus(4, 3, 2, false);
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	ck_assert_int_eq(topoml_hops(t, 0, 23), 3 + 2 + 1);
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_str_eq(buf, "mesh: 24 nodes, 4x3x2, no wrap");
	topoml_free(t);

	t = _torus(2, 2, 1, true);
	t->nodes[1].coord[0] = 5;
	t->nodes[3].coord[0] = 0;	/* (0,1,0) is node 2's */
	ck_assert_int_eq(topoml_finalize(t, &e), -1);
	ck_assert(_has(&e, "torus:2: node t1: coordinate (5,0,0) outside the torus dimensions 2x2x1"));
	ck_assert(_has(&e, "already taken by node t2 (line 3)"));
	topoml_free(t);
	topoml_errors_clear(&e);
}
END_TEST

START_TEST(test_many_names)
{
	/* the hash table grows: every name maps back to its index */
	topoml_topo_t *t = topoml_new(TOPOML_FAT_TREE, NULL);
	char name[32];

	for (int i = 0; i < 50000; i++) {
		snprintf(name, sizeof(name), "x%d", i);
		ck_assert_int_eq(topoml_add_node(t, name, 0, NULL), i);
	}
	for (int i = 0; i < 50000; i += 7) {
		snprintf(name, sizeof(name), "x%d", i);
		ck_assert_int_eq(topoml_node_by_name(t, name), i);
	}
	ck_assert_int_eq(topoml_node_by_name(t, "x50000"), -1);
	ck_assert_str_eq(t->source, "generated");
	topoml_free(t);
}
END_TEST

/* Job values on one log line: no newline gets through, cuts say so. */
START_TEST(test_log_escape)
{
	char buf[16], big[256];

	ck_assert_str_eq(topoml_log_escape("n[1-4]", big, sizeof(big)),
			 "n[1-4]");
	ck_assert_str_eq(topoml_log_escape("a\nerror: x\\y\x7f\xc3",
					   big, sizeof(big)),
			 "a\\x0aerror: x\\x5cy\\x7f\\xc3");
	ck_assert_str_eq(topoml_log_escape(NULL, big, sizeof(big)), "");
	/* 16 bytes: 12 kept, "...", the NUL */
	ck_assert_str_eq(topoml_log_escape("0123456789abcdefgh", buf,
					   sizeof(buf)), "0123456789ab...");
	/* an escape never split: the cut comes before it */
	ck_assert_str_eq(topoml_log_escape("0123456789ab\n", buf, sizeof(buf)),
			 "0123456789ab...");
	ck_assert_str_eq(topoml_log_escape("0123456789a\n", buf, sizeof(buf)),
			 "0123456789a\\x0a");
	/* exactly full: no cut */
	ck_assert_str_eq(topoml_log_escape("0123456789abcde", buf,
					   sizeof(buf)), "0123456789abcde");
	ck_assert_str_eq(topoml_log_escape("abc", buf, 2), "");
	ck_assert_str_eq(topoml_log_escape("\n\n\n\n\n\n", buf, sizeof(buf)),
			 "\\x0a\\x0a\\x0a...");
}
END_TEST

/* A whole line from pieces: every piece escaped, the fixed text kept. */
START_TEST(test_log_format)
{
	char buf[16], big[256];

	ck_assert_str_eq(topoml_log_format(big, sizeof(big),
					   "job %u: '%s' (%s)", 7u,
					   "a\nslurmd: error: x\x1b[2J\xff",
					   "ok"),
			 "job 7: 'a\\x0aslurmd: error: x\\x1b[2J\\xff' (ok)");
	/* the cut is the escape's, after formatting: never half an escape */
	ck_assert_str_eq(topoml_log_format(buf, sizeof(buf), "%s%s",
					   "0123456789a", "\n\n"),
			 "0123456789a...");
	ck_assert_str_eq(topoml_log_format(big, sizeof(big), "%s", ""), "");
}
END_TEST

Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_three_level_tree);
	tcase_add_test(tc, test_multi_parent);
	tcase_add_test(tc, test_uneven_levels);
	tcase_add_test(tc, test_unconnected_parts);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_dragonfly);
	tcase_add_test(tc, test_torus);
	tcase_add_test(tc, test_many_names);
	tcase_add_test(tc, test_log_escape);
	tcase_add_test(tc, test_log_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(model_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
