/*
 * JSON site files: the bad-input table (each bad file gives its message,
 * never a crash), accepted forms, round trips through the writers, the
 * generators and node set parsing / formatting.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE	/* asprintf */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <slurm/slurm.h>

#include "topoml.h"
#include "sim.h"

static char tmpdir[] = "/tmp/check_json.XXXXXX";

static void _setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void _teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(tmpdir, "/tmp/check_json.XXXXXX");
}

static char *_write(const char *name, const char *text)
{
	char *path;
	FILE *f;

	ck_assert_int_gt(asprintf(&path, "%s/%s", tmpdir, name), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static bool _has(const topoml_errors_t *e, const char *sub)
{
	for (int i = 0; i < e->n; i++)
		if (strstr(e->msg[i], sub))
			return true;
	return false;
}

static void _dump(const topoml_errors_t *e)
{
	for (int i = 0; i < e->n; i++)
		fprintf(stderr, "  got: %s\n", e->msg[i]);
}

/* ---- the bad-input table ------------------------------------------- */

#define FT "{\"family\": \"fat-tree\", \"switches\": "
#define DF "{\"family\": \"dragonfly\", \"groups\": [" \
	   "{\"name\": \"g0\", \"routers\": [{\"name\": \"r0\", \"nodes\": \"n[1-2]\"}]}," \
	   "{\"name\": \"g1\", \"routers\": [{\"name\": \"r1\", \"nodes\": \"n[3-4]\"}]}]"
#define TO "{\"family\": \"torus\", \"dims\": [4, 1, 1], "

static const struct bad {
	const char *text;
	const char *expect;	/* ":..." right after "FILE", else anywhere */
} bad[] = {
	{ "", ":1:1: unexpected end of file" },
	{ "{\"family\": \"fat-tree\",\n \"switches\": [\n", ":3:1: unexpected end of file" },
	{ "{\n \"family\": \"fat-tree\",\n \"switches\": [ }\n", ":3:16: " },
	{ "{\"family\": tru}", ":1:15: " },
	{ "{\"family\": \"torus\", bad: 1}", ":1:21: " },
	{ "{\"family\": \"fat-tree\"}\n}", ":2:1: unexpected text after the JSON document" },
	{ "\xff\xfe\x00garbage", ":1:1: " },
	{ "[1, 2]", ":1:1: the top level must be a JSON object" },
	{ "{}", ": missing \"family\"" },
	{ "{\"family\": 3}", ": missing \"family\"" },
	{ "{\"family\": \"ring\"}", ":1: unknown family \"ring\"" },
	{ "{\"family\": \"fat-tree\"}", ": missing \"switches\"" },
	{ "{\"family\": \"fat-tree\", \"switchs\": []}", ":1: top level: unknown key \"switchs\"" },
	{ FT "{}}", ":1: \"switches\" must be an array" },
	{ FT "[]}", ": the topology has no nodes" },
	{ FT "[3]}", "switches[0]: must be an object" },
	{ FT "[{\"nodes\": \"n1\"}]}", "switches[0]: missing \"name\"" },
	{ FT "[{\"name\": 7}]}", "switches[0]: missing \"name\"" },
	{ FT "[{\"name\": \"a b\", \"nodes\": \"n1\"}]}", ":1: invalid switch name 'a b'" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n"
	  "{\"name\": \"a\", \"nodes\": \"n2\"}]}",
	  ":2: switch a: duplicate name (first at line 1)" },
	{ FT "[\n{\"name\": \"a\", \"nodes\": \"n[1-2]\"},\n"
	  "{\"name\": \"b\", \"nodes\": \"n[2-3]\"}]}",
	  ":3: node n2 is on two leaf switches: a (line 2) and b (line 3)" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n"
	  "{\"name\": \"top\", \"switches\": \"a,zz\"}]}",
	  ":2: switch top: unknown switch zz in \"switches\"" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n"
	  "{\"name\": \"b\", \"switches\": \"c\"},\n"
	  "{\"name\": \"c\", \"switches\": \"b\"}]}",
	  "loop in the switch hierarchy: " },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n{\"name\": \"idle\"}]}",
	  ":2: switch idle has no nodes and no child switches" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n{\"name\": \"e\", \"nodes\": \"\"}]}",
	  ":2: switch e has no nodes and no child switches" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n{\"name\": \"e\", \"switches\": []}]}",
	  ":2: switch e has no nodes and no child switches" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\"},\n"
	  "{\"name\": \"b\", \"nodes\": \"n2\", \"switches\": \"a\"}]}",
	  ":2: switch b has both nodes and child switches" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n[3-1]\"}]}",
	  ":1: switch a: invalid host list \"n[3-1]\" in \"nodes\"" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n[1-70000]\"}]}",
	  "invalid host list" },
	{ FT "[{\"name\": \"a\", \"node\": \"n1\"}]}",
	  ":1: switch a: unknown key \"node\"" },
	{ FT "[{\"name\": \"a\", \"nodes\": 5}]}",
	  "switch a: \"nodes\" must be a host list string or an array of strings" },
	{ FT "[{\"name\": \"a\", \"nodes\": [\"n1\", 2]}]}",
	  "switch a: \"nodes\" must be a host list string" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\", \"link_speed\": \"fast\"}]}",
	  "switch a: \"link_speed\" must be a number >= 0" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\", \"link_speed\": -1}]}",
	  "\"link_speed\" must be a number >= 0" },
	{ FT "[{\"name\": \"a\", \"nodes\": \"n1\", \"switches\": 3}]}",
	  "switch a: \"switches\" must be a host list string" },
	{ "{\"family\": \"dragonfly\"}", ": missing \"groups\"" },
	{ "{\"family\": \"dragonfly\", \"groups\": [{\"name\": \"g0\"}]}",
	  ":1: group g0: missing \"routers\"" },
	{ "{\"family\": \"dragonfly\", \"groups\": [\n{\"name\": \"g0\", \"routers\": []}]}",
	  ":2: group g0 has no routers" },
	{ "{\"family\": \"dragonfly\", \"groups\": [{\"name\": \"g0\", \"routers\": [{\"nodes\": \"n1\"}]}]}",
	  "routers[0]: missing \"name\"" },
	{ "{\"family\": \"dragonfly\", \"groups\": [\n"
	  "{\"name\": \"g0\", \"routers\": [{\"name\": \"r0\", \"nodes\": \"n1\"}]},\n"
	  "{\"name\": \"g0\", \"routers\": [{\"name\": \"r1\", \"nodes\": \"n2\"}]}]}",
	  ":3: group g0: duplicate name (first at line 2)" },
	{ "{\"family\": \"dragonfly\", \"groups\": [\n"
	  "{\"name\": \"g0\", \"routers\": [{\"name\": \"r0\", \"nodes\": \"n1\"}]},\n"
	  "{\"name\": \"g1\", \"routers\": [{\"name\": \"r0\", \"nodes\": \"n2\"}]}]}",
	  ":3: router r0: duplicate name (first at line 2)" },
	{ "{\"family\": \"dragonfly\", \"groups\": [\n"
	  "{\"name\": \"g0\", \"routers\": [{\"name\": \"r0\", \"nodes\": \"n[1-2]\"}]},\n"
	  "{\"name\": \"g1\", \"routers\": [{\"name\": \"r1\", \"nodes\": \"n2\"}]}]}",
	  ":3: node n2 is on two routers: r0 (line 2) and r1 (line 3)" },
	{ DF ", \"global_links\": \"ring\"}",
	  "\"global_links\": unknown arrangement \"ring\"" },
	{ DF ", \"global_links\": 3}", "\"global_links\" must be an arrangement name" },
	{ DF ", \"global_links\": [[\"g0\", \"g9\"]]}", "global_links[0]: unknown group g9" },
	{ DF ", \"global_links\": [[\"g0\", \"g0\"]]}",
	  "global_links[0]: a link joins two different groups" },
	{ DF ", \"global_links\": [[\"g0\", \"g1\", 0]]}",
	  "global_links[0]: the link count must be an integer >= 1" },
	{ DF ", \"global_links\": [[\"g0\"]]}", "global_links[0]: must be [" },
	{ DF ", \"global_links\": []}",
	  "group g1 is not connected to group g0 by global links" },
	{ "{\"family\": \"torus\"}", ": missing \"dims\"" },
	{ "{\"family\": \"torus\", \"dims\": [0, 1, 1], \"nodes\": []}",
	  "\"dims\" must be [X, Y, Z], integers >= 1" },
	{ "{\"family\": \"torus\", \"dims\": [2, 2], \"nodes\": []}",
	  "\"dims\" must be [X, Y, Z]" },
	{ "{\"family\": \"torus\", \"dims\": [100000, 100000, 100000], \"nodes\": []}",
	  "\"dims\": torus too large" },
	{ TO "\"wrap\": \"yes\", \"nodes\": [{\"name\": \"c1\", \"coord\": [0, 0, 0]}]}",
	  "\"wrap\" must be true, false or [bool, bool, bool]" },
	{ TO "\"nodes\": [], \"node_pattern\": {\"prefix\": \"c\"}}",
	  "a torus needs exactly one of \"nodes\" and \"node_pattern\"" },
	{ TO "\"nodes\": [\n{\"name\": \"c1\", \"coord\": [4, 0, 0]}]}",
	  ":2: node c1: coordinate (4,0,0) outside the torus dimensions 4x1x1" },
	{ TO "\"nodes\": [\n{\"name\": \"c1\", \"coord\": [1, 0, 0]},\n"
	  "{\"name\": \"c2\", \"coord\": [1, 0, 0]}]}",
	  ":3: node c2: coordinate (1,0,0) already taken by node c1 (line 2)" },
	{ TO "\"nodes\": [{\"name\": \"c1\", \"coord\": [1, 0]}]}",
	  "node c1: \"coord\" must be [x, y, z]" },
	{ TO "\"nodes\": [{\"name\": \"c1\", \"coord\": [-1, 0, 0]}]}",
	  "node c1: coordinate (-1,0,0) outside" },
	{ TO "\"nodes\": [\n{\"name\": \"c1\", \"coord\": [0, 0, 0]},\n"
	  "{\"name\": \"c1\", \"coord\": [1, 0, 0]}]}",
	  ":3: node c1: duplicate name (first at line 2)" },
	{ TO "\"node_pattern\": {\"first\": 1}}",
	  "node_pattern: \"prefix\" must be a non-empty string" },
	{ TO "\"node_pattern\": {\"prefix\": \"c\", \"order\": \"xxz\"}}",
	  "node_pattern: \"order\" must be a permutation of \"xyz\"" },
	{ TO "\"node_pattern\": {\"prefix\": \"c\", \"count\": 5}}",
	  "node_pattern: \"count\" must be 1 .. 4" },
	{ TO "\"node_pattern\": {\"prefix\": \"c\", \"first\": -2}}",
	  "node_pattern: \"first\" and \"digits\" must be integers >= 0" },
	{ TO "\"node_pattern\": {\"prefix\": \"c\", \"step\": 2}}",
	  "node_pattern: unknown key \"step\"" },
	{ TO "\"node_pattern\": [1]}", "\"node_pattern\" must be an object" },
};

START_TEST(test_bad_input)
{
	const struct bad *b = &bad[_i];
	topoml_errors_t e = { 0 };
	char name[32];
	char *path, *want;
	topoml_topo_t *t;

	snprintf(name, sizeof(name), "bad%d.json", _i);
	/* the garbage case has a NUL inside: write its bytes */
	if (b->text[0] == '\xff') {
		FILE *f;

		ck_assert_int_gt(asprintf(&path, "%s/%s", tmpdir, name), 0);
		f = fopen(path, "w");
		fwrite(b->text, 1, 10, f);
		fclose(f);
	} else {
		path = _write(name, b->text);
	}
	t = topoml_load_json(path, &e);
	ck_assert_ptr_null(t);
	ck_assert_int_ge(e.n, 1);
	/* ":LINE..." right after the file name, else anywhere */
	if (b->expect[0] == ':')
		ck_assert_int_gt(asprintf(&want, "%s%s", path, b->expect), 0);
	else
		want = strdup(b->expect);
	if (!_has(&e, want))
		_dump(&e);
	ck_assert_msg(_has(&e, want), "case %d: no message \"%s\"", _i, want);
	/* every message names the file */
	for (int i = 0; i < e.n; i++)
		ck_assert_msg(!strncmp(e.msg[i], path, strlen(path)),
			      "case %d: \"%s\" does not start with the file", _i,
			      e.msg[i]);
	free(want);
	free(path);
	topoml_errors_clear(&e);
}
END_TEST

START_TEST(test_missing_file)
{
	topoml_errors_t e = { 0 };

	ck_assert_ptr_null(topoml_load_json("/nonexistent/x.json", &e));
	ck_assert(_has(&e, "/nonexistent/x.json: No such file or directory"));
	topoml_errors_clear(&e);
	/* no error list: still no crash */
	ck_assert_ptr_null(topoml_load_json("/nonexistent/x.json", NULL));
}
END_TEST

START_TEST(test_deep_nesting)
{
	topoml_errors_t e = { 0 };
	char *text = malloc(40001), *path;

	memset(text, '[', 20000);
	memset(text + 20000, ']', 20000);
	text[40000] = '\0';
	path = _write("deep.json", text);
	ck_assert_ptr_null(topoml_load_json(path, &e));
	ck_assert_int_ge(e.n, 1);
	ck_assert(_has(&e, "nesting too deep"));
	free(path);
	free(text);
	topoml_errors_clear(&e);
}
END_TEST

/* ---- accepted forms ------------------------------------------------ */

START_TEST(test_accepted_forms)
{
	/* comments, trailing commas, a parent before its children, node
	 * lists as arrays, switch lists as host lists */
	const char *text =
		"// a site file\n"
		"{\"family\": \"fat-tree\", \"name\": \"x\", \"comment\": [1],\n"
		" \"switches\": [\n"
		"  {\"name\": \"top\", \"switches\": \"leaf[1-2]\"},\n"
		"  /* leaves */ {\"name\": \"leaf1\", \"nodes\": [\"n1\", \"n[2-3]\"],\n"
		"   \"link_speed\": 100.5, \"comment\": \"x\"},\n"
		"  {\"name\": \"leaf2\", \"nodes\": \"n[4-5]\",},\n"
		" ],\n"
		"}\n";
	topoml_errors_t e = { 0 };
	char *path = _write("ok.json", text);
	topoml_topo_t *t = topoml_load_json(path, &e);

	if (!t)
		_dump(&e);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 5);
	ck_assert_int_eq(t->nlevels, 2);
	int top = topoml_switch_by_name(t, "top");
	int l1 = topoml_switch_by_name(t, "leaf1");
	ck_assert_int_eq(t->switches[top].level, 1);
	ck_assert_int_eq(t->switches[top].line, 4);
	ck_assert_int_eq(t->switches[l1].line, 5);
	ck_assert(t->switches[l1].link_speed == 100.5);
	/* nodes carry the line of the switch that lists them */
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "n4")].line, 7);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "n3")].leaf, l1);
	ck_assert_int_eq(topoml_hops(t, 0, 4), 4);
	ck_assert_str_eq(t->source, path);
	topoml_free(t);
	free(path);

	/* a UTF-8 byte order mark is skipped, and not counted as a column */
	path = _write("bom.json", "\xef\xbb\xbf{\"family\": \"torus\", \"dims\": [1, 1, 1],"
		      " \"node_pattern\": {\"prefix\": \"c\"}}");
	t = topoml_load_json(path, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->nodes[0].name, "c1");
	topoml_free(t);
	free(path);
	path = _write("bombad.json", "\xef\xbb\xbf{\"family\" 1}");
	ck_assert_ptr_null(topoml_load_json(path, &e));
	ck_assert_int_eq(e.n, 1);
	ck_assert_ptr_nonnull(strstr(e.msg[0], "bombad.json:1:11: "));
	free(path);
	topoml_errors_clear(&e);
}
END_TEST

