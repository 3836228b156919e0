/*
 * Blocks (NVLink domains; issue 14 item 3): Slurm's block topology.conf
 * as Slurm 26.05's topology/block reads it, the model it becomes
 * (aggregated blocks as upper switches), NVLink domains in JSON, the
 * slurm-block baseline (eval_nodes_block()) on cases worked out by hand,
 * topoml's block placement against it on the same free sets, and the
 * NVLink terms of the cost model.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topoml.h"
#include "sim.h"
#include "topoml/load.h"

static const char *_srcdir(void)
{
	const char *d = getenv("TESTS_DIR");

	return d && *d ? d : TESTS_SRCDIR;
}

static char *_fixture(const char *name)
{
	char *p = NULL;

	ck_assert_int_ge(asprintf(&p, "%s/fixtures/block/%s", _srcdir(),
				  name), 0);
	return p;
}

/* ---- the reader: what Slurm 26.05 accepts and rejects ------------- */

/*
 * One case per file in fixtures/block/conf/, its expectations in comment
 * lines at the end (Slurm ignores them; test_block_slurm.sh feeds the same
 * files to a real Slurm 26.05 slurmctld with topology/block):
 *   # expect: nodes=N blocks=B aggregated=A base=S
 *   # expect-error: TEXT     (refused; an error reads FILE:TEXT...)
 *   # expect-warning: TEXT   (loads with exactly these warnings)
 */
static glob_t conf_files;

static bool _has(const topoml_errors_t *e, const char *path,
		 const char *text)
{
	size_t pl = strlen(path);

	for (int i = 0; i < e->n; i++)
		if (!strncmp(e->msg[i], path, pl) && e->msg[i][pl] == ':' &&
		    strstr(e->msg[i] + pl + 1, text) == e->msg[i] + pl + 1)
			return true;
	for (int i = 0; i < e->n; i++)	/* errors naming no line */
		if (strstr(e->msg[i], text))
			return true;
	return false;
}

static const char *_all(const topoml_errors_t *e)
{
	static char buf[4096];
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < e->n && o < sizeof(buf) - 2; i++)
		o += snprintf(buf + o, sizeof(buf) - o, "\n  %s", e->msg[i]);
	return buf;
}

START_TEST(test_conf_case)
{
	const char *path = conf_files.gl_pathv[_i];
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t = topoml_load_conf_ex(path, &err, &warn);
	char line[512], *error = NULL;
	int nodes = -1, blocks = -1, agg = -1, base = -1, nwarn = 0;
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "# expect-error: ", 16)) {
			error = strdup(line + 16);
		} else if (!strncmp(line, "# expect-warning: ", 18)) {
			nwarn++;
			ck_assert_msg(_has(&warn, path, line + 18), "%s: no "
				      "warning '%s' in:%s", path, line + 18,
				      _all(&warn));
		} else {
			sscanf(line, "# expect: nodes=%d blocks=%d "
			       "aggregated=%d base=%d", &nodes, &blocks, &agg,
			       &base);
		}
	}
	fclose(f);
	if (error) {
		ck_assert_msg(!t, "%s loaded, want '%s'", path, error);
		ck_assert_msg(_has(&err, path, error), "%s: no error '%s' "
			      "in:%s", path, error, _all(&err));
	} else {
		ck_assert_msg(t, "%s refused:%s", path, _all(&err));
		ck_assert_msg(base > 0, "%s: no '# expect:' line", path);
		ck_assert_int_eq(t->nnodes, nodes);
		ck_assert_int_eq(t->nblocks, blocks);
		ck_assert_int_eq(t->nswitches - t->nblocks, agg);
		ck_assert_int_eq(t->block_base, base);
		ck_assert_str_eq(topoml_topo_kind(t), "block");
		ck_assert_int_eq(t->nnvl, blocks);
		ck_assert_msg(warn.n == nwarn, "%s: %d warnings, want %d:%s",
			      path, warn.n, nwarn, _all(&warn));
	}
	free(error);
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
}
END_TEST

/*
 * 72 blocks of 18, BlockSizes 18..288 (1, 2, 4, 8, 16 blocks): Slurm
 * aggregates 36 pairs, 18 quads, 9 eights and 4 sixteens (the last 8
 * blocks get no sixteen: the eight already covers them) = 67.
 */
