/*
 * Slurm 26.05's topology/torus3d as topoml reads and reproduces it: the
 * torus3d section of topology.yaml (errors with FILE:LINE), the
 * slurm-torus3d policy (refusal, anchors, fragmentation cost, weights,
 * waiting), and topoml's torus boxes against it.  The answers are worked
 * out by hand in the comments from torus3d's rules
 * (topology/place/torus/place_torus3d.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topoml.h"
#include "sim.h"

static char *_write(const char *text)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/check_torus3d.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	return path;
}

/* topology.yaml(5)'s own example, with a tree before it and comments. */
static const char *yaml_4x4x2 =
	"---\n"
	"- topology: topo1   # a tree first: skipped\n"
	"  cluster_default: true\n"
	"  tree:\n"
	"    switches:\n"
	"      - switch: s1\n"
	"        nodes: node[01-02]\n"
	"- topology: topo5\n"
	"  cluster_default: false\n"
	"  torus3d:\n"
	"    toruses:\n"
	"      - name: pod1\n"
	"        dims:\n"
	"          x: 4\n"
	"          y: 4\n"
	"          z: 2\n"
	"        nodes: node[01-32]\n"
	"        placements:\n"
	"          - dims:\n"
	"              x: 2\n"
	"              y: 2\n"
	"              z: 2\n"
	"          - dims: {x: 2, y: 2, z: 1}\n"
	"          - dims:\n"
	"              x: 4\n"
	"              y: 4\n"
	"              z: 2\n";

static topoml_topo_t *_load(const char *text, struct topoml_torus3d **c)
{
	topoml_errors_t err = { 0 };
	char *p = _write(text);
	topoml_topo_t *t;

	*c = topoml_torus3d_load(p, &err);
	if (!*c)
		topoml_errors_print(&err, stderr);
	ck_assert_ptr_nonnull(*c);
	t = topoml_torus3d_topology(*c, &err);
	ck_assert_ptr_nonnull(t);
	unlink(p);
	return t;
}

static char *_place(const topoml_topo_t *t, enum topoml_policy pol, int n,
		    hwloc_const_bitmap_t avail, const uint64_t *w,
		    char *why)
{
	struct topoml_place_req r = { .nnodes = n, .avail = avail,
				      .weight = w };
	struct topoml_placement p = { 0 };
	char *s;

	if (topoml_place(t, pol, &r, &p, why, 256))
		return NULL;
	s = topoml_nodes_format(t, p.nodes, p.n);
	topoml_placement_clear(&p);
	return s;
}

static hwloc_bitmap_t _free_but(const topoml_topo_t *t, const char *busy)
{
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), b;

	hwloc_bitmap_set_range(a, 0, t->nnodes - 1);
	if (busy) {
		b = topoml_nodeset_parse(t, busy, NULL);
		ck_assert_ptr_nonnull(b);
		hwloc_bitmap_andnot(a, a, b);
		hwloc_bitmap_free(b);
	}
	return a;
}

/* Node list as a sorted host list, whatever the ring order. */
static char *_sorted(const topoml_topo_t *t, const char *hl)
{
	hwloc_bitmap_t s = topoml_nodeset_parse(t, hl, NULL);
	char *r = topoml_nodeset_format(t, s);

	hwloc_bitmap_free(s);
	return r;
}

START_TEST(yaml_reads_the_man_page_example)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(yaml_4x4x2, &c);

	ck_assert_int_eq(t->nnodes, 32);
	ck_assert_int_eq(c->dims[0], 4);
	ck_assert_int_eq(c->dims[2], 2);
	/* x fastest: node06 is cell 5 = (1,1,0), node17 = (0,0,1) */
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "node06")].coord[0], 1);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "node06")].coord[1], 1);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "node17")].coord[2], 1);
	/* sorted by size, listed order kept: 4, 8, 32 */
	ck_assert_int_eq(c->nshapes, 3);
	ck_assert_int_eq(c->shapes[0].size, 4);
	ck_assert_int_eq(c->shapes[1].size, 8);
	ck_assert_int_eq(c->shapes[2].size, 32);
	/* spacing defaults to the dims */
	ck_assert_int_eq(c->shapes[0].spacing[0], 2);
	ck_assert_int_eq(c->shapes[0].spacing[2], 1);
	ck_assert(topoml_torus3d_size_ok(c, 8));
	ck_assert(!topoml_torus3d_size_ok(c, 6));
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