START_TEST(test_torus_pattern)
{
	const char *text =
		"{\"family\": \"torus\", \"dims\": [2, 3, 2], \"wrap\": [true, false, true],\n"
		" \"node_pattern\": {\"prefix\": \"t\", \"first\": 0, \"digits\": 2, \"order\": \"zyx\"}}\n";
	topoml_errors_t e = { 0 };
	char *path = _write("tp.json", text);
	topoml_topo_t *t = topoml_load_json(path, &e);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 12);
	ck_assert_str_eq(t->nodes[0].name, "t00");
	/* z fastest: t01 at (0,0,1), t02 at (0,1,0), t06 at (1,0,0) */
	int n = topoml_node_by_name(t, "t01");
	ck_assert_int_eq(t->nodes[n].coord[2], 1);
	ck_assert_int_eq(t->nodes[n].coord[0], 0);
	n = topoml_node_by_name(t, "t02");
	ck_assert_int_eq(t->nodes[n].coord[1], 1);
	n = topoml_node_by_name(t, "t06");
	ck_assert_int_eq(t->nodes[n].coord[0], 1);
	ck_assert(t->wrap[0] && !t->wrap[1] && t->wrap[2]);
	/* (0,0,0)-(0,2,0): y does not wrap: 2; z wraps: (0,0,0)-(0,0,1) 1 */
	ck_assert_int_eq(topoml_hops(t, topoml_node_by_name(t, "t00"),
				     topoml_node_by_name(t, "t04")), 2);
	topoml_free(t);
	free(path);
}
END_TEST