START_TEST(test_nvl72_model)
{
	char *p = _fixture("nvl72x18.conf"), buf[256];
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = topoml_load(p, TOPOML_FMT_AUTO, &err);
	int a, b;

	ck_assert_msg(t, "%s", err.n ? err.msg[0] : "?");
	ck_assert_int_eq(t->nnodes, 1296);
	ck_assert_int_eq(t->nblocks, 72);
	ck_assert_int_eq(t->nswitches, 72 + 67);
	ck_assert_int_eq(t->block_base, 18);
	ck_assert_uint_eq(t->block_levels, 0x1f);
	ck_assert_int_eq(t->nlevels, 5);
	ck_assert_int_ge(topoml_switch_by_name(t, "nvl1..nvl16"), 0);
	ck_assert_int_ge(topoml_switch_by_name(t, "nvl65..nvl72"), 0);
	ck_assert_int_lt(topoml_switch_by_name(t, "nvl65..nvl80"), 0);
	/* gpu1 and gpu18 share block nvl1, gpu19 is in nvl2 (same pair),
	 * gpu37 in the next pair, gpu289 in the next sixteen */
	a = topoml_node_by_name(t, "gpu1");
	b = topoml_node_by_name(t, "gpu18");
	ck_assert_int_eq(topoml_common_level(t, a, b), 0);
	ck_assert_int_eq(topoml_common_level(t, a,
			 topoml_node_by_name(t, "gpu19")), 1);
	ck_assert_int_eq(topoml_common_level(t, a,
			 topoml_node_by_name(t, "gpu37")), 2);
	ck_assert_int_eq(topoml_common_level(t, a,
			 topoml_node_by_name(t, "gpu289")), 5);
	ck_assert_int_eq(t->nodes[b].nvl, 0);
	ck_assert_str_eq(t->nvl_names[t->nodes[
			 topoml_node_by_name(t, "gpu1296")].nvl], "nvl72");
	topoml_summary(t, buf, sizeof(buf));
	ck_assert_str_eq(buf, "block: 1296 nodes, 72 blocks of 18 "
			 "(BlockSizes=18,36,72,144,288), 67 aggregated, "
			 "5 levels");
	topoml_free(t);
	free(p);
}
END_TEST

/* ---- NVLink domains in JSON ---------------------------------------- */

START_TEST(test_json_nvl)
{
	char *p = _fixture("fattree-nvl.json"), *q;
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = topoml_load(p, TOPOML_FMT_AUTO, &err);
	struct topoml_placement pl = { 0 };
	int ring[4];

	ck_assert_msg(t, "%s", err.n ? err.msg[0] : "?");
	ck_assert_int_eq(t->nnvl, 2);
	ck_assert_int_eq(t->nblocks, 0);
	ck_assert_str_eq(topoml_topo_kind(t), "fat-tree");
	/* leaf1 and leaf2 name rack1; rack2 is listed by node */
	ck_assert_str_eq(t->nvl_names[t->nodes[
			 topoml_node_by_name(t, "n8")].nvl], "rack1");
	ck_assert_str_eq(t->nvl_names[t->nodes[
			 topoml_node_by_name(t, "n9")].nvl], "rack2");
	/* cost: n1 n2 n9 n10 as a ring crosses rack1 -> rack2 -> rack1 */
	ring[0] = topoml_node_by_name(t, "n1");
	ring[1] = topoml_node_by_name(t, "n2");
	ring[2] = topoml_node_by_name(t, "n9");
	ring[3] = topoml_node_by_name(t, "n10");
	pl.n = 4;
	pl.nodes = ring;
	topoml_score(t, NULL, &pl);
	ck_assert_int_eq(pl.score.nvl_span, 2);
	ck_assert_int_eq(pl.score.nvl_span_lower_bound, 1);
	ck_assert_int_eq(pl.score.nvl_crossings, 2);
	topoml_free(t);
	free(p);

	q = _fixture("dragonfly-nvl.json");
	t = topoml_load(q, TOPOML_FMT_AUTO, &err);
	ck_assert_msg(t, "%s", err.n ? err.msg[0] : "?");
	ck_assert_int_eq(t->nnvl, 4);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "n13")].nvl, 3);
	topoml_free(t);
	free(q);
	topoml_errors_clear(&err);
}
END_TEST

START_TEST(test_json_nvl_errors)
{
	static const char *const cases[][2] = {
		{ "{\"family\":\"fat-tree\",\"switches\":[{\"name\":\"l1\","
		  "\"nodes\":\"n[1-4]\",\"nvlink_domain\":\"a\"}],\n"
		  "\"nvlink_domains\":[{\"name\":\"b\",\"nodes\":\"n4\"}]}",
		  ":2: node n4 is in two NVLink domains: a (line 1) and b" },
		{ "{\"family\":\"fat-tree\",\"switches\":[{\"name\":\"l1\","
		  "\"nodes\":\"n[1-4]\"}],\n\"nvlink_domains\":[{\"name\":"
		  "\"b\",\"nodes\":\"x1\"}]}",
		  ":2: NVLink domain b: unknown node x1" },
		{ "{\"family\":\"fat-tree\",\"switches\":[{\"name\":\"l1\","
		  "\"nodes\":\"n[1-4]\",\n\"nvlink_domain\":7}]}",
		  "switch l1: \"nvlink_domain\" must be a string" },
		{ "{\"family\":\"fat-tree\",\"switches\":[{\"name\":\"l1\","
		  "\"nodes\":\"n[1-4]\"},\n{\"name\":\"s\",\"switches\":"
		  "\"l1\",\"nvlink_domain\":\"a\"}]}",
		  ":2: switch s: \"nvlink_domain\" on a switch without nodes" },
		{ "{\"family\":\"fat-tree\",\"switches\":[{\"name\":\"l1\","
		  "\"nodes\":\"n[1-4]\"}],\n\"nvlink_domains\":[{\"name\":"
		  "\"b\",\"nodes\":\"n1\"},\n{\"name\":\"b\",\"nodes\":"
		  "\"n2\"}]}", ":3: NVLink domain b: duplicate name" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[] = "/tmp/check_block.XXXXXX";
		int fd = mkstemp(path);
		topoml_errors_t err = { 0 };
		topoml_topo_t *t;
		bool hit = false;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, cases[i][0], strlen(cases[i][0])),
				 (int)strlen(cases[i][0]));
		close(fd);
		t = topoml_load_json(path, &err);
		unlink(path);
		ck_assert_msg(!t, "case %zu loaded", i);
		for (int k = 0; k < err.n; k++)
			hit |= strstr(err.msg[k], cases[i][1]) != NULL;
		ck_assert_msg(hit, "case %zu: want '%s', got '%s'", i,
			      cases[i][1], err.n ? err.msg[0] : "");
		topoml_errors_clear(&err);
	}
}
END_TEST

