/*
 * Trace readers and the trace simulator: parsers on hand-made fixtures,
 * FCFS / EASY backfill decisions and metrics on tiny hand-computed traces.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sim.h"

static char _path[4096];

static const char *_fixture(const char *name)
{
	const char *dir = getenv("TESTS_DIR");

	snprintf(_path, sizeof(_path), "%s/fixtures/sim/%s", dir ? dir : ".",
		 name);
	return _path;
}

static struct topoml_trace *_read(const char *name,
				  const struct topoml_trace_opts *o)
{
	topoml_errors_t err = { 0 };
	struct topoml_trace *tr = topoml_trace_read(_fixture(name), o, &err);

	if (!tr)
		topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
	return tr;
}

/* Does some error message contain both strings? */
static bool _has_error(const topoml_errors_t *e, const char *a, const char *b)
{
	for (int i = 0; i < e->n; i++)
		if (strstr(e->msg[i], a) && (!b || strstr(e->msg[i], b)))
			return true;
	return false;
}

/* ---- parsers ------------------------------------------------------- */

static void _check_small_swf(const struct topoml_trace *tr)
{
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(tr->format, TOPOML_TRACE_SWF);
	ck_assert_int_eq(tr->njobs, 3);
	ck_assert_int_eq(tr->nskipped, 2);	/* no run time, no procs */
	/* sorted by submit, shifted to the first one */
	ck_assert_uint_eq(tr->jobs[0].id, 2);
	ck_assert_double_eq(tr->jobs[0].submit, 0);
	ck_assert_double_eq(tr->jobs[0].runtime, 120);
	ck_assert_double_eq(tr->jobs[0].walltime, 120);	/* -1 */
	ck_assert_int_eq(tr->jobs[0].size, 8);
	ck_assert_int_eq(tr->jobs[0].nodes, 2);	/* 8 procs / 4 */
	ck_assert_int_eq(tr->jobs[0].line, 6);
	ck_assert_uint_eq(tr->jobs[1].id, 1);
	ck_assert_double_eq(tr->jobs[1].submit, 50);
	ck_assert_double_eq(tr->jobs[1].walltime, 600);
	ck_assert_int_eq(tr->jobs[1].nodes, 4);
	/* allocated unknown: requested 33 procs -> 9 nodes; the limit is
	 * raised to the run time it really had */
	ck_assert_uint_eq(tr->jobs[2].id, 4);
	ck_assert_double_eq(tr->jobs[2].submit, 150);
	ck_assert_int_eq(tr->jobs[2].nodes, 9);
	ck_assert_double_eq(tr->jobs[2].runtime, 60);
	ck_assert_double_eq(tr->jobs[2].walltime, 60);
}

START_TEST(swf_parse)
{
	struct topoml_trace_opts o = { .cores_per_node = 4 };
	struct topoml_trace *tr = _read("small.swf", &o);

	_check_small_swf(tr);
	topoml_trace_free(tr);
}
END_TEST

START_TEST(swf_gzip)
{
	struct topoml_trace_opts o = { .cores_per_node = 4 };
	char tmpl[] = "/tmp/check_sim_XXXXXX.swf.gz";
	char buf[4096];
	topoml_errors_t err = { 0 };
	struct topoml_trace *tr;
	FILE *in = fopen(_fixture("small.swf"), "r");
	int fd = mkstemps(tmpl, 7);
	gzFile gz;
	size_t n;

	ck_assert_ptr_nonnull(in);
	ck_assert_int_ge(fd, 0);
	gz = gzdopen(fd, "wb");
	ck_assert_ptr_nonnull(gz);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_int_eq(gzwrite(gz, buf, n), (int)n);
	fclose(in);
	ck_assert_int_eq(gzclose(gz), Z_OK);
	/* really compressed: gzip magic */
	in = fopen(tmpl, "rb");
	ck_assert_int_eq(fgetc(in), 0x1f);
	ck_assert_int_eq(fgetc(in), 0x8b);
	fclose(in);
	tr = topoml_trace_read(tmpl, &o, &err);
	unlink(tmpl);
	topoml_errors_print(&err, stderr);
	_check_small_swf(tr);
	topoml_trace_free(tr);
	topoml_errors_clear(&err);
}
END_TEST