/* ---- round trips --------------------------------------------------- */

static void _same_model(const topoml_topo_t *a, const topoml_topo_t *b)
{
	ck_assert_int_eq(a->family, b->family);
	ck_assert_int_eq(a->nnodes, b->nnodes);
	ck_assert_int_eq(a->nswitches, b->nswitches);
	ck_assert_int_eq(a->nlevels, b->nlevels);
	ck_assert_int_eq(a->ngroups, b->ngroups);
	for (int i = 0; i < a->nnodes; i++) {
		const struct topoml_node *x = &a->nodes[i], *y = &b->nodes[i];

		ck_assert_str_eq(x->name, y->name);
		ck_assert_int_eq(x->group, y->group);
		ck_assert_int_eq(x->coord[0], y->coord[0]);
		ck_assert_int_eq(x->coord[1], y->coord[1]);
		ck_assert_int_eq(x->coord[2], y->coord[2]);
		if (x->leaf >= 0)
			ck_assert_str_eq(a->switches[x->leaf].name,
					 b->switches[y->leaf].name);
		else
			ck_assert_int_eq(y->leaf, -1);
	}
	for (int i = 0; i < a->nswitches; i++) {
		const struct topoml_switch *x = &a->switches[i];
		int j = topoml_switch_by_name(b, x->name);
		const struct topoml_switch *y = &b->switches[j];

		ck_assert_int_ge(j, 0);
		ck_assert_int_eq(x->level, y->level);
		ck_assert_int_eq(x->nparents, y->nparents);
		ck_assert_int_eq(x->nchildren, y->nchildren);
		ck_assert_int_eq(x->nnodes, y->nnodes);
		ck_assert(x->link_speed == y->link_speed);
		ck_assert(hwloc_bitmap_isequal(x->desc, y->desc));
		for (int k = 0; k < x->nparents; k++)
			ck_assert_str_eq(a->switches[x->parents[k]].name,
					 b->switches[y->parents[k]].name);
	}
	for (int g = 0; g < a->ngroups; g++) {
		ck_assert_str_eq(a->groups[g].name, b->groups[g].name);
		ck_assert_int_eq(a->groups[g].nrouters, b->groups[g].nrouters);
		for (int h = 0; h < a->ngroups; h++)
			ck_assert_int_eq(a->global_links[g * a->ngroups + h],
					 b->global_links[g * a->ngroups + h]);
	}
	if (a->family == TOPOML_DRAGONFLY)
		ck_assert_int_eq(a->df_arrangement, b->df_arrangement);
	for (int d = 0; d < 3; d++) {
		ck_assert_int_eq(a->dims[d], b->dims[d]);
		ck_assert_int_eq(a->wrap[d], b->wrap[d]);
	}
}