static void _bad(const char *text, const char *want)
{
	topoml_errors_t err = { 0 };
	char *p = _write(text);
	struct topoml_torus3d *c = topoml_torus3d_load(p, &err);
	char line[128];
	bool found = false;

	ck_assert_ptr_null(c);
	ck_assert_int_ge(err.n, 1);
	snprintf(line, sizeof(line), "%s:%s", p, want);
	for (int i = 0; i < err.n; i++)
		found |= !strncmp(err.msg[i], line, strlen(line));
	if (!found)
		topoml_errors_print(&err, stderr);
	ck_assert_msg(found, "no error starting '%s'", line);
	topoml_errors_clear(&err);
	unlink(p);
}

START_TEST(yaml_errors_name_file_and_line)
{
	_bad("- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
	     "        dims: {x: 2, y: 2, z: 2}\n        nodes: n[1-7]\n",
	     "6: nodes: 7 nodes for 2x2x2");
	_bad("- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
	     "        dims: {x: 2, y: 2, z: 2}\n        nodes: n[1-8]\n"
	     "        placements:\n          - dims: {x: 3, y: 1, z: 1}\n",
	     "8: placement dims exceed");
	/* fuzz_torusyaml: the size of such a shape overflowed an int */
	_bad("- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
	     "        dims: {x: 2, y: 2, z: 2}\n        nodes: n[1-8]\n"
	     "        placements:\n"
	     "          - dims: {x: 65535, y: 65535, z: 65535}\n",
	     "8: placement dims exceed");
	_bad("- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
	     "        dims: {x: 2, y: 2, z: 0}\n        nodes: n[1-8]\n",
	     "5: dims.z: '0' is not a number in 1..65535");
	_bad("- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
	     "        dimz: {x: 2, y: 2, z: 2}\n",
	     "5: torus: unknown key 'dimz'");
	_bad("- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
	     "       dims: {x: 2, y: 2, z: 2}\n",
	     "5: ");
	_bad("- topology: t\n  tree:\n    switches: []\n", "3: flow");
	_bad("- topology: t\n  flat: true\n", "");
}
END_TEST

/* CPU seconds of this process (the test's fork). */
static double _cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* head, then n times fmt (with its index), as one string. */
static char *_repeat(const char *head, const char *fmt, int n)
{
	size_t cap = strlen(head) + (size_t)n * 64 + 1, len;
	char *s = malloc(cap);

	ck_assert_ptr_nonnull(s);
	len = (size_t)snprintf(s, cap, "%s", head);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, fmt, i);
	return s;
}

/* Found with fuzz_torusyaml's inputs made large: deep nesting overflowed
 * slurmctld's stack, long lists and maps were quadratic. */
START_TEST(yaml_deep_and_long_files)
{
	char *s = _repeat("", "- ", 200000);
	double t0;

	strcat(s, "x\n");
	_bad(s, "1: nested deeper than 64 levels");
	free(s);
	_bad("torus3d:\n  toruses:\n    - name: a\n      name: b\n"
	     "      dims: {x: 1, y: 1, z: 1}\n      nodes: n1\n"
	     "      name: c\n", "4: duplicate key 'name'");
	_bad("torus3d:\n  toruses:\n    - name: a\n      name: b\n"
	     "      dims: {x: 1, y: 1, z: 1}\n      nodes: n1\n"
	     "      name: c\n", "7: duplicate key 'name'");
	/* 50k keys (1.2e9 compares before), 100k list items */
	s = _repeat("torus3d:\n", "  k%d: 1\n", 50000);
	t0 = _cpu();
	_bad(s, "2: torus3d: 'toruses' needs");
	ck_assert_msg(_cpu() - t0 < 1.0, "50k keys: %.2f s", _cpu() - t0);
	free(s);
	s = _repeat("- topology: t\n  tree:\n    switches:\n",
		    "      - switch: s%d\n", 100000);
	t0 = _cpu();
	_bad(s, " no torus3d topology");
	ck_assert_msg(_cpu() - t0 < 1.0, "100k items: %.2f s", _cpu() - t0);
	free(s);
}
END_TEST