/* ---- placement ----------------------------------------------------- */

static topoml_topo_t *_small(void)
{
	char *p = _fixture("small.conf");
	topoml_errors_t err = { 0 };
	topoml_topo_t *t = topoml_load(p, TOPOML_FMT_AUTO, &err);

	ck_assert_msg(t, "%s", err.n ? err.msg[0] : "?");
	free(p);
	return t;
}

/* 4 blocks of 4 (n1-4 .. n13-16), BlockSizes=4,16: aggregates of 4 */
static topoml_topo_t *_small16(void)
{
	char path[] = "/tmp/check_block.XXXXXX";
	const char *text = "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 "
			   "Nodes=n[5-8]\nBlockName=b3 Nodes=n[9-12]\n"
			   "BlockName=b4 Nodes=n[13-16]\nBlockSizes=4,16\n";
	int fd = mkstemp(path);
	topoml_topo_t *t;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	t = topoml_load(path, TOPOML_FMT_CONF, NULL);
	unlink(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nswitches, 5);
	return t;
}

/* 8 blocks of 2 (n1-2 .. n15-16), BlockSizes=2,4,8,16: pairs, fours, the
 * row of 8 */
static topoml_topo_t *_small8(void)
{
	char path[] = "/tmp/check_block.XXXXXX";
	char text[512];
	int fd = mkstemp(path), len = 0;
	topoml_topo_t *t;

	for (int b = 0; b < 8; b++)
		len += snprintf(text + len, sizeof(text) - len,
				"BlockName=b%d Nodes=n[%d-%d]\n", b + 1,
				2 * b + 1, 2 * b + 2);
	len += snprintf(text + len, sizeof(text) - len,
			"BlockSizes=2,4,8,16\n");
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), len);
	close(fd);
	t = topoml_load(path, TOPOML_FMT_CONF, NULL);
	unlink(path);
	ck_assert_ptr_nonnull(t);
	return t;
}

static hwloc_bitmap_t _free_but(const topoml_topo_t *t, const char *busy)
{
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), b;

	hwloc_bitmap_set_range(a, 0, t->nnodes - 1);
	if (busy) {
		b = topoml_nodeset_parse(t, busy, NULL);
		hwloc_bitmap_andnot(a, a, b);
		hwloc_bitmap_free(b);
	}
	return a;
}

static char *_place(const topoml_topo_t *t, enum topoml_policy pol, int n,
		    const char *busy, struct topoml_score *score)
{
	hwloc_bitmap_t a = _free_but(t, busy);
	struct topoml_place_req r = { .nnodes = n, .avail = a };
	struct topoml_placement p = { 0 };
	char why[256], *s = NULL;

	if (topoml_place(t, pol, &r, &p, why, sizeof(why)) == 0) {
		s = topoml_nodes_format(t, p.nodes, p.n);
		if (score)
			*score = p.score;
	}
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	return s;
}

/*
 * small.conf: blocks b1..b6 of 4 nodes (n1-4, ..., n21-24), BlockSizes
 * 4, 8, 16.  Busy n1, n5, n6, n17; free per block 3 2 4 4 3 4.  A job of
 * 6: level 1 (pairs); pair free 5 8 7: Slurm takes the pair with the
 * fewest free nodes that hold 6, (b5, b6); inside it no block holds 6, so
 * the fullest, b6 (n21-24), then b5 fits the last 2: n18, n19.
 */
