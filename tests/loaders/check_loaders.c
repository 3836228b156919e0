/*
 * Loaders: Slurm 22.05 topology.conf (line syntax and semantics, as
 * slurmctld's topology/tree reads it), ibnetdiscover import, format
 * detection, and round trips through the writers.
 *
 * The topology.conf cases live in tests/fixtures/loaders/conf/, each with
 * its expectations in leading comments (Slurm ignores them, and
 * test_conf_vs_slurm.sh feeds the same files to a real slurmctld):
 *   # expect: nodes=N switches=S leaves=L levels=V
 *   # expect-leaf: NODE SWITCH
 *   # expect-error: TEXT      (load fails; an error reads FILE:TEXT...)
 *   # expect-warning: TEXT    (load succeeds with exactly these warnings)
 *   # slurm: accepts          (a failing file Slurm runs with: the loader
 *                              must say so, else that Slurm refuses it)
 * Every error and warning of these files starts FILE:LINE:COL.
 * Real site files come from $REALDATA; without it those cases are skipped
 * and say so on stderr.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <glob.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "topoml.h"
#include "sim.h"
#include "topoml/load.h"
#include "util/util.h"

static glob_t conf_fixtures;
static char tmpdir[] = "/tmp/check_loaders.XXXXXX";

static const char *_tests_dir(void)
{
	const char *d = getenv("TESTS_DIR");

	return d && *d ? d : TESTS_SRCDIR;
}

/* REALDATA/sub, or NULL (and a note) when the real data is absent. */
static char *_realdata(const char *sub)
{
	const char *r = getenv("REALDATA");
	char *p = NULL;

	if (!r || !*r || access(r, R_OK)) {
		fprintf(stderr, "SKIP: REALDATA (%s) absent: %s cases "
			"skipped\n", r ? r : "unset", sub);
		return NULL;
	}
	if (asprintf(&p, "%s/%s", r, sub) < 0)
		return NULL;
	return p;
}

/* A file in the test's temporary directory with the given content. */
static char *_write(const char *name, const char *content)
{
	char *p;
	FILE *f;

	ck_assert_int_ge(asprintf(&p, "%s/%s", tmpdir, name), 0);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
	return p;
}

/* msg reads "path:TEXT..." or "path: TEXT...". */
static bool _matches(const char *msg, const char *path, const char *text)
{
	size_t n = strlen(path);

	if (strncmp(msg, path, n) || msg[n] != ':')
		return false;
	msg += n + 1;
	if (*msg == ' ' && *text != ' ')
		msg++;
	return !strncmp(msg, text, strlen(text));
}

static bool _any(const topoml_errors_t *e, const char *path,
		 const char *text)
{
	for (int i = 0; i < e->n; i++)
		if (_matches(e->msg[i], path, text))
			return true;
	return false;
}

static bool _has(const topoml_errors_t *e, const char *sub)
{
	for (int i = 0; i < e->n; i++)
		if (strstr(e->msg[i], sub))
			return true;
	return false;
}

static char *_joined(const topoml_errors_t *e)
{
	static char buf[4096];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < e->n && len < sizeof(buf) - 2; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "\n  %s",
				e->msg[i]);
	return buf;
}

/* Every message starts FILE:LINE:COL: (any file: an Include's too). */
static void _assert_positions(const topoml_errors_t *e, const char *what)
{
	regex_t re;

	ck_assert_int_eq(regcomp(&re, "^[^:]+:[1-9][0-9]*:[1-9][0-9]*: ",
				 REG_EXTENDED | REG_NOSUB), 0);
	for (int i = 0; i < e->n; i++)
		ck_assert_msg(regexec(&re, e->msg[i], 0, NULL, 0) == 0,
			      "%s: no FILE:LINE:COL in '%s'", what,
			      e->msg[i]);
	regfree(&re);
}

static int _nleaves(const topoml_topo_t *t)
{
	int n = 0;

	for (int i = 0; i < t->nswitches; i++)
		n += t->switches[i].nnodes > 0;
	return n;
}

static const char *_leaf_of(const topoml_topo_t *t, const char *node)
{
	int n = topoml_node_by_name(t, node);

	if (n < 0 || t->nodes[n].leaf < 0)
		return NULL;
	return t->switches[t->nodes[n].leaf].name;
}

/* ---- topology.conf fixtures --------------------------------------- */

START_TEST(test_conf_fixture)
{
	const char *path = conf_fixtures.gl_pathv[_i];
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t;
	char line[512], *errtext = NULL;
	int nwarn = 0, nodes = -1, sws = -1, leaves = -1, levels = -1;
	bool refuses = true, slurm_accepts = false;
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	t = topoml_load_conf_judged(path, &err, &warn, &refuses);
	_assert_positions(&err, path);
	_assert_positions(&warn, path);
	while (fgets(line, sizeof(line), f) && line[0] == '#') {
		char *v, a[128], b[128];

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "# slurm: accepts")) {
			slurm_accepts = true;
		} else if ((v = strstr(line, "# expect-error: ")) == line) {
			errtext = strdup(v + 16);
		} else if ((v = strstr(line, "# expect-warning: ")) == line) {
			nwarn++;
			ck_assert_msg(_any(&warn, path, v + 18),
				      "%s: no warning '%s' in:%s", path,
				      v + 18, _joined(&warn));
		} else if (sscanf(line, "# expect: nodes=%d switches=%d "
				  "leaves=%d levels=%d", &nodes, &sws,
				  &leaves, &levels) == 4) {
			continue;
		} else if (sscanf(line, "# expect-leaf: %127s %127s", a,
				  b) == 2) {
			ck_assert_msg(t, "%s: did not load:%s", path,
				      _joined(&err));
			ck_assert_msg(_leaf_of(t, a) &&
				      !strcmp(_leaf_of(t, a), b),
				      "%s: node %s on %s, want %s", path, a,
				      _leaf_of(t, a) ? _leaf_of(t, a) : "-",
				      b);
		}
	}
	fclose(f);
	if (errtext) {
		ck_assert_msg(!t, "%s loaded, want error '%s'", path, errtext);
		ck_assert_msg(_any(&err, path, errtext),
			      "%s: no error '%s' in:%s", path, errtext,
			      _joined(&err));
		ck_assert_msg(refuses == !slurm_accepts, "%s: the loader says "
			      "Slurm %s it", path, refuses ? "refuses" :
			      "runs with");
	} else {
		ck_assert_msg(!refuses, "%s: loaded, yet Slurm refuses", path);
		ck_assert_msg(t, "%s did not load:%s", path, _joined(&err));
		ck_assert_msg(nodes >= 0, "%s: no '# expect:' line", path);
		ck_assert_int_eq(t->nnodes, nodes);
		ck_assert_int_eq(t->nswitches, sws);
		ck_assert_int_eq(_nleaves(t), leaves);
		ck_assert_int_eq(t->nlevels, levels);
		ck_assert_msg(warn.n == nwarn, "%s: %d warnings, want %d:%s",
			      path, warn.n, nwarn, _joined(&warn));
	}
	free(errtext);
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
}
END_TEST

