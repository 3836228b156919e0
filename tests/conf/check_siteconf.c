/*
 * topoml.conf reader: values, defaults, partition overrides, Slurm's line
 * rules (quoting, continuation, Include) and the "FILE:LINE:COL: what is
 * wrong" errors slurmctld prints at start.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topoml.h"
#include "topoml/wait.h"
#include "topoml/health.h"
#include "sim.h"

static char tmpdir[] = "/tmp/check_siteconf.XXXXXX";

static char *_write(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	strcpy(tmpdir, "/tmp/check_siteconf.XXXXXX");
}

/* Every problem's text, joined, for substring assertions. */
static const char *_errs(const topoml_errors_t *e)
{
	static char buf[4096];
	int i;

	buf[0] = '\0';
	for (i = 0; i < e->n; i++) {
		strncat(buf, e->msg[i], sizeof(buf) - strlen(buf) - 2);
		strcat(buf, "\n");
	}
	return buf;
}

START_TEST(test_full_file)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf",
		"# site\n"
		"TopologyFile=net/topo.json  Family=dragonfly\n"
		"defaulthint=alltoall DragonflySpread=alltoall Debug=2\n"
		"TopologyFormat=json\n"
		"PartitionName=moe Hint=isolate\n"
		"PartitionName=debug Placement=off   # plain cons_tres\n");
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(err.n, 0);
	snprintf(want, sizeof(want), "%s/net/topo.json", tmpdir);
	ck_assert_str_eq(c.topology_file, want);
	ck_assert_int_eq(c.topology_format, TOPOML_FMT_JSON);
	ck_assert_int_eq(c.family, TOPOML_DRAGONFLY);
	ck_assert_int_eq(c.default_hint, TOPOML_HINT_ALLTOALL);
	ck_assert(c.df_spread_alltoall);
	ck_assert_int_eq(c.debug, 2);
	ck_assert_int_eq(c.nparts, 2);
	ck_assert_int_eq(topoml_siteconf_hint(&c, "moe"), TOPOML_HINT_ISOLATE);
	ck_assert_int_eq(topoml_siteconf_hint(&c, "debug"),
			 TOPOML_HINT_ALLTOALL);
	ck_assert_int_eq(topoml_siteconf_hint(&c, "other"),
			 TOPOML_HINT_ALLTOALL);
	ck_assert_int_eq(topoml_siteconf_hint(&c, NULL), TOPOML_HINT_ALLTOALL);
	ck_assert(topoml_siteconf_placement(&c, "moe"));
	ck_assert(!topoml_siteconf_placement(&c, "debug"));
	ck_assert(topoml_siteconf_placement(&c, NULL));
	topoml_siteconf_clear(&c);
}
END_TEST

START_TEST(test_defaults)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf", "\n# nothing\n   \n");

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_ptr_null(c.topology_file);
	ck_assert_int_eq(c.family, 0);
	ck_assert_int_eq(c.default_hint, TOPOML_HINT_ALLREDUCE);
	ck_assert(!c.df_spread_alltoall);
	ck_assert(c.placement);
	ck_assert_int_eq(c.debug, 0);
	topoml_siteconf_clear(&c);
}
END_TEST

/* Errors name file, line and column, and every bad line is reported. */
START_TEST(test_errors)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf",
		"DefaultHint=allreduce\n"
		"Famly=torus\n"
		"DefaultHint=ring\n"
		"  PartitionName=a Hint=alltoall Color=red\n"
		"PartitionName=a Hint=isolate\n"
		"DragonflySpread=sometimes\n"
		"TopologyFile=\n"
		"garbage\n"
		"Debug=7 PartitionName=x\n");
	const char *e;
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want), "%s:2:1: unknown key Famly", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:3:1: DefaultHint=ring: expected", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:4:33: unknown partition key Color",
		 path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want),
		 "%s:5:1: partition a already configured at line 4", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:6:1: DragonflySpread=sometimes",
		 path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:7:1: TopologyFile: empty value", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:8:1: expected Key=Value", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:9:1: Debug=7", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:9:9: PartitionName= must start", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	ck_assert_int_eq(err.n, 9);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* TorusBoxWait=SECONDS: 0 by default (never wait), junk refused. */