START_TEST(torus3d_refuses_sizes_without_a_shape)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(yaml_4x4x2, &c);
	hwloc_bitmap_t a = _free_but(t, NULL);
	char why[256], *s;

	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 6, a, NULL, why);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(why, "not available"));
	/* topoml places it all the same */
	s = _place(t, TOPOML_POLICY_TOPOML, 6, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	free(s);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

START_TEST(torus3d_anchors_frag_and_waiting)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(yaml_4x4x2, &c);
	hwloc_bitmap_t a = _free_but(t, NULL);
	char why[256], *s, *e;

	/*
	 * 2x2x1 anchors (spacing 2,2,1): x {0,2}, y {0,2}, z {0,1}, z
	 * fastest.  All free: the first, (0,0,0) = node[01-02,05-06].  Its
	 * frag cost against the 2x2x2 anchors: the one at (0,0,0) is touched
	 * and free: 1; every 2x2x1 anchor touches exactly one free 2x2x2
	 * anchor, so the first stays.
	 */
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 4, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "node[01-02,05-06]");
	free(s);
	free(e);
	/*
	 * node03 busy: the 2x2x2 anchor at (2,0,0) is no longer free.  The
	 * anchor (0,0,0) still touches one free 2x2x2 anchor (cost 1), the
	 * 2x2x1 anchor (2,0,1) = node[19-20,23-24] touches only (2,0,0):
	 * cost 0, the lowest; (2,0,0) itself holds node03.
	 */
	hwloc_bitmap_free(a);
	a = _free_but(t, "node03");
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 4, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "node[19-20,23-24]");
	free(s);
	free(e);
	/*
	 * One node busy in every 2x2x2 anchor: 16 nodes free, but no 2x2x2
	 * box on the anchor grid: torus3d waits.
	 */
	hwloc_bitmap_free(a);
	a = _free_but(t, "node[01,03,09,11]");
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 8, a, NULL, why);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(why, "No suitable topology unit"));
	/* topoml does not wait: a 2x2x2 box off the anchor grid, e.g. at
	 * z 0-1, x 1-2 would hold node02/03... any box of 8 free nodes */
	s = _place(t, TOPOML_POLICY_TOPOML, 8, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	free(s);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

START_TEST(torus3d_prefers_powered_up_nodes)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(yaml_4x4x2, &c);
	hwloc_bitmap_t a = _free_but(t, NULL), d;
	uint64_t *w = calloc(t->nnodes, sizeof(*w));
	char why[256], *s, *e;
	int v;

	/* every node powered down but the four of anchor (2,2,1) */
	d = topoml_nodeset_parse(t, "node[01-26,29-30]", NULL);
	hwloc_bitmap_foreach_begin(v, d)
		w[v] = 0x20000000000ULL;
	hwloc_bitmap_foreach_end();
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 4, a, w, why);
	ck_assert_ptr_nonnull(s);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "node[27-28,31-32]");
	free(s);
	free(e);
	free(w);
	hwloc_bitmap_free(d);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

/* Anchor grids that wrap: seed 3 spacing 2 on x of 4 gives x {3, 1}. */
START_TEST(torus3d_seed_and_wrapping_boxes)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(
		"- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
		"        dims: {x: 4, y: 1, z: 1}\n        nodes: n[0-3]\n"
		"        placements:\n"
		"          - dims: {x: 2, y: 1, z: 1}\n"
		"            anchor_seed: {x: 3, y: 0, z: 0}\n", &c);
	hwloc_bitmap_t a = _free_but(t, NULL);
	char why[256], *s, *e;

	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 2, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "n[0,3]");	/* the box at x=3 wraps to x=0 */
	free(s);
	free(e);
	hwloc_bitmap_free(a);
	a = _free_but(t, "n0");
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 2, a, NULL, why);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "n[1-2]");
	free(s);
	free(e);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

/*
 * topoml's boxes on a torus that torus3d could serve: whenever torus3d
 * finds a box, topoml finds an exact box too (it searches every origin,
 * not just the anchors), on a random sequence of jobs and ends.
 */