/* ---- topology.conf cases that a fixture file cannot hold ---------- */

struct inline_case {
	const char *name;
	const char *content;
	const char *error;	/* NULL: loads */
	int nodes;
	bool slurm_runs;	/* a failing file Slurm runs with */
};

static const struct inline_case inline_cases[] = {
	/* Slurm: "file is empty", then "No switches configured". */
	{ "empty.conf", "", ":1:1: no switches configured", 0, true },
	{ "blank.conf", "\n\n   \n\t\n", ":1:1: no switches configured", 0,
	  true },
	/* CRLF endings: '\r' is blank to Slurm's regular expression. */
	{ "crlf.conf", "SwitchName=s1 Nodes=c[1-2]\r\n"
	  "SwitchName=s2 Switches=s1\r\n", NULL, 2, false },
	/* The last line continues into the end of the file. */
	{ "eof-continuation.conf", "SwitchName=s1 Nodes=c[1-3] \\", NULL, 3,
	  false },
	/*
	 * Escaped '#' is no comment: "c#1" is a name no node has, skipped
	 * as Slurm skips it, which leaves topoml no node at all.
	 */
	{ "escaped-hash.conf", "SwitchName=s1 Nodes=c\\#1\n",
	  ":1:1: no leaf switch has a node name", 0, true },
	{ "escaped-hash-ok.conf", "SwitchName=s1 Nodes=c\\#1,c2\n", NULL,
	  1, false },
	/* The same in a block topology (Slurm 26.05 warns, runs). */
	{ "block-bad-name.conf", "BlockName=b1 Nodes=c[1-4],c[5-\n"
	  "BlockName=b2 Nodes=c[6-9]\n", NULL, 8, false },
	/* Errors on a continued line name the physical line. */
	{ "continued-error.conf", "SwitchName=s1 \\\n  Nodes=c1 Bogus=2\n",
	  ":2:12: switch s1: unknown key 'Bogus'", 0, false },
	/* Slurm recurses without a limit; topoml stops. */
	{ "self-include.conf", "include self-include.conf\n",
	  ":1:9: Include self-include.conf: nested more than 16 deep", 0,
	  true },
	/* Reported at the Include line, column of the file name. */
	{ "include-missing.conf", "SwitchName=s1 Nodes=c1\nInclude  no.inc\n",
	  ":2:10: Include: cannot read", 0, false },
	{ "cluster-include.conf", "include topo.%c.conf\n",
	  ":1:9: Include topo.%c.conf: %c needs ClusterName", 0, false },
	{ "include-trailing.conf", "include leaves.inc extra\n",
	  ":1:20: parse error at 'extra' after the Include file name", 0,
	  false },
	/* "include" must be followed by a blank to be a directive. */
	{ "include-key.conf", "Include=leaves.inc\n",
	  ":1:1: unknown key 'Include'", 0, false },
};

START_TEST(test_conf_inline)
{
	const struct inline_case *c = &inline_cases[_i];
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *path;

	bool refuses;

	free(_write("leaves.inc", "SwitchName=l1 Nodes=c[1-2]\n"));
	path = _write(c->name, c->content);
	t = topoml_load_conf_judged(path, &err, NULL, &refuses);
	_assert_positions(&err, c->name);
	if (c->error) {
		ck_assert_msg(!t, "%s loaded", c->name);
		ck_assert_msg(_has(&err, c->error), "%s: no '%s' in:%s",
			      c->name, c->error, _joined(&err));
		ck_assert_msg(strncmp(err.msg[0], path, strlen(path)) == 0,
			      "%s: message does not name the file: %s",
			      c->name, err.msg[0]);
		ck_assert_msg(refuses == !c->slurm_runs, "%s: the loader "
			      "says Slurm %s it", c->name, refuses ?
			      "refuses" : "runs with");
	} else {
		ck_assert_msg(t, "%s: %s", c->name, _joined(&err));
		ck_assert_int_eq(t->nnodes, c->nodes);
	}
	topoml_free(t);
	topoml_errors_clear(&err);
	free(path);
}
END_TEST

START_TEST(test_conf_missing_file)
{
	topoml_errors_t err = { 0 };

	ck_assert_ptr_null(topoml_load_conf("/nonexistent/topology.conf",
					    &err));
	ck_assert(_has(&err, "/nonexistent/topology.conf: cannot read"));
	topoml_errors_clear(&err);
}
END_TEST

/* ---- real topology.conf files ------------------------------------- */

