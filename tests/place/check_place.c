/*
 * Unit tests of the placement engine, the cost model and the Slurm
 * baselines, on small generated topologies whose right answers are worked
 * out by hand in the comments.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim.h"
#include "place/common/place_int.h"

/* 1024 nodes, 32 per leaf, 8 leaves per level-1 switch, one root:
 * leaf L holds nodes 32L .. 32L+31, level-1 switch S leaves 8S .. 8S+7. */
static topoml_topo_t *_tree1024(void)
{
	topoml_topo_t *t = topoml_gen_fat_tree("c", 1024, 32, 8, 0);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nlevels, 3);
	return t;
}

/* 16 nodes, 4 per leaf, 2 leaves per level-1 switch, one root. */
static topoml_topo_t *_tree16(void)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 2, 0);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nswitches, 7);
	return t;
}

static hwloc_bitmap_t _all(const topoml_topo_t *t)
{
	hwloc_bitmap_t a = hwloc_bitmap_alloc();

	hwloc_bitmap_set_range(a, 0, t->nnodes - 1);
	return a;
}

static int _place(const topoml_topo_t *t, enum topoml_policy pol,
		  struct topoml_place_req *r, struct topoml_placement *p,
		  char *why)
{
	return topoml_place(t, pol, r, p, why, 256);
}

static hwloc_bitmap_t _set_of(const struct topoml_placement *p)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();

	for (int i = 0; i < p->n; i++)
		hwloc_bitmap_set(s, p->nodes[i]);
	return s;
}

static int _leaves(const topoml_topo_t *t, const struct topoml_placement *p)
{
	hwloc_bitmap_t l = hwloc_bitmap_alloc();
	int n;

	for (int i = 0; i < p->n; i++)
		hwloc_bitmap_set(l, t->nodes[p->nodes[i]].leaf);
	n = hwloc_bitmap_weight(l);
	hwloc_bitmap_free(l);
	return n;
}

static void _assert_set(const struct topoml_placement *p, const char *want)
{
	hwloc_bitmap_t s = _set_of(p), w = hwloc_bitmap_alloc();

	hwloc_bitmap_list_sscanf(w, want);
	if (!hwloc_bitmap_isequal(s, w)) {
		char got[512];

		hwloc_bitmap_list_snprintf(got, sizeof(got), s);
		ck_abort_msg("placed %s, want %s", got, want);
	}
	hwloc_bitmap_free(s);
	hwloc_bitmap_free(w);
}

/* ---- jobs that share nodes (issue 18) ------------------------------- */

static topoml_topo_t *_dfly(void);
static int _groups(const topoml_topo_t *t, const struct topoml_placement *p);

/* State of a cluster whose nodes have cpus units each. */
struct shared_state {
	uint32_t fu[256];
	hwloc_bitmap_t avail, partial;
};

static void _shared_init(struct shared_state *st, int n, uint32_t cpus)
{
	st->avail = hwloc_bitmap_alloc();
	st->partial = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(st->avail, 0, n - 1);
	for (int i = 0; i < n; i++)
		st->fu[i] = cpus;
}

static void _shared_init_fu(struct shared_state *st, int n, uint32_t cpus)
{
	for (int i = 0; i < n; i++)
		st->fu[i] = cpus;
}

static void _shared_use(struct shared_state *st, int node, uint32_t units)
{
	st->fu[node] -= units;
	hwloc_bitmap_set(st->partial, node);
}

/*
 * The case: 8 nodes of 4 CPUs on two leaves, six one-CPU jobs,
 * then a 4-node whole-node job.  cons_tres packs the six onto n1 (4) and
 * n2 (2); so must the engine, and the whole-node job gets leaf 2 whole.
 */
START_TEST(shared_one_cpu_jobs_pack)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 8, 4, 2, 0);
	struct shared_state st;
	const int want[6] = { 0, 0, 0, 0, 1, 1 };
	hwloc_bitmap_t idle = hwloc_bitmap_alloc();
	char why[256];

	ck_assert_ptr_nonnull(t);
	_shared_init(&st, 8, 4);
	for (int j = 0; j < 6; j++) {
		struct topoml_place_req r = { .nnodes = 1, .avail = st.avail,
			.units = 1, .free_units = st.fu,
			.partial = st.partial };
		struct topoml_placement p = { 0 };

		ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0,
			      "%s", why);
		ck_assert_int_eq(p.n, 1);
		ck_assert_msg(p.nodes[0] == want[j], "job %d on node %d", j,
			      p.nodes[0]);
		/* Only the first job breaks an idle leaf. */
		ck_assert_int_eq(p.score.idle_leaves_broken, j == 0);
		_shared_use(&st, p.nodes[0], 1);
		topoml_placement_clear(&p);
	}
	/* The whole-node job sees the idle nodes: n[3-8]. */
	hwloc_bitmap_andnot(idle, st.avail, st.partial);
	{
		struct topoml_place_req r = { .nnodes = 4, .avail = idle };
		struct topoml_placement p = { 0 };

		ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why),
				 0);
		_assert_set(&p, "4-7");
		ck_assert_int_eq(p.score.idle_leaves_broken, 0);
		topoml_placement_clear(&p);
	}
	hwloc_bitmap_free(idle);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/*
 * Multi-node jobs by units (sbatch -n 8 / -n 20 without --exclusive) on 16
 * nodes of 4 CPUs, leaves of 4; node 0 has 2 CPUs left, node 5 one.  Leaf
 * room: 14, 13, 16, 16.
 */
START_TEST(shared_multi_node_fewest_leaves_partial_first)
{
	topoml_topo_t *t = _tree16();
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	char why[256];

	_shared_init(&st, 16, 4);
	_shared_use(&st, 0, 2);
	_shared_use(&st, 5, 3);
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	/* 8 CPUs: one leaf, the tightest (leaf 1: 13), node 5 first. */
	r.units = 8;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	_assert_set(&p, "4-6");
	ck_assert_int_eq(_leaves(t, &p), 1);
	ck_assert_int_eq(p.score.idle_leaves_broken, 0);
	topoml_placement_clear(&p);
	/* 20 CPUs: two leaves, both partly used; the idle ones stay whole. */
	r.units = 20;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	_assert_set(&p, "0-2,4-7");
	ck_assert_int_eq(p.score.idle_leaves_broken, 0);
	topoml_placement_clear(&p);
	/* -N 6 -n 6: at least six nodes, still on the two used leaves. */
	r.units = 6;
	r.nnodes = 6;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_ge(p.n, 6);
	ck_assert_int_eq(_leaves(t, &p), 2);
	ck_assert_int_eq(p.score.idle_leaves_broken, 0);
	topoml_placement_clear(&p);
	/* Attempt 1: the idle nodes only (one idle leaf for 8 CPUs). */
	r.units = 8;
	r.nnodes = 1;
	r.attempt = 1;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(_leaves(t, &p), 1);
	ck_assert(!hwloc_bitmap_isset(st.partial, p.nodes[0]));
	topoml_placement_clear(&p);
	r.attempt = 2;
	ck_assert_int_ne(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	/* More than the free units: no placement, a reason. */
	r.attempt = 0;
	r.units = 62;
	ck_assert_int_ne(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert(why[0]);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/* One GPU of eight per job: the partly used node first, best fit, and the
 * next attempts give the next nodes in that order. */
START_TEST(shared_gpus_best_fit_and_attempts)
{
	topoml_topo_t *t = _tree16();
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	int seen[3];
	char why[256];

	_shared_init(&st, 16, 8);
	_shared_use(&st, 9, 6);		/* 2 GPUs left */
	_shared_use(&st, 13, 3);	/* 5 GPUs left */
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 2;
	for (int a = 0; a < 3; a++) {
		r.attempt = a;
		ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0,
			      "%s", why);
		ck_assert_int_eq(p.n, 1);
		seen[a] = p.nodes[0];
		topoml_placement_clear(&p);
	}
	ck_assert_int_eq(seen[0], 9);
	ck_assert_int_eq(seen[1], 13);
	/* then an idle node of a partly used leaf, not of an idle one */
	ck_assert_int_eq(seen[2], 8);
	/* 3 GPUs: node 9 cannot, node 13 can. */
	r.attempt = 0;
	r.units = 3;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.nodes[0], 13);
	topoml_placement_clear(&p);
	/* 12 GPUs, two nodes: leaf 0 (all idle) and leaf 1, whose node 5
	 * runs a CPU-only job, offer 32 each: leaf 1, keeping leaf 0 idle. */
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	_shared_init(&st, 16, 8);
	hwloc_bitmap_set(st.partial, 5);
	r.avail = st.avail;
	r.partial = st.partial;
	for (int i = 8; i < 16; i++)
		st.fu[i] = 0;
	r.units = 12;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(_leaves(t, &p), 1);
	ck_assert_int_eq(t->nodes[p.nodes[0]].leaf,
			 t->nodes[5].leaf);
	ck_assert_int_eq(p.score.idle_leaves_broken, 0);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/*
 * A job of two leaves stays under one level-1 switch (16 nodes of 4 CPUs,
 * leaves of 4, two leaves per level-1 switch): nodes 0 and 12 have one CPU
 * left, leaf room 13, 16, 16, 13; 20 CPUs.  The tightest two leaves of the
 * whole tree (0 and 3) would cross the root.
 */
START_TEST(shared_fat_tree_lowest_switch)
{
	topoml_topo_t *t = _tree16();
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	char why[256];
	int lo = 0;

	_shared_init(&st, 16, 4);
	_shared_use(&st, 0, 3);
	_shared_use(&st, 12, 3);
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 20;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(_leaves(t, &p), 2);
	for (int i = 0; i < p.n; i++)
		lo += p.nodes[i] < 8;
	ck_assert_msg(lo == 0 || lo == p.n, "crosses the root: %d of %d low",
		      lo, p.n);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/* The node at (x, y, z) of a generated torus. */
static int _tnode(const topoml_topo_t *t, int x, int y, int z)
{
	return t->coord_node[x + t->dims[0] * (y + t->dims[1] * z)];
}

/*
 * A 4x4x4 torus of 4 CPUs a node; three nodes partly used: (0,0,0) has
 * 1 CPU left, (2,2,2) and (1,3,0) 2 each.  16 CPUs fill a box of 4 only
 * with idle nodes (a partly used one leaves it short): 4 idle nodes, box
 * volume 4, a closed ring of 4 hops (a 2x2 square, or a line round an
 * axis of 4).  Taking the partly used nodes first, wherever they are,
 * gave 6 nodes over the whole torus.  14 CPUs: a box of 4 with one node
 * of 2 CPUs left holds exactly 14 (3 x 4 + 2), the best fit: that node
 * and 3 idle neighbours.  Attempt 1 (idle nodes only): 4 idle ones.
 */
START_TEST(shared_torus_box_partly_used_nodes)
{
	topoml_topo_t *t = topoml_gen_torus("t", 4, 4, 4, true);
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	char why[256];
	int two[2], parts;

	ck_assert_ptr_nonnull(t);
	_shared_init(&st, 64, 4);
	_shared_use(&st, _tnode(t, 0, 0, 0), 3);
	two[0] = _tnode(t, 2, 2, 2);
	two[1] = _tnode(t, 1, 3, 0);
	_shared_use(&st, two[0], 2);
	_shared_use(&st, two[1], 2);
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 16;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 4);
	ck_assert_int_eq(p.score.span, 4);
	ck_assert_int_eq((int)p.score.ring_cost, 4);
	for (int i = 0; i < p.n; i++)
		ck_assert(!hwloc_bitmap_isset(st.partial, p.nodes[i]));
	topoml_placement_clear(&p);
	r.units = 14;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 4);
	ck_assert_int_eq(p.score.span, 4);
	ck_assert_int_eq((int)p.score.ring_cost, 4);
	parts = 0;
	for (int i = 0; i < p.n; i++)
		if (hwloc_bitmap_isset(st.partial, p.nodes[i])) {
			ck_assert(p.nodes[i] == two[0] ||
				  p.nodes[i] == two[1]);
			parts++;
		}
	ck_assert_int_eq(parts, 1);
	topoml_placement_clear(&p);
	r.attempt = 1;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 4);
	ck_assert_int_eq(p.score.span, 4);
	for (int i = 0; i < p.n; i++)
		ck_assert(!hwloc_bitmap_isset(st.partial, p.nodes[i]));
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/*
 * An idle 8x8x4 torus of 4 CPUs a node, 17 CPUs: 5 nodes.  A line of 5
 * (box 5) closes its ring back along itself or round the ring of 8: 8
 * hops, against the bound 6 (an odd ring on this bipartite torus).  A
 * 2x3 box less a corner: span 6, a ring of 6 hops.  Span 6 / 5 + ring
 * 6 / 6 = 2.2 beats 5 / 5 + 8 / 6 = 2.33: the box.  Nodes in index
 * order gave the line.  On a ring of 6 (6x6x4) the line closes round
 * the torus in 4 + 2 hops: the line then (span 5, ring 6).
 */
START_TEST(shared_torus_ring_over_line)
{
	topoml_topo_t *t = topoml_gen_torus("t", 8, 8, 4, true);
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	char why[256];

	ck_assert_ptr_nonnull(t);
	_shared_init(&st, 256, 4);
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 17;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 5);
	ck_assert_int_eq(p.score.span, 6);
	ck_assert_int_eq((int)p.score.ring_cost, 6);
	topoml_placement_clear(&p);
	topoml_free(t);
	t = topoml_gen_torus("t", 6, 6, 4, true);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 5);
	ck_assert_int_eq(p.score.span, 5);
	ck_assert_int_eq((int)p.score.ring_cost, 6);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/*
 * The box sums of the torus search read a row of origins at a time and
 * split a slab where it wraps.  A 6x6x6 torus of 4 CPUs a node with the
 * 2x2x2 box at coordinates {5, 0} on every axis free (it wraps round
 * all three), and a checkerboard of free nodes on planes z = 2 and 3
 * (no two side by side): 32 CPUs go to that box (span 8, ring 8); the
 * checkerboard or Slurm's runs in index order (the box's nodes are not
 * consecutive there) give a larger span.  On a 26x26x26 torus (where
 * the budget shrinks and the search ends at a box at the bounds) an
 * idle machine gives the same: 8 nodes, span 8, ring 8.
 */