START_TEST(topoml_exact_box_whenever_torus3d_has_one)
{
	topoml_topo_t *t = topoml_gen_torus("c", 8, 8, 8, true);
	struct topoml_torus3d *c = topoml_torus3d_every_size(t);
	hwloc_bitmap_t a = _free_but(t, NULL);
	static const int sizes[] = { 8, 16, 32, 64, 4, 2, 12, 27, 48 };
	int owner[512] = { 0 }, njobs = 0, both = 0;
	char why[256];

	t->torus3d = c;
	srand(7);
	for (int step = 0; step < 300; step++) {
		int n = sizes[rand() % 9];
		struct topoml_place_req r = { .nnodes = n, .avail = a };
		struct topoml_placement p3 = { 0 }, pt = { 0 };
		int ok3, okt;

		if (rand() % 3 == 0 && njobs) {
			int j = 1 + rand() % njobs;

			for (int v = 0; v < 512; v++)
				if (owner[v] == j) {
					owner[v] = 0;
					hwloc_bitmap_set(a, v);
				}
			continue;
		}
		if (hwloc_bitmap_weight(a) < n)
			continue;
		ok3 = !topoml_place(t, TOPOML_POLICY_SLURM_TORUS3D, &r, &p3,
				    why, sizeof(why));
		okt = !topoml_place(t, TOPOML_POLICY_TOPOML, &r, &pt, why,
				    sizeof(why));
		ck_assert(okt);	/* never waits while nodes are free */
		if (ok3) {
			ck_assert_int_eq(p3.score.span, n);
			ck_assert_int_eq(pt.score.span, n);
			both++;
		}
		njobs++;
		for (int i = 0; i < pt.n; i++) {
			owner[pt.nodes[i]] = njobs;
			hwloc_bitmap_clr(a, pt.nodes[i]);
		}
		topoml_placement_clear(&p3);
		topoml_placement_clear(&pt);
	}
	ck_assert_int_ge(both, 50);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

/* An 8x8x4 pod: shapes of several sizes, orientations, seeds and
 * spacings. */
static const char *yaml_8x8x4 =
	"- topology: pod\n"
	"  cluster_default: true\n"
	"  torus3d:\n"
	"    toruses:\n"
	"      - name: pod1\n"
	"        dims: {x: 8, y: 8, z: 4}\n"
	"        nodes: node[1-256]\n"
	"        placements:\n"
	"          - dims: {x: 2, y: 1, z: 1}\n"
	"          - dims: {x: 2, y: 2, z: 1}\n"
	"            anchor_spacing: {x: 2, y: 2, z: 1}\n"
	"          - dims: {x: 1, y: 2, z: 2}\n"
	"          - dims: {x: 2, y: 2, z: 2}\n"
	"            anchor_seed: {x: 1, y: 0, z: 0}\n"
	"            anchor_spacing: {x: 2, y: 2, z: 2}\n"
	"          - dims: {x: 4, y: 2, z: 1}\n"
	"          - dims: {x: 4, y: 4, z: 2}\n"
	"            anchor_spacing: {x: 4, y: 4, z: 2}\n"
	"          - dims: {x: 8, y: 8, z: 1}\n";

/*
 * The tight fit of a box, worked out link by link: the links from a node
 * of set to a cell outside it that holds no free node (busy, no node, or
 * past a mesh edge; an axis of one cell is no ring).  For a box it is
 * the busy cells on its faces, the engine's one metric
 * (topoml__torus_contact), counted here without its prefix sums.
 */
static int _fit(const topoml_topo_t *t, hwloc_const_bitmap_t set,
		hwloc_const_bitmap_t avail)
{
	int n = 0, v;

	hwloc_bitmap_foreach_begin(v, set) {
		for (int d = 0; d < 3; d++)
			for (int st = -1; st <= 1; st += 2) {
				int c[3] = { t->nodes[v].coord[0],
					     t->nodes[v].coord[1],
					     t->nodes[v].coord[2] }, u;

				c[d] += st;
				if (c[d] < 0 || c[d] >= t->dims[d]) {
					if (!t->wrap[d] || t->dims[d] == 1) {
						n++;
						continue;
					}
					c[d] = (c[d] + t->dims[d]) %
					       t->dims[d];
				}
				u = t->coord_node[c[0] + t->dims[0] *
						  (c[1] + t->dims[1] * c[2])];
				n += u < 0 || (!hwloc_bitmap_isset(set, u) &&
					       !hwloc_bitmap_isset(avail, u));
			}
	} hwloc_bitmap_foreach_end();
	return n;
}

static hwloc_bitmap_t _set_of(const struct topoml_placement *p)
{
	hwloc_bitmap_t s = hwloc_bitmap_alloc();

	for (int i = 0; i < p->n; i++)
		hwloc_bitmap_set(s, p->nodes[i]);
	return s;
}

/*
 * The engine bound to torus3d (slurmctld runs topology/torus3d) and the
 * slurm-torus3d baseline search the same boxes, the listed shapes at
 * their anchors: on busy machines (fixed seed) the engine places exactly
 * when the baseline does, takes a listed box (the baseline, offered only
 * the engine's nodes, takes them all), and one that fits at least as
 * tightly as the baseline's (the one box search ranks by the fit, the
 * baseline by its fragmentation cost).
 */
START_TEST(topoml_bound_takes_torus3d_boxes)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(yaml_8x8x4, &c);
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	int placed = 0, tighter = 0;
	char why[256];

	ck_assert_int_eq(topoml_torus3d_bind(t, c, why, sizeof(why)), 0);
	srand(11);
	for (int step = 0; step < 400; step++) {
		int n = c->shapes[rand() % c->nshapes].size;
		int busy = rand() % 80;
		struct topoml_place_req r = { .nnodes = n, .avail = a };
		struct topoml_placement p3 = { 0 }, pt = { 0 }, pc = { 0 };
		hwloc_bitmap_t s3, st;
		int ok3, okt;

		/* busy in runs of 1 to 8 nodes, as jobs leave them */
		hwloc_bitmap_zero(a);
		for (int v = 0; v < t->nnodes;) {
			int len = 1 + rand() % 8;
			bool b = rand() % 100 < busy;

			for (int k = 0; k < len && v < t->nnodes; k++, v++)
				if (!b)
					hwloc_bitmap_set(a, v);
		}
		ok3 = !topoml_place(t, TOPOML_POLICY_SLURM_TORUS3D, &r, &p3,
				    why, sizeof(why));
		okt = !topoml_place(t, TOPOML_POLICY_TOPOML, &r, &pt, why,
				    sizeof(why));
		ck_assert_int_eq(okt, ok3);
		if (!ok3)
			continue;
		placed++;
		s3 = _set_of(&p3);
		st = _set_of(&pt);
		r.avail = st;
		ck_assert(!topoml_place(t, TOPOML_POLICY_SLURM_TORUS3D, &r,
					&pc, why, sizeof(why)));
		ck_assert_int_eq(pc.n, n);
		ck_assert_int_eq(pt.n, n);
		ck_assert_int_ge(_fit(t, st, a), _fit(t, s3, a));
		tighter += _fit(t, st, a) > _fit(t, s3, a);
		hwloc_bitmap_free(s3);
		hwloc_bitmap_free(st);
		topoml_placement_clear(&p3);
		topoml_placement_clear(&pt);
		topoml_placement_clear(&pc);
	}
	/* enough boxes, and the criterion tells the two apart */
	ck_assert_int_ge(placed, 100);
	ck_assert_int_ge(tighter, 10);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

/* A ring of six nodes and boxes of two: anchors every spacing cells from
 * seed. */
static const char *yaml_ring6 =
	"- topology: ring\n"
	"  torus3d:\n"
	"    toruses:\n"
	"      - name: r\n"
	"        dims: {x: 6, y: 1, z: 1}\n"
	"        nodes: node[1-6]\n"
	"        placements:\n"
	"          - dims: {x: 2, y: 1, z: 1}\n"
	"            anchor_seed: {x: %d, y: 0, z: 0}\n"
	"            anchor_spacing: {x: %d, y: 1, z: 1}\n";

static char *_ring6(int seed, int spacing, bool bind, const char *busy)
{
	char yaml[512], why[256], *s, *e;
	struct topoml_torus3d *c;
	topoml_topo_t *t;
	hwloc_bitmap_t a;

	snprintf(yaml, sizeof(yaml), yaml_ring6, seed, spacing);
	t = _load(yaml, &c);
	if (bind)
		ck_assert_int_eq(topoml_torus3d_bind(t, c, why, sizeof(why)),
				 0);
	a = _free_but(t, busy);
	s = _place(t, TOPOML_POLICY_TOPOML, 2, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	e = _sorted(t, s);
	free(s);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
	return e;
}

/*
 * The bound engine's one metric, by hand on the ring of six (node k at
 * x = k - 1; y and z of one cell add 4 to every box's fit alike):
 *   - node4 busy, anchors everywhere: boxes at x 0 and 5 have free
 *     cells on both sides (fit 0), those at x 1 (node[2-3]) and 4
 *     (node[5-6]) lean on node4 (fit 1): a box against a busy node
 *     beats one in the open, and of the two tied the first anchor wins;
 *     torus3d itself takes its first anchor, node[1-2];
 *   - node1 busy, anchors at x 1, 3, 5: x 1 (node[2-3]) leans on node1,
 *     x 3 (node[4-5]) is in the open, x 5 holds node1; the engine's own
 *     boxes (not bound) start on the box's own grid and take node[3-4],
 *     which is at no anchor.
 */
START_TEST(topoml_bound_fit_by_hand)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t;
	hwloc_bitmap_t a;
	char yaml[512], why[256], *s, *e;

	e = _ring6(0, 1, true, "node4");
	ck_assert_str_eq(e, "node[2-3]");
	free(e);
	/* the same boxes, torus3d's own choice */
	snprintf(yaml, sizeof(yaml), yaml_ring6, 0, 1);
	t = _load(yaml, &c);
	a = _free_but(t, "node4");
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 2, a, NULL, why);
	ck_assert_ptr_nonnull(s);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "node[1-2]");
	free(s);
	free(e);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);

	e = _ring6(1, 2, true, "node1");
	ck_assert_str_eq(e, "node[2-3]");
	free(e);
	e = _ring6(1, 2, false, "node1");
	ck_assert_str_eq(e, "node[3-4]");
	free(e);
}
END_TEST