struct real_conf {
	const char *path;	/* under REALDATA */
	int nodes, switches, leaves, levels;
	const char *error;	/* Slurm 22.05 rejects it */
	const char *warning;
};

/* Counts read off the files by hand (ranges expanded, duplicates once). */
static const struct real_conf real_confs[] = {
	{ "topology_conf/curc-bench_summit_opa_from_configuration_py_comments.conf",
	  508, 25, 17, 2, NULL, NULL },
	{ "topology_conf/hibozzy18_nstda-hpc-test-suite_tara_topology.conf",
	  10, 5, 4, 2, NULL, NULL },
	{ "topology_conf/maatthias_slurm-cluster_topology.conf",
	  39, 4, 4, 1, NULL, NULL },
	{ "topology_conf/ruddj_UNSW-Rocks-Config_abacus_topology.conf",
	  13, 5, 4, 2, NULL, NULL },
	/* circe-n051 is on s2 and s4: Slurm warns, both keep loading */
	{ "topology_conf/tonystarkiss_slurm-superpod_circe_topology.conf",
	  79, 5, 5, 1, NULL, "node circe-n051 is on leaf switches s2" },
	{ "test_suites/slurm-22.05_expect_33.1/etc.33.1.1/topology.conf",
	  10000, 529, 500, 4, NULL, NULL },
	{ "test_suites/slurm-22.05_expect_33.1/etc.33.1.2/topology.conf",
	  10000, 528, 500, 4, NULL, NULL },
	{ "test_suites/slurm-22.05_expect_33.1/etc.33.1.3/topology.conf",
	  400, 23, 20, 3, NULL, NULL },
	{ "test_suites/slurm-22.05_expect_33.1/etc.33.1.4/topology.conf",
	  400, 22, 20, 2, NULL, NULL },
	{ "test_suites/slurm-22.05_expect_33.1/etc.33.1.5/topology.conf",
	  400, 22, 20, 2, NULL, NULL },
	{ "test_suites/slurm-HEAD_python_133_1/testcase1_topology.conf",
	  10000, 529, 500, 4, NULL, NULL },
	{ "test_suites/slurm-HEAD_python_133_1/testcase2_topology.conf",
	  10000, 528, 500, 4, NULL, NULL },
	{ "test_suites/slurm-HEAD_python_133_1/testcase3_topology.conf",
	  400, 23, 20, 3, NULL, NULL },
	{ "test_suites/slurm-HEAD_python_133_1/testcase4_topology.conf",
	  400, 22, 20, 2, NULL, NULL },
	{ "test_suites/slurm-HEAD_python_133_1/testcase5_topology.conf",
	  400, 22, 20, 2, NULL, NULL },
	{ "test_suites/slurm-HEAD_python_133_1/testcase6_topology.conf",
	  40, 7, 5, 2, NULL, NULL },
	/* block topology (Slurm 23.11+): "unrecognized key" in 22.05 */
	/* Slurm's own block files (topology/block, 24.05+): 8 blocks of 4
	 * and 4 + 2 + 1 aggregated blocks (BlockSizes=4,...,64), as 26.05
	 * reads them; see tests/place/check_block.c */
	{ "test_suites/slurm-HEAD_unit/backfill_topology.conf",
	  32, 15, 8, 4, NULL, NULL },
	{ "test_suites/slurm-HEAD_unit/check_topology_topology.conf",
	  32, 15, 8, 4, NULL, NULL },
};

/* Same nodes under same-named leaves, same levels. */
static void _same_map(const topoml_topo_t *a, const topoml_topo_t *b,
		      const char *what)
{
	ck_assert_msg(a->nnodes == b->nnodes, "%s: %d nodes, then %d", what,
		      a->nnodes, b->nnodes);
	ck_assert_int_eq(a->nswitches, b->nswitches);
	ck_assert_int_eq(a->nlevels, b->nlevels);
	for (int i = 0; i < a->nnodes; i++) {
		const char *la = a->switches[a->nodes[i].leaf].name;
		const char *lb = _leaf_of(b, a->nodes[i].name);

		ck_assert_msg(lb && !strcmp(la, lb), "%s: %s on %s, then %s",
			      what, a->nodes[i].name, la, lb ? lb : "-");
	}
	for (int i = 0; i < a->nswitches; i++) {
		int s = topoml_switch_by_name(b, a->switches[i].name);

		ck_assert_msg(s >= 0, "%s: switch %s lost", what,
			      a->switches[i].name);
		ck_assert_int_eq(a->switches[i].level, b->switches[s].level);
		ck_assert_int_eq(a->switches[i].nchildren,
				 b->switches[s].nchildren);
	}
}

/* Write t as topology.conf (or JSON) and read it back. */
static topoml_topo_t *_round_trip(const topoml_topo_t *t, bool json)
{
	char *p = NULL;
	topoml_errors_t err = { 0 };
	topoml_topo_t *u;
	FILE *f;
	static int n;

	ck_assert_int_ge(asprintf(&p, "%s/rt%d.%s", tmpdir, n++,
				  json ? "json" : "conf"), 0);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(json ? topoml_write_json(t, f) :
			 topoml_write_conf(t, f), 0);
	fclose(f);
	u = json ? topoml_load(p, TOPOML_FMT_AUTO, &err) :
	    topoml_load_conf(p, &err);
	ck_assert_msg(u, "%s does not load back:%s", p, _joined(&err));
	topoml_errors_clear(&err);
	free(p);
	return u;
}

