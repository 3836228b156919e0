/*
 * The engine's one definition of torus geometry (topology/model/geom.c) and of
 * its name maps (util/hash.c): the wrap-aware box of a node set, its answer
 * for an empty set and for ties, coordinate -> position, Slurm's Hilbert
 * curve, and the FNV map the model and the ibnetdiscover reader share.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "topoml/build.h"
#include "model/model_int.h"

/* occ from a string of '0'/'1', one character per coordinate. */
static int _ext(const char *bits, bool wrap, bool tie_wraps, int *start)
{
	char occ[64];
	int n = (int)strlen(bits);

	for (int i = 0; i < n; i++)
		occ[i] = bits[i] == '1';
	return topoml__axis_extent(occ, n, wrap, tie_wraps, start);
}

START_TEST(test_axis_extent)
{
	for (int tw = 0; tw < 2; tw++) {
		int s = -1;

		/* Empty: extent 0, start 0 (decided here once). */
		ck_assert_int_eq(_ext("00000000", false, tw, &s), 0);
		ck_assert_int_eq(s, 0);
		s = -1;
		ck_assert_int_eq(_ext("00000000", true, tw, &s), 0);
		ck_assert_int_eq(s, 0);
		/* No wrap: lowest to highest used coordinate. */
		ck_assert_int_eq(_ext("01000100", false, tw, &s), 5);
		ck_assert_int_eq(s, 1);
		ck_assert_int_eq(_ext("10000001", false, tw, &s), 8);
		ck_assert_int_eq(s, 0);
		/* Wrap: {0, 7} is a box of 2 starting at 7. */
		ck_assert_int_eq(_ext("10000001", true, tw, &s), 2);
		ck_assert_int_eq(s, 7);
		/* No shorter way round: as without wrap. */
		ck_assert_int_eq(_ext("00111000", true, tw, &s), 3);
		ck_assert_int_eq(s, 2);
		ck_assert_int_eq(_ext("0110", true, tw, &s), 2);
		ck_assert_int_eq(s, 1);
		/* An inner gap longer than the one round the end. */
		ck_assert_int_eq(_ext("1100011", true, tw, &s), 4);
		ck_assert_int_eq(s, 5);
		/* Two inner gaps tie: the lowest is skipped. */
		ck_assert_int_eq(_ext("1001001", true, tw, &s), 5);
		ck_assert_int_eq(s, 3);
		/* One coordinate. */
		ck_assert_int_eq(_ext("0001", true, tw, &s), 1);
		ck_assert_int_eq(s, 3);
		ck_assert_int_eq(_ext("1", true, tw, &s), 1);
		ck_assert_int_eq(s, 0);
	}
	/*
	 * Inner gap 2-3 ties with 6-7 round the end: the same extent, the
	 * engine's box wraps (4..7, 0, 1), the simulator's does not (0..5).
	 */
	int s;

	ck_assert_int_eq(_ext("11001100", true, true, &s), 6);
	ck_assert_int_eq(s, 4);
	ck_assert_int_eq(_ext("11001100", true, false, &s), 6);
	ck_assert_int_eq(s, 0);
	/* A full wrapping axis: the engine starts after the lowest. */
	ck_assert_int_eq(_ext("1111", true, true, &s), 4);
	ck_assert_int_eq(s, 1);
	ck_assert_int_eq(_ext("1111", true, false, &s), 4);
	ck_assert_int_eq(s, 0);
}
END_TEST