START_TEST(shared_torus_box_wraps_every_axis)
{
	topoml_topo_t *t = topoml_gen_torus("t", 6, 6, 6, true);
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	hwloc_bitmap_t all;
	uint32_t *fu;
	char why[256];

	ck_assert_ptr_nonnull(t);
	_shared_init(&st, 216, 4);
	hwloc_bitmap_zero(st.avail);
	for (int z = 0; z < 6; z++)
		for (int y = 0; y < 6; y++)
			for (int x = 0; x < 6; x++)
				if (((x == 5 || x == 0) && (y == 5 || y == 0) &&
				     (z == 5 || z == 0)) ||
				    ((z == 2 || z == 3) && !((x + y + z) & 1)))
					hwloc_bitmap_set(st.avail,
							 _tnode(t, x, y, z));
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 32;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 8);
	ck_assert_int_eq(p.score.span, 8);
	ck_assert_int_eq((int)p.score.ring_cost, 8);
	for (int i = 0; i < p.n; i++)
		for (int k = 0; k < 3; k++) {
			int c = t->nodes[p.nodes[i]].coord[k];

			ck_assert(c == 0 || c == 5);
		}
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);

	t = topoml_gen_torus("t", 26, 26, 26, true);
	ck_assert_ptr_nonnull(t);
	fu = malloc(t->nnodes * sizeof(*fu));
	all = hwloc_bitmap_alloc();
	ck_assert_ptr_nonnull(fu);
	for (int i = 0; i < t->nnodes; i++)
		fu[i] = 4;
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	r.avail = all;
	r.free_units = fu;
	r.partial = NULL;
	r.units = 31;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 8);
	ck_assert_int_eq(p.score.span, 8);
	ck_assert_int_eq((int)p.score.ring_cost, 8);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(all);
	free(fu);
	topoml_free(t);
}
END_TEST

/*
 * Rows of few origins (a box nearly as long as the axis) are read box by
 * box.  A 24x3x3 mesh of 4 CPUs a node: the 22x2x1 box at (1, 0, 0)
 * free (44 nodes, 176 CPUs; two runs of 22 in index order), and plane
 * z = 2 free with 3 CPUs left a node (one run of 72, 216 CPUs).  176
 * CPUs: that box, span 44 (Slurm's best-fit run would be the plane's,
 * partly used nodes and a larger span).
 */
START_TEST(shared_torus_long_box)
{
	topoml_topo_t *t = topoml_gen_torus("t", 24, 3, 3, false);
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	char why[256];

	ck_assert_ptr_nonnull(t);
	_shared_init(&st, 216, 4);
	hwloc_bitmap_zero(st.avail);
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 24; x++) {
			int v = _tnode(t, x, y, 2);

			hwloc_bitmap_set(st.avail, v);
			_shared_use(&st, v, 1);
			if (y < 2 && x >= 1 && x <= 22)
				hwloc_bitmap_set(st.avail, _tnode(t, x, y, 0));
		}
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 176;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(p.n, 44);
	ck_assert_int_eq(p.score.span, 44);
	for (int i = 0; i < p.n; i++) {
		const int *c = t->nodes[p.nodes[i]].coord;

		ck_assert(c[2] == 0 && c[1] < 2 && c[0] >= 1 && c[0] <= 22);
	}
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/*
 * Dragonfly, 8 groups of 4 routers of 8 nodes, 4 CPUs a node: routers 4
 * (group 1) and 8 (group 2) have 20 CPUs left.  40 CPUs need two routers:
 * in one group (group 1, the tightest), not the two partly used routers
 * of two groups.
 */
/*
 * The node-sharing torus search reads a long search's rows from sums
 * mod 2^16 where a box holds fewer units: the same placements as from
 * the ints, which it reads where every node's units are 1000 times as
 * many (every comparison of the search scales with them).  And the same
 * whether it foresees a box's score from sums or from its nodes.
 */
START_TEST(shared_torus_shortcuts_same_placements)
{
	topoml_topo_t *t = topoml_gen_torus("t", 16, 16, 16, true);
	uint32_t *fu = calloc(4096, sizeof(*fu)), *fk = calloc(4096,
							       sizeof(*fk));
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), part = hwloc_bitmap_alloc();
	static const int sizes[] = { 12, 24, 48, 96, 160 };
	unsigned seed = 5;
	char why[256];

	ck_assert(t && fu && fk && a && part);
	for (int m = 0; m < 8; m++) {
		/* half the nodes busy, a quarter of the rest partly used */
		hwloc_bitmap_zero(a);
		hwloc_bitmap_zero(part);
		for (int v = 0; v < t->nnodes; v++) {
			seed = seed * 1103515245 + 12345;
			fu[v] = fk[v] = 0;
			if ((seed >> 16) % 2)
				continue;
			hwloc_bitmap_set(a, v);
			fu[v] = 4;
			if ((seed >> 18) % 4 == 0) {
				fu[v] = 1 + (seed >> 20) % 3;
				hwloc_bitmap_set(part, v);
			}
			fk[v] = 1000 * fu[v];
		}
		for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]);
		     k++) {
			struct topoml_place_req r = {
				.avail = a, .partial = part, .free_units = fu,
				.units = 4 * sizes[k] - m % 4,
				.nnodes = sizes[k] / 4 };
			struct topoml_placement p, q;

			ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p,
					     why) == 0, "%s", why);
			r.free_units = fk;
			r.units *= 1000;
			ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &q,
					     why) == 0, "%s", why);
			ck_assert_int_eq(p.n, q.n);
			for (int i = 0; i < p.n; i++)
				ck_assert_int_eq(p.nodes[i], q.nodes[i]);
			topoml_placement_clear(&q);
			/* every box foreseen from sums, and none: the same */
			for (int l = 0; l < 2; l++) {
				int was = topoml__shared_lazy_vol;

				topoml__shared_lazy_vol = l ? INT_MAX : 1;
				ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML,
						     &r, &q, why) == 0, "%s",
					      why);
				topoml__shared_lazy_vol = was;
				ck_assert_int_eq(p.n, q.n);
				for (int i = 0; i < p.n; i++)
					ck_assert_int_eq(p.nodes[i],
							 q.nodes[i]);
				topoml_placement_clear(&q);
			}
			/* the rows read 8 sums to a vector, not 16 (with
			 * AVX2): the same */
			r.free_units = fu;
			r.units /= 1000;
			topoml__shared_wide = false;
			ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &q,
					     why) == 0, "%s", why);
			topoml__shared_wide = true;
			ck_assert_int_eq(p.n, q.n);
			for (int i = 0; i < p.n; i++)
				ck_assert_int_eq(p.nodes[i], q.nodes[i]);
			topoml_placement_clear(&q);
			topoml_placement_clear(&p);
		}
	}
	free(fu);
	free(fk);
	hwloc_bitmap_free(a);
	hwloc_bitmap_free(part);
	topoml_free(t);
}
END_TEST

/*
 * The node-sharing search's rows of box sums mod 2^16, read 8 and (where
 * the CPU has AVX2) 16 to a vector: the rows that hold a box of units
 * with less than w spare are those the box sums one by one find, wrapped
 * in every axis or not, where the sums pass 2^16 and a box's do not.
 */