START_TEST(test_real_conf)
{
	const struct real_conf *c = &real_confs[_i];
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t, *u;
	char *path = _realdata(c->path);

	if (!path)
		return;
	t = topoml_load_ex(path, TOPOML_FMT_AUTO, &err, &warn);
	if (c->error) {
		ck_assert_msg(!t, "%s loaded", path);
		ck_assert_msg(_any(&err, path, c->error), "%s: no '%s' in:%s",
			      path, c->error, _joined(&err));
	} else {
		ck_assert_msg(t, "%s:%s", path, _joined(&err));
		ck_assert_int_eq(t->family, TOPOML_FAT_TREE);
		ck_assert_int_eq(t->nnodes, c->nodes);
		ck_assert_int_eq(t->nswitches, c->switches);
		ck_assert_int_eq(_nleaves(t), c->leaves);
		ck_assert_int_eq(t->nlevels, c->levels);
		if (c->warning)
			ck_assert_msg(_has(&warn, c->warning), "%s:%s", path,
				      _joined(&warn));
		else
			ck_assert_msg(warn.n == 0, "%s:%s", path,
				      _joined(&warn));
		u = _round_trip(t, false);
		_same_map(t, u, c->path);
		topoml_free(u);
	}
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	free(path);
}
END_TEST

/* ---- ibnetdiscover ------------------------------------------------- */

struct ib_case {
	const char *path;	/* under REALDATA, or fixtures/ when local */
	bool local;
	int hosts, switches, leaves, levels;
	const char *map[8][2];	/* host -> leaf (model name) */
	const char *warning;
	const char *error;
};

/* Read off the files: CAs and their cables, switch descriptions. */
static const struct ib_case ib_cases[] = {
	/* No CA names its host ("MT23108 InfiniHost ..."): ids instead.
	 * The two switches carry hosts and are cabled to each other. */
	{ "ibnetdiscover/ibtopotool_tests_1.topo", false, 4, 3, 2, 2,
	  { { "H-0008f10403961354", "S-005442ba00003080" },
	    { "H-0008f10403960558", "S-005442ba00003080" },
	    { "H-0008f10403960984", "S-0008f10400410015" },
	    { "H-005442b100004900", "S-0008f10400410015" } },
	  "no CA names its host", NULL },
	{ "ibnetdiscover/ibtopotool_tests_2.topo", false, 2, 1, 1, 1,
	  { { "compute-00-00", "S-000b8cffff0053ee" },
	    { "compute-00-01", "S-000b8cffff0053ee" } }, NULL, NULL },
	/* A libibmad error line first; loopback cables on the SwitchIB;
	 * r-ufm101 has two HCAs on the same switch. */
	{ "ibnetdiscover/ibtopotool_tests_3.topo", false, 5, 3, 2, 2,
	  { { "r-ufm111", "S-e41d2d030003e470" },
	    { "r-ufm216", "S-e41d2d030003e470" },
	    { "r-ufm101", "switch-de779e" },
	    { "r-ufm100", "switch-de779e" },
	    { "r-ufm96", "switch-de779e" } },
	  "ignored 1 line that is not ibnetdiscover output", NULL },
	{ "ibnetdiscover/ibtopotool_tests_4.topo", false, 1, 1, 1, 1,
	  { { "nsn33-43", "S-0021283a8389a0a0" } }, NULL, NULL },
	/* One GB200 CA and no switch. */
	{ "ibnetdiscover/topograph_example-bad.out", false, 0, 0, 0, 0,
	  { { NULL } }, NULL, "10: no switch in the fabric: only 1 CA" },
	/* 2 units x 4 hosts x 4 rails, director spine cards above. */
	{ "loaders/ib/railopt.topo", true, 8, 4, 2, 2,
	  { { "dgx-01", "su1" }, { "dgx-04", "su1" }, { "dgx-05", "su2" },
	    { "dgx-08", "su2" } }, "scalable unit su2: 4 leaf switches",
	  NULL },
	{ "loaders/ib/bad-port-outside.topo", true, 0, 0, 0, 0, { { NULL } },
	  NULL, "2:1: port line outside a Switch or Ca block" },
	{ "loaders/ib/bad-header.topo", true, 0, 0, 0, 0, { { NULL } }, NULL,
	  "3:11: expected the quoted node id" },
	{ "loaders/ib/bad-duplicate.topo", true, 0, 0, 0, 0, { { NULL } },
	  NULL, "9:11: node S-0000000000000001 is described twice" },
	{ "loaders/ib/bad-no-hosts.topo", true, 0, 0, 0, 0, { { NULL } },
	  NULL, "no compute hosts" },
};

START_TEST(test_ibnet)
{
	const struct ib_case *c = &ib_cases[_i];
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t, *u;
	char *path = NULL;

	if (c->local)
		ck_assert_int_ge(asprintf(&path, "%s/fixtures/%s",
					  _tests_dir(), c->path), 0);
	else if (!(path = _realdata(c->path)))
		return;
	ck_assert_int_eq(topoml_detect_format(path), TOPOML_FMT_IBNET);
	t = topoml_load_ex(path, TOPOML_FMT_AUTO, &err, &warn);
	if (c->error) {
		ck_assert_msg(!t, "%s loaded", path);
		ck_assert_msg(_any(&err, path, c->error), "%s: no '%s' in:%s",
			      path, c->error, _joined(&err));
		goto out;
	}
	ck_assert_msg(t, "%s:%s", path, _joined(&err));
	ck_assert_int_eq(t->nnodes, c->hosts);
	ck_assert_int_eq(t->nswitches, c->switches);
	ck_assert_int_eq(_nleaves(t), c->leaves);
	ck_assert_int_eq(t->nlevels, c->levels);
	for (int k = 0; k < 8 && c->map[k][0]; k++)
		ck_assert_msg(_leaf_of(t, c->map[k][0]) &&
			      !strcmp(_leaf_of(t, c->map[k][0]), c->map[k][1]),
			      "%s: %s on %s, want %s", path, c->map[k][0],
			      _leaf_of(t, c->map[k][0]) ?
			      _leaf_of(t, c->map[k][0]) : "-", c->map[k][1]);
	if (c->warning)
		ck_assert_msg(_has(&warn, c->warning), "%s: no '%s' in:%s",
			      path, c->warning, _joined(&warn));
	/* What import-ib writes reads back through Slurm's syntax. */
	u = _round_trip(t, false);
	_same_map(t, u, c->path);
	topoml_free(u);
	u = _round_trip(t, true);
	_same_map(t, u, c->path);
	topoml_free(u);
out:
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	free(path);
}
END_TEST