static topoml_topo_t *_round_trip(const topoml_topo_t *t, const char *name)
{
	topoml_errors_t e = { 0 };
	char *path;
	topoml_topo_t *back;
	FILE *f;

	ck_assert_int_gt(asprintf(&path, "%s/%s", tmpdir, name), 0);
	f = fopen(path, "w");
	ck_assert_int_eq(topoml_write_json(t, f), 0);
	fclose(f);
	back = topoml_load_json(path, &e);
	if (!back)
		_dump(&e);
	ck_assert_ptr_nonnull(back);
	_same_model(t, back);
	free(path);
	topoml_errors_clear(&e);
	return back;
}

START_TEST(test_round_trip_generated)
{
	topoml_topo_t *t, *back;

	t = topoml_gen_fat_tree("c", 1000, 16, 4, 0);
	ck_assert_ptr_nonnull(t);
	back = _round_trip(t, "ft.json");
	topoml_free(back);
	topoml_free(t);

	t = topoml_gen_dragonfly("d", 5, 3, 2, TOPOML_DF_RELATIVE);
	back = _round_trip(t, "df.json");
	topoml_free(back);
	topoml_free(t);

	t = topoml_gen_torus("t", 3, 4, 5, false);
	back = _round_trip(t, "to.json");
	topoml_free(back);
	topoml_free(t);
}
END_TEST