START_TEST(csv_parse)
{
	struct topoml_trace *tr = _read("small.csv", NULL);

	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(tr->format, TOPOML_TRACE_CSV);
	ck_assert_int_eq(tr->njobs, 3);
	/* header columns in any order; empty hint / walltime = defaults */
	ck_assert_int_eq(tr->jobs[0].line, 4);
	ck_assert_int_eq(tr->jobs[0].nodes, 2);
	ck_assert_double_eq(tr->jobs[0].walltime, 50);
	ck_assert_int_eq(tr->jobs[0].hint, TOPOML_HINT_ALLREDUCE);
	ck_assert_int_eq(tr->jobs[1].nodes, 8);
	ck_assert_double_eq(tr->jobs[1].submit, 5);
	ck_assert_double_eq(tr->jobs[1].walltime, 30);
	ck_assert_int_eq(tr->jobs[1].hint, TOPOML_HINT_ISOLATE);
	ck_assert_int_eq(tr->jobs[2].nodes, 4);
	ck_assert_double_eq(tr->jobs[2].runtime, 100);
	ck_assert_double_eq(tr->jobs[2].walltime, 200);
	ck_assert_int_eq(tr->jobs[2].hint, TOPOML_HINT_ALLTOALL);
	topoml_trace_free(tr);
}
END_TEST

START_TEST(mtech_parse)
{
	struct topoml_trace_opts o = { .machine_nodes = 1024 };
	struct topoml_trace *tr = _read("small.mtech", NULL);

	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(tr->format, TOPOML_TRACE_MTECH);
	ck_assert_int_eq(tr->njobs, 3);
	ck_assert_uint_eq(tr->jobs[0].id, 900);
	ck_assert_uint_eq(tr->jobs[1].id, 902);
	ck_assert_double_eq(tr->jobs[1].submit, 5);
	ck_assert_int_eq(tr->jobs[1].nodes, 2048);
	/* no requested time in this format: the run time is the estimate */
	ck_assert_double_eq(tr->jobs[1].walltime, 60);
	topoml_trace_free(tr);

	/* too large for the machine: dropped, counted */
	tr = _read("small.mtech", &o);
	ck_assert_int_eq(tr->njobs, 2);
	ck_assert_int_eq(tr->ntoo_large, 1);
	ck_assert_uint_eq(tr->jobs[1].id, 901);
	topoml_trace_free(tr);
}
END_TEST

START_TEST(scaling)
{
	struct topoml_trace_opts fit = { .machine_nodes = 1024,
					 .scale_fit = true };
	struct topoml_trace_opts half = { .scale = 0.5 };
	struct topoml_trace_opts load = { .machine_nodes = 256,
					  .trace_nodes = 4096 };
	struct topoml_trace_opts cut = { .max_jobs = 2 };
	struct topoml_trace *tr = _read("small.mtech", &fit);

	ck_assert_double_eq(tr->scale, 0.5);
	ck_assert_int_eq(tr->jobs[0].nodes, 256);
	ck_assert_int_eq(tr->jobs[1].nodes, 1024);
	ck_assert_int_eq(tr->jobs[2].nodes, 512);
	ck_assert_int_eq(tr->jobs[2].size, 1024);	/* as in the trace */
	topoml_trace_free(tr);

	tr = _read("small.mtech", &half);
	ck_assert_int_eq(tr->jobs[1].nodes, 1024);
	topoml_trace_free(tr);

	/* keep the load of a 4096-node machine on 256 nodes */
	tr = _read("small.mtech", &load);
	ck_assert_int_eq(tr->njobs, 3);
	ck_assert_int_eq(tr->jobs[0].nodes, 32);
	ck_assert_int_eq(tr->jobs[1].nodes, 128);
	topoml_trace_free(tr);

	/* scaled sizes never drop below one node */
	load.trace_nodes = 1 << 20;
	tr = _read("small.mtech", &load);
	ck_assert_int_eq(tr->jobs[0].nodes, 1);
	topoml_trace_free(tr);

	tr = _read("small.mtech", &cut);
	ck_assert_int_eq(tr->njobs, 2);
	ck_assert_uint_eq(tr->jobs[1].id, 902);
	topoml_trace_free(tr);
}
END_TEST