/* Rail-optimised details: skipped CAs, spine names, every rail's leaf. */
START_TEST(test_ibnet_railopt)
{
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t;
	char *path;
	int s1, s2, su1;

	ck_assert_int_ge(asprintf(&path, "%s/fixtures/loaders/ib/railopt.topo",
				  _tests_dir()), 0);
	t = topoml_load_ibnet_ex(path, &err, &warn);
	ck_assert_msg(t, "%s", _joined(&err));
	/* SHARP node and the default-named ConnectX are no hosts. */
	ck_assert(_has(&warn, "1 SHARP aggregation node left out"));
	ck_assert(_has(&warn, "1 CA names no host"));
	ck_assert_int_lt(topoml_node_by_name(t, "H-0000000000003001"), 0);
	ck_assert_int_lt(topoml_node_by_name(t, "MT4123"), 0);
	/* Both spine cards say "core": the longer form tells them apart. */
	s1 = topoml_switch_by_name(t, "core-CS8500-S01-U1");
	s2 = topoml_switch_by_name(t, "core-CS8500-S02-U1");
	su1 = topoml_switch_by_name(t, "su1");
	ck_assert_int_ge(s1, 0);
	ck_assert_int_ge(s2, 0);
	ck_assert_int_ge(su1, 0);
	ck_assert_int_eq(t->switches[s1].level, 1);
	ck_assert_int_eq(t->switches[s1].nchildren, 2);
	ck_assert_int_eq(t->switches[su1].nparents, 2);
	ck_assert_int_eq(t->switches[su1].nnodes, 4);
	ck_assert_int_eq(t->switches[su1].link_speed, 400);	/* 4xNDR */
	/* Hosts of one unit share a leaf; across units they meet above. */
	ck_assert_int_eq(topoml_common_level(t,
		topoml_node_by_name(t, "dgx-01"),
		topoml_node_by_name(t, "dgx-03")), 0);
	ck_assert_int_eq(topoml_common_level(t,
		topoml_node_by_name(t, "dgx-01"),
		topoml_node_by_name(t, "dgx-05")), 1);
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	free(path);
}
END_TEST

/* Units: a host cabled to leaves of two units merges them. */
START_TEST(test_ibnet_units_merge)
{
	static const char *ib =
		"Switch\t8 \"S-01\"\t# \"MF0;l1:X/U1\" lid 1\n"
		"[1]\t\"H-a1\"[1]\t# \"a mlx5_0\" lid 9 4xHDR\n"
		"[2]\t\"H-b1\"[1]\t# \"b mlx5_0\" lid 9 4xHDR\n"
		"[8]\t\"S-09\"[1]\t# \"MF0;sp:X/U1\" lid 9 4xHDR\n"
		"\n"
		"Switch\t8 \"S-02\"\t# \"MF0;l2:X/U1\" lid 2\n"
		"[1]\t\"H-a2\"[1]\t# \"a mlx5_1\" lid 9 4xHDR\n"
		"[2]\t\"H-c1\"[1]\t# \"c mlx5_0\" lid 9 4xHDR\n"
		"[8]\t\"S-09\"[2]\t# \"MF0;sp:X/U1\" lid 9 4xHDR\n"
		"\n"
		"Switch\t8 \"S-03\"\t# \"MF0;l3:X/U1\" lid 3\n"
		"[1]\t\"H-d1\"[1]\t# \"d HCA-1\" lid 9 4xHDR\n"
		"[8]\t\"S-09\"[3]\t# \"MF0;sp:X/U1\" lid 9 4xHDR\n"
		"\n"
		"Switch\t8 \"S-09\"\t# \"MF0;sp:X/U1\" lid 9\n"
		"\n"
		"Ca\t1 \"H-a1\"\t# \"a mlx5_0\"\n"
		"Ca\t1 \"H-a2\"\t# \"a mlx5_1\"\n"
		"Ca\t1 \"H-b1\"\t# \"b mlx5_0\"\n"
		"Ca\t1 \"H-c1\"\t# \"c mlx5_0\"\n"
		"Ca\t1 \"H-d1\"\t# \"d HCA-1\"\n";
	topoml_errors_t err = { 0 }, warn = { 0 };
	char *path = _write("merge.topo", ib);
	topoml_topo_t *t = topoml_load_ex(path, TOPOML_FMT_AUTO, &err, &warn);

	ck_assert_msg(t, "%s", _joined(&err));
	/* a is on l1 and l2: they form su1 with a, b, c; l3 stays alone.
	 * Cables are listed on one side only: enough. */
	ck_assert_int_eq(t->nnodes, 4);
	ck_assert_str_eq(_leaf_of(t, "a"), "su1");
	ck_assert_str_eq(_leaf_of(t, "b"), "su1");
	ck_assert_str_eq(_leaf_of(t, "c"), "su1");
	ck_assert_str_eq(_leaf_of(t, "d"), "l3");
	ck_assert_int_eq(t->nswitches, 3);
	ck_assert_int_eq(t->switches[topoml_switch_by_name(t, "sp")].level,
			 1);
	ck_assert(_has(&warn, "scalable unit su1: 2 leaf switches"));
	topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	free(path);
}
END_TEST