/* The shipped examples: they load, and survive write + load. */
START_TEST(test_round_trip_examples)
{
	static const char *files[] = { "fat-tree.json", "dragonfly.json",
				       "torus.json", "mesh.json" };
	const char *top = getenv("TOP_SRCDIR");
	topoml_errors_t e = { 0 };
	char path[4096], out[64];

	ck_assert_msg(top != NULL, "TOP_SRCDIR is not set (run from make check)");
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		topoml_topo_t *t, *back;

		snprintf(path, sizeof(path), "%s/contrib/topologies/%s", top,
			 files[i]);
		t = topoml_load_json(path, &e);
		if (!t)
			_dump(&e);
		ck_assert_ptr_nonnull(t);
		snprintf(out, sizeof(out), "rt%zu.json", i);
		back = _round_trip(t, out);
		topoml_free(back);
		topoml_free(t);
	}
	topoml_errors_clear(&e);
}
END_TEST

/* A hand-edited torus (holes, any order) is written node by node. */
START_TEST(test_round_trip_torus_explicit)
{
	const char *text =
		"{\"family\": \"torus\", \"dims\": [3, 3, 1], \"wrap\": false, \"nodes\": [\n"
		"{\"name\": \"z9\", \"coord\": [2, 2, 0]},\n"
		"{\"name\": \"a1\", \"coord\": [0, 0, 0]}]}\n";
	char *path = _write("holes.json", text);
	topoml_topo_t *t = topoml_load_json(path, NULL), *back;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->coord_node[8], 0);
	ck_assert_int_eq(t->coord_node[1], -1);
	back = _round_trip(t, "holes-rt.json");
	topoml_free(back);
	topoml_free(t);
	free(path);
}
END_TEST

/* topology.conf written for a fat-tree reads back (loaders' reader). */
START_TEST(test_conf_round_trip)
{
	topoml_topo_t *t = topoml_gen_fat_tree("c", 70000, 32, 16, 0), *back;
	topoml_errors_t e = { 0 };
	char *path;
	FILE *f;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_gt(asprintf(&path, "%s/topology.conf", tmpdir), 0);
	f = fopen(path, "w");
	ck_assert_int_eq(topoml_write_conf(t, f), 0);
	fclose(f);
	back = topoml_load(path, TOPOML_FMT_AUTO, &e);
	if (!back)
		_dump(&e);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(back->family, TOPOML_FAT_TREE);
	_same_model(t, back);
	topoml_free(back);
	topoml_free(t);
	free(path);
	topoml_errors_clear(&e);

	/* a torus has no topology.conf form */
	t = topoml_gen_torus(NULL, 2, 2, 2, true);
	f = tmpfile();
	ck_assert_int_eq(topoml_write_conf(t, f), -1);
	fclose(f);
	topoml_free(t);
}
END_TEST