/* x fastest, named t<pos> so that names and positions agree. */
static topoml_topo_t *_torus(int x, int y, int z, bool wrap)
{
	topoml_topo_t *t = topoml_new(TOPOML_TORUS, "torus");
	topoml_errors_t e = { 0 };
	char name[32];

	t->dims[0] = x;
	t->dims[1] = y;
	t->dims[2] = z;
	t->wrap[0] = t->wrap[1] = t->wrap[2] = wrap;
	for (int c = 0; c < z; c++)
		for (int b = 0; b < y; b++)
			for (int a = 0; a < x; a++) {
				int i = a + x * (b + y * c), n;

				snprintf(name, sizeof(name), "t%d", i);
				n = topoml_add_node(t, name, i + 1, NULL);
				ck_assert_int_eq(n, i);
				t->nodes[n].coord[0] = a;
				t->nodes[n].coord[1] = b;
				t->nodes[n].coord[2] = c;
			}
	ck_assert_int_eq(topoml_finalize(t, &e), 0);
	topoml_errors_clear(&e);
	return t;
}

START_TEST(test_torus_box)
{
	topoml_topo_t *t = _torus(4, 3, 2, true);
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int start[3] = { 9, 9, 9 }, ext[3] = { 9, 9, 9 };
	/* (3,0,0) and (0,2,1): wraps in x and y, 2 x 2 x 2 */
	int nodes[2] = { 3, 0 + 4 * (2 + 3 * 1) };

	for (int i = 0; i < t->nnodes; i++) {
		int c[3];

		ck_assert_int_eq(t->coord_node[topoml__torus_pos(
					 t, t->nodes[i].coord)], i);
		topoml__grid_coord(t->dims, i, c);
		for (int d = 0; d < 3; d++)
			ck_assert_int_eq(c[d], t->nodes[i].coord[d]);
		ck_assert_int_eq(topoml__grid_pos(t->dims, c[0], c[1], c[2]),
				 i);
	}

	/* The empty set: volume 0, every extent 0, starts 0. */
	ck_assert_int_eq(topoml__torus_box(t, nodes, 0, true, start, ext), 0);
	ck_assert_int_eq(topoml__torus_box(t, NULL, 0, false, start, ext), 0);
	for (int d = 0; d < 3; d++) {
		ck_assert_int_eq(ext[d], 0);
		ck_assert_int_eq(start[d], 0);
	}
	ck_assert_int_eq(topoml__torus_box_set(t, set, false, start, ext), 0);

	ck_assert_int_eq(topoml__torus_box(t, nodes, 2, false, start, ext), 8);
	ck_assert_int_eq(start[0], 3);
	ck_assert_int_eq(start[1], 2);
	ck_assert_int_eq(start[2], 0);	/* full axis: lowest */
	ck_assert_int_eq(topoml__torus_box(t, nodes, 2, true, start, ext), 8);
	ck_assert_int_eq(start[2], 1);	/* full axis: after the lowest */
	for (int d = 0; d < 3; d++)
		ck_assert_int_eq(ext[d], 2);
	/* The set form gives the same box. */
	hwloc_bitmap_set(set, nodes[0]);
	hwloc_bitmap_set(set, nodes[1]);
	memset(start, 0, sizeof(start));
	ck_assert_int_eq(topoml__torus_box_set(t, set, true, start, ext), 8);
	ck_assert_int_eq(start[0], 3);
	ck_assert_int_eq(start[1], 2);
	topoml_free(t);

	/* Without wrap the same nodes span the whole 4 x 3 x 2 mesh. */
	t = _torus(4, 3, 2, false);
	ck_assert_int_eq(topoml__torus_box(t, nodes, 2, true, start, ext), 24);
	ck_assert_int_eq(start[0], 0);
	ck_assert_int_eq(ext[0], 4);
	topoml_free(t);
	hwloc_bitmap_free(set);
}
END_TEST

/* The score's span of a torus placement is the box volume above. */
START_TEST(test_score_span)
{
	topoml_topo_t *t = _torus(4, 3, 2, true);
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	int nodes[2] = { 3, 0 + 4 * (2 + 3 * 1) };
	struct topoml_placement p = { .n = 2, .nodes = nodes };

	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	topoml_score(t, avail, &p);
	ck_assert_int_eq(p.score.span, 8);
	p.n = 1;
	topoml_score(t, avail, &p);
	ck_assert_int_eq(p.score.span, 1);
	hwloc_bitmap_free(avail);
	topoml_free(t);
}
END_TEST