START_TEST(shared_rows16_match_box_sums)
{
	static const int dims[][3] = { { 23, 11, 7 }, { 46, 5, 9 },
				       { 3, 17, 4 } };
	unsigned seed = 7;

	for (unsigned k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
		const int *d = dims[k];
		struct topoml_psum g;
		size_t nc = (size_t)(d[0] + 1) * (d[1] + 1) * (d[2] + 1);
		uint16_t *p16 = malloc((nc + 16) * sizeof(*p16));
		uint64_t hits[2][2];

		ck_assert(p16 && topoml__psum_alloc(&g, d) == 0);
		for (int z = 0; z < d[2]; z++)
			for (int y = 0; y < d[1]; y++)
				for (int x = 0; x < d[0]; x++) {
					seed = seed * 1103515245 + 12345;
					g.p[topoml__psum_at(&g, x + 1, y + 1,
							    z + 1)] =
						(seed >> 16) % 101;
				}
		topoml__psum_finish(&g);
		if (!k)	/* the sums pass 2^16 */
			ck_assert_int_gt(g.p[nc - 1], 65536);
		for (size_t i = 0; i < nc + 16; i++)
			p16[i] = i < nc ? (uint16_t)g.p[i] : 0;
		for (int c = 0; c < 400; c++) {
			int sd[3], n, ny, z, o[3];
			long units, w, vol;
			bool wrap;

			seed = seed * 1103515245 + 12345;
			wrap = seed >> 20 & 1;
			for (int a = 0; a < 3; a++) {
				seed = seed * 1103515245 + 12345;
				sd[a] = 1 + (int)((seed >> 16) % d[a]);
			}
			vol = (long)sd[0] * sd[1] * sd[2];
			if (vol * 100 >= 65536)
				continue;
			n = wrap ? d[0] : d[0] - sd[0] + 1;
			ny = wrap ? d[1] : d[1] - sd[1] + 1;
			if (c % 5 == 0)	/* the rows a budget leaves */
				ny = 1 + (int)((seed >> 12) % ny);
			seed = seed * 1103515245 + 12345;
			z = (int)((seed >> 16) % d[2]);
			units = 1 + (long)((seed >> 4) % (50 * vol + 1));
			w = c % 3 ? 1 + (long)((seed >> 8) % 40) : LONG_MAX;
			for (int wide = 0; wide < 2; wide++) {
				memset(hits[wide], 0xff, sizeof(hits[wide]));
				ck_assert_int_eq(topoml__shared_rows16(&g, p16,
					z, sd, n, ny, units, w, hits[wide],
					wide), 0);
			}
			for (int y = 0; y < ny; y++) {
				bool want = false;

				o[1] = y;
				o[2] = z;
				for (o[0] = 0; o[0] < n; o[0]++) {
					long u = topoml__psum_wrap(&g, o, sd);

					want |= u >= units && u - units < w;
				}
				for (int wide = 0; wide < 2; wide++)
					ck_assert_int_eq(hits[wide][y / 64] >>
							 (y % 64) & 1, want);
			}
		}
		topoml__psum_free(&g);
		free(p16);
	}
}
END_TEST

START_TEST(shared_dragonfly_one_group)
{
	topoml_topo_t *t = _dfly();
	struct shared_state st;
	struct topoml_place_req r = { 0 };
	struct topoml_placement p = { 0 };
	char why[256];

	_shared_init(&st, 256, 4);
	for (int i = 0; i < 3; i++) {
		_shared_use(&st, 32 + i, 4);
		_shared_use(&st, 64 + i, 4);
	}
	/* 3 nodes full: 5 x 4 = 20 CPUs left on each of the two routers */
	r.avail = st.avail;
	r.free_units = st.fu;
	r.partial = st.partial;
	r.nnodes = 1;
	r.units = 40;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(_groups(t, &p), 1);
	ck_assert_int_eq(t->nodes[p.nodes[0]].group, 1);
	topoml_placement_clear(&p);
	/* 25 CPUs: one router of group 2 beats two routers of group 1
	 * (less room, but more routers). */
	for (int i = 0; i < 256; i++)
		st.fu[i] = 0;
	for (int i = 32; i < 37; i++)
		st.fu[i] = 4;		/* router 4: 20 */
	st.fu[40] = st.fu[41] = 4;	/* router 5: 8 */
	for (int i = 64; i < 72; i++)
		st.fu[i] = 4;		/* router 8: 32 */
	r.units = 25;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	for (int i = 0; i < p.n; i++)
		ck_assert_int_eq(t->nodes[p.nodes[i]].leaf,
				 t->nodes[64].leaf);
	topoml_placement_clear(&p);
	_shared_init_fu(&st, 256, 4);
	/* 200 CPUs: more than a group (128): the fewest groups, two. */
	r.units = 200;
	ck_assert_msg(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why) == 0, "%s",
		      why);
	ck_assert_int_eq(_groups(t, &p), 2);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(st.avail);
	hwloc_bitmap_free(st.partial);
	topoml_free(t);
}
END_TEST

/* ---- fat-tree engine ------------------------------------------------ */

START_TEST(ft_tight_fit_half_busy_leaf)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* leaf 3 half busy: 8 nodes go there (one leaf, tightest fit),
	 * not on any of the 31 empty leaves */
	hwloc_bitmap_clr_range(a, 96, 111);
	struct topoml_place_req r = { .nnodes = 8, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.n, 8);
	_assert_set(&p, "112-119");
	ck_assert_int_eq(p.score.span, 1);
	ck_assert_double_eq(p.score.ring_cost, 16);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_fewest_leaves_keep_empty_ones)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* leaf 0 has 16 free: 40 nodes need 2 leaves; the tight pick uses
	 * leaf 0 whole (16) and 24 of leaf 1, leaving 8 on leaf 1 and every
	 * other leaf empty */
	hwloc_bitmap_clr_range(a, 0, 15);
	struct topoml_place_req r = { .nnodes = 40, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "16-55");
	ck_assert_int_eq(p.score.span, 2);
	ck_assert_int_eq(p.score.span_lower_bound, 2);
	/* 38 in-leaf steps of 2 hops + 2 leaf crossings of 4 */
	ck_assert_double_eq(p.score.ring_cost, 84);
	ck_assert_double_eq(p.score.ring_lower_bound, 84);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_lowest_common_switch)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	struct topoml_placement p;
	char why[256];

	/* free: leaf 3 (under switch 0), leaves 9 and 10 (switch 1).
	 * 64 nodes need two leaves: 9 + 10 share switch 1 (level 1),
	 * 3 + 9 only the root (level 2). */
	hwloc_bitmap_set_range(a, 96, 127);
	hwloc_bitmap_set_range(a, 288, 351);
	struct topoml_place_req r = { .nnodes = 64, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "288-351");
	ck_assert_int_eq(topoml_common_level(t, p.nodes[0],
					     p.nodes[p.n - 1]), 1);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_tightest_subtree)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* 64 nodes = 2 whole leaves under one level-1 switch: switches 0,
	 * 1, 3 are empty, switch 2 (leaves 16-23) has leaf 16 busy: it has
	 * the fewest free nodes and still holds the job. */
	hwloc_bitmap_clr_range(a, 512, 543);
	struct topoml_place_req r = { .nnodes = 64, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "544-607");
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_isolate_prefers_clean_leaf)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	uint32_t *owner = calloc(t->nnodes, sizeof(uint32_t));
	char why[256];

	/* leaf 0 half used by job 7: allreduce packs 8 nodes beside it,
	 * isolate takes an empty leaf; both on one leaf */
	for (int i = 0; i < 16; i++)
		owner[i] = 7;
	hwloc_bitmap_clr_range(a, 0, 15);
	struct topoml_place_req r = { .nnodes = 8, .avail = a,
				      .owner = owner };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(t->nodes[p.nodes[0]].leaf, 0);
	topoml_placement_clear(&p);
	r.hint = TOPOML_HINT_ISOLATE;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_ne(t->nodes[p.nodes[0]].leaf, 0);
	ck_assert_int_eq(_leaves(t, &p), 1);
	for (int i = 0; i < p.n; i++)
		ck_assert_uint_eq(owner[p.nodes[i]], 0);
	topoml_placement_clear(&p);
	free(owner);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_multi_leaf_avoids_shared_uplinks)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	uint32_t *owner = calloc(t->nnodes, sizeof(uint32_t));
	char why[256];

	/* job 5 spans leaves 0 and 1 (24 + 24 nodes), job 6 sits on leaf 2
	 * (24 nodes): each of the three leaves has 8 free.  A 40-node job
	 * takes 8 + 32; of the equally tight 8s it takes leaf 2's, whose
	 * uplinks carry no other multi-leaf job; blind, the lowest (0). */
	for (int i = 8; i < 32; i++)
		owner[i] = 5;
	for (int i = 40; i < 64; i++)
		owner[i] = 5;
	for (int i = 72; i < 96; i++)
		owner[i] = 6;
	hwloc_bitmap_clr_range(a, 8, 31);
	hwloc_bitmap_clr_range(a, 40, 63);
	hwloc_bitmap_clr_range(a, 72, 95);
	struct topoml_place_req r = { .nnodes = 40, .avail = a,
				      .owner = owner };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "64-71,96-127");
	topoml_placement_clear(&p);
	r.owner = NULL;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "0-7,96-127");
	topoml_placement_clear(&p);
	free(owner);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_small_job_beside_the_oldest_job)
{
	topoml_topo_t *t = _tree16();
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	struct topoml_placement p;
	uint32_t *owner = calloc(t->nnodes, sizeof(uint32_t));
	char why[256];

	/* leaf 0 (nodes 0-3): job 9 on 0-2; leaf 1 (4-7): job 3 on 4-6;
	 * leaves 2 and 3 job 8's.  Free: node 3 and node 7, one a leaf,
	 * equally tight.  Job 3 is the oldest (lowest id): its leaf is
	 * likely to stay busy longest, while job 9's leaf may drain whole
	 * for a 2-node job: the 1-node job goes to node 7.  Blind to
	 * owners, the lowest switch: node 3. */
	for (int i = 0; i < 3; i++)
		owner[i] = 9;
	for (int i = 4; i < 7; i++)
		owner[i] = 3;
	for (int i = 8; i < 16; i++)
		owner[i] = 8;
	hwloc_bitmap_set(a, 3);
	hwloc_bitmap_set(a, 7);
	struct topoml_place_req r = { .nnodes = 1, .avail = a,
				      .owner = owner };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "7");
	topoml_placement_clear(&p);
	/* the tighter leaf still wins over an older job: leaf 1 with 2
	 * free (node 5 too) loses to leaf 0's single free node */
	hwloc_bitmap_set(a, 5);
	owner[5] = 0;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "3");
	topoml_placement_clear(&p);
	hwloc_bitmap_clr(a, 5);
	owner[5] = 3;
	r.owner = NULL;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "3");
	topoml_placement_clear(&p);
	free(owner);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ft_required_and_switches)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t), req = hwloc_bitmap_alloc();
	struct topoml_placement p;
	char why[256];

	/* node 170 (leaf 5) required: the 8 nodes all go on leaf 5 */
	hwloc_bitmap_set(req, 170);
	struct topoml_place_req r = { .nnodes = 8, .avail = a,
				      .required = req };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_leaves(t, &p), 1);
	ck_assert_int_eq(t->nodes[p.nodes[0]].leaf, 5);
	hwloc_bitmap_t s = _set_of(&p);
	ck_assert(hwloc_bitmap_isset(s, 170));
	hwloc_bitmap_free(s);
	topoml_placement_clear(&p);

	/* --switches=1 cannot hold 40 nodes on 32-node leaves */
	r.required = NULL;
	r.nnodes = 40;
	r.max_leaves = 1;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "--switches"));
	ck_assert_int_eq(p.n, 0);
	r.max_leaves = 2;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_leaves(t, &p), 2);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(req);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(cannot_place_reasons)
{
	topoml_topo_t *t = _tree16();
	hwloc_bitmap_t a = _all(t), req = hwloc_bitmap_alloc();
	struct topoml_placement p;
	char why[256];

	hwloc_bitmap_clr_range(a, 0, 9);
	struct topoml_place_req r = { .nnodes = 7, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "6 free"));
	r.nnodes = 17;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "has 16"));
	r.nnodes = 0;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "invalid node count"));
	/* a required node that is busy */
	hwloc_bitmap_set(req, 3);
	r.nnodes = 2;
	r.required = req;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "n4"));
	ck_assert_ptr_nonnull(strstr(why, "not free"));
	/* more required nodes than wanted */
	hwloc_bitmap_zero(req);
	hwloc_bitmap_set_range(req, 10, 12);
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "required"));
	/* a torus policy on a tree */
	r.required = NULL;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_HILBERT, &r, &p, why),
			 -1);
	ck_assert_ptr_nonnull(strstr(why, "torus"));
	hwloc_bitmap_free(req);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(deterministic_and_attempts_distinct)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), seen[4];
	struct topoml_placement p, q;
	char why[256];

	/* every third node free */
	for (int i = 0; i < t->nnodes; i += 3)
		hwloc_bitmap_set(a, i);
	struct topoml_place_req r = { .nnodes = 20, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &q, why), 0);
	ck_assert_int_eq(p.n, q.n);
	ck_assert_mem_eq(p.nodes, q.nodes, p.n * sizeof(int));
	topoml_placement_clear(&q);
	/* 4 level-1 switches hold 20 nodes on 2 leaves: 4 alternatives */
	for (int k = 0; k < 4; k++) {
		r.attempt = k;
		ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &q, why),
				 0);
		seen[k] = _set_of(&q);
		ck_assert_int_eq(hwloc_bitmap_weight(seen[k]), 20);
		ck_assert(hwloc_bitmap_isincluded(seen[k], a));
		for (int j = 0; j < k; j++)
			ck_assert(!hwloc_bitmap_isequal(seen[j], seen[k]));
		/* never better than the best */
		ck_assert_int_ge(q.score.span, p.score.span);
		topoml_placement_clear(&q);
	}
	/* attempt 0 is the best */
	hwloc_bitmap_t s0 = _set_of(&p);
	ck_assert(hwloc_bitmap_isequal(s0, seen[0]));
	hwloc_bitmap_free(s0);
	for (int k = 0; k < 4; k++)
		hwloc_bitmap_free(seen[k]);
	/* the candidates run out */
	r.attempt = 100000;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &q, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "attempt"));
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * topoml_place_ranked: one call gives the same list as topoml_place's
 * attempts 0, 1, ... one by one (scores included), on a fat tree, a
 * dragonfly and a torus (per-attempt engine); fewer when the candidates
 * run out, -1 with the reason when there is none.
 */