START_TEST(test_detect_format)
{
	char *conf = _write("d.conf", "SwitchName=s1 Nodes=c1\n");
	char *json = _write("d.json", "\n  {\"family\": \"fat-tree\"}\n");
	char *ib = _write("d.topo", "#\n# Topology file: generated on x\n");
	char *ib2 = _write("d2.topo", "\nCa\t2 \"H-01\"\t# \"x HCA-1\"\n");
	char *sw = _write("d3.conf", "Switches=a\nSwitch\t36 \"S-1\"\n");

	ck_assert_int_eq(topoml_detect_format(conf), TOPOML_FMT_CONF);
	ck_assert_int_eq(topoml_detect_format(json), TOPOML_FMT_JSON);
	ck_assert_int_eq(topoml_detect_format(ib), TOPOML_FMT_IBNET);
	ck_assert_int_eq(topoml_detect_format(ib2), TOPOML_FMT_IBNET);
	ck_assert_int_eq(topoml_detect_format(sw), TOPOML_FMT_IBNET);
	free(conf);
	free(json);
	free(ib);
	free(ib2);
	free(sw);
}
END_TEST


/* ---- linear time: each case was super-linear before its fix ---------- */

/*
 * The CPU bound of the cases that must stay linear: before their fixes
 * they took 3 to 10 s under ASan.  ASan and UBSan make this code about 6
 * times slower (chain.conf: 0.2 s plain, 1.0-1.3 s sanitized on a 2-core
 * VM), so the bound is 2 s under them and 1 s without.
 */
#if defined(__SANITIZE_ADDRESS__)
#define CPU_BOUND 2.0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPU_BOUND 2.0
#endif
#endif
#ifndef CPU_BOUND
#define CPU_BOUND 1.0
#endif

/* CPU seconds of this process (the test's fork). */
static double _cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A growing string of about 100 KB built by the cases below. */
struct _big {
	char *s;
	size_t n, cap;
};

__attribute__((format(printf, 2, 3)))
static void _add(struct _big *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->cap - b->n < 256) {
		b->cap = b->cap ? 2 * b->cap : 1 << 17;
		b->s = realloc(b->s, b->cap);
		ck_assert_ptr_nonnull(b->s);
	}
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	ck_assert_int_lt(n, 256);
	b->n += n;
}

/*
 * Load content as topology.conf; it must take under CPU_BOUND of CPU and
 * fail or succeed as told, with want in some error when given.
 */
static void _load_fast(const char *name, const char *content, bool ok,
		       const char *want)
{
	topoml_errors_t err = { 0 };
	char *path = _write(name, content);
	topoml_topo_t *t;
	double t0 = _cpu(), dt;

	t = topoml_load_conf(path, &err);
	dt = _cpu() - t0;
	ck_assert_msg(dt < CPU_BOUND, "%s (%zu bytes): %.2f s of CPU", name,
		      strlen(content), dt);
	ck_assert_msg(!t == !ok, "%s: %s:%s", name, ok ? "did not load" :
		      "loaded", _joined(&err));
	if (want) {
		bool found = false;

		for (int i = 0; i < err.n && !found; i++)
			found = strstr(err.msg[i], want) != NULL;
		ck_assert_msg(found, "%s: no '%s' in:%s", name, want,
			      _joined(&err));
	}
	if (t)
		topoml_free(t);
	topoml_errors_clear(&err);
	free(path);
}

/* libslurm's tokenizer looks for ']' to the end for every "[" token. */
START_TEST(test_linear_bracket_tokens)
{
	struct _big b = { 0 };

	_add(&b, "SwitchName=s1 Nodes=n1,");
	while (b.n < 100000)
		_add(&b, "[,");
	_add(&b, "n2\n");
	/* each "[" is a name no node has: skipped, as Slurm does */
	_load_fast("brackets.conf", b.s, true, NULL);
	free(b.s);
}
END_TEST

/*
 * The case: ~100k '[' and undefined child switches, one error
 * each (the error list grew one entry at a time).
 */
START_TEST(test_linear_child_errors)
{
	struct _big b = { 0 };

	_add(&b, "SwitchName=s1 Nodes=n1\nSwitchName=s2 Switches=");
	while (b.n < 100000)
		_add(&b, "[,");
	_add(&b, "u\n");
	_load_fast("children.conf", b.s, false, "is not defined");
	free(b.s);
}
END_TEST

/*
 * Empty leaves under a chain of parents listed before their children:
 * one parent left out per pass over the file before.
 */
START_TEST(test_linear_empty_parents)
{
	struct _big b = { 0 };
	int i = 0;

	while (b.n < 100000) {
		_add(&b, "SwitchName=p%d Switches=p%d\n", i, i + 1);
		i++;
	}
	_add(&b, "SwitchName=p%d Nodes=\"\"\nSwitchName=real Nodes=n1\n", i);
	/* every p is left out: only "real" stays */
	_load_fast("parents.conf", b.s, true, NULL);
	free(b.s);
}
END_TEST

/* Many distinct hosts in one list: Slurm grows a list 16 ranges at a time. */
START_TEST(test_linear_many_ranges)
{
	struct _big b = { 0 };
	int i = 0;

	_add(&b, "SwitchName=s1 Nodes=");
	while (b.n < 100000)
		_add(&b, "%c%d,", 'a' + i % 26, i), i++;
	_add(&b, "z\n");
	_load_fast("ranges.conf", b.s, true, NULL);
	free(b.s);
}
END_TEST

/*
 * A chain of switches too deep for Slurm's 21 passes: the loop finder
 * walked it recursively (1 KB of stack per switch) and overflowed.
 */