/* Regions map parts of the torus; a box over an empty cell is no anchor. */
START_TEST(yaml_regions_and_unmapped_cells)
{
	struct topoml_torus3d *c;
	topoml_topo_t *t = _load(
		"- topology: t\n  torus3d:\n    toruses:\n      - name: a\n"
		"        dims: {x: 4, y: 1, z: 1}\n        regions:\n"
		"          - anchor: {x: 0, y: 0, z: 0}\n"
		"            dims: {x: 2, y: 1, z: 1}\n"
		"            nodes: r[1-2]\n"
		"          - anchor: {x: 3, y: 0, z: 0}\n"
		"            dims: {x: 1, y: 1, z: 1}\n"
		"            nodes: r4\n"
		"        placements:\n"
		"          - dims: {x: 2, y: 1, z: 1}\n"
		"            anchor_spacing: {x: 1, y: 1, z: 1}\n", &c);
	hwloc_bitmap_t a = _free_but(t, "r1");
	char why[256], *s, *e;

	ck_assert_int_eq(t->nnodes, 3);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "r4")].coord[0], 3);
	/* anchors x 0..3: (0,1) has r1 busy, (1,2) and (2,3) hold the empty
	 * cell x=2, (3,0) wraps to r4 + r1... r1 busy: no box left */
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 2, a, NULL, why);
	ck_assert_ptr_null(s);
	hwloc_bitmap_free(a);
	a = _free_but(t, NULL);
	/* all free: the first anchor with both cells mapped, x 0-1 */
	s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 2, a, NULL, why);
	e = _sorted(t, s);
	ck_assert_str_eq(e, "r[1-2]");
	free(s);
	free(e);
	hwloc_bitmap_free(a);
	topoml_free(t);
	topoml_torus3d_free(c);
}
END_TEST