/*
 * Slurm's Hilbert curve, computed once by topoml_finalize(): on a 4x4x4
 * torus the nodes hold the curve's first 64 positions (its first aligned
 * cube), each one hop from the next; a fat tree has no curve.
 */
START_TEST(test_hilbert_curve)
{
	topoml_topo_t *t = _torus(4, 4, 4, true), *o = _torus(4, 3, 2, true);
	topoml_topo_t *ft = topoml_new(TOPOML_FAT_TREE, "ft");
	const uint64_t *pos = NULL;
	const int *node = topoml__torus_curve(t, &pos);
	uint64_t fpos[64];
	int fnode[64];
	char seen[64] = { 0 };

	ck_assert_ptr_nonnull(node);
	ck_assert_ptr_nonnull(pos);
	for (int i = 0; i < 64; i++) {
		const int *a = t->nodes[node[i]].coord;

		ck_assert_uint_eq(pos[i], (uint64_t)i);
		ck_assert(!seen[node[i]]);
		seen[node[i]] = 1;
		if (i) {
			const int *b = t->nodes[node[i - 1]].coord;

			ck_assert_int_eq(abs(a[0] - b[0]) + abs(a[1] - b[1]) +
					 abs(a[2] - b[2]), 1);
		}
	}
	ck_assert_int_eq(t->nodes[node[0]].coord[0] +
			 t->nodes[node[0]].coord[1] +
			 t->nodes[node[0]].coord[2], 0);
	/* the cache is the curve computed afresh */
	ck_assert_int_eq(topoml__hilbert_curve(t, fpos, fnode), 0);
	ck_assert_mem_eq(fpos, pos, sizeof(fpos));
	ck_assert_mem_eq(fnode, node, sizeof(fnode));
	/* not a cube: positions ascend, every node once */
	node = topoml__torus_curve(o, &pos);
	ck_assert_ptr_nonnull(node);
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < o->nnodes; i++) {
		ck_assert(!seen[node[i]]);
		seen[node[i]] = 1;
		if (i)
			ck_assert_uint_gt(pos[i], pos[i - 1]);
	}
	ck_assert_ptr_null(topoml__torus_curve(ft, NULL));
	topoml_free(t);
	topoml_free(o);
	topoml_free(ft);
}
END_TEST

START_TEST(test_name_index)
{
	struct topoml_name_index *ix = topoml__index_new();
	char (*names)[16] = malloc(5000 * sizeof(*names));

	ck_assert_ptr_nonnull(ix);
	ck_assert_ptr_nonnull(names);
	/* FNV-1a of "a" (the published test vector). */
	ck_assert_uint_eq(topoml__hash("a"), 0xe40c292cu);
	ck_assert_uint_eq(topoml__hash(""), 2166136261u);
	ck_assert_int_eq(topoml__index_find(NULL, "x"), -1);
	ck_assert_int_eq(topoml__index_find(ix, NULL), -1);
	/* Far past the first table (64 slots): every name still found. */
	for (int i = 0; i < 5000; i++) {
		snprintf(names[i], sizeof(names[i]), "sw%d", i);
		ck_assert_int_eq(topoml__index_put(ix, names[i], i * 3), 0);
	}
	for (int i = 0; i < 5000; i++)
		ck_assert_int_eq(topoml__index_find(ix, names[i]), i * 3);
	ck_assert_int_eq(topoml__index_find(ix, "sw5000"), -1);
	ck_assert_int_eq(topoml__index_find(ix, "sw"), -1);
	topoml__index_free(ix);
	topoml__index_free(NULL);
	free(names);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("geom");
	TCase *tc = tcase_create("geom");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_axis_extent);
	tcase_add_test(tc, test_torus_box);
	tcase_add_test(tc, test_score_span);
	tcase_add_test(tc, test_hilbert_curve);
	tcase_add_test(tc, test_name_index);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