static void _ranked_matches_attempts(topoml_topo_t *t, int n, int k)
{
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	struct topoml_placement *rk = calloc(k, sizeof(*rk)), q;
	struct topoml_place_req r = { .nnodes = n, .avail = a };
	char why[256];
	int got;

	for (int i = 0; i < t->nnodes; i += 3)
		hwloc_bitmap_set(a, i);
	got = topoml_place_ranked(t, TOPOML_POLICY_TOPOML, &r, k, rk, why,
				  sizeof(why));
	ck_assert_msg(got >= 1 && got <= k, "ranked: %d (%s)", got, why);
	for (int i = 0; i < k; i++) {
		r.attempt = i;
		if (i >= got) {
			ck_assert_int_eq(rk[i].n, 0);
			ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &q,
						why), -1);
			continue;
		}
		ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &q, why),
				 0);
		ck_assert_int_eq(q.n, rk[i].n);
		ck_assert_mem_eq(q.nodes, rk[i].nodes, q.n * sizeof(int));
		ck_assert(q.score.ring_cost == rk[i].score.ring_cost);
		ck_assert_int_eq(q.score.span, rk[i].score.span);
		for (int j = 0; j < i; j++) {
			hwloc_bitmap_t x = _set_of(&rk[i]), y = _set_of(&rk[j]);

			ck_assert(!hwloc_bitmap_isequal(x, y));
			hwloc_bitmap_free(x);
			hwloc_bitmap_free(y);
		}
		topoml_placement_clear(&q);
	}
	for (int i = 0; i < k; i++)
		topoml_placement_clear(&rk[i]);
	/* nothing free: -1 and a reason */
	hwloc_bitmap_zero(a);
	ck_assert_int_eq(topoml_place_ranked(t, TOPOML_POLICY_TOPOML, &r, k,
					     rk, why, sizeof(why)), -1);
	ck_assert(why[0]);
	free(rk);
	hwloc_bitmap_free(a);
}

START_TEST(ranked_list_equals_attempts)
{
	topoml_topo_t *t = _tree1024();

	_ranked_matches_attempts(t, 20, 3);
	/* more wanted than there are distinct candidates */
	_ranked_matches_attempts(t, 20, 40);
	_ranked_matches_attempts(t, 1, 5);
	topoml_free(t);
	t = _dfly();
	_ranked_matches_attempts(t, 6, 3);
	_ranked_matches_attempts(t, 2, 12);
	topoml_free(t);
	t = topoml_gen_torus("n", 6, 6, 6, true);
	ck_assert_ptr_nonnull(t);
	_ranked_matches_attempts(t, 8, 3);
	topoml_free(t);
}
END_TEST

/* ---- dragonfly engine ----------------------------------------------- */

/* 8 groups x 4 routers x 8 nodes: group g holds nodes 32g .. 32g+31 */
static topoml_topo_t *_dfly(void)
{
	topoml_topo_t *t = topoml_gen_dragonfly("d", 8, 4, 8,
						TOPOML_DF_ALL_TO_ALL);

	ck_assert_ptr_nonnull(t);
	return t;
}

static int _groups(const topoml_topo_t *t, const struct topoml_placement *p)
{
	hwloc_bitmap_t g = hwloc_bitmap_alloc();
	int n;

	for (int i = 0; i < p->n; i++)
		hwloc_bitmap_set(g, t->nodes[p->nodes[i]].group);
	n = hwloc_bitmap_weight(g);
	hwloc_bitmap_free(g);
	return n;
}

START_TEST(df_fewest_groups_then_routers)
{
	topoml_topo_t *t = _dfly();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* group 2 has 22 free (nodes 64-73 busy): 20 nodes fit in it on
	 * 3 routers (6 + 8 + 8 = 22 >= 20), the tightest group */
	hwloc_bitmap_clr_range(a, 64, 73);
	struct topoml_place_req r = { .nnodes = 20, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 1);
	ck_assert_int_eq(t->nodes[p.nodes[0]].group, 2);
	ck_assert_int_eq(p.score.span, 1);
	ck_assert_int_eq(p.score.global_hops, 0);
	topoml_placement_clear(&p);
	/* 8 nodes: one router, a whole free one */
	r.nnodes = 8;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_leaves(t, &p), 1);
	/* 5 + 8 nodes: on group 2's routers, fewest routers (2) */
	topoml_placement_clear(&p);
	r.nnodes = 14;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 1);
	ck_assert_int_eq(_leaves(t, &p), 2);
	topoml_placement_clear(&p);
	/* 40 nodes: two groups, the ring crosses groups twice */
	r.nnodes = 40;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 2);
	ck_assert_int_eq(p.score.global_hops, 2);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * A 40-node job must span two groups; groups 0 to 3 have 20 free each
 * (12 busy), groups 4 to 7 none.  Job 5 holds 12 nodes of group 0 and
 * 12 of group 1 (a multi-group job), jobs 6 and 7 12 of group 2 and 3.
 * Blind to owners the tight pick takes groups 0 and 1, whose global
 * links job 5's ring crosses too; with owners, groups 2 and 3.
 */
START_TEST(df_multi_group_avoids_shared_groups)
{
	topoml_topo_t *t = _dfly();
	hwloc_bitmap_t a = _all(t);
	uint32_t *owner = calloc(t->nnodes, sizeof(uint32_t));
	struct topoml_placement p;
	char why[256];
	int in[8] = { 0 };

	ck_assert_ptr_nonnull(owner);
	for (int g = 0; g < 8; g++)
		for (int v = 32 * g; v < 32 * g + (g < 4 ? 12 : 32); v++) {
			hwloc_bitmap_clr(a, v);
			owner[v] = g < 2 ? 5 : g < 4 ? 4 + g : 8;
		}
	struct topoml_place_req r = { .nnodes = 40, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 2);
	for (int i = 0; i < p.n; i++)
		in[t->nodes[p.nodes[i]].group]++;
	ck_assert_int_eq(in[0], 20);
	ck_assert_int_eq(in[1], 20);
	topoml_placement_clear(&p);
	r.owner = owner;
	memset(in, 0, sizeof(in));
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 2);
	for (int i = 0; i < p.n; i++)
		in[t->nodes[p.nodes[i]].group]++;
	ck_assert_int_eq(in[2], 20);
	ck_assert_int_eq(in[3], 20);
	topoml_placement_clear(&p);
	free(owner);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * A 40-node job must span two groups.  Groups 0 and 1 have 20 free
 * nodes each, 5 on each router (3 of 8 busy); groups 2 and 3 are free.
 * The tightest groups, 0 and 1, take 8 routers (a ring through 8 router
 * fragments); the fullest, 2 and 3, take 4 whole routers and 8 nodes of
 * a fifth: 5 routers, as few groups.
 */
START_TEST(df_multi_group_fewest_routers)
{
	topoml_topo_t *t = _dfly();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];
	int in[8] = { 0 };

	for (int g = 4; g < 8; g++)
		hwloc_bitmap_clr_range(a, 32 * g, 32 * g + 31);
	for (int r = 0; r < 8; r++)	/* routers of groups 0 and 1 */
		hwloc_bitmap_clr_range(a, 8 * r, 8 * r + 2);
	struct topoml_place_req q = { .nnodes = 40, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &q, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 2);
	ck_assert_int_eq(_leaves(t, &p), 5);
	for (int i = 0; i < p.n; i++)
		in[t->nodes[p.nodes[i]].group]++;
	ck_assert_int_eq(in[2] + in[3], 40);
	topoml_placement_clear(&p);
	/*
	 * Job 5 now holds 2 nodes of group 2 and 2 of group 6, job 6 2 of
	 * group 5 (groups 5 and 6 otherwise free): the fullest groups
	 * without job 5, 3 and 5 (32 + 8: 4 + 1 routers, 5 as before),
	 * not 2.
	 */
	uint32_t *owner = calloc(t->nnodes, sizeof(uint32_t));

	ck_assert_ptr_nonnull(owner);
	hwloc_bitmap_set_range(a, 32 * 5, 32 * 7 - 1);
	for (int v = 0; v < 2; v++) {
		hwloc_bitmap_clr(a, 64 + v);
		hwloc_bitmap_clr(a, 192 + v);
		hwloc_bitmap_clr(a, 160 + v);
		owner[64 + v] = owner[192 + v] = 5;
		owner[160 + v] = 6;
	}
	q.owner = owner;
	memset(in, 0, sizeof(in));
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &q, &p, why), 0);
	for (int i = 0; i < p.n; i++)
		in[t->nodes[p.nodes[i]].group]++;
	ck_assert_int_eq(_groups(t, &p), 2);
	ck_assert_int_eq(in[2], 0);
	ck_assert_int_eq(in[6], 0);
	ck_assert_int_eq(_leaves(t, &p), 5);
	topoml_placement_clear(&p);
	free(owner);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * A 40-node job must span three groups: groups 0 to 2 have 18 free
 * nodes each, their routers 8, 8, 1 and 1 free (7 of routers 2 and 3
 * busy), the other groups none.  Group by group the shares are 18, 18
 * and 4: 4 + 4 + 1 = 9 routers.  Chosen over the three groups at once:
 * 5 whole routers, 4 fewer (a ring hop each), still three groups.
 * Then groups 0 and 1 have 24 free, routers 8, 8, 7 and 1, group 2
 * none: a 38-node job takes 6 routers group by group (24 + 14), 5 over
 * both groups; 1 router fewer leaves a fragment for too little, so
 * group by group.  A 30-node job, which one (32-node) group could hold,
 * takes group by group too: 24 (the group left full) and 6, 5 routers.
 */