START_TEST(test_slurm_block_by_hand)
{
	topoml_topo_t *t = _small();
	struct topoml_score sc;
	char *s;

	s = _place(t, TOPOML_POLICY_SLURM_BLOCK, 6, "n1,n5,n6,n17", NULL);
	ck_assert_str_eq(s, "n[18-19,21-24]");
	free(s);
	/* 3 nodes: level 0, single blocks; the fewest free that hold 3:
	 * b1 (3 free; "<=": the last of b1 and b5 wins: b5) */
	s = _place(t, TOPOML_POLICY_SLURM_BLOCK, 3, "n1,n5,n6,n17", NULL);
	ck_assert_str_eq(s, "n[18-20]");
	free(s);
	/* 20 nodes: 5 blocks -> level 3 (8 blocks) is not configured: the
	 * whole row, with llblocks of 4 blocks (b1-b4, b5-b6), at most 2.
	 * Slurm's quirk: it counts bpb / bpll = 6 / 4 = 1 llblock per
	 * "block", so only b1-b4 (16 nodes) count and the job never runs,
	 * even on an idle machine.  topoml takes both llblocks. */
	s = _place(t, TOPOML_POLICY_SLURM_BLOCK, 20, NULL, NULL);
	ck_assert_ptr_null(s);
	s = _place(t, TOPOML_POLICY_TOPOML, 20, NULL, &sc);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sc.nvl_span, 5);
	free(s);
	/* 8 nodes with one node busy in every pair: no pair has 8 free,
	 * the job waits (Slurm: ESLURM_TOPO_NO_FIT) */
	s = _place(t, TOPOML_POLICY_SLURM_BLOCK, 8, "n1,n9,n17", NULL);
	ck_assert_ptr_null(s);
	topoml_free(t);
}
END_TEST

/*
 * topoml where no aligned group of the job's level holds it (issue 33):
 * busy n1, n9, n17, free per block 3 4 3 4 3 4.  A job of 8 is level 1
 * (pairs); every pair has 7 free, so Slurm waits (above).  Two blocks
 * hold 8 (the fewest on an idle machine), b2 and b4, in the aligned
 * group of 4 above: topoml starts it there, NVLink domains as few as
 * Slurm's, the ring crossing one level higher.  It still waits where
 * only more blocks than that would hold the job: 3 free in every block.
 */
START_TEST(test_topoml_block_beyond_group)
{
	topoml_topo_t *t = _small();
	struct topoml_score sc;
	char *s;

	s = _place(t, TOPOML_POLICY_TOPOML, 8, "n1,n9,n17", &sc);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "n[5-8,13-16]");
	ck_assert_int_eq(sc.nvl_span, 2);
	ck_assert_int_eq(sc.span, sc.span_lower_bound);
	/* 6 steps of 2 hops inside the blocks, 2 of 6 between the pairs */
	ck_assert_int_eq((int)sc.ring_cost, 6 * 2 + 2 * 6);
	free(s);
	/* the same job on 3 blocks of 3 free nodes: it waits */
	s = _place(t, TOPOML_POLICY_TOPOML, 8, "n1,n5,n9,n13,n17,n21", NULL);
	ck_assert_ptr_null(s);
	/* what fits a pair is placed as before: 7 free in (b5, b6) */
	s = _place(t, TOPOML_POLICY_TOPOML, 7, "n1,n9,n17", &sc);
	ck_assert_str_eq(s, "n[18-24]");
	free(s);
	/* block_aligned (select/topoml under Slurm's topology/block): the
	 * job of 8 waits, as Slurm would refuse n[5-8,13-16] */
	{
		hwloc_bitmap_t a = _free_but(t, "n1,n9,n17");
		struct topoml_place_req r = { .nnodes = 8, .avail = a,
					      .block_aligned = true };
		struct topoml_placement p = { 0 };
		char why[256];

		ck_assert_int_ne(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p,
					      why, sizeof(why)), 0);
		ck_assert_msg(strstr(why, "no aligned group"), "%s", why);
		topoml_placement_clear(&p);
		r.nnodes = 7;
		ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p,
					      why, sizeof(why)), 0);
		ck_assert_int_eq(p.n, 7);
		topoml_placement_clear(&p);
		hwloc_bitmap_free(a);
	}
	topoml_free(t);
}
END_TEST

/*
 * topoml: whole blocks for a multiple of the block size when whole blocks
 * are free.  Busy n2 (b1) and n13 (b4): pairs (b1,b2) 7, (b3,b4) 7, (b5,
 * b6) 8 free.  A job of 8 fits only (b5, b6): both whole.  A job of 4
 * goes to a whole block, never splits two: the fewest blocks; among b2,
 * b3, b5, b6 (4 free each) those of the fullest pairs, b2 and b3 (7
 * free; (b5, b6) stays whole for a job of 8), the last of them: b3.
 */