/* A dragonfly as topology.conf: routers, a switch per group, a top. */
START_TEST(test_conf_dragonfly)
{
	topoml_topo_t *t = topoml_gen_dragonfly("n", 3, 2, 2,
						TOPOML_DF_ALL_TO_ALL), *back;
	topoml_errors_t e = { 0 };
	char *path;
	FILE *f;

	ck_assert_int_gt(asprintf(&path, "%s/df.conf", tmpdir), 0);
	f = fopen(path, "w");
	ck_assert_int_eq(topoml_write_conf(t, f), 0);
	fclose(f);
	back = topoml_load(path, TOPOML_FMT_CONF, &e);
	if (!back)
		_dump(&e);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(back->nnodes, 12);
	ck_assert_int_eq(back->nlevels, 3);
	ck_assert_int_ge(topoml_switch_by_name(back, "top"), 0);
	/* same router 2 hops, same group 4, across groups 6 */
	ck_assert_int_eq(topoml_hops(back, 0, 1), 2);
	ck_assert_int_eq(topoml_hops(back, 0, 2), 4);
	ck_assert_int_eq(topoml_hops(back, 0, 11), 6);
	topoml_free(back);
	topoml_free(t);
	free(path);

	/* a router named like its group: the group switch gets a new name */
	path = _write("clash.json",
		"{\"family\": \"dragonfly\", \"groups\": [\n"
		"{\"name\": \"a\", \"routers\": [{\"name\": \"a\", \"nodes\": \"n[1-2]\"},"
		" {\"name\": \"a-group\", \"nodes\": \"n[3-4]\"}]},\n"
		"{\"name\": \"b\", \"routers\": [{\"name\": \"top\", \"nodes\": \"n5\"}]}]}\n");
	t = topoml_load_json(path, &e);
	ck_assert_ptr_nonnull(t);
	free(path);
	ck_assert_int_gt(asprintf(&path, "%s/clash.conf", tmpdir), 0);
	f = fopen(path, "w");
	ck_assert_int_eq(topoml_write_conf(t, f), 0);
	fclose(f);
	back = topoml_load(path, TOPOML_FMT_CONF, &e);
	if (!back)
		_dump(&e);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(back->nswitches, 3 + 2 + 1);
	ck_assert_int_eq(back->nlevels, 3);
	ck_assert_int_eq(topoml_hops(back, 0, 2), 4);
	ck_assert_int_eq(topoml_hops(back, 0, 4), 6);
	topoml_free(back);
	topoml_free(t);
	free(path);
	topoml_errors_clear(&e);
}
END_TEST

/* ---- generators ---------------------------------------------------- */

START_TEST(test_gen_fat_tree)
{
	topoml_topo_t *t = topoml_gen_fat_tree("c", 4096, 32, 0, 0);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 4096);
	/* 128 leaves, 4 aggregation switches (radix 32), 1 root */
	ck_assert_int_eq(t->nswitches, 133);
	ck_assert_int_eq(t->nlevels, 3);
	ck_assert_str_eq(t->nodes[0].name, "c1");
	ck_assert_str_eq(t->nodes[4095].name, "c4096");
	ck_assert_str_eq(t->switches[t->nodes[32].leaf].name, "s0-1");
	ck_assert_int_eq(topoml_hops(t, 0, 31), 2);
	ck_assert_int_eq(topoml_hops(t, 0, 32), 4);
	ck_assert_int_eq(topoml_hops(t, 0, 4095), 6);
	ck_assert_int_eq(hwloc_bitmap_weight(
		t->switches[topoml_switch_by_name(t, "s2-0")].desc), 4096);
	topoml_free(t);

	/* uneven: last leaf holds 2 nodes; 3 leaves, radix 2 */
	t = topoml_gen_fat_tree(NULL, 10, 4, 2, 0);
	ck_assert_int_eq(t->nswitches, 3 + 2 + 1);
	ck_assert_int_eq(t->switches[2].nnodes, 2);
	ck_assert_str_eq(t->nodes[9].name, "node10");
	topoml_free(t);

	/* fixed levels: 2 = leaves under one root; 4 = a deeper chain */
	t = topoml_gen_fat_tree("x", 100, 10, 4, 2);
	ck_assert_int_eq(t->nlevels, 2);
	ck_assert_int_eq(t->nswitches, 11);
	topoml_free(t);
	t = topoml_gen_fat_tree("x", 100, 10, 4, 4);
	ck_assert_int_eq(t->nlevels, 4);
	topoml_free(t);
	/* a flat set of leaves */
	t = topoml_gen_fat_tree("x", 20, 10, 4, 1);
	ck_assert_int_eq(t->nlevels, 1);
	ck_assert_int_eq(topoml_common_level(t, 0, 19), 1);
	topoml_free(t);

	ck_assert_ptr_null(topoml_gen_fat_tree("c", 0, 32, 0, 0));
	ck_assert_ptr_null(topoml_gen_fat_tree("c", 10, 0, 0, 0));
	ck_assert_ptr_null(topoml_gen_fat_tree("c", 10, 2, 1, 0));
}
END_TEST