START_TEST(df_multi_group_routers_over_the_set)
{
	topoml_topo_t *t = _dfly();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];
	int in[8] = { 0 };

	hwloc_bitmap_clr_range(a, 96, t->nnodes - 1);
	for (int g = 0; g < 3; g++)
		hwloc_bitmap_clr_range(a, 32 * g + 17, 32 * g + 23);
	for (int g = 0; g < 3; g++)
		hwloc_bitmap_clr_range(a, 32 * g + 25, 32 * g + 31);
	struct topoml_place_req q = { .nnodes = 40, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &q, &p, why), 0);
	ck_assert_int_eq(p.n, 40);
	ck_assert_int_eq(_groups(t, &p), 3);
	ck_assert_int_eq(_leaves(t, &p), 5);
	/* ring: 2 x 40 + 5 routers + 2 x 3 groups */
	ck_assert(p.score.ring_cost == 2 * 40 + 5 + 2 * 3);
	topoml_placement_clear(&p);

	hwloc_bitmap_zero(a);
	for (int g = 0; g < 2; g++) {
		hwloc_bitmap_set_range(a, 32 * g, 32 * g + 22);
		hwloc_bitmap_set(a, 32 * g + 24);
	}
	q.nnodes = 38;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &q, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 2);
	ck_assert_int_eq(_leaves(t, &p), 6);
	for (int i = 0; i < p.n; i++)
		in[t->nodes[p.nodes[i]].group]++;
	ck_assert(in[0] == 24 || in[1] == 24);
	topoml_placement_clear(&p);
	q.nnodes = 30;
	memset(in, 0, sizeof(in));
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &q, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 2);
	ck_assert_int_eq(_leaves(t, &p), 5);
	for (int i = 0; i < p.n; i++)
		in[t->nodes[p.nodes[i]].group]++;
	ck_assert(in[0] == 24 || in[1] == 24);
	ck_assert_int_eq(in[0] + in[1], 30);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(df_alltoall_spread_is_a_site_choice)
{
	topoml_topo_t *t = _dfly();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];
	struct topoml_place_req r = { .nnodes = 16, .avail = a,
				      .hint = TOPOML_HINT_ALLTOALL };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 1);
	topoml_placement_clear(&p);
	r.df_spread_alltoall = true;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 8);
	ck_assert_int_eq(p.n, 16);
	topoml_placement_clear(&p);
	/* the site choice does not change allreduce jobs */
	r.hint = TOPOML_HINT_ALLREDUCE;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(_groups(t, &p), 1);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/* ---- torus engine ---------------------------------------------------- */

START_TEST(torus_cube_box_and_hamiltonian_ring)
{
	topoml_topo_t *t = topoml_gen_torus("t", 8, 8, 8, true);
	hwloc_bitmap_t a;
	struct topoml_placement p;
	char why[256];

	ck_assert_ptr_nonnull(t);
	a = _all(t);
	struct topoml_place_req r = { .nnodes = 64, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	/* a 4x4x4 box: bounding box volume 64, one hop per ring step */
	ck_assert_int_eq(p.score.span, 64);
	ck_assert_int_eq(p.score.span_lower_bound, 64);
	ck_assert_double_eq(p.score.ring_cost, 64);
	for (int i = 0; i < p.n; i++)
		ck_assert_int_eq(topoml_hops(t, p.nodes[i],
					     p.nodes[(i + 1) % p.n]), 1);
	topoml_placement_clear(&p);
	/* x = 0..1 busy (128 nodes): an 8-node 2x2x2 box elsewhere */
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].coord[0] < 2)
			hwloc_bitmap_clr(a, i);
	r.nnodes = 8;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.score.span, 8);
	ck_assert_double_eq(p.score.ring_cost, 8);
	for (int i = 0; i < p.n; i++)
		ck_assert(hwloc_bitmap_isset(a, p.nodes[i]));
	topoml_placement_clear(&p);
	/* the ring of a flat 1x2x4 box closes too: 8 steps of one hop */
	{
		int flat[8], k = 0;
		struct topoml_placement q = { .n = 8, .nodes = flat };

		for (int z = 4; z >= 1; z--)
			for (int y = 0; y < 2; y++)
				flat[k++] = 5 + 8 * (y + 8 * z);
		topoml_ring_order(t, flat, 8);
		topoml_score(t, NULL, &q);
		ck_assert_double_eq(q.score.ring_cost, 8);
	}
	/* 7 nodes (prime): a 1x1x7 line is the smallest box */
	r.nnodes = 7;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.score.span, 7);
	ck_assert_int_eq(p.score.span_lower_bound, 7);
	/* bipartite 8-rings, odd job: the ring needs n + 1 */
	ck_assert_double_eq(p.score.ring_lower_bound, 8);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * The ring's 2-opt as its comment says, a pair at a time: the first move
 * that shortens the ring in a window of 64 positions, until none does or
 * 2^17 tests (and half a reversal's length each) are spent.
 */
static void _two_opt_ref(const topoml_topo_t *t, int *v, int n)
{
	long budget = 1L << 17;
	bool better = true;

	while (better && budget > 0) {
		better = false;
		for (int i = 0; i < n - 1 && budget > 0; i++) {
			int end = n - i > 64 ? i + 64 : n;

			for (int j = i + 2; j < end && budget > 0; j++) {
				int b = v[(j + 1) % n];
				int g = topoml_hops(t, v[i], v[i + 1]) +
					topoml_hops(t, v[j], b) -
					topoml_hops(t, v[i], v[j]) -
					topoml_hops(t, v[i + 1], b);

				budget--;
				if (g <= 0 || b == v[i])
					continue;
				budget -= (j - i) / 2;
				for (int l = i + 1, r = j; l < r; l++, r--) {
					int x = v[l];

					v[l] = v[r];
					v[r] = x;
				}
				better = true;
			}
		}
	}
}

/* The 2-opt's shortcuts (tests that cannot gain, windows no move changed)
 * make the same moves as testing every pair: rings of holey boxes on a
 * torus and a mesh, from a random order (the budget runs out) and from
 * the snake's. */
START_TEST(ring_two_opt_same_moves)
{
	/* sides, wrap, and the box the nodes are drawn from (origin, sides);
	 * odd rings: a jump of two hops can gain where an edge is one */
	static const struct {
		int d[3];
		bool wrap;
		int o[3], s[3];
	} topo[] = {
		{ { 14, 12, 11 }, true, { 3, 2, 1 }, { 10, 9, 8 } },
		{ { 14, 12, 11 }, false, { 3, 2, 1 }, { 10, 9, 8 } },
		{ { 5, 7, 3 }, true, { 0, 0, 0 }, { 5, 7, 3 } },
	};
	static const int sizes[] = { 4, 9, 40, 90, 150, 600 };
	unsigned seed = 7;

	for (unsigned w = 0; w < sizeof(topo) / sizeof(topo[0]); w++) {
		topoml_topo_t *t = topoml_gen_torus("t", topo[w].d[0],
						    topo[w].d[1], topo[w].d[2],
						    topo[w].wrap);
		int vol = topo[w].s[0] * topo[w].s[1] * topo[w].s[2];

		ck_assert_ptr_nonnull(t);
		for (unsigned k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
			int n = 0, *a = malloc(t->nnodes * sizeof(int));
			int *b = malloc(t->nnodes * sizeof(int));

			ck_assert(a && b);
			/* about the size's share of the box, shuffled */
			for (int v = 0; v < t->nnodes && n < sizes[k]; v++) {
				const int *c = t->nodes[v].coord;
				bool in = true;

				for (int d = 0; d < 3; d++)
					in = in && c[d] >= topo[w].o[d] &&
					     c[d] < topo[w].o[d] + topo[w].s[d];
				seed = seed * 1103515245 + 12345;
				if (in && (int)((seed >> 16) % vol) < sizes[k])
					a[n++] = v;
			}
			for (int i = n - 1; i > 0; i--) {
				int j, x = a[i];

				seed = seed * 1103515245 + 12345;
				j = (int)((seed >> 16) % (i + 1));
				a[i] = a[j];
				a[j] = x;
			}
			for (int pass = 0; pass < 2; pass++) {
				/* then the snake's order, 2-opt after */
				if (pass)
					topoml_ring_order(t, a, n);
				memcpy(b, a, n * sizeof(int));
				topoml__ring_two_opt(t, a, n);
				_two_opt_ref(t, b, n);
				for (int i = 0; i < n; i++)
					ck_assert_int_eq(a[i], b[i]);
			}
			free(a);
			free(b);
		}
		topoml_free(t);
	}
}
END_TEST

START_TEST(torus_boxes_avoid_other_jobs_boxes)
{
	topoml_topo_t *t = topoml_gen_torus("t", 8, 8, 8, true);
	hwloc_bitmap_t a;
	uint32_t *owner;
	struct topoml_placement p;
	char why[256];
	int c0 = 0, c1 = 3 + 8 * (3 + 8 * 3);

	ck_assert_ptr_nonnull(t);
	a = _all(t);
	owner = calloc(t->nnodes, sizeof(uint32_t));
	/* job 9 holds (0,0,0) and (3,3,3): no box, its bounding box is
	 * [0,3]^3; a box placed in there would share its links */
	owner[c0] = owner[c1] = 9;
	hwloc_bitmap_clr(a, c0);
	hwloc_bitmap_clr(a, c1);
	struct topoml_place_req r = { .nnodes = 8, .avail = a,
				      .owner = owner };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++) {
		const int *c = t->nodes[p.nodes[i]].coord;

		ck_assert(c[0] > 3 || c[1] > 3 || c[2] > 3);
	}
	topoml_placement_clear(&p);
	/* blind to owners: a box on the 2x2x2 grid (its buddies stay whole)
	 * inside the one aligned 4x4x4 block already in use, [0,3]^3, so
	 * that the other seven stay whole (buddy best fit) */
	r.owner = NULL;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	{
		bool inside = true;
		int lo[3] = { 8, 8, 8 };

		for (int i = 0; i < p.n; i++) {
			const int *c = t->nodes[p.nodes[i]].coord;

			inside &= c[0] <= 3 && c[1] <= 3 && c[2] <= 3;
			for (int d = 0; d < 3; d++)
				lo[d] = c[d] < lo[d] ? c[d] : lo[d];
		}
		ck_assert(inside);
		ck_assert_int_eq(p.score.span, 8);
		for (int d = 0; d < 3; d++)
			ck_assert_int_eq(lo[d] % 2, 0);
	}
	topoml_placement_clear(&p);
	free(owner);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * 4x4x4: the even cells (x + y + z) are busy, so no box of 8 is free now
 * (every box of two cells or more holds both kinds).  Those of the 2x2x2
 * box at (2,2,2) free at 300, those at (0,0,0) at 500, the rest never:
 * the first box frees at 300, and placed on the nodes free then, the
 * engine takes it.
 */
START_TEST(torus_box_free_by_first_box)
{
	topoml_topo_t *t = topoml_gen_torus("t", 4, 4, 4, true);
	int64_t *at;
	hwloc_bitmap_t all, then;
	struct topoml_placement p;
	char why[256];

	ck_assert_ptr_nonnull(t);
	all = _all(t);
	then = hwloc_bitmap_alloc();
	at = calloc(t->nnodes, sizeof(*at));
	for (int v = 0; v < t->nnodes; v++) {
		const int *c = t->nodes[v].coord;
		bool lo = c[0] < 2 && c[1] < 2 && c[2] < 2;
		bool hi = c[0] >= 2 && c[1] >= 2 && c[2] >= 2;

		if ((c[0] + c[1] + c[2]) % 2)
			continue;
		at[v] = hi ? 300 : lo ? 500 : INT64_MAX;
	}
	ck_assert_int_eq(topoml_torus_box_free_by(t, all, at, 8, then), 300);
	ck_assert_int_eq(hwloc_bitmap_weight(then), 32 + 4);
	struct topoml_place_req r = { .nnodes = 8, .avail = then };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++)
		for (int d = 0; d < 3; d++)
			ck_assert_int_ge(t->nodes[p.nodes[i]].coord[d], 2);
	topoml_placement_clear(&p);
	/* without (2,2,2)'s jobs in the candidates: (0,0,0)'s box at 500 */
	for (int v = 0; v < t->nnodes; v++)
		if (at[v] == 300)
			hwloc_bitmap_clr(all, v);
	ck_assert_int_eq(topoml_torus_box_free_by(t, all, at, 8, then), 500);
	/* never: no box frees; 7 nodes: no box of 7 on 4x4x4 */
	for (int v = 0; v < t->nnodes; v++)
		if (at[v] == 500)
			at[v] = INT64_MAX;
	ck_assert_int_eq(topoml_torus_box_free_by(t, all, at, 8, then), -1);
	ck_assert_int_eq(topoml_torus_box_free_by(t, all, at, 7, then), -1);
	/* all free: now */
	memset(at, 0, t->nnodes * sizeof(*at));
	ck_assert_int_eq(topoml_torus_box_free_by(t, all, at, 8, then), 0);
	free(at);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(then);
	topoml_free(t);
}
END_TEST