START_TEST(test_deep_chain)
{
	struct _big b = { 0 };
	int i;

	for (i = 0; i < 30000; i++)
		_add(&b, "SwitchName=c%d Switches=c%d\n", i, i + 1);
	_add(&b, "SwitchName=c%d Nodes=n1\n", i);
	_load_fast("chain.conf", b.s, false, "passes to resolve");
	free(b.s);
}
END_TEST

/*
 * Host lists Slurm leaks on (a bad range), expands without bound or
 * loops on are refused before libslurm sees them, each with its reason;
 * under ASan's leak checker a leak fails this test.
 */
static const struct {
	const char *list, *why;
} bad_lists[] = {
	{ "n[1-2x]", "invalid host list 'n[1-2x]' in Nodes" },
	{ "n[2-1]", "invalid host list" },
	{ "n[--1]", "invalid host list" },
	{ "n[]", "invalid host list" },
	{ "n[1]x", "invalid host list" },
	{ "a[x]b[1-2]c[1]", "Slurm would silently drop part of it" },
	{ "n[1-18446744073709551615]", "a number too large for Slurm" },
	{ "n[18446744073709551615]", "a number too large for Slurm" },
	{ "a[0-99]b[0-99]c[0-99]", "too many hosts" },
	{ "n[1-65536],m[1-65536],o[1-65536],p[1-65536],q[1-1]",
	  "too many hosts" },
	{ "a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1]j[1]k[1]l[1]m[1]n[1]o[1]p[1]"
	  "q[1]", "bracket groups" },
};

START_TEST(test_bad_hostlist)
{
	char content[256], name[32];

	snprintf(content, sizeof(content), "SwitchName=s1 Nodes=%s\n",
		 bad_lists[_i].list);
	snprintf(name, sizeof(name), "badlist%d.conf", _i);
	_load_fast(name, content, false, bad_lists[_i].why);
}
END_TEST

/* What Slurm takes, topoml takes, with the same hosts. */
static const struct {
	const char *list;
	int nodes;
	const char *first, *last;
} good_lists[] = {
	{ "n[1-3]", 3, "n1", "n3" },
	{ "n[001-003]", 3, "n001", "n003" },
	{ "rack[1-2]-n[1-4]", 8, "rack1-n1", "rack2-n4" },
	{ "n[1, 3]", 2, "n1", "n03" },	/* Slurm: " 3" is 2 wide */
	{ "n[5-]", 1, "n5", "n5" },
	{ "n[1-2],m1 m2\tm3", 5, "n1", "m3" },
	{ "x[", 1, "x]", "x]" },	/* Slurm adds the ']' */
};

static int _collect(const char *host, void *arg)
{
	char ***v = arg;
	int n = 0;

	while ((*v)[n])
		n++;
	*v = realloc(*v, (n + 2) * sizeof(char *));
	(*v)[n] = strdup(host);
	(*v)[n + 1] = NULL;
	return 0;
}

START_TEST(test_good_hostlist)
{
	char **v = calloc(1, sizeof(char *));
	int n = 0;

	ck_assert_int_eq(topoml__hostlist_foreach(good_lists[_i].list, NULL,
						 _collect, &v), 0);
	while (v[n])
		n++;
	ck_assert_int_eq(n, good_lists[_i].nodes);
	ck_assert_str_eq(v[0], good_lists[_i].first);
	ck_assert_str_eq(v[n - 1], good_lists[_i].last);
	for (n = 0; v[n]; n++)
		free(v[n]);
	free(v);
}
END_TEST

/*
 * White space other than blank and tab in a name: Slurm merges it with the
 * name before ("\r0,1" gives "\r0", "\r1"), so it is refused.
 */
START_TEST(test_hostlist_control)
{
	char **v = calloc(1, sizeof(char *));

	errno = 0;
	ck_assert_int_eq(topoml__hostlist_foreach("\r0,1", NULL, _collect,
						 &v), -1);
	ck_assert_int_eq(errno, EILSEQ);
	ck_assert_ptr_null(v[0]);
	free(v);
}
END_TEST

/*
 * A FIFO named by Include or as the file itself would block the loader
 * (slurmctld) until a writer came: refused at once.
 */
START_TEST(test_fifo_refused)
{
	topoml_errors_t err = { 0 };
	char *fifo = NULL, *inc;
	topoml_topo_t *t;

	ck_assert_int_ge(asprintf(&fifo, "%s/fifo.conf", tmpdir), 0);
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	inc = _write("inc-fifo.conf", "Include fifo.conf\n"
		     "SwitchName=s1 Nodes=n1\n");
	t = topoml_load_conf(inc, &err);
	ck_assert_ptr_null(t);
	ck_assert_msg(_any(&err, inc, "1:9: Include: cannot read"),
		      "%s", _joined(&err));
	ck_assert_msg(_has(&err, "fifo.conf: not a regular file"), "%s",
		      _joined(&err));
	topoml_errors_clear(&err);
	ck_assert_ptr_null(topoml_load(fifo, TOPOML_FMT_AUTO, &err));
	topoml_errors_clear(&err);
	ck_assert_ptr_null(topoml_load(fifo, TOPOML_FMT_JSON, &err));
	topoml_errors_clear(&err);
	ck_assert_ptr_null(topoml_load(fifo, TOPOML_FMT_IBNET, &err));
	topoml_errors_clear(&err);
	free(inc);
	free(fifo);
}
END_TEST

/*
 * topoml.conf with 50k partitions (1.5 MB): each line was checked against
 * every partition before it, and the array grew by one.
 */