START_TEST(test_topoml_block_whole)
{
	topoml_topo_t *t = _small();
	struct topoml_score sc;
	char *s;

	s = _place(t, TOPOML_POLICY_TOPOML, 8, "n2,n13", &sc);
	ck_assert_str_eq(s, "n[17-24]");
	ck_assert_int_eq(sc.span, 2);
	ck_assert_int_eq(sc.nvl_span, 2);
	ck_assert_int_eq(sc.nvl_crossings, 2);
	free(s);
	s = _place(t, TOPOML_POLICY_TOPOML, 4, "n2,n13", &sc);
	ck_assert_int_eq(sc.nvl_span, 1);
	ck_assert_int_eq(sc.nvl_crossings, 0);
	ck_assert_str_eq(s, "n[9-12]");
	free(s);
	/* 6 nodes, free 3 2 4 4 3 4 (busy n1 n5 n6 n17): 2 blocks in the
	 * pair with 7 free, (b5, b6), concentrated: all of b6, 2 of b5 (8
	 * rank pairs cross the blocks, not 9 as with 3 + 3) */
	s = _place(t, TOPOML_POLICY_TOPOML, 6, "n1,n5,n6,n17", &sc);
	ck_assert_int_eq(sc.nvl_span, 2);
	ck_assert_str_eq(s, "n[18-19,21-24]");
	free(s);
	topoml_free(t);
	/* BlockSizes=4,16 (no level of 2 blocks): a job of 8 is evaluated on
	 * the group of all 4 blocks; busy n1, two whole blocks of b2 b3 b4
	 * do; topoml takes them in the smallest aligned run that allows it,
	 * b3 b4 (a later BlockSizes level of 2 would be their aggregate) */
	t = _small16();
	s = _place(t, TOPOML_POLICY_TOPOML, 8, "n1", &sc);
	ck_assert_int_eq(sc.nvl_span, 2);
	ck_assert_str_eq(s, "n[9-16]");
	free(s);
	topoml_free(t);
}
END_TEST

/*
 * topoml: a small job goes to the fullest enclosing pair, so that a pair
 * stays whole for a later job of the pair's level.  Busy n1 (b1) and n13
 * (b4): free 3 4 4 3 4 4, pairs (b1,b2) 7, (b3,b4) 7, (b5,b6) 8.  A job
 * of 3 fits any block; b1 to b4 are in pairs of 7, of them the tightest
 * b1 and b4 (3 free), the last: b4, n[14-16].  With b4 full, a job of 4:
 * b2, b3, b5 or b6, in pairs of 7, 4, 8, 8 free: b3, n[9-12].  Then a
 * job of 8 finds the pair (b5, b6) whole: 2 blocks, ring cost 2 * 8 + 2
 * * 2 = 20 (6 steps inside a block, 2 hops; 2 between the blocks of the
 * pair, 4 hops), its lower bound.  By block fit alone (a shared block
 * counted a quarter block fuller) every block was equal and the 3 and
 * the 4 went to the last, b6: the pair (b5, b6) could no longer hold 8.
 */
START_TEST(test_topoml_block_fullest_pair)
{
	topoml_topo_t *t = _small();
	struct topoml_score sc;
	char *s;

	s = _place(t, TOPOML_POLICY_TOPOML, 3, "n1,n13", &sc);
	ck_assert_str_eq(s, "n[14-16]");
	free(s);
	s = _place(t, TOPOML_POLICY_TOPOML, 4, "n[1,13-16]", &sc);
	ck_assert_str_eq(s, "n[9-12]");
	free(s);
	s = _place(t, TOPOML_POLICY_TOPOML, 8, "n[1,9-16]", &sc);
	ck_assert_str_eq(s, "n[17-24]");
	ck_assert_int_eq(sc.nvl_span, 2);
	ck_assert_int_eq(sc.ring_cost, 20);
	ck_assert_int_eq(sc.ring_cost, sc.ring_lower_bound);
	free(s);
	topoml_free(t);
}
END_TEST

/*
 * topoml: inside a group, the job's blocks in as few pairs, fours, ... as
 * its fewest blocks allow.  _small8(), busy n3, n4, n12: free per block 2
 * 0 2 2 2 1 2 2.  A job of 8 (level 4 blocks): the fours hold 6 and 7,
 * so it goes to the row of 8, on 4 blocks (the fewest).  The 4 tightest
 * blocks, b1 b3 b4 b5, are in 3 pairs: ring 2 * 8 + 2 * 4 blocks + 2 * 3
 * pairs + 2 * 2 fours = 34 hops.  Two whole pairs, (b3, b4) and (b7,
 * b8): 2 * 8 + 2 * 4 + 2 * 2 + 2 * 2 = 32.
 */
START_TEST(test_topoml_block_fewest_pairs)
{
	topoml_topo_t *t = _small8();
	struct topoml_score sc;
	char *s;

	s = _place(t, TOPOML_POLICY_TOPOML, 8, "n[3-4,12]", &sc);
	ck_assert_str_eq(s, "n[5-8,13-16]");
	ck_assert_int_eq(sc.nvl_span, 4);
	ck_assert_int_eq(sc.ring_cost, 32);
	free(s);
	topoml_free(t);
}
END_TEST

/*
 * On the same free sets, topoml places every job slurm-block places, on
 * no more blocks (its candidates include Slurm's groups; it also places
 * some that Slurm's quirks refuse).  Random states on the 72 x 18
 * machine.
 */