START_TEST(test_torus_box_wait)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf", "TorusBoxWait=600\n");
	const char *e;
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(c.torus_box_wait, 600);
	topoml_siteconf_clear(&c);
	ck_assert_int_eq(c.torus_box_wait, 0);
	path = _write("topoml.conf", "torusboxwait=-1\nTorusBoxWait=10s\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want),
		 "%s:1:1: torusboxwait=-1: expected seconds", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:2:1: TorusBoxWait=10s: expected",
		 path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	ck_assert_int_eq(err.n, 2);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* TorusBoxWaitSpan=FACTOR: 1 by default, 1 to 64, junk refused. */
START_TEST(test_torus_box_wait_span)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf",
			    "TorusBoxWait=60\nTorusBoxWaitSpan=1.5\n");
	const char *e;
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert(c.torus_box_wait_span == 1.5);
	ck_assert_ptr_null(topoml_siteconf_inert(&c));
	c.torus_box_wait = 0;	/* the span alone does nothing: said */
	ck_assert_ptr_nonnull(topoml_siteconf_inert(&c));
	topoml_siteconf_clear(&c);
	ck_assert(c.torus_box_wait_span == 1);
	ck_assert_ptr_null(topoml_siteconf_inert(&c));
	path = _write("topoml.conf", "TorusBoxWaitSpan=0.9\n"
		      "TorusBoxWaitSpan=nan\nTorusBoxWaitSpan=65\n"
		      "TorusBoxWaitSpan=2x\nTorusBoxWaitSpan=64\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	for (int line = 1; line <= 4; line++) {
		snprintf(want, sizeof(want), "%s:%d:1: TorusBoxWaitSpan=",
			 path, line);
		ck_assert_msg(strstr(e, want), "line %d, got:\n%s", line, e);
	}
	ck_assert_msg(strstr(e, "expected a number from 1 to 64"), "got:\n%s",
		      e);
	ck_assert_int_eq(err.n, 4);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* TorusPlacement=boxes|curve: boxes by default; with curve TorusBoxWait
 * does nothing, and says so; anything else refused at its line. */
START_TEST(test_torus_placement)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf", "TorusPlacement=Curve\n");
	const char *e;
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert(c.torus_curve);
	ck_assert_ptr_null(topoml_siteconf_inert(&c));
	c.torus_box_wait = 60;
	ck_assert_ptr_nonnull(strstr(topoml_siteconf_inert(&c),
				     "TorusPlacement=curve"));
	topoml_siteconf_clear(&c);
	ck_assert(!c.torus_curve);
	path = _write("topoml.conf", "TorusPlacement=boxes\n"
		      "TorusPlacement=hilbert\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want), "%s:2:1: TorusPlacement=", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	ck_assert_msg(strstr(e, "expected boxes or curve"), "got:\n%s", e);
	ck_assert_int_eq(err.n, 1);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* HealthPolicy=, HealthAvoidTime=: report and an hour by default, junk
 * refused. */
START_TEST(test_health)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf", "Placement=topoml\n");
	const char *e;

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(c.health_policy, TOPOML_HEALTH_REPORT);
	ck_assert_int_eq(c.health_avoid_time, 3600);
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "HealthPolicy=Drain\n"
		      "HealthAvoidTime=600\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(c.health_policy, TOPOML_HEALTH_DRAIN);
	ck_assert_int_eq(c.health_avoid_time, 600);
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "HealthPolicy=blacklist\n"
		      "HealthAvoidTime=-1\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	ck_assert_msg(strstr(e, "expected report, avoid or drain"), "got:\n%s",
		      e);
	ck_assert_msg(strstr(e, ":2:1: HealthAvoidTime="), "got:\n%s", e);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* HybridWait=SECONDS: its own value, 0 by default, junk refused. */