START_TEST(test_linear_siteconf)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	struct _big b = { 0 };
	char *path;
	double t0, dt;
	int i;

	for (i = 0; i < 50000; i++)
		_add(&b, "PartitionName=p%d Hint=alltoall\n", i);
	_add(&b, "PartitionName=p17 Hint=isolate\n");
	path = _write("site.conf", b.s);
	t0 = _cpu();
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	dt = _cpu() - t0;
	ck_assert_msg(dt < CPU_BOUND, "%.2f s of CPU", dt);
	ck_assert_int_eq(c.nparts, 50000);
	ck_assert_int_eq(err.n, 1);
	ck_assert_msg(strstr(err.msg[0], "partition p17 already configured "
			     "at line 18"), "%s", err.msg[0]);
	ck_assert_int_eq(topoml_siteconf_hint(&c, "p49999"),
			 TOPOML_HINT_ALLTOALL);
	topoml_siteconf_clear(&c);
	topoml_errors_clear(&err);
	free(path);
	free(b.s);
}
END_TEST

/*
 * Link rates: "4xNDR" is 400 Gb/s; a width that overflowed int (UBSan:
 * float-cast-overflow, found by fuzz_ibnet) is no rate; a line of 20k
 * numbers took sscanf's strlen() at each.
 */
START_TEST(test_ib_rates)
{
	struct _big b = { 0 };
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *path;
	double t0, dt;

	_add(&b, "Switch\t36 \"S-01\"\t\t# \"sw1\" lid 1 lmc 0\n"
	     "[1]\t\"H-01\"[1]\t\t# \"h1 mlx5_0\" lid 2 4xNDR\n"
	     "[2]\t\"H-02\"[1]\t\t# \"h2 mlx5_0\" lid 3 "
	     "200000004xNDR 99999999999999999999xEDR\n"
	     "[3]\t\"H-03\"[1]\t\t# \"h3 mlx5_0\" lid 4 ");
	while (b.n < 100000)
		_add(&b, "1 ");
	_add(&b, "\n\nCa\t1 \"H-01\"\t\t# \"h1 mlx5_0\"\n"
	     "[1](1)\t\"S-01\"[1]\t\t# lid 2 lmc 0 \"sw1\" lid 1 4xNDR\n"
	     "\nCa\t1 \"H-02\"\t\t# \"h2 mlx5_0\"\n"
	     "[1](1)\t\"S-01\"[2]\t\t# lid 3 lmc 0 \"sw1\" lid 1\n"
	     "\nCa\t1 \"H-03\"\t\t# \"h3 mlx5_0\"\n"
	     "[1](1)\t\"S-01\"[3]\t\t# lid 4 lmc 0 \"sw1\" lid 1\n");
	path = _write("rates.topo", b.s);
	t0 = _cpu();
	t = topoml_load_ibnet(path, &err);
	dt = _cpu() - t0;
	ck_assert_msg(t, "did not load:%s", _joined(&err));
	ck_assert_msg(dt < CPU_BOUND, "%.2f s of CPU", dt);
	ck_assert_int_eq(t->nnodes, 3);
	ck_assert(t->switches[0].link_speed == 400);
	topoml_free(t);
	topoml_errors_clear(&err);
	free(path);
	free(b.s);
}
END_TEST

/* A file that includes itself twice read itself 2^16 times. */
START_TEST(test_include_fanout)
{
	_load_fast("fan.conf", "Include fan.conf\nInclude fan.conf\n"
		   "SwitchName=s1 Nodes=n1\n", false, "Include lines in all");
}
END_TEST

/* The budget is per file: many lists each under it, together over it. */
START_TEST(test_hostlist_budget)
{
	struct _big b = { 0 };
	int i;

	for (i = 0; i < 8; i++)
		_add(&b, "SwitchName=s%d Nodes=n%d[1-65536]\n", i, i);
	_load_fast("budget.conf", b.s, false, "too many hosts");
	free(b.s);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("loaders");
	TCase *tc = tcase_create("conf");
	char *pat = NULL;
	int n;

	if (asprintf(&pat, "%s/fixtures/loaders/conf/*.conf",
		     _tests_dir()) >= 0)
		glob(pat, 0, NULL, &conf_fixtures);
	free(pat);
	n = conf_fixtures.gl_pathc;
	if (n == 0)
		fprintf(stderr, "no topology.conf fixtures found\n");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_conf_fixture, 0, n ? n : 0);
	tcase_add_loop_test(tc, test_conf_inline, 0,
			    sizeof(inline_cases) / sizeof(inline_cases[0]));
	tcase_add_test(tc, test_conf_missing_file);
	tcase_add_loop_test(tc, test_real_conf, 0,
			    sizeof(real_confs) / sizeof(real_confs[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("linear");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_linear_bracket_tokens);
	tcase_add_test(tc, test_linear_child_errors);
	tcase_add_test(tc, test_linear_empty_parents);
	tcase_add_test(tc, test_linear_many_ranges);
	tcase_add_test(tc, test_deep_chain);
	tcase_add_loop_test(tc, test_bad_hostlist, 0,
			    sizeof(bad_lists) / sizeof(bad_lists[0]));
	tcase_add_loop_test(tc, test_good_hostlist, 0,
			    sizeof(good_lists) / sizeof(good_lists[0]));
	tcase_add_test(tc, test_hostlist_budget);
	tcase_add_test(tc, test_hostlist_control);
	tcase_add_test(tc, test_fifo_refused);
	tcase_add_test(tc, test_include_fanout);
	tcase_add_test(tc, test_linear_siteconf);
	tcase_add_test(tc, test_ib_rates);
	suite_add_tcase(s, tc);

	tc = tcase_create("ibnet");
	tcase_add_loop_test(tc, test_ibnet, 0,
			    sizeof(ib_cases) / sizeof(ib_cases[0]));
	tcase_add_test(tc, test_ibnet_railopt);
	tcase_add_test(tc, test_ibnet_units_merge);
	tcase_add_test(tc, test_detect_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;
	char cmd[64];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	sr = srunner_create(_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	globfree(&conf_fixtures);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return failed ? 1 : 0;
}