START_TEST(test_topoml_vs_slurm_block)
{
	char *p = _fixture("nvl72x18.conf");
	topoml_topo_t *t = topoml_load(p, TOPOML_FMT_AUTO, NULL);
	unsigned seed = 14;
	int placed = 0, fewer = 0, only = 0;

	ck_assert_ptr_nonnull(t);
	for (int round = 0; round < 400; round++) {
		hwloc_bitmap_t a = hwloc_bitmap_alloc();
		struct topoml_place_req r = { .avail = a };
		struct topoml_placement ps = { 0 }, pt = { 0 };
		int busy = rand_r(&seed) % 90, rs, rt;
		char why[256];

		/* whole blocks busy, and scattered busy nodes */
		hwloc_bitmap_set_range(a, 0, t->nnodes - 1);
		for (int b = 0; b < t->nblocks; b++)
			if (rand_r(&seed) % 100 < busy / 2)
				hwloc_bitmap_clr_range(a, b * 18, b * 18 + 17);
		for (int i = 0; i < t->nnodes; i++)
			if (rand_r(&seed) % 100 < busy / 3)
				hwloc_bitmap_clr(a, i);
		r.nnodes = 1 + rand_r(&seed) % (round % 3 ? 40 : 300);
		if (r.nnodes > hwloc_bitmap_weight(a))
			r.nnodes = hwloc_bitmap_weight(a);
		if (r.nnodes < 1) {
			hwloc_bitmap_free(a);
			continue;
		}
		rs = topoml_place(t, TOPOML_POLICY_SLURM_BLOCK, &r, &ps, why,
				  sizeof(why));
		rt = topoml_place(t, TOPOML_POLICY_TOPOML, &r, &pt, why,
				  sizeof(why));
		ck_assert_msg(rs != 0 || rt == 0, "round %d, %d nodes: "
			      "slurm-block places, topoml does not (%s)",
			      round, r.nnodes, why);
		only += rs != 0 && rt == 0;
		if (rs == 0) {
			placed++;
			ck_assert_int_eq(pt.n, r.nnodes);
			ck_assert_msg(pt.score.nvl_span <= ps.score.nvl_span,
				      "round %d, %d nodes: topoml %d blocks, "
				      "slurm-block %d", round, r.nnodes,
				      pt.score.nvl_span, ps.score.nvl_span);
			fewer += pt.score.nvl_span < ps.score.nvl_span;
			ck_assert_int_eq(pt.score.span, pt.score.nvl_span);
		}
		topoml_placement_clear(&ps);
		topoml_placement_clear(&pt);
		hwloc_bitmap_free(a);
	}
	/* the test means something: most rounds place */
	ck_assert_int_ge(placed, 200);
	fprintf(stderr, "topoml vs slurm-block: %d placed by both, topoml "
		"on fewer blocks in %d, placed by topoml only %d\n", placed,
		fewer, only);
	topoml_free(t);
	free(p);
}
END_TEST

/*
 * The same sequence for both: jobs of mixed sizes (small, up to two
 * blocks, whole blocks, up to 400 nodes) arrive in order with fixed
 * lifetimes; each policy places on its own copy of the machine; when
 * either cannot place the next job, both wait for the next departure.
 * Over four such sequences of 5000 jobs, topoml spans no more blocks
 * beyond the lower bound than slurm-block.
 */
static void _lockstep(const topoml_topo_t *t, unsigned seed, int njobs,
		      long *blocks, long *lb)
{
	enum topoml_policy pol[2] = { TOPOML_POLICY_TOPOML,
				      TOPOML_POLICY_SLURM_BLOCK };
	hwloc_bitmap_t a[2], *used[2];
	double *end = calloc(njobs, sizeof(double)), now = 0;
	int *run = calloc(njobs, sizeof(int)), nrun = 0;

	ck_assert_ptr_nonnull(end);
	ck_assert_ptr_nonnull(run);
	for (int k = 0; k < 2; k++) {
		a[k] = hwloc_bitmap_alloc();
		hwloc_bitmap_set_range(a[k], 0, t->nnodes - 1);
		used[k] = calloc(njobs, sizeof(hwloc_bitmap_t));
		blocks[k] = 0;
	}
	*lb = 0;
	for (int j = 0; j < njobs; j++) {
		int r = rand_r(&seed) % 100, n;

		if (r < 50)
			n = 1 + rand_r(&seed) % 8;
		else if (r < 75)
			n = 1 + rand_r(&seed) % 36;
		else if (r < 95)
			n = 18 * (1 + rand_r(&seed) % 8) -
			    (rand_r(&seed) % 3 ? 0 : rand_r(&seed) % 18);
		else
			n = 1 + rand_r(&seed) % 400;
		end[j] = now + 1 + rand_r(&seed) % 1000;
		now += 1 + rand_r(&seed) % 20;
		for (;;) {
			struct topoml_placement p[2] = { { 0 }, { 0 } };
			char why[256];
			int rc[2];
			double m = 1e18;

			for (int i = 0; i < nrun; i++) {
				if (end[run[i]] > now)
					continue;
				for (int k = 0; k < 2; k++) {
					hwloc_bitmap_or(a[k], a[k],
							used[k][run[i]]);
					hwloc_bitmap_free(used[k][run[i]]);
				}
				run[i--] = run[--nrun];
			}
			for (int k = 0; k < 2; k++) {
				struct topoml_place_req rq = {
					.avail = a[k], .nnodes = n };

				rc[k] = topoml_place(t, pol[k], &rq, &p[k],
						     why, sizeof(why));
			}
			if (!rc[0] && !rc[1]) {
				for (int k = 0; k < 2; k++) {
					used[k][j] = hwloc_bitmap_alloc();
					for (int q = 0; q < n; q++)
						hwloc_bitmap_set(used[k][j],
							p[k].nodes[q]);
					hwloc_bitmap_andnot(a[k], a[k],
							    used[k][j]);
					blocks[k] += p[k].score.nvl_span;
				}
				*lb += p[0].score.nvl_span_lower_bound;
				run[nrun++] = j;
			}
			topoml_placement_clear(&p[0]);
			topoml_placement_clear(&p[1]);
			if (!rc[0] && !rc[1])
				break;
			for (int i = 0; i < nrun; i++)
				m = end[run[i]] < m ? end[run[i]] : m;
			ck_assert_msg(nrun > 0, "job %d of %d nodes never fits",
				      j, n);
			now = m;
		}
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < nrun; i++)
			hwloc_bitmap_free(used[k][run[i]]);
		free(used[k]);
		hwloc_bitmap_free(a[k]);
	}
	free(end);
	free(run);
}