/* Is the box of sides s at origin o all in fr (by position)? */
static bool _brute_in(const topoml_topo_t *t, const char *fr,
		      const int o[3], const int s[3])
{
	const int *d = t->dims;

	for (int k = 0; k < s[0] * s[1] * s[2]; k++) {
		int x = (o[0] + k % s[0]) % d[0];
		int y = (o[1] + k / s[0] % s[1]) % d[1];
		int z = (o[2] + k / (s[0] * s[1])) % d[2];

		if (!fr[x + d[0] * (y + d[1] * z)])
			return false;
	}
	return true;
}

/* The brute force: is some box of n cells all in fr? */
static bool _brute_box(const topoml_topo_t *t, const char *fr, int n)
{
	const int *d = t->dims;
	int s[3], lim[3], o[3];

	for (s[0] = 1; s[0] <= d[0]; s[0]++)
	for (s[1] = 1; s[1] <= d[1]; s[1]++)
	for (s[2] = 1; s[2] <= d[2]; s[2]++) {
		if (s[0] * s[1] * s[2] != n)
			continue;
		for (int k = 0; k < 3; k++)
			lim[k] = t->wrap[k] && d[k] > 1 ?
				 (s[k] >= d[k] ? 1 : d[k]) : d[k] - s[k] + 1;
		for (o[2] = 0; o[2] < lim[2]; o[2]++)
		for (o[1] = 0; o[1] < lim[1]; o[1]++)
		for (o[0] = 0; o[0] < lim[0]; o[0]++)
			if (_brute_in(t, fr, o, s))
				return true;
	}
	return false;
}

/* fr (by position): the nodes of nodes free by T. */
static void _free_by(const topoml_topo_t *t, hwloc_const_bitmap_t nodes,
		     const int64_t *at, int64_t T, char *fr)
{
	for (int v = 0; v < t->nnodes; v++) {
		const int *c = t->nodes[v].coord;

		fr[c[0] + t->dims[0] * (c[1] + t->dims[1] * c[2])] =
			hwloc_bitmap_isset(nodes, v) && at[v] <= T;
	}
}

/* Against the brute force at every end time, on random tori and meshes,
 * random end times and a random subset of candidate nodes. */
START_TEST(torus_box_free_by_brute_force)
{
	static const int dims[][4] = {
		{ 4, 4, 4, 1 }, { 5, 4, 3, 1 }, { 6, 3, 2, 0 }, { 4, 4, 4, 0 },
		{ 7, 1, 1, 1 }, { 3, 5, 2, 1 },
	};
	unsigned seed = 12345;

	for (unsigned di = 0; di < sizeof(dims) / sizeof(dims[0]); di++) {
		topoml_topo_t *t = topoml_gen_torus("t", dims[di][0],
						    dims[di][1], dims[di][2],
						    dims[di][3]);
		int64_t *at = calloc(t->nnodes, sizeof(*at));
		char *fr = calloc(t->nnodes, 1);
		hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
		hwloc_bitmap_t then = hwloc_bitmap_alloc();

		ck_assert_ptr_nonnull(t);
		for (int round = 0; round < 40; round++) {
			for (int v = 0; v < t->nnodes; v++) {
				unsigned r = (seed = seed * 1103515245 + 12345)
					     >> 16;

				at[v] = r % 4 == 0 ? 0 : r % 9 == 1 ?
					INT64_MAX : (int64_t)(r % 13);
				if (r % 11)
					hwloc_bitmap_set(nodes, v);
				else
					hwloc_bitmap_clr(nodes, v);
			}
			for (int n = 1; n <= 12; n++) {
				int64_t want = -1, got;

				for (int64_t T = 0; T <= 13 && want < 0; T++) {
					_free_by(t, nodes, at, T, fr);
					if (_brute_box(t, fr, n))
						want = T;
				}
				got = topoml_torus_box_free_by(t, nodes, at, n,
							       then);
				ck_assert_msg(got == want,
					      "%dx%dx%d wrap %d n %d: %lld, "
					      "want %lld", t->dims[0],
					      t->dims[1], t->dims[2],
					      dims[di][3], n, (long long)got,
					      (long long)want);
				if (got < 0)
					continue;
				for (int v = 0; v < t->nnodes; v++)
					ck_assert_int_eq(
						hwloc_bitmap_isset(then, v),
						hwloc_bitmap_isset(nodes, v) &&
						at[v] <= got);
			}
		}
		free(at);
		free(fr);
		hwloc_bitmap_free(nodes);
		hwloc_bitmap_free(then);
		topoml_free(t);
	}
}
END_TEST

START_TEST(torus_size_without_box_follows_hilbert)
{
	topoml_topo_t *t = topoml_gen_torus("t", 4, 4, 4, true);
	hwloc_bitmap_t a;
	struct topoml_placement p;
	char why[256];

	ck_assert_ptr_nonnull(t);
	a = _all(t);
	/* no a x b x c = 7 fits in 4x4x4: the first 7 nodes of Slurm's
	 * Hilbert curve, inside the 2x2x2 octant at the origin */
	struct topoml_place_req r = { .nnodes = 7, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.n, 7);
	for (int i = 0; i < p.n; i++)
		for (int d = 0; d < 3; d++)
			ck_assert_int_lt(t->nodes[p.nodes[i]].coord[d], 2);
	ck_assert_int_eq(p.score.span, 8);
	topoml_placement_clear(&p);
	/* the next attempt is another placement */
	r.attempt = 1;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.n, 7);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * A size with no box takes the end of a free Hilbert run whose nodes have
 * the smallest box, not the run's start as Slurm does: with the curve's
 * second node busy, the start of the run 2..63 is 2..8, across two of
 * the curve's octants (a box of 12 nodes at least); its end 57..63 is
 * inside the last octant, a box of 8.
 */
START_TEST(torus_size_without_box_takes_run_end)
{
	topoml_topo_t *t = topoml_gen_torus("t", 4, 4, 4, true);
	hwloc_bitmap_t a, last;
	struct topoml_placement p;
	char why[256];
	int curve[64];

	ck_assert_ptr_nonnull(t);
	a = _all(t);
	last = hwloc_bitmap_alloc();
	/* the curve's order: slurm-hilbert's placement of every node */
	struct topoml_place_req r = { .nnodes = 64, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_HILBERT, &r, &p, why),
			 0);
	ck_assert_int_eq(p.n, 64);
	memcpy(curve, p.nodes, sizeof(curve));
	topoml_placement_clear(&p);
	hwloc_bitmap_clr(a, curve[1]);
	for (int i = 57; i < 64; i++)
		hwloc_bitmap_set(last, curve[i]);
	r.nnodes = 7;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.n, 7);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++)
		ck_assert(hwloc_bitmap_isset(last, p.nodes[i]));
	topoml_placement_clear(&p);
	/* Slurm's own: the run's start, a larger box */
	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_HILBERT, &r, &p, why),
			 0);
	ck_assert_int_eq(p.nodes[0], curve[2]);
	ck_assert_int_gt(p.score.span, 8);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(last);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * A size with no box, and no run of the curve to take: on 4x4x4 with only
 * the planes x = 1 and x = 3 free (the curve crosses x at every other
 * step), 7 nodes take a free box of 8 in one plane (1x2x4: every node of
 * it free) less one node, ring along the box's cycle: six steps of one
 * hop and one of two, over the node left out.  Slurm's curve spreads them
 * over both planes (a box of 27, a ring of more than 7 x 1.25 hops: the
 * spread run the near box replaces).
 */
START_TEST(torus_size_without_box_takes_near_box)
{
	topoml_topo_t *t = topoml_gen_torus("t", 4, 4, 4, true);
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	struct topoml_placement p;
	char why[256];
	int hops = 0, twos = 0;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].coord[0] & 1)
			hwloc_bitmap_set(a, i);
	struct topoml_place_req r = { .nnodes = 7, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.n, 7);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++) {
		int h = topoml_hops(t, p.nodes[i], p.nodes[(i + 1) % p.n]);

		ck_assert(hwloc_bitmap_isset(a, p.nodes[i]));
		ck_assert_int_eq(t->nodes[p.nodes[i]].coord[0],
				 t->nodes[p.nodes[0]].coord[0]);
		ck_assert_int_le(h, 2);
		hops += h;
		twos += h == 2;
	}
	ck_assert_int_eq(hops, 8);
	ck_assert_int_eq(twos, 1);
	topoml_placement_clear(&p);
	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_HILBERT, &r, &p, why),
			 0);
	ck_assert_int_gt(p.score.span, 8);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(torus_wraps_and_falls_back)
{
	topoml_topo_t *t = topoml_gen_torus("t", 8, 1, 1, true);
	hwloc_bitmap_t a;
	struct topoml_placement p;
	char why[256];

	ck_assert_ptr_nonnull(t);
	a = hwloc_bitmap_alloc();
	/* free x = 6, 7, 0, 1: contiguous only through the wrap */
	hwloc_bitmap_set(a, 6);
	hwloc_bitmap_set(a, 7);
	hwloc_bitmap_set(a, 0);
	hwloc_bitmap_set(a, 1);
	hwloc_bitmap_set(a, 4);
	struct topoml_place_req r = { .nnodes = 4, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	_assert_set(&p, "0-1,6-7");
	ck_assert_int_eq(p.score.span, 4);
	topoml_placement_clear(&p);
	/* 5 nodes: no box, the compact fallback still places them */
	r.nnodes = 5;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_TOPOML, &r, &p, why), 0);
	ck_assert_int_eq(p.n, 5);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/* ---- cost model ------------------------------------------------------- */