START_TEST(torus_box_sizes)
{
	topoml_topo_t *t = topoml_gen_torus("c", 16, 16, 16, true);

	ck_assert(topoml_torus_box_size(t, 32));
	ck_assert(topoml_torus_box_size(t, 4096));
	ck_assert(topoml_torus_box_size(t, 15));	/* 15x1x1 */
	ck_assert(!topoml_torus_box_size(t, 17));	/* prime > 16 */
	ck_assert(!topoml_torus_box_size(t, 43));
	ck_assert(!topoml_torus_box_size(t, 4097));
	/* no admin's shapes: slurm-torus3d has a box of every size a box of
	 * the torus has, and refuses the others */
	{
		hwloc_bitmap_t a = _free_but(t, NULL);
		char why[256], *s;

		ck_assert_ptr_null(t->torus3d);
		s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 30, a, NULL, why);
		ck_assert_ptr_nonnull(s);	/* 2x3x5 */
		free(s);
		s = _place(t, TOPOML_POLICY_SLURM_TORUS3D, 17, a, NULL, why);
		ck_assert_ptr_null(s);
		ck_assert_ptr_nonnull(strstr(why, "not available"));
		hwloc_bitmap_free(a);
	}
	topoml_free(t);
}
END_TEST

static int _at(const topoml_topo_t *t, int x, int y, int z)
{
	for (int v = 0; v < t->nnodes; v++)
		if (t->nodes[v].coord[0] == x && t->nodes[v].coord[1] == y &&
		    t->nodes[v].coord[2] == z)
			return v;
	return -1;
}