START_TEST(test_same_sequence)
{
	char *p = _fixture("nvl72x18.conf");
	topoml_topo_t *t = topoml_load(p, TOPOML_FMT_AUTO, NULL);
	long b[2], lb, sum[2] = { 0, 0 };

	ck_assert_ptr_nonnull(t);
	for (unsigned seed = 1; seed <= 4; seed++) {
		_lockstep(t, seed, 5000, b, &lb);
		fprintf(stderr, "same sequence, seed %u: %ld blocks at the "
			"lower bound; over it: topoml %ld, slurm-block %ld\n",
			seed, lb, b[0] - lb, b[1] - lb);
		ck_assert_int_ge(b[0], lb);
		ck_assert_int_ge(b[1], lb);
		sum[0] += b[0] - lb;
		sum[1] += b[1] - lb;
	}
	/* per sequence it varies (different states after the first
	 * different choice); over the four, topoml is ahead */
	ck_assert_msg(sum[0] <= sum[1], "blocks over the bound: topoml "
		      "%ld, slurm-block %ld", sum[0], sum[1]);
	topoml_free(t);
	free(p);
}
END_TEST

/*
 * A crowded row: b2 and b4 free, one node free in each of b1, b3 and b5
 * (5 free in each pair, 11 in all).  A job of 8 fits no pair; in a
 * larger group it would leave 3 free, fewer than half its size: it
 * waits for the pair that frees when the jobs on it end.  A job of 6
 * leaves 5: it still goes into the larger group.  Where the partition
 * (universe: b2, b4, b6 and those three nodes) has no pair that could
 * hold it, the job of 8 never waits.
 */
START_TEST(test_topoml_block_crowded)
{
	topoml_topo_t *t = _small();
	hwloc_bitmap_t a = topoml_nodeset_parse(t, "n[1,5-9,13-17]", NULL);
	hwloc_bitmap_t u = topoml_nodeset_parse(t, "n[1,5-9,13-17,21-24]",
						NULL);
	uint32_t owner[24] = { 0 };
	struct topoml_place_req r = { .nnodes = 8, .avail = a };
	struct topoml_placement p = { 0 };
	char why[256], *s;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(u);
	for (int v = 0; v < t->nnodes; v++)
		owner[v] = hwloc_bitmap_isset(a, v) ? 0 : 5;
	/* no owners given: every node not free may free */
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	ck_assert_msg(strstr(why, "fewer than 4 free"), "%s", why);
	r.owner = owner;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	ck_assert_msg(strstr(why, "waits for one"), "%s", why);
	/* a share of a job already admitted is not held */
	r.admitted = true;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.n, 8);
	topoml_placement_clear(&p);
	r.admitted = false;
	/* the job of 6 leaves 5 free: room, a larger group now */
	r.nnodes = 6;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.n, 6);
	ck_assert_int_eq(p.score.nvl_span, 2);
	topoml_placement_clear(&p);
	/* nodes no job holds (down, drained) never free by themselves */
	r.nnodes = 8;
	owner[1] = owner[2] = 0;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	owner[9] = owner[10] = owner[17] = owner[18] = 0;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	s = topoml_nodes_format(t, p.nodes, p.n);
	ck_assert_str_eq(s, "n[5-8,13-16]");
	free(s);
	topoml_placement_clear(&p);
	/* a partition with no pair that could hold it: no wait */
	for (int v = 0; v < t->nnodes; v++)
		owner[v] = hwloc_bitmap_isset(a, v) ? 0 : 5;
	r.universe = u;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.n, 8);
	topoml_placement_clear(&p);
	/* Slurm's rule (block_aligned) refuses it with its own reason */
	r.block_aligned = true;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	ck_assert_msg(strstr(why, "nor any on"), "%s", why);
	hwloc_bitmap_free(a);
	hwloc_bitmap_free(u);
	topoml_free(t);
}
END_TEST