START_TEST(test_hybrid_wait)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf", "HybridWait=3600\n");
	const char *e;
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(c.hybrid_wait, 3600);
	ck_assert_int_eq(c.torus_box_wait, 0);
	ck_assert(c.hybrid_weights[TOPOML_KIND_TP] == 16);	/* default */
	topoml_siteconf_clear(&c);
	ck_assert_int_eq(c.hybrid_wait, 0);
	/* HybridWeights=: the kinds named replace the defaults */
	path = _write("topoml.conf", "HybridWeights=dp=2.5,tp=0\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert(c.hybrid_weights[TOPOML_KIND_DP] == 2.5);
	ck_assert(c.hybrid_weights[TOPOML_KIND_TP] == 0);
	ck_assert(c.hybrid_weights[TOPOML_KIND_PP] == 2);
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "HybridWeights=xp=1\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want), "%s:1:1: HybridWeights=xp=1: expected "
		 "KIND=WEIGHT,... (unknown kind 'xp'", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "TorusBoxWait=5\nhybridwait=1y\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want),
		 "%s:2:1: hybridwait=1y: expected seconds", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	ck_assert_int_eq(err.n, 1);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* The notes of c joined, for strstr. */
static const char *_notes(const struct topoml_siteconf *c)
{
	static char buf[8 * TOPOML_NOTE_LEN + 8];
	char note[8][TOPOML_NOTE_LEN];
	int n = topoml_siteconf_notes(c, note, 8);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(buf, note[i]);
		strcat(buf, "\n");
	}
	return buf;
}

/*
 * LocalityWait=: one knob for each family's locality criterion, a
 * partition's over the site's; TorusBoxWait, HybridWait and
 * TorusBoxWaitSpan still read (each half), said deprecated; both names
 * of one setting refused; settings that do nothing said.
 */
START_TEST(test_locality_wait)
{
	struct topoml_siteconf c;
	struct topoml_wait_policy p;
	topoml_errors_t err = { 0 };
	char *path = _write("topoml.conf", "LocalityWait=120\n"
			    "LocalityWaitSpan=1.5\n"
			    "PartitionName=gpu LocalityWait=600\n"
			    "PartitionName=cpu LocalityWait=0\n");
	const char *e;
	char want[600];

	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(c.torus_box_wait, 120);
	ck_assert_int_eq(c.hybrid_wait, 120);
	ck_assert(c.torus_box_wait_span == 1.5);
	ck_assert_str_eq(_notes(&c), "");
	ck_assert_ptr_null(topoml_siteconf_inert(&c));
	topoml_siteconf_wait(&c, "debug", &p);
	ck_assert(p.box_wait == 120 && p.hybrid_wait == 120);
	ck_assert(p.box_span == 1.5 && !p.torus_curve);
	ck_assert_str_eq(p.box_key, "LocalityWait");
	topoml_siteconf_wait(&c, "gpu", &p);
	ck_assert(p.box_wait == 600 && p.hybrid_wait == 600);
	topoml_siteconf_wait(&c, "cpu", &p);
	ck_assert(p.box_wait == 0 && p.hybrid_wait == 0);
	topoml_siteconf_wait(&c, NULL, &p);
	ck_assert(p.box_wait == 120);
	topoml_siteconf_clear(&c);

	/* the old names: each its half, named in the logs, deprecated */
	path = _write("topoml.conf", "TorusBoxWait=60\nHybridWait=30\n"
		      "TorusBoxWaitSpan=2\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(c.torus_box_wait, 60);
	ck_assert_int_eq(c.hybrid_wait, 30);
	ck_assert(c.torus_box_wait_span == 2);
	topoml_siteconf_wait(&c, NULL, &p);
	ck_assert(p.box_wait == 60 && p.hybrid_wait == 30);
	ck_assert_str_eq(p.box_key, "TorusBoxWait");
	ck_assert_str_eq(p.hybrid_key, "HybridWait");
	ck_assert_str_eq(_notes(&c),
		"TorusBoxWait is deprecated: use LocalityWait (topoml.conf(5))\n"
		"HybridWait is deprecated: use LocalityWait (topoml.conf(5))\n"
		"TorusBoxWaitSpan is deprecated: use LocalityWaitSpan (topoml.conf(5))\n");
	ck_assert_ptr_null(topoml_siteconf_inert(&c));
	topoml_siteconf_clear(&c);

	/* both names of one setting: which would win is line order */
	path = _write("topoml.conf", "LocalityWait=60\nTorusBoxWait=30\n"
		      "TorusBoxWaitSpan=2\nLocalityWaitSpan=2\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want), "%s:2:1: TorusBoxWait= with LocalityWait",
		 path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want),
		 "%s:4:1: LocalityWaitSpan= with TorusBoxWaitSpan", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	ck_assert_int_eq(err.n, 2);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "HybridWait=5\nLocalityWait=5\n"
		      "PartitionName=a LocalityWait=-1\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want), "%s:2:1: LocalityWait= with TorusBoxWait or HybridWait", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want),
		 "%s:3:17: LocalityWait=-1: expected seconds", path);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);

	/* no combination silently inert */
	path = _write("topoml.conf", "LocalityWaitSpan=2\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_str_eq(topoml_siteconf_inert(&c),
			 "LocalityWaitSpan has no effect while LocalityWait is 0");
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "LocalityWaitSpan=2\n"
		      "PartitionName=gpu LocalityWait=60\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_ptr_null(topoml_siteconf_inert(&c));
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "LocalityWait=60\nTorusPlacement=curve\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_msg(strstr(_notes(&c), "LocalityWait waits for no torus box with TorusPlacement=curve"),
		      "got:\n%s", _notes(&c));
	topoml_siteconf_clear(&c);
	path = _write("topoml.conf", "Placement=off\nLocalityWait=60\n"
		      "PartitionName=cpu LocalityWait=10 Placement=off\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_msg(strstr(_notes(&c), "LocalityWait has no effect with Placement=off\n"),
		      "got:\n%s", _notes(&c));
	ck_assert_msg(strstr(_notes(&c), "PartitionName=cpu: LocalityWait has no effect with Placement=off"),
		      "got:\n%s", _notes(&c));
	topoml_siteconf_clear(&c);

	/* the old box half alone, off a torus: said once the topology is
	 * known; LocalityWait there still waits for --ml-parallel */
	{
		topoml_topo_t *ft = topoml_gen_fat_tree("n", 16, 4, 8, 2);
		topoml_topo_t *tor = topoml_gen_torus("c", 2, 2, 2, true);
		char note[TOPOML_NOTE_LEN];

		ck_assert(ft && tor);
		path = _write("topoml.conf", "TorusBoxWait=60\n");
		ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
		ck_assert(topoml_siteconf_wait_inert_on(&c, ft, note,
							sizeof(note)));
		ck_assert_msg(strstr(note, "TorusBoxWait has no effect on a "),
			      "got: %s", note);
		ck_assert(!topoml_siteconf_wait_inert_on(&c, tor, note,
							 sizeof(note)));
		topoml_siteconf_clear(&c);
		path = _write("topoml.conf", "LocalityWait=60\n");
		ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
		ck_assert(!topoml_siteconf_wait_inert_on(&c, ft, note,
							 sizeof(note)));
		topoml_siteconf_clear(&c);
		topoml_free(ft);
		topoml_free(tor);
	}
}
END_TEST