/*
 * TorusBoxWaitSpan's test: a placement waits for a box only when it is
 * none and its wrap-aware bounding box holds more than factor x n nodes;
 * a size no box has never waits.
 */
START_TEST(torus_wants_box_by_span)
{
	topoml_topo_t *t = topoml_gen_torus("c", 16, 16, 16, true);
	int box[8], loose[8], wrap[8], far[43], k = 0;

	/* 2x2x2 across the wrap (x 15, 0): a box */
	for (int z = 0; z < 2; z++)
		for (int y = 0; y < 2; y++)
			for (int x = 0; x < 2; x++) {
				box[k] = _at(t, 4 + x, 4 + y, 4 + z);
				wrap[k++] = _at(t, (15 + x) % 16, y, z);
			}
	/* 8 of a 2x2x3 box (12 = 1.5 x 8): the 2x2x2 at z 0-1 with two
	 * corners moved to z 2 */
	memcpy(loose, box, sizeof(loose));
	loose[6] = _at(t, 4, 5, 6);
	loose[7] = _at(t, 5, 5, 6);
	ck_assert(!topoml_torus_wants_box(t, box, 8, 1));
	ck_assert(!topoml_torus_wants_box(t, wrap, 8, 1));
	ck_assert(topoml_torus_wants_box(t, loose, 8, 1));
	ck_assert(topoml_torus_wants_box(t, loose, 8, 0));	/* as 1 */
	ck_assert(topoml_torus_wants_box(t, loose, 8, 1.49));
	ck_assert(!topoml_torus_wants_box(t, loose, 8, 1.5));
	/* 43 has no box: never waits, however spread */
	for (int i = 0; i < 43; i++)
		far[i] = _at(t, (i * 5) % 16, (i * 3) % 16, i % 16);
	ck_assert(!topoml_torus_wants_box(t, far, 43, 1));
	topoml_free(t);
}
END_TEST

/*
 * topoml's exact boxes sit on their shape's own grid: on an empty 8^3
 * torus with (1,1,1) busy, a job of 8 gets a 2x2x2 box at even
 * coordinates (the tightest of those touches the busy node: x, y, z in
 * {0,1} or {2,3}), never one straddling the grid.
 */