START_TEST(bad_lines)
{
	static const struct {
		const char *file;
		const char *where;
		const char *what;
	} cases[] = {
		{ "bad.swf", "bad.swf:3: ",
		  "expected 18 SWF fields, found 17" },
		{ "bad.swf", "bad.swf:4: ", "field 4 (run time): 'ten'" },
		{ "bad.csv", "bad.csv:3: ", "nodes: 'x' is not a number" },
		{ "bad.csv", "bad.csv:4: ", "expected 3 CSV fields" },
		{ "bad.csv", "bad.csv:5: ", "not a positive whole number" },
		{ "badheader.csv", "badheader.csv:1: ",
		  "unknown column 'cores'" },
		{ "badheader.csv", "badheader.csv:1: ",
		  "column 'runtime' missing" },
		{ "badhint.csv", "badhint.csv:2: ", "hint: 'broadcast'" },
		{ "bad.mtech", "bad.mtech:3: ", "Nodes: 'sixty'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		topoml_errors_t err = { 0 };
		struct topoml_trace *tr =
			topoml_trace_read(_fixture(cases[i].file), NULL, &err);

		ck_assert_msg(!tr, "%s read despite errors", cases[i].file);
		ck_assert_msg(_has_error(&err, cases[i].where, cases[i].what),
			      "%s: no error '%s%s'", cases[i].file,
			      cases[i].where, cases[i].what);
		topoml_errors_clear(&err);
	}
}
END_TEST

START_TEST(bad_format_and_file)
{
	struct topoml_trace_opts o = { .format = TOPOML_TRACE_MTECH };
	topoml_errors_t err = { 0 };
	enum topoml_trace_format f;

	/* a CSV read as the MTech format: its header is wrong */
	ck_assert_ptr_null(topoml_trace_read(_fixture("small.csv"), &o, &err));
	ck_assert(_has_error(&err, "small.csv:1: ", "expected the header"));
	topoml_errors_clear(&err);
	ck_assert_ptr_null(topoml_trace_read("/nonexistent/t.swf", NULL,
					     &err));
	ck_assert(_has_error(&err, "/nonexistent/t.swf: cannot open", NULL));
	topoml_errors_clear(&err);
	ck_assert_int_eq(topoml_trace_format_parse("SWF", &f), 0);
	ck_assert_int_eq(f, TOPOML_TRACE_SWF);
	ck_assert_int_eq(topoml_trace_format_parse("xml", &f), -1);
}
END_TEST

/* ---- simulator ----------------------------------------------------- */

/* rows: submit, nodes, runtime, walltime */
static struct topoml_trace *_trace(const double (*rows)[4], int n)
{
	struct topoml_trace *tr = calloc(1, sizeof(*tr));

	tr->source = strdup("test");
	tr->njobs = n;
	tr->scale = 1;
	tr->jobs = calloc(n, sizeof(*tr->jobs));
	for (int i = 0; i < n; i++) {
		tr->jobs[i].id = i + 1;
		tr->jobs[i].submit = rows[i][0];
		tr->jobs[i].nodes = rows[i][1];
		tr->jobs[i].size = rows[i][1];
		tr->jobs[i].runtime = rows[i][2];
		tr->jobs[i].walltime = rows[i][3];
		tr->jobs[i].line = i + 1;
	}
	return tr;
}

/* 8 nodes, 2 leaves of 4, one root. */
static topoml_topo_t *_tree8(void)
{
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 8, 4, 2, 2);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 8);
	return t;
}

static const enum topoml_policy _tree_policies[] = {
	TOPOML_POLICY_TOPOML, TOPOML_POLICY_SLURM_TREE, TOPOML_POLICY_LINEAR,
};

static void _run(const topoml_topo_t *t, const struct topoml_trace *tr,
		 enum topoml_policy p, const struct topoml_sim_opts *o,
		 struct topoml_sim_metrics *m, struct topoml_sim_jobout *out)
{
	topoml_errors_t err = { 0 };

	ck_assert_int_eq(topoml_sim_run(t, tr, p, o, m, out, &err), 0);
	ck_assert_int_eq(err.n, 0);
}