START_TEST(test_missing_file)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char path[600];

	snprintf(path, sizeof(path), "%s/nope.conf", tmpdir);
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), -1);
	ck_assert_int_eq(err.n, 1);
	ck_assert_ptr_nonnull(strstr(err.msg[0], "nope.conf"));
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/* Without TopologyFile: topoml.json, else topology.conf, in slurm.conf's dir. */
START_TEST(test_topology_auto)
{
	struct topoml_siteconf c;
	char *p, want[600];

	topoml_siteconf_init(&c);
	ck_assert_ptr_null(topoml_siteconf_topology_path(&c, tmpdir));
	_write("topology.conf", "SwitchName=s0 Nodes=c[1-4]\n");
	p = topoml_siteconf_topology_path(&c, tmpdir);
	snprintf(want, sizeof(want), "%s/topology.conf", tmpdir);
	ck_assert_str_eq(p, want);
	free(p);
	_write("topoml.json", "{}\n");
	p = topoml_siteconf_topology_path(&c, tmpdir);
	snprintf(want, sizeof(want), "%s/topoml.json", tmpdir);
	ck_assert_str_eq(p, want);
	free(p);
	topoml_siteconf_clear(&c);
}
END_TEST

/* Family= is checked against what the file describes. */
START_TEST(test_family_mismatch)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	topoml_topo_t *t;
	char *path;

	_write("topology.conf",
	       "SwitchName=l0 Nodes=c[1-4]\nSwitchName=l1 Nodes=c[5-8]\n"
	       "SwitchName=top Switches=l[0-1]\n");
	path = _write("topoml.conf", "TopologyFile=topology.conf\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	t = topoml_siteconf_load_topology(&c, tmpdir, &err);
	ck_assert_msg(t != NULL, "%s", _errs(&err));
	ck_assert_int_eq(t->family, TOPOML_FAT_TREE);
	ck_assert_int_eq(t->nnodes, 8);
	topoml_free(t);
	topoml_siteconf_clear(&c);

	path = _write("topoml.conf",
		      "TopologyFile=topology.conf Family=torus\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	t = topoml_siteconf_load_topology(&c, tmpdir, &err);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(_errs(&err), "Family=torus"), "%s", _errs(&err));
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

/*
 * topology.conf's lexer (topology/util/conf_lex.h): Slurm's quoting,
 * blanks around '=', '\' continuation, and Include relative to the
 * including file.
 */
START_TEST(test_lexer)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char dir[600], want[700], *path;

	snprintf(dir, sizeof(dir), "%s/sub", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	_write("sub/parts.conf",
		"PartitionName=gpu Hint=alltoall # a comment\n"
		"TopologyFile=\"topo.json\"\n");
	path = _write("topoml.conf",
		"# as slurm.conf reads it\n"
		"DefaultHint = \"isolate\"\n"
		"Family=\\\n"
		"torus\n"
		"include sub/parts.conf\n"
		"PartitionName=cpu \\\n"
		"  Placement=off\n");
	ck_assert_int_eq(topoml_siteconf_read(path, &c, &err), 0);
	ck_assert_int_eq(err.n, 0);
	ck_assert_int_eq(c.default_hint, TOPOML_HINT_ISOLATE);
	ck_assert_int_eq(c.family, TOPOML_TORUS);
	ck_assert_int_eq(c.nparts, 2);
	ck_assert_str_eq(c.parts[0].name, "gpu");
	ck_assert_int_eq(c.parts[0].hint, TOPOML_HINT_ALLTOALL);
	ck_assert_str_eq(c.parts[1].name, "cpu");
	ck_assert_int_eq(c.parts[1].placement, 0);
	snprintf(want, sizeof(want), "%s/topo.json", dir);
	ck_assert_str_eq(c.topology_file, want);
	topoml_siteconf_clear(&c);
}
END_TEST

/* Errors of included and continued lines name their own FILE:LINE:COL. */
START_TEST(test_lexer_errors)
{
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };
	char main_conf[600], want[1400];
	const char *e;

	_write("bad.conf", "\n  Famly=torus\n");
	_write("loop.conf", "Include loop.conf\n");
	snprintf(main_conf, sizeof(main_conf), "%s",
		 _write("topoml.conf",
			"Family=torus\n"
			"Include bad.conf\n"
			"Include nope.conf\n"
			"Debug=\"1\n"
			"Debug=1 \\\n"
			"  Colour=red\n"
			"Include loop.conf trailing\n"));
	ck_assert_int_eq(topoml_siteconf_read(main_conf, &c, &err), -1);
	e = _errs(&err);
	snprintf(want, sizeof(want), "%s/bad.conf:2:3: unknown key Famly",
		 tmpdir);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want),
		 "%s:3:9: Include: cannot read %s/nope.conf", main_conf,
		 tmpdir);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:4:7: unterminated quote",
		 main_conf);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:6:3: unknown key Colour", main_conf);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want),
		 "%s/loop.conf:1:9: Include loop.conf: nested more than 16 "
		 "deep", tmpdir);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	snprintf(want, sizeof(want), "%s:7:19: parse error at 'trailing' "
		 "after the Include file name", main_conf);
	ck_assert_msg(strstr(e, want), "got:\n%s", e);
	ck_assert_int_eq(err.n, 6);
	topoml_errors_clear(&err);
	topoml_siteconf_clear(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("siteconf");
	TCase *tc = tcase_create("siteconf");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_full_file);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_torus_box_wait);
	tcase_add_test(tc, test_torus_box_wait_span);
	tcase_add_test(tc, test_torus_placement);
	tcase_add_test(tc, test_health);
	tcase_add_test(tc, test_hybrid_wait);
	tcase_add_test(tc, test_locality_wait);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_topology_auto);
	tcase_add_test(tc, test_family_mismatch);
	tcase_add_test(tc, test_lexer);
	tcase_add_test(tc, test_lexer_errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