START_TEST(topoml_boxes_on_their_grid)
{
	topoml_topo_t *t = topoml_gen_torus("c", 8, 8, 8, true);
	hwloc_bitmap_t a = _free_but(t, "c74");	/* (1,1,1) = 1+8+64+1 */
	struct topoml_place_req r = { .nnodes = 8, .avail = a };
	struct topoml_placement p = { 0 };
	char why[256];
	int lo[3] = { 8, 8, 8 }, busy = topoml_node_by_name(t, "c74");
	bool touches = false;

	ck_assert_int_eq(t->nodes[busy].coord[0], 1);
	ck_assert_int_eq(t->nodes[busy].coord[2], 1);
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++) {
		for (int d = 0; d < 3; d++)
			if (t->nodes[p.nodes[i]].coord[d] < lo[d])
				lo[d] = t->nodes[p.nodes[i]].coord[d];
		touches |= topoml_hops(t, p.nodes[i], busy) == 1;
	}
	for (int d = 0; d < 3; d++)
		ck_assert_int_eq(lo[d] % 2, 0);
	ck_assert(touches);
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/*
 * TorusPlacement=curve: on an 8x8x8 torus with (1,1,1) busy, a job of 8
 * gets an aligned window of the Hilbert curve (a 2x2x2 box) inside the
 * 4x4x4 block the busy node already breaks, so that the other blocks stay
 * whole; a 64-node job on the empty torus an aligned 4x4x4; a size that
 * is no power of two Slurm's own run (the slurm-hilbert policy).
 */
START_TEST(torus_curve_buddy_windows)
{
	topoml_topo_t *t = topoml_gen_torus("c", 8, 8, 8, true);
	hwloc_bitmap_t a = _free_but(t, "c74"), all = _free_but(t, NULL);
	struct topoml_place_req r = { .nnodes = 8, .avail = a,
				      .torus_curve = true };
	struct topoml_placement p = { 0 };
	char why[256], *h, *c;
	int busy = topoml_node_by_name(t, "c74");

	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.score.span, 8);
	for (int i = 0; i < p.n; i++) {
		ck_assert_int_ne(p.nodes[i], busy);
		for (int d = 0; d < 3; d++) {
			ck_assert_int_lt(t->nodes[p.nodes[i]].coord[d], 4);
			if (i == 0)
				ck_assert_int_eq(
					t->nodes[p.nodes[i]].coord[d] % 2, 0);
		}
	}
	topoml_placement_clear(&p);
	r.nnodes = 64;
	r.avail = all;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.score.span, 64);
	for (int i = 0; i < p.n; i++)
		for (int d = 0; d < 3; d++)
			ck_assert_int_eq(t->nodes[p.nodes[i]].coord[d] / 4,
					 t->nodes[p.nodes[0]].coord[d] / 4);
	topoml_placement_clear(&p);
	r.nnodes = 7;
	r.avail = a;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	c = topoml_nodes_format(t, p.nodes, p.n);
	topoml_placement_clear(&p);
	h = _place(t, TOPOML_POLICY_SLURM_HILBERT, 7, a, NULL, why);
	ck_assert_ptr_nonnull(h);
	{
		char *cs = _sorted(t, c), *hs = _sorted(t, h);

		ck_assert_str_eq(cs, hs);
		free(cs);
		free(hs);
	}
	free(c);
	free(h);
	hwloc_bitmap_free(a);
	hwloc_bitmap_free(all);
	topoml_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("torus3d");
	TCase *tc = tcase_create("torus3d");
	SRunner *sr;
	int nf;

	topoml_sim_register_baselines();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, yaml_reads_the_man_page_example);
	tcase_add_test(tc, yaml_errors_name_file_and_line);
	tcase_add_test(tc, yaml_deep_and_long_files);
	tcase_add_test(tc, torus3d_refuses_sizes_without_a_shape);
	tcase_add_test(tc, torus3d_anchors_frag_and_waiting);
	tcase_add_test(tc, torus3d_prefers_powered_up_nodes);
	tcase_add_test(tc, torus3d_seed_and_wrapping_boxes);
	tcase_add_test(tc, topoml_exact_box_whenever_torus3d_has_one);
	tcase_add_test(tc, topoml_bound_takes_torus3d_boxes);
	tcase_add_test(tc, topoml_bound_fit_by_hand);
	tcase_add_test(tc, yaml_regions_and_unmapped_cells);
	tcase_add_test(tc, torus_box_sizes);
	tcase_add_test(tc, torus_wants_box_by_span);
	tcase_add_test(tc, topoml_boxes_on_their_grid);
	tcase_add_test(tc, torus_curve_buddy_windows);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