START_TEST(fcfs_wait_utilization)
{
	static const double rows[][4] = {
		{ 0, 8, 100, 100 },
		{ 10, 4, 50, 50 },
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _trace(rows, 2);
	enum topoml_policy p = _tree_policies[_i];
	struct topoml_sim_jobout out[2];
	struct topoml_sim_metrics m;

	_run(t, tr, p, NULL, &m, out);
	ck_assert_int_eq(m.jobs, 2);
	ck_assert_double_eq(out[0].start, 0);
	ck_assert_double_eq(out[1].start, 100);
	ck_assert_double_eq(m.mean_wait_s, 45);	/* (0 + 90) / 2 */
	ck_assert_double_eq(m.makespan_s, 150);
	/* (8 x 100 + 4 x 50) / (8 x 150) */
	ck_assert_double_eq_tol(m.utilization, 1000.0 / 1200, 1e-12);
	ck_assert_int_eq(m.backfilled, 0);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * A holds 4 of 8 nodes until 100 (its wall time); B (8 nodes) is blocked
 * and reserved for 100.  C (2 nodes, wall 50) ends before 100 and
 * backfills at once; D (2 nodes, wall 200) fits in the free nodes but
 * would delay B, so it must wait until B has run.
 */
START_TEST(backfill_decisions)
{
	static const double rows[][4] = {
		{ 0, 4, 100, 100 },	/* A */
		{ 1, 8, 10, 10 },	/* B */
		{ 2, 2, 50, 50 },	/* C */
		{ 3, 2, 50, 200 },	/* D */
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _trace(rows, 4);
	enum topoml_policy p = _tree_policies[_i];
	struct topoml_sim_opts fcfs = { .no_backfill = true };
	struct topoml_sim_jobout out[4];
	struct topoml_sim_metrics m;

	_run(t, tr, p, NULL, &m, out);
	ck_assert_double_eq(out[0].start, 0);
	ck_assert_double_eq(out[1].start, 100);
	ck_assert_double_eq(out[2].start, 2);
	ck_assert(out[2].backfilled);
	ck_assert_double_eq(out[3].start, 110);
	ck_assert(!out[3].backfilled);
	ck_assert_int_eq(m.backfilled, 1);
	/* waits 0, 99, 0, 107 */
	ck_assert_double_eq(m.mean_wait_s, 206.0 / 4);
	ck_assert_double_eq(m.makespan_s, 160);

	/* plain FCFS: C waits behind B too */
	_run(t, tr, p, &fcfs, &m, out);
	ck_assert_double_eq(out[2].start, 110);
	ck_assert_double_eq(out[3].start, 110);
	ck_assert_int_eq(m.backfilled, 0);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * B (6 of 8 nodes) is reserved for 100, leaving 2 extra nodes then: C
 * (2 nodes, wall 500) runs past the reservation but only on those extra
 * nodes, so it backfills; D (2 nodes, wall 10) ends before 100 and takes
 * the last 2 free nodes.  Early ends: A's real run time is 60, so B
 * starts at 60, not at its reservation.
 */
START_TEST(backfill_extra_nodes)
{
	static const double rows[][4] = {
		{ 0, 4, 60, 100 },	/* A */
		{ 1, 6, 10, 10 },	/* B */
		{ 2, 2, 500, 500 },	/* C */
		{ 3, 2, 10, 10 },	/* D */
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _trace(rows, 4);
	enum topoml_policy p = _tree_policies[_i];
	struct topoml_sim_jobout out[4];
	struct topoml_sim_metrics m;

	_run(t, tr, p, NULL, &m, out);
	ck_assert_double_eq(out[2].start, 2);
	ck_assert(out[2].backfilled);
	ck_assert_double_eq(out[1].start, 60);
	ck_assert_double_eq(out[3].start, 3);
	ck_assert(out[3].backfilled);
	ck_assert_double_eq(m.makespan_s, 502);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

START_TEST(p95_nearest_rank)
{
	double rows[20][4];
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 4, 4, 2, 1);
	struct topoml_trace *tr;
	struct topoml_sim_metrics m;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 20; i++) {
		rows[i][0] = 0;
		rows[i][1] = 4;
		rows[i][2] = 1;
		rows[i][3] = 1;
	}
	tr = _trace((const double (*)[4])rows, 20);
	_run(t, tr, TOPOML_POLICY_LINEAR, NULL, &m, NULL);
	/* waits 0 .. 19 */
	ck_assert_int_eq(m.jobs, 20);
	ck_assert_double_eq(m.mean_wait_s, 9.5);
	ck_assert_double_eq(m.p95_wait_s, 18);	/* rank ceil(0.95 x 20) */
	ck_assert_double_eq(m.max_wait_s, 19);
	ck_assert_double_eq(m.makespan_s, 20);
	ck_assert_double_eq(m.utilization, 1);
	/* the whole single leaf: every ring at its bound */
	ck_assert_double_eq(m.ring_cost_over_lower_bound, 1);
	ck_assert_double_eq(m.span_over_lower_bound, 1);
	ck_assert_double_eq(m.ring_cost_over_free_lower_bound, 1);
	ck_assert_double_eq(m.span_over_free_lower_bound, 1);
	ck_assert_double_eq(m.sharing, 0);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * 12 nodes on 3 leaves of 4: two 6-node jobs each span two leaves, so
 * they share one whatever the placement; they overlap for 1800 s:
 * sharing = (6 + 6) x 0.5 h.
 */
START_TEST(sharing_fat_tree)
{
	static const double rows[][4] = {
		{ 0, 6, 3600, 3600 },
		{ 0, 6, 1800, 1800 },
		{ 4000, 4, 100, 100 },
	};
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 12, 4, 3, 2);
	struct topoml_trace *tr = _trace(rows, 3);
	struct topoml_sim_metrics m;

	ck_assert_ptr_nonnull(t);
	_run(t, tr, _tree_policies[_i], NULL, &m, NULL);
	ck_assert_double_eq_tol(m.sharing, 6.0, 1e-9);
	ck_assert_double_eq_tol(m.sharing_fraction,
				6.0 * 3600 / (6 * 3600 + 6 * 1800 + 4 * 100),
				1e-9);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/* The same on a dragonfly of 3 groups of 4 nodes: units are groups. */
START_TEST(sharing_dragonfly)
{
	static const double rows[][4] = {
		{ 0, 6, 3600, 3600 },
		{ 0, 6, 1800, 1800 },
	};
	topoml_topo_t *t = topoml_gen_dragonfly(NULL, 3, 2, 2,
						TOPOML_DF_ALL_TO_ALL);
	struct topoml_trace *tr = _trace(rows, 2);
	struct topoml_sim_metrics m;
	enum topoml_policy p[] = { TOPOML_POLICY_TOPOML,
				   TOPOML_POLICY_SLURM_DRAGONFLY,
				   TOPOML_POLICY_LINEAR };

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nnodes, 12);
	for (int i = 0; i < 3; i++) {
		_run(t, tr, p[i], NULL, &m, NULL);
		ck_assert_double_eq_tol(m.sharing, 6.0, 1e-9);
	}
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

START_TEST(torus_box_possible)
{
	/* 4x4x4: linear best fit puts 32 nodes on the first two z planes
	 * (x-fastest names), so a 2x2x2 box is free beside them; 5 nodes
	 * never make a box on 4x4x4 (5 > 4) */
	static const double rows[][4] = {
		{ 0, 32, 1000, 1000 },
		{ 10, 8, 10, 10 },
		{ 20, 5, 10, 10 },
		{ 2000, 64, 10, 10 },
	};
	topoml_topo_t *t = topoml_gen_torus(NULL, 4, 4, 4, true);
	struct topoml_trace *tr = _trace(rows, 4);
	struct topoml_sim_metrics m;

	ck_assert_ptr_nonnull(t);
	_run(t, tr, TOPOML_POLICY_LINEAR, NULL, &m, NULL);
	/* 32 (on an empty machine), 8 next to it, 64 alone: possible */
	ck_assert_int_eq(m.box_possible, 3);
	ck_assert_int_eq(m.jobs, 4);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * 2x2x2 torus: a 5-node job's bounding box is the whole machine, so a
 * 3-node job beside it shares; neither gets an isolated box.  Then an
 * 8-node job alone: one exact box, isolated.
 */
START_TEST(sharing_torus)
{
	static const double rows[][4] = {
		{ 0, 5, 3600, 3600 },
		{ 0, 3, 3600, 3600 },
		{ 5000, 8, 100, 100 },
	};
	topoml_topo_t *t = topoml_gen_torus(NULL, 2, 2, 2, true);
	struct topoml_trace *tr = _trace(rows, 3);
	struct topoml_sim_metrics m;
	enum topoml_policy p[] = { TOPOML_POLICY_TOPOML,
				   TOPOML_POLICY_SLURM_HILBERT,
				   TOPOML_POLICY_LINEAR };

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 3; i++) {
		_run(t, tr, p[i], NULL, &m, NULL);
		ck_assert_double_eq_tol(m.sharing, 8.0, 1e-9);
		ck_assert_double_eq_tol(m.contiguous_isolated, 1.0 / 3,
					1e-12);
		/* 5 and 3 nodes make no box; 8 on a free machine do */
		ck_assert_int_eq(m.box_possible, 1);
		ck_assert_double_eq(m.contiguous_isolated_when_possible, 1);
	}
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * Ring cost is weighted by run time: a 4-node job on one leaf of a
 * fat-tree (the engine's choice: fewest leaves) has 4 ring steps of 2
 * hops, all at the bound.
 */
START_TEST(ring_cost_weighting)
{
	static const double rows[][4] = {
		{ 0, 4, 10, 10 },
		{ 0, 4, 30, 30 },
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _trace(rows, 2);
	struct topoml_sim_jobout out[2];
	struct topoml_sim_metrics m;

	_run(t, tr, TOPOML_POLICY_TOPOML, NULL, &m, out);
	ck_assert_int_eq(out[0].span, 1);
	ck_assert_int_eq(out[1].span, 1);
	ck_assert_double_eq(m.ring_cost, 8 * 10 + 8 * 30);
	ck_assert_double_eq(m.ring_cost_over_lower_bound, 1);
	ck_assert_double_eq(m.span_over_lower_bound, 1);
	ck_assert_double_eq(m.sharing, 0);
	/* the whole machine busy, then 4 nodes free on one leaf */
	ck_assert(m.fragmentation >= 0 && m.fragmentation <= 1);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/* A job larger than the machine never runs; the others are not stuck. */
START_TEST(unplaceable)
{
	static const double rows[][4] = {
		{ 0, 9, 10, 10 },
		{ 1, 2, 10, 10 },
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _trace(rows, 2);
	struct topoml_sim_jobout out[2];
	struct topoml_sim_metrics m;

	_run(t, tr, TOPOML_POLICY_LINEAR, NULL, &m, out);
	ck_assert_int_eq(m.jobs, 1);
	ck_assert_int_eq(m.unplaced, 1);
	ck_assert_double_eq(out[0].start, -1);
	/* reservation at infinity: the small job backfills at once */
	ck_assert_double_eq(out[1].start, 1);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/* Same input, same result: the replay is deterministic. */
START_TEST(deterministic)
{
	double rows[200][4];
	topoml_topo_t *t = topoml_gen_fat_tree(NULL, 64, 8, 4, 2);
	struct topoml_trace *tr;
	struct topoml_sim_metrics a, b;
	unsigned int seed = 7;

	for (int i = 0; i < 200; i++) {
		rows[i][0] = i * 7;
		rows[i][1] = 1 + rand_r(&seed) % 40;
		rows[i][2] = 10 + rand_r(&seed) % 500;
		rows[i][3] = rows[i][2] * 2;
	}
	tr = _trace((const double (*)[4])rows, 200);
	for (size_t p = 0; p < 3; p++) {
		_run(t, tr, _tree_policies[p], NULL, &a, NULL);
		_run(t, tr, _tree_policies[p], NULL, &b, NULL);
		ck_assert_int_eq(a.jobs, 200);
		ck_assert_double_eq(a.mean_wait_s, b.mean_wait_s);
		ck_assert_double_eq(a.ring_cost, b.ring_cost);
		ck_assert_double_eq(a.sharing, b.sharing);
		ck_assert_double_eq(a.fragmentation, b.fragmentation);
		ck_assert(a.utilization > 0 && a.utilization <= 1);
		ck_assert(a.ring_cost_over_lower_bound >= 1);
		ck_assert(a.span_over_lower_bound >= 1);
	}
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/* ---- jobs that share nodes (issue 18) ------------------------------ */

START_TEST(shared_swf_read)
{
	struct topoml_trace_opts o = { .cores_per_node = 4, .shared = true };
	struct topoml_trace *tr = _read("small.swf", &o);

	ck_assert_ptr_nonnull(tr);
	ck_assert(tr->shared);
	ck_assert_int_eq(tr->cores_per_node, 4);
	ck_assert_int_eq(tr->njobs, 3);
	ck_assert_int_eq(tr->jobs[0].cores, 8);
	ck_assert_int_eq(tr->jobs[0].nodes, 2);
	ck_assert_int_eq(tr->jobs[2].cores, 33);	/* requested procs */
	ck_assert_int_eq(tr->jobs[2].nodes, 9);
	topoml_trace_free(tr);
	/* scaled in cores: nodes follow */
	o.scale = 0.5;
	tr = _read("small.swf", &o);
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(tr->jobs[2].cores, 17);	/* round(16.5) */
	ck_assert_int_eq(tr->jobs[2].nodes, 5);
	topoml_trace_free(tr);
	/* without --shared: whole nodes, as before */
	o.shared = false;
	o.scale = 0;
	tr = _read("small.swf", &o);
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(tr->jobs[0].cores, 0);
	ck_assert_int_eq(tr->jobs[0].nodes, 2);
	topoml_trace_free(tr);
}
END_TEST

/* rows: submit, cores (0 = whole nodes), nodes, runtime, walltime */
static struct topoml_trace *_strace(const double (*rows)[5], int n, int upn)
{
	struct topoml_trace *tr = calloc(1, sizeof(*tr));

	tr->source = strdup("test");
	tr->njobs = n;
	tr->scale = 1;
	tr->shared = true;
	tr->cores_per_node = upn;
	tr->jobs = calloc(n, sizeof(*tr->jobs));
	for (int i = 0; i < n; i++) {
		tr->jobs[i].id = i + 1;
		tr->jobs[i].submit = rows[i][0];
		tr->jobs[i].cores = rows[i][1];
		tr->jobs[i].nodes = rows[i][2];
		tr->jobs[i].size = rows[i][1] ? rows[i][1] : rows[i][2];
		tr->jobs[i].runtime = rows[i][3];
		tr->jobs[i].walltime = rows[i][4];
		tr->jobs[i].line = i + 1;
	}
	return tr;
}

static const struct topoml_sim_opts _rec = { .record_nodes = true };

/*
 * 8 nodes of 4 cores: a 2-core job, then a 2-core job while a node has 2
 * free cores: the second goes onto that node (every policy: partly used
 * nodes first / cons_tres's best fit), and the node is full; a 1-core job
 * then goes to another node.
 */
START_TEST(shared_best_fit)
{
	static const double rows[][5] = {
		{ 0, 2, 1, 100, 100 },
		{ 1, 2, 1, 100, 100 },
		{ 2, 1, 1, 100, 100 },
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _strace(rows, 3, 4);
	struct topoml_sim_jobout out[3];
	struct topoml_sim_metrics m;

	_run(t, tr, _tree_policies[_i], &_rec, &m, out);
	ck_assert_int_eq(m.jobs, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_double_eq(out[i].start, rows[i][0]);
		ck_assert_int_eq(out[i].nnodes, 1);
		ck_assert_ptr_nonnull(out[i].nodes);
		ck_assert_int_eq(hwloc_bitmap_weight(out[i].nodes), 1);
		ck_assert_int_eq(out[i].units[0], rows[i][1]);
	}
	ck_assert(hwloc_bitmap_isequal(out[0].nodes, out[1].nodes));
	ck_assert(!hwloc_bitmap_isequal(out[0].nodes, out[2].nodes));
	/* utilization in cores: 500 core-s of 32 cores x 102 s */
	ck_assert_double_eq_tol(m.utilization, 500.0 / (32 * 102), 1e-12);
	topoml_sim_jobout_free(out, 3);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * The issue's case: six 1-core jobs, then a job of 4 whole nodes on two
 * leaves of four 4-core nodes.  The small jobs pack onto two nodes and
 * the 4-node job starts at once on the other leaf.
 */
START_TEST(shared_issue_case)
{
	static const double rows[][5] = {
		{ 0, 1, 1, 1000, 1000 }, { 0, 1, 1, 1000, 1000 },
		{ 0, 1, 1, 1000, 1000 }, { 0, 1, 1, 1000, 1000 },
		{ 0, 1, 1, 1000, 1000 }, { 0, 1, 1, 1000, 1000 },
		{ 1, 0, 4, 100, 100 },
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _strace(rows, 7, 4);
	struct topoml_sim_jobout out[7];
	struct topoml_sim_metrics m;
	hwloc_bitmap_t small = hwloc_bitmap_alloc();

	_run(t, tr, _tree_policies[_i], &_rec, &m, out);
	for (int i = 0; i < 6; i++)
		hwloc_bitmap_or(small, small, out[i].nodes);
	ck_assert_int_eq(hwloc_bitmap_weight(small), 2);
	ck_assert_double_eq(out[6].start, 1);
	ck_assert_int_eq(hwloc_bitmap_weight(out[6].nodes), 4);
	ck_assert(!hwloc_bitmap_intersects(small, out[6].nodes));
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(out[6].units[k], 4);	/* whole nodes */
	hwloc_bitmap_free(small);
	topoml_sim_jobout_free(out, 7);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * Units may be GPUs: nodes of 8, eight 1-GPU jobs fill one node, the
 * ninth goes to another, and a job of all 8 nodes waits until the last
 * of them ends: a node is idle again only when all its jobs have ended.
 */
START_TEST(shared_gpus_node_freed)
{
	double rows[10][5];
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr;
	struct topoml_sim_jobout out[10];
	struct topoml_sim_metrics m;

	for (int i = 0; i < 9; i++) {
		rows[i][0] = 0;
		rows[i][1] = 1;
		rows[i][2] = 1;
		rows[i][3] = 100 + 10 * i;	/* the ninth ends at 180 */
		rows[i][4] = 500;
	}
	rows[9][0] = 1;
	rows[9][1] = 0;
	rows[9][2] = 8;
	rows[9][3] = 50;
	rows[9][4] = 50;
	tr = _strace(rows, 10, 8);
	_run(t, tr, _tree_policies[_i], &_rec, &m, out);
	for (int i = 1; i < 8; i++)
		ck_assert(hwloc_bitmap_isequal(out[0].nodes, out[i].nodes));
	ck_assert(!hwloc_bitmap_isequal(out[0].nodes, out[8].nodes));
	ck_assert_double_eq(out[9].start, 180);
	ck_assert_int_eq(hwloc_bitmap_weight(out[9].nodes), 8);
	ck_assert_int_eq(m.jobs, 10);
	topoml_sim_jobout_free(out, 10);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * A job larger than a node: its cores on the fewest nodes, whole free
 * nodes of one leaf (9 cores: 4 + 4 + 1 on one leaf), for every policy.
 */
START_TEST(shared_multi_node)
{
	static const double rows[][5] = {
		{ 0, 9, 3, 100, 100 },
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _strace(rows, 1, 4);
	struct topoml_sim_jobout out[1];
	struct topoml_sim_metrics m;
	int sum = 0;

	_run(t, tr, _tree_policies[_i], &_rec, &m, out);
	ck_assert_int_eq(out[0].nnodes, 3);
	for (int k = 0; k < 3; k++)
		sum += out[0].units[k];
	ck_assert_int_eq(sum, 9);
	ck_assert_int_eq(out[0].span, 1);
	topoml_sim_jobout_free(out, 1);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * Where a 1-core job goes when no node is partly used (cons_tres 22.05):
 * a 4-core job fills node1 of router 0 (of 4 routers of 4 nodes); with
 * TopologyParam=dragonfly the 1-core job then goes to the router with the
 * most nodes with free cores (router 1: node5), with topology/tree to the
 * best-fitting leaf (router 0: node2), and topoml keeps router 1 whole
 * (node2, on the leaf already used).
 */
START_TEST(shared_dragonfly_baseline)
{
	static const double rows[][5] = {
		{ 0, 4, 1, 100, 100 },
		{ 1, 1, 1, 100, 100 },
	};
	static const struct {
		enum topoml_policy p;
		int node;
	} want[] = {
		{ TOPOML_POLICY_SLURM_DRAGONFLY, 4 },
		{ TOPOML_POLICY_SLURM_TREE, 1 },
		{ TOPOML_POLICY_TOPOML, 1 },
		{ TOPOML_POLICY_LINEAR, 1 },
	};
	topoml_topo_t *t = topoml_gen_dragonfly(NULL, 2, 2, 4,
						TOPOML_DF_ALL_TO_ALL);
	struct topoml_trace *tr = _strace(rows, 2, 4);
	struct topoml_sim_jobout out[2];
	struct topoml_sim_metrics m;

	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		_run(t, tr, want[i].p, &_rec, &m, out);
		ck_assert_int_eq(hwloc_bitmap_first(out[0].nodes), 0);
		ck_assert_msg(hwloc_bitmap_first(out[1].nodes) == want[i].node,
			      "%s: 1-core job on node index %d, want %d",
			      topoml_policy_name(want[i].p),
			      hwloc_bitmap_first(out[1].nodes), want[i].node);
		topoml_sim_jobout_free(out, 2);
	}
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

/*
 * --cloud-power: Slurm prefers nodes used before (powered up).  On 8 nodes
 * of 4 cores in 2 leaves, a 16-core job fills the first leaf and a 4-core
 * job one node of the second; when both have ended, a 2-core job goes to
 * node1 under slurm-tree without cloud_power (equal leaves: the first),
 * and with it to the second job's node (the used nodes are node1-4 and
 * that one: the best-fitting leaf by such nodes is the second).
 */
START_TEST(shared_cloud_power)
{
	static const double rows[][5] = {
		{ 0, 16, 4, 10, 10 },	/* node1-4: the first leaf */
		{ 1, 4, 1, 10, 10 },	/* a node of the second leaf */
		{ 20, 2, 1, 10, 10 },	/* after both ended */
	};
	topoml_topo_t *t = _tree8();
	struct topoml_trace *tr = _strace(rows, 3, 4);
	struct topoml_sim_jobout out[3];
	struct topoml_sim_metrics m;
	struct topoml_sim_opts o = { .record_nodes = true };
	int first;

	_run(t, tr, TOPOML_POLICY_SLURM_TREE, &o, &m, out);
	first = hwloc_bitmap_first(out[1].nodes);
	ck_assert_int_ge(first, 4);
	ck_assert_int_eq(hwloc_bitmap_first(out[2].nodes), 0);
	topoml_sim_jobout_free(out, 3);
	o.cloud_power = true;
	_run(t, tr, TOPOML_POLICY_SLURM_TREE, &o, &m, out);
	ck_assert_int_eq(hwloc_bitmap_first(out[1].nodes), first);
	ck_assert_int_eq(hwloc_bitmap_first(out[2].nodes), first);
	topoml_sim_jobout_free(out, 3);
	topoml_trace_free(tr);
	topoml_free(t);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("trace");
	TCase *ts = tcase_create("simulator");
	int np = sizeof(_tree_policies) / sizeof(_tree_policies[0]);

	tcase_add_test(tc, swf_parse);
	tcase_add_test(tc, swf_gzip);
	tcase_add_test(tc, csv_parse);
	tcase_add_test(tc, mtech_parse);
	tcase_add_test(tc, scaling);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, bad_format_and_file);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ts, 60);
	tcase_add_loop_test(ts, fcfs_wait_utilization, 0, np);
	tcase_add_loop_test(ts, backfill_decisions, 0, np);
	tcase_add_loop_test(ts, backfill_extra_nodes, 0, np);
	tcase_add_test(ts, p95_nearest_rank);
	tcase_add_loop_test(ts, sharing_fat_tree, 0, np);
	tcase_add_test(ts, sharing_dragonfly);
	tcase_add_test(ts, sharing_torus);
	tcase_add_test(ts, torus_box_possible);
	tcase_add_test(ts, ring_cost_weighting);
	tcase_add_test(ts, unplaceable);
	tcase_add_test(ts, deterministic);
	tcase_add_test(ts, shared_swf_read);
	tcase_add_loop_test(ts, shared_best_fit, 0, np);
	tcase_add_loop_test(ts, shared_issue_case, 0, np);
	tcase_add_loop_test(ts, shared_gpus_node_freed, 0, np);
	tcase_add_loop_test(ts, shared_multi_node, 0, np);
	tcase_add_test(ts, shared_dragonfly_baseline);
	tcase_add_test(ts, shared_cloud_power);
	suite_add_tcase(s, ts);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