START_TEST(test_gen_dragonfly)
{
	topoml_topo_t *t = topoml_gen_dragonfly("nid", 4, 3, 2,
						TOPOML_DF_ABSOLUTE);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 24);
	ck_assert_int_eq(t->ngroups, 4);
	ck_assert_int_eq(t->nswitches, 12);
	ck_assert_str_eq(t->switches[t->nodes[23].leaf].name, "g3r2");
	ck_assert_str_eq(t->nodes[6].name, "nid7");
	ck_assert_int_eq(t->nodes[6].group, 1);
	ck_assert_int_eq(topoml_hops(t, 0, 23), 5);
	ck_assert_int_eq(topoml_global_hops(t, 0, 23), 1);
	ck_assert_int_eq(topoml_hops(t, 0, 5), 3);
	ck_assert_int_eq(t->global_links[0 * 4 + 3], 1);
	topoml_free(t);
	ck_assert_ptr_null(topoml_gen_dragonfly("n", 2, 2, 2,
						TOPOML_DF_EXPLICIT));
	ck_assert_ptr_null(topoml_gen_dragonfly("n", 0, 2, 2,
						TOPOML_DF_ALL_TO_ALL));
}
END_TEST

START_TEST(test_gen_torus)
{
	topoml_topo_t *t = topoml_gen_torus("c", 4, 3, 2, true);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 24);
	/* x fastest: c2 = (1,0,0), c5 = (0,1,0), c13 = (0,0,1) */
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "c2")].coord[0], 1);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "c5")].coord[1], 1);
	ck_assert_int_eq(t->nodes[topoml_node_by_name(t, "c13")].coord[2], 1);
	ck_assert_int_eq(topoml_hops(t, 0, 3), 1);	/* wraps in x */
	topoml_free(t);
	t = topoml_gen_torus("c", 4, 3, 2, false);
	ck_assert_int_eq(topoml_hops(t, 0, 3), 3);
	topoml_free(t);
	ck_assert_ptr_null(topoml_gen_torus("c", 0, 3, 2, false));
}
END_TEST

/* ---- node sets ----------------------------------------------------- */

START_TEST(test_nodeset)
{
	topoml_topo_t *t = topoml_gen_fat_tree("n", 16, 4, 0, 0);
	topoml_errors_t e = { 0 };
	hwloc_bitmap_t set;
	char *s;
	int order[] = { 5, 4, 0, 1, 2 };

	set = topoml_nodeset_parse(t, "n[1-3],n7,x[1-2],n16", &e);
	ck_assert_ptr_nonnull(set);
	ck_assert_int_eq(hwloc_bitmap_weight(set), 5);
	ck_assert(hwloc_bitmap_isset(set, 6));
	ck_assert(hwloc_bitmap_isset(set, 15));
	ck_assert(_has(&e, "unknown nodes x[1-2]"));
	s = topoml_nodeset_format(t, set);
	ck_assert_str_eq(s, "n[1-3,7,16]");
	free(s);
	hwloc_bitmap_free(set);
	topoml_errors_clear(&e);

	set = topoml_nodeset_parse(t, "n[4-2]", &e);
	ck_assert_ptr_null(set);
	ck_assert(_has(&e, "invalid host list 'n[4-2]'"));
	topoml_errors_clear(&e);

	set = topoml_nodeset_parse(t, "", NULL);
	ck_assert_int_eq(hwloc_bitmap_weight(set), 0);
	s = topoml_nodeset_format(t, set);
	ck_assert_str_eq(s, "");
	free(s);
	hwloc_bitmap_free(set);

	/* a list keeps its order */
	s = topoml_nodes_format(t, order, 5);
	ck_assert_str_eq(s, "n[6,5,1-3]");
	free(s);
	topoml_free(t);
}
END_TEST

/* Slurm reads back no range over 64k hosts: the formatter splits. */
START_TEST(test_nodeset_large)
{
	topoml_topo_t *t = topoml_gen_torus("c", 100, 100, 7, true);
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), back;
	hostlist_t hl;
	char *s;

	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	s = topoml_nodeset_format(t, all);
	ck_assert_ptr_nonnull(s);
	hl = slurm_hostlist_create(s);
	ck_assert_ptr_nonnull(hl);
	ck_assert_int_eq(slurm_hostlist_count(hl), 70000);
	slurm_hostlist_destroy(hl);
	back = topoml_nodeset_parse(t, s, NULL);
	ck_assert(hwloc_bitmap_isequal(all, back));
	free(s);
	hwloc_bitmap_free(back);
	hwloc_bitmap_free(all);
	topoml_free(t);
}
END_TEST


/* ---- linear time: each case took 1 to 6 s under ASan before its fix -- */