/*
 * A share of a job already admitted (a hybrid job's part, req.admitted)
 * is never held: the job of 8 on 3 free nodes of each block, which waits
 * for 2 blocks, goes on 3 of an aligned group of 4 (the crowded row:
 * test_topoml_block_crowded).
 */
START_TEST(test_topoml_block_admitted)
{
	topoml_topo_t *t = _small();
	hwloc_bitmap_t a = _free_but(t, "n1,n5,n9,n13,n17,n21");
	struct topoml_place_req r = { .nnodes = 8, .avail = a };
	struct topoml_placement p = { 0 };
	char why[256];

	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	ck_assert_msg(strstr(why, "nor any on 2 blocks"), "%s", why);
	r.admitted = true;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.n, 8);
	ck_assert_int_eq(p.score.nvl_span, 3);
	for (int i = 0; i < p.n; i++)	/* one aligned group of 4 */
		ck_assert_int_lt(t->nodes[p.nodes[i]].leaf, 4);
	topoml_placement_clear(&p);
	/* Slurm's rule (block_aligned) still refuses */
	r.block_aligned = true;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/* --switches=N bounds the blocks; isolate gets blocks of no other job. */
START_TEST(test_topoml_block_limits)
{
	topoml_topo_t *t = _small();
	hwloc_bitmap_t a = _free_but(t, "n1,n5,n6,n17");
	uint32_t owner[24] = { [0] = 7, [4] = 8, [5] = 8, [16] = 9 };
	struct topoml_place_req r = { .nnodes = 6, .avail = a,
				      .max_leaves = 1 };
	struct topoml_placement p = { 0 };
	char why[256];

	/* 6 nodes need 2 blocks of 4: refused within 1 */
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), -1);
	r.max_leaves = 2;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	ck_assert_int_eq(p.score.nvl_span, 2);
	topoml_placement_clear(&p);
	/* isolate: only blocks without another job's node: b3, b4, b6 */
	r.max_leaves = 0;
	r.hint = TOPOML_HINT_ISOLATE;
	r.owner = owner;
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				      sizeof(why)), 0);
	for (int i = 0; i < p.n; i++) {
		int b = t->nodes[p.nodes[i]].leaf;

		ck_assert_msg(b == 2 || b == 3 || b == 5, "node %s in block "
			      "%s with another job", t->nodes[p.nodes[i]].name,
			      t->switches[b].name);
	}
	topoml_placement_clear(&p);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

/* slurm-block needs blocks. */
START_TEST(test_slurm_block_needs_blocks)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 2, 0);
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	struct topoml_place_req r = { .nnodes = 2, .avail = a };
	struct topoml_placement p = { 0 };
	char why[256];
	enum topoml_policy pol;

	hwloc_bitmap_set_range(a, 0, 15);
	ck_assert_int_eq(topoml_place(t, TOPOML_POLICY_SLURM_BLOCK, &r, &p,
				      why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "needs a block topology"));
	ck_assert_int_eq(topoml_policy_parse("slurm-block", &pol), 0);
	ck_assert_int_eq(pol, TOPOML_POLICY_SLURM_BLOCK);
	hwloc_bitmap_free(a);
	topoml_free(t);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("block");
	TCase *tc = tcase_create("block");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_conf_case, 0, conf_files.gl_pathc);
	tcase_add_test(tc, test_nvl72_model);
	tcase_add_test(tc, test_json_nvl);
	tcase_add_test(tc, test_json_nvl_errors);
	tcase_add_test(tc, test_slurm_block_by_hand);
	tcase_add_test(tc, test_topoml_block_beyond_group);
	tcase_add_test(tc, test_topoml_block_whole);
	tcase_add_test(tc, test_topoml_block_fullest_pair);
	tcase_add_test(tc, test_topoml_block_fewest_pairs);
	tcase_add_test(tc, test_topoml_vs_slurm_block);
	tcase_add_test(tc, test_same_sequence);
	tcase_add_test(tc, test_topoml_block_limits);
	tcase_add_test(tc, test_topoml_block_crowded);
	tcase_add_test(tc, test_topoml_block_admitted);
	tcase_add_test(tc, test_slurm_block_needs_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	char *pat = NULL;
	int nfail;

	topoml_sim_register_baselines();
	if (asprintf(&pat, "%s/fixtures/block/conf/*.conf", _srcdir()) < 0 ||
	    glob(pat, 0, NULL, &conf_files) || conf_files.gl_pathc < 20) {
		fprintf(stderr, "FAIL: block fixtures missing (%s)\n", pat);
		return EXIT_FAILURE;
	}
	free(pat);
	sr = srunner_create(_suite());

	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	globfree(&conf_files);
	return nfail ? EXIT_FAILURE : EXIT_SUCCESS;
}