START_TEST(cost_fat_tree_by_hand)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = _all(t);
	int nodes[4] = { 0, 1, 32, 33 };
	struct topoml_placement p = { .n = 4, .nodes = nodes };

	/* ring 0-1 (2) 1-32 (4: leaves 0, 1 share switch 0) 32-33 (2)
	 * 33-0 (4) = 12; the bound packs 4 nodes on a leaf: 8 */
	topoml_score(t, a, &p);
	ck_assert_double_eq(p.score.ring_cost, 12);
	ck_assert_double_eq(p.score.ring_lower_bound, 8);
	ck_assert_int_eq(p.score.span, 2);
	ck_assert_int_eq(p.score.span_lower_bound, 1);
	/* pairs: 2 in-leaf (2 hops) + 4 across (4 hops) = 20 / 6 */
	ck_assert_double_eq_tol(p.score.mean_pair_hops, 20.0 / 6, 1e-9);
	/* across the root: 0 and 256 (switches 0 and 1) cost 6 */
	nodes[2] = 256;
	nodes[3] = 257;
	topoml_score(t, a, &p);
	ck_assert_double_eq(p.score.ring_cost, 2 + 6 + 2 + 6);
	/* one node busy on every leaf: 31 free each; the largest job on
	 * its fewest leaves: 31 leaves of 31 > 30 * 32, i.e. 961 */
	for (int l = 0; l < 32; l++)
		hwloc_bitmap_clr(a, 32 * l + 31);
	p.n = 1;
	nodes[0] = 5;
	topoml_score(t, a, &p);
	ck_assert_int_eq(p.score.largest_free_after, 961);
	ck_assert_double_eq(p.score.ring_cost, 0);
	/* 100 nodes: 4 leaves, all under one level-1 switch:
	 * 2 * 100 + 2 * 4 = 208 */
	int many[100];
	struct topoml_placement q = { .n = 100, .nodes = many };

	for (int i = 0; i < 100; i++)
		many[i] = i;
	topoml_score(t, NULL, &q);
	ck_assert_double_eq(q.score.ring_lower_bound, 208);
	ck_assert_double_eq(q.score.ring_cost, 208);
	ck_assert_int_eq(q.score.span, 4);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/* Bounds on the free nodes: only 2 free nodes on each of leaves 0 and 1
 * (and nothing else free), a 4-node job cannot do better than 2 leaves
 * and ring 2 + 4 + 2 + 4 = 12, while the topology's bounds stay 1 and 8. */
START_TEST(cost_bounds_on_free_nodes)
{
	topoml_topo_t *t = _tree1024();
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	int nodes[4] = { 0, 1, 32, 33 };
	struct topoml_placement p = { .n = 4, .nodes = nodes };

	for (int i = 0; i < 4; i++)
		hwloc_bitmap_set(a, nodes[i]);
	topoml_score(t, a, &p);
	ck_assert_int_eq(p.score.span_lower_bound, 1);
	ck_assert_int_eq(p.score.span_lower_bound_free, 2);
	ck_assert_double_eq(p.score.ring_lower_bound, 8);
	ck_assert_double_eq(p.score.ring_lower_bound_free, 12);
	ck_assert_double_eq(p.score.ring_cost, 12);
	/* a third free node on leaf 0 does not change the bounds; a whole
	 * free leaf brings them back to the topology's */
	hwloc_bitmap_set(a, 2);
	topoml_score(t, a, &p);
	ck_assert_int_eq(p.score.span_lower_bound_free, 2);
	hwloc_bitmap_set_range(a, 64, 95);
	topoml_score(t, a, &p);
	ck_assert_int_eq(p.score.span_lower_bound_free, 1);
	ck_assert_double_eq(p.score.ring_lower_bound_free, 8);
	/* without avail the free bounds are the topology's */
	topoml_score(t, NULL, &p);
	ck_assert_int_eq(p.score.span_lower_bound_free, 1);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(cost_dragonfly_and_torus_by_hand)
{
	topoml_topo_t *t = _dfly();
	/* router 0: nodes 0-7, router 1: 8-15 (group 0), group 1: 32- */
	int nodes[3] = { 0, 1, 8 };
	struct topoml_placement p = { .n = 3, .nodes = nodes };

	topoml_score(t, NULL, &p);
	/* 0-1 same router 2, 1-8 same group 3, 8-0 3 */
	ck_assert_double_eq(p.score.ring_cost, 8);
	ck_assert_double_eq_tol(p.score.mean_pair_hops, 8.0 / 3, 1e-9);
	nodes[2] = 32;
	topoml_score(t, NULL, &p);
	/* 2 + 5 + 5, two global hops, 2 groups */
	ck_assert_double_eq(p.score.ring_cost, 12);
	ck_assert_int_eq(p.score.global_hops, 2);
	ck_assert_int_eq(p.score.span, 2);
	ck_assert_int_eq(p.score.span_lower_bound, 1);
	/* bound for 40 nodes: 5 routers, 2 groups: 80 + 5 + 4 */
	int many[40];
	struct topoml_placement q = { .n = 40, .nodes = many };

	for (int i = 0; i < 40; i++)
		many[i] = i;
	topoml_score(t, NULL, &q);
	ck_assert_double_eq(q.score.ring_lower_bound, 89);
	topoml_free(t);

	t = topoml_gen_torus("t", 8, 8, 8, true);
	ck_assert_ptr_nonnull(t);
	/* (0,0,0) and (7,0,0) are neighbours through the wrap */
	nodes[0] = 0;
	nodes[1] = 7;
	p.n = 2;
	topoml_score(t, NULL, &p);
	ck_assert_double_eq(p.score.ring_cost, 2);
	ck_assert_int_eq(p.score.span, 2);
	ck_assert_double_eq(p.score.mean_pair_hops, 1);
	/* fragmentation: one node taken from an empty 8x8x8 torus leaves
	 * a 7x8x8 free box at most */
	hwloc_bitmap_t a = _all(t);

	p.n = 1;
	topoml_score(t, a, &p);
	ck_assert_int_eq(p.score.largest_free_after, 448);
	/* a busy plane x = 3 and one more node at (6, 2, 5): x 4..7,0..2
	 * (7, wrapping) by the largest (y, z) rectangle missing (2, 5):
	 * 8 x 5, so 280; beats x 7..2 (4 x 8 x 8 = 256) */
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].coord[0] == 3)
			hwloc_bitmap_clr(a, i);
	nodes[0] = 6 + 8 * (2 + 8 * 5);
	topoml_score(t, a, &p);
	ck_assert_int_eq(p.score.largest_free_after, 7 * 8 * 5);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(ring_order_groups_leaves)
{
	topoml_topo_t *t = _tree1024();
	int nodes[8] = { 0, 300, 1, 301, 2, 302, 3, 303 };
	struct topoml_placement p = { .n = 8, .nodes = nodes };

	topoml_ring_order(t, nodes, 8);
	topoml_score(t, NULL, &p);
	/* two leaves under different level-1 switches: 6 in-leaf steps of
	 * 2 and 2 crossings of 6 */
	ck_assert_double_eq(p.score.ring_cost, 6 * 2 + 2 * 6);
	topoml_free(t);
}
END_TEST

/* ---- Slurm baselines, traced by hand through job_test.c --------------- */

START_TEST(slurm_tree_by_hand)
{
	topoml_topo_t *t = _tree16();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* leaf 0 has one free node (n4).  -N2: top switch is the root (last
	 * switch of the highest level with enough nodes); leaf 0 is the
	 * first candidate, leaf 1 fits (4 >= 2) where leaf 0 does not and
	 * replaces it, leaves 2 and 3 tie with leaf 1: nodes 4, 5. */
	hwloc_bitmap_clr_range(a, 0, 2);
	struct topoml_place_req r = { .nnodes = 2, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_TREE, &r, &p, why), 0);
	_assert_set(&p, "4-5");
	topoml_placement_clear(&p);
	/* -N5: no leaf fits; leaf 1 beats leaf 0 on count under the same
	 * parent; leaves 2, 3 lose at parent level (switch 1 has 8 >= 5,
	 * switch 0 has 5 >= 5: the smaller fit wins).  Leaf 1 gives 4,
	 * then distance: leaf 0 (2 hops) before leaves 2, 3 (4 hops). */
	r.nnodes = 5;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_TREE, &r, &p, why), 0);
	_assert_set(&p, "3-7");
	/* Slurm's rank order is its node list order */
	for (int i = 1; i < p.n; i++)
		ck_assert_int_lt(p.nodes[i - 1], p.nodes[i]);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(slurm_dragonfly_by_hand)
{
	topoml_topo_t *t = _tree16();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* -N5, n1-n3 busy: no leaf holds 5, the leaf with the most free
	 * nodes (leaf 1, first of the 4s) cannot either, so one node per
	 * leaf round robin: 3, 4, 8, 12, then 5. */
	hwloc_bitmap_clr_range(a, 0, 2);
	struct topoml_place_req r = { .nnodes = 5, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_DRAGONFLY, &r, &p,
				why), 0);
	_assert_set(&p, "3-5,8,12");
	topoml_placement_clear(&p);
	/* -N3 fits on leaf 1 */
	r.nnodes = 3;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_DRAGONFLY, &r, &p,
				why), 0);
	_assert_set(&p, "4-6");
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(slurm_weights_prefer_powered_up)
{
	topoml_topo_t *t = _tree16();
	hwloc_bitmap_t a = _all(t);
	uint64_t w[16];
	struct topoml_placement p;
	char why[256];

	/* n9, n10 are up (low weight), the rest powered down: -N2 takes
	 * the two low-weight nodes, as slurmctld does after a scancel */
	for (int i = 0; i < 16; i++)
		w[i] = (i == 8 || i == 9) ? 0 : 0x20000000000ULL;
	struct topoml_place_req r = { .nnodes = 2, .avail = a, .weight = w };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_TREE, &r, &p, why), 0);
	_assert_set(&p, "8-9");
	topoml_placement_clear(&p);
	ck_assert_int_eq(_place(t, TOPOML_POLICY_LINEAR, &r, &p, why), 0);
	_assert_set(&p, "8-9");
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/* The runs of a bitmap a word at a time are the runs a position walk
 * finds, across words' ends too; Slurm's choice over them is that of
 * _eval_nodes() walking the order itself. */