static double _cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "{family, HEAD" + ITEM(i) for i < n joined by SEP + "TAIL}" */
static char *_gen(const char *head, const char *item, const char *sep,
		  int n, const char *tail)
{
	size_t cap = strlen(head) + strlen(tail) + (size_t)n * 64 + 64;
	char *s = malloc(cap), *p = s;

	ck_assert_ptr_nonnull(s);
	p += sprintf(p, "{\"family\": \"fat-tree\", %s", head);
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s", i ? sep : ""), p += sprintf(p, item, i);
	sprintf(p, "%s}", tail);
	return s;
}

static const struct {
	const char *what, *head, *item, *sep, *tail;
	int n;
	bool ok;
} linear[] = {
	/* an error per element, each looked up the line from the start */
	{ "non-object switches", "\"switches\": [", "%1$d", ",", "]",
	  50000, false },
	/* the host array was joined by one realloc per element */
	{ "long nodes array", "\"switches\": [{\"name\": \"s1\", \"nodes\": [",
	  "\"n%1$d\"", ",", "]}]", 40000, true },
	/* names written with escapes are never found in the text */
	{ "escaped names", "\"switches\": [",
	  "{\"name\": \"s\\u0030%1$d\", \"nodes\": \"n%1$d\"}", ",", "]",
	  8000, true },
	/* an unknown key per line lookup */
	{ "unknown keys", "", "\"k%1$d\": 0", ",", ", \"switches\": []",
	  30000, false },
};

START_TEST(test_linear)
{
	char *text = _gen(linear[_i].head, linear[_i].item, linear[_i].sep,
			  linear[_i].n, linear[_i].tail);
	char *path = _write("linear.json", text);
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	double t0 = _cpu(), dt;

	t = topoml_load_json(path, &err);
	dt = _cpu() - t0;
	ck_assert_msg(dt < 1.0, "%s (%zu bytes): %.2f s of CPU",
		      linear[_i].what, strlen(text), dt);
	ck_assert_msg(!t == !linear[_i].ok, "%s: %s (%d errors)",
		      linear[_i].what, t ? "loaded" : "did not load", err.n);
	if (t)
		topoml_free(t);
	topoml_errors_clear(&err);
	free(path);
	free(text);
}
END_TEST

/* N groups of one router and one node, all-to-all global links. */
static char *_gen_df(int n)
{
	char *s = malloc((size_t)n * 96 + 128), *p = s;

	ck_assert_ptr_nonnull(s);
	p += sprintf(p, "{\"family\": \"dragonfly\", \"groups\": [");
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s{\"name\": \"g%d\", \"routers\": [{\"name\": "
			     "\"r%d\", \"nodes\": \"n%d\"}]}", i ? "," : "", i,
			     i, i);
	sprintf(p, "], \"global_links\": \"all-to-all\"}");
	return s;
}

/*
 * The group matrices are groups^2: 1500 all-to-all groups took minutes
 * when distances were searched from every group (g^3); more than 4096
 * groups are refused with a reason, not allocated.
 */
START_TEST(test_dragonfly_groups)
{
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *text, *path;
	double t0, dt;

	text = _gen_df(1500);
	path = _write("df.json", text);
	t0 = _cpu();
	t = topoml_load_json(path, &err);
	dt = _cpu() - t0;
	ck_assert_msg(t != NULL, "%s", err.n ? err.msg[0] : "?");
	ck_assert_int_eq(t->ngroups, 1500);
	ck_assert_msg(dt < 2.0, "1500 all-to-all groups: %.2f s of CPU", dt);
	topoml_free(t);
	free(path);
	free(text);

	text = _gen_df(4097);
	path = _write("df.json", text);
	ck_assert_ptr_null(topoml_load_json(path, &err));
	ck_assert_msg(err.n && strstr(err.msg[0], "more than 4096 dragonfly "
				      "groups"), "%s", err.n ? err.msg[0] : "?");
	topoml_errors_clear(&err);
	free(path);
	free(text);
}
END_TEST

Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");

	tcase_add_unchecked_fixture(tc, _setup, _teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_bad_input, 0, sizeof(bad) / sizeof(*bad));
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_deep_nesting);
	tcase_add_test(tc, test_accepted_forms);
	tcase_add_test(tc, test_torus_pattern);
	tcase_add_test(tc, test_round_trip_generated);
	tcase_add_test(tc, test_round_trip_examples);
	tcase_add_test(tc, test_round_trip_torus_explicit);
	tcase_add_test(tc, test_conf_round_trip);
	tcase_add_test(tc, test_conf_dragonfly);
	tcase_add_test(tc, test_gen_fat_tree);
	tcase_add_test(tc, test_gen_dragonfly);
	tcase_add_test(tc, test_gen_torus);
	tcase_add_test(tc, test_nodeset);
	tcase_add_test(tc, test_nodeset_large);
	tcase_add_test(tc, test_dragonfly_groups);
	tcase_add_loop_test(tc, test_linear, 0,
			    sizeof(linear) / sizeof(linear[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