START_TEST(bit_runs_and_eval_runs_match_walk)
{
	static const int lens[] = { 1, 63, 64, 65, 128, 200, 1000 };
	const int bits = 8 * sizeof(unsigned long);
	unsigned seed = 11;

	for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (int dens = 0; dens <= 8; dens++) {
			int n = lens[l], nw = n / bits + 1, nr, k = 0;
			unsigned long *w = calloc(nw, sizeof(*w));
			int *run = malloc((n / 2 + 2) * 2 * sizeof(int));

			ck_assert(w && run);
			/* dens / 8 of the bits set; bits past n set too */
			for (int b = 0; b < nw * bits; b++) {
				seed = seed * 1103515245 + 12345;
				if (b >= n || (int)((seed >> 16) % 8) < dens)
					w[b / bits] |= 1UL << (b % bits);
			}
			nr = topoml__bit_runs(w, n, run);
			for (int b = 0; b < n; b++) {
				bool on = (w[b / bits] >> (b % bits)) & 1;
				bool was = b && ((w[(b - 1) / bits] >>
						  ((b - 1) % bits)) & 1);

				if (on && !was)
					ck_assert_int_eq(run[2 * k], b);
				if (on && (b == n - 1 ||
					   !((w[(b + 1) / bits] >>
					      ((b + 1) % bits)) & 1)))
					ck_assert_int_eq(run[2 * k++ + 1], b);
			}
			ck_assert_int_eq(nr, k);
			free(w);
			free(run);
		}
	/* Slurm's choice: by units along a shuffled order, and index order */
	topoml_topo_t *t = topoml_gen_torus("t", 8, 8, 8, true);
	int nn = t->nnodes, nw = nn / bits + 1;
	uint32_t *cpus = malloc(nn * sizeof(*cpus));
	int *ord = malloc(nn * sizeof(int)), *ident = malloc(nn * sizeof(int));
	int *run = malloc((nn / 2 + 2) * 2 * sizeof(int));
	unsigned long *w = malloc(nw * sizeof(*w));
	hwloc_bitmap_t a = hwloc_bitmap_alloc();

	ck_assert(cpus && ord && ident && run && w && a);
	for (int round = 0; round < 20; round++) {
		for (int v = 0; v < nn; v++) {
			seed = seed * 1103515245 + 12345;
			cpus[v] = (seed >> 16) % 5;
			ord[v] = ident[v] = v;
			if ((seed >> 20) % 3)
				hwloc_bitmap_set(a, v);
			else
				hwloc_bitmap_clr(a, v);
		}
		for (int i = nn - 1; i > 0; i--) {
			int j, x = ord[i];

			seed = seed * 1103515245 + 12345;
			j = (int)((seed >> 16) % (i + 1));
			ord[i] = ord[j];
			ord[j] = x;
		}
		for (int o = 0; o < 2; o++) {
			const int *order = o ? ident : ord;
			long units = 1 + round * 37 % 700;
			int nodes = 1 + round * 13 % 90, m = 0, rn, ro;
			int *n1 = malloc((nn + 1) * sizeof(int));
			int *u1 = malloc((nn + 1) * sizeof(int));
			int *n2 = malloc((nn + 1) * sizeof(int));
			int *u2 = malloc((nn + 1) * sizeof(int));
			char *inmap = calloc(nn, 1);
			struct topoml_eval_nodes e1 = {
				.order = order, .nn = nn, .avail = a,
				.cpus = cpus, .rem_cpus = units,
				.rem_nodes = nodes, .inmap = inmap,
				.nodes = n1, .units = u1,
			}, e2 = e1;

			ck_assert(n1 && u1 && n2 && u2 && inmap);
			e2.order = o ? NULL : ord;
			e2.inmap = NULL;
			e2.nodes = n2;
			e2.units = u2;
			memset(w, 0, nw * sizeof(*w));
			for (int p = 0; p < nn; p++)
				if (hwloc_bitmap_isset(a, order[p]) &&
				    cpus[order[p]])
					w[p / bits] |= 1UL << (p % bits);
			ro = topoml__eval_nodes(&e1);
			rn = topoml__bit_runs(w, nn, run);
			rn = topoml__eval_runs(&e2, run, rn);
			ck_assert_int_eq(rn, ro);
			ck_assert_int_eq(e2.n, e1.n);
			for (int i = 0; i < e1.n; i++) {
				ck_assert_int_eq(n2[i], n1[i]);
				ck_assert_int_eq(u2[i], u1[i]);
				m += u1[i];
			}
			ck_assert(m > 0);
			free(n1);
			free(u1);
			free(n2);
			free(u2);
			free(inmap);
		}
	}
	free(cpus);
	free(ord);
	free(ident);
	free(run);
	free(w);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(linear_best_fit_by_hand)
{
	topoml_topo_t *t = _tree16();
	hwloc_bitmap_t a = _all(t);
	struct topoml_placement p;
	char why[256];

	/* runs: 0-1 (2), 4-8 (5), 10-15 (6) */
	hwloc_bitmap_clr_range(a, 2, 3);
	hwloc_bitmap_clr(a, 9);
	struct topoml_place_req r = { .nnodes = 4, .avail = a };

	/* the smallest run that holds 4 */
	ck_assert_int_eq(_place(t, TOPOML_POLICY_LINEAR, &r, &p, why), 0);
	_assert_set(&p, "4-7");
	topoml_placement_clear(&p);
	/* 8: no run holds it: the largest (6), then the smallest run that
	 * holds the other 2 */
	r.nnodes = 8;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_LINEAR, &r, &p, why), 0);
	_assert_set(&p, "0-1,10-15");
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(slurm_hilbert_curve)
{
	topoml_topo_t *t = topoml_gen_torus("t", 4, 4, 4, false);
	hwloc_bitmap_t a;
	struct topoml_placement p;
	char why[256];

	ck_assert_ptr_nonnull(t);
	a = _all(t);
	/* the whole 4x4x4 mesh in Hilbert order: every step one hop */
	struct topoml_place_req r = { .nnodes = 64, .avail = a };

	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_HILBERT, &r, &p, why),
			 0);
	ck_assert_int_eq(p.nodes[0], 0);
	for (int i = 1; i < p.n; i++)
		ck_assert_int_eq(topoml_hops(t, p.nodes[i - 1], p.nodes[i]), 1);
	topoml_placement_clear(&p);
	/* 8 nodes: the first Hilbert octant, the 2x2x2 cube at 0 */
	r.nnodes = 8;
	ck_assert_int_eq(_place(t, TOPOML_POLICY_SLURM_HILBERT, &r, &p, why),
			 0);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++)
		for (int d = 0; d < 3; d++)
			ck_assert_int_lt(t->nodes[p.nodes[i]].coord[d], 2);
	topoml_placement_clear(&p);
	/* linear on the same mesh: a slab of x-fastest nodes 0..7 */
	ck_assert_int_eq(_place(t, TOPOML_POLICY_LINEAR, &r, &p, why), 0);
	_assert_set(&p, "0-7");
	ck_assert_int_eq(p.score.span, 8);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

START_TEST(names_parse)
{
	enum topoml_hint h;
	enum topoml_policy p;

	for (int i = 0; i <= TOPOML_HINT_ISOLATE; i++) {
		ck_assert_int_eq(topoml_hint_parse(topoml_hint_name(i), &h), 0);
		ck_assert_int_eq(h, i);
	}
	for (int i = 0; i <= TOPOML_POLICY_LINEAR; i++) {
		ck_assert_int_eq(topoml_policy_parse(topoml_policy_name(i), &p),
				 0);
		ck_assert_int_eq(p, i);
	}
	ck_assert_int_eq(topoml_hint_parse("ALLTOALL", &h), 0);
	ck_assert_int_eq(h, TOPOML_HINT_ALLTOALL);
	ck_assert_int_eq(topoml_hint_parse("bogus", &h), -1);
	ck_assert_int_eq(topoml_policy_parse("bogus", &p), -1);
	ck_assert_int_eq(topoml_policy_parse(NULL, &p), -1);
	ck_assert_str_eq(topoml_policy_name(99), "unknown");
}
END_TEST

/* The hint in a job's SPANK environment, as select/topoml reads it. */
START_TEST(comm_job_env)
{
	ck_assert_str_eq(topoml_comm_job_env(
		"_SLURM_SPANK_OPTION_topoml_ml_comm=alltoall"), "alltoall");
	/* set by the plugin's spank_job_control_setenv() */
	ck_assert_str_eq(topoml_comm_job_env(
		"SPANK__SLURM_SPANK_OPTION_topoml_ml_comm=isolate"), "isolate");
	ck_assert_ptr_null(topoml_comm_job_env(
		"_SLURM_SPANK_OPTION_topoml_ml_commX=alltoall"));
	ck_assert_ptr_null(topoml_comm_job_env(
		"_SLURM_SPANK_OPTION_topoml_ml_gpu_bind=auto"));
	ck_assert_ptr_null(topoml_comm_job_env("TOPOML_COMM=alltoall"));
	ck_assert_ptr_null(topoml_comm_job_env(NULL));
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("place");
	TCase *tc = tcase_create("engine");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ft_tight_fit_half_busy_leaf);
	tcase_add_test(tc, ft_fewest_leaves_keep_empty_ones);
	tcase_add_test(tc, ft_lowest_common_switch);
	tcase_add_test(tc, ft_tightest_subtree);
	tcase_add_test(tc, ft_isolate_prefers_clean_leaf);
	tcase_add_test(tc, ft_multi_leaf_avoids_shared_uplinks);
	tcase_add_test(tc, ft_small_job_beside_the_oldest_job);
	tcase_add_test(tc, ft_required_and_switches);
	tcase_add_test(tc, cannot_place_reasons);
	tcase_add_test(tc, deterministic_and_attempts_distinct);
	tcase_add_test(tc, ranked_list_equals_attempts);
	tcase_add_test(tc, df_fewest_groups_then_routers);
	tcase_add_test(tc, df_alltoall_spread_is_a_site_choice);
	tcase_add_test(tc, df_multi_group_avoids_shared_groups);
	tcase_add_test(tc, df_multi_group_fewest_routers);
	tcase_add_test(tc, df_multi_group_routers_over_the_set);
	tcase_add_test(tc, torus_cube_box_and_hamiltonian_ring);
	tcase_add_test(tc, ring_two_opt_same_moves);
	tcase_add_test(tc, torus_boxes_avoid_other_jobs_boxes);
	tcase_add_test(tc, torus_box_free_by_first_box);
	tcase_add_test(tc, torus_box_free_by_brute_force);
	tcase_add_test(tc, torus_size_without_box_follows_hilbert);
	tcase_add_test(tc, torus_size_without_box_takes_run_end);
	tcase_add_test(tc, torus_size_without_box_takes_near_box);
	tcase_add_test(tc, torus_wraps_and_falls_back);
	suite_add_tcase(s, tc);
	tc = tcase_create("shared");
	tcase_add_test(tc, shared_one_cpu_jobs_pack);
	tcase_add_test(tc, shared_multi_node_fewest_leaves_partial_first);
	tcase_add_test(tc, shared_gpus_best_fit_and_attempts);
	tcase_add_test(tc, shared_fat_tree_lowest_switch);
	tcase_add_test(tc, shared_torus_shortcuts_same_placements);
	tcase_add_test(tc, shared_rows16_match_box_sums);
	tcase_add_test(tc, shared_dragonfly_one_group);
	tcase_add_test(tc, shared_torus_box_partly_used_nodes);
	tcase_add_test(tc, shared_torus_ring_over_line);
	tcase_add_test(tc, shared_torus_box_wraps_every_axis);
	tcase_add_test(tc, shared_torus_long_box);
	suite_add_tcase(s, tc);
	tc = tcase_create("cost");
	tcase_add_test(tc, cost_fat_tree_by_hand);
	tcase_add_test(tc, cost_bounds_on_free_nodes);
	tcase_add_test(tc, cost_dragonfly_and_torus_by_hand);
	tcase_add_test(tc, ring_order_groups_leaves);
	suite_add_tcase(s, tc);
	tc = tcase_create("baselines");
	tcase_add_test(tc, slurm_tree_by_hand);
	tcase_add_test(tc, slurm_dragonfly_by_hand);
	tcase_add_test(tc, slurm_weights_prefer_powered_up);
	tcase_add_test(tc, bit_runs_and_eval_runs_match_walk);
	tcase_add_test(tc, linear_best_fit_by_hand);
	tcase_add_test(tc, slurm_hilbert_curve);
	tcase_add_test(tc, names_parse);
	tcase_add_test(tc, comm_job_env);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	topoml_sim_register_baselines();
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
