/*
 * hybrid_jobs: the hybrid-parallel traffic of one `topoml sim --jobs` run,
 * priced again per policy (issue 14 item 5), with the rank order
 * select/topoml gives an --ml-parallel job (topoml_hybrid_rank on the
 * job's own nodes, which topoml sim --hybrid prices too) beside the
 * plain ring order of the same nodes, and a
 * lower bound on the data-parallel transfers through the top level given
 * the nodes that were free when each job started; and for topoml the
 * choice topoml_hybrid_rank makes on those same free nodes (a decision
 * on the replay's free sets, not a replay of its own).
 *
 *   hybrid_jobs TOPOLOGY JOBS TRACE K TP
 *
 * JOBS: the --jobs file of `topoml sim ... --hybrid K --hybrid-tp TP`
 * (same topology, trace and sizes); TRACE: that trace, for the run
 * times.  Shapes as topoml sim --hybrid gives them (contrib/cmd_sim.c):
 * tp=TP where it divides the job's tasks, else K; pp the largest of 8, 4,
 * 2, 1 that leaves dp >= 2; dp the rest.
 *
 * The bound, per job, assumes no tensor group crosses the top level (the
 * TP target is 0 split groups): with P == 1 the job covers at least k
 * top-level parts (fewest parts whose free nodes hold it) and each of its
 * T*C data-parallel rings then crosses the top >= k times (k >= 2); with
 * P > 1 at most sum floor(free(part) / stage) stages fit in one part and
 * every other stage's T*C rings cross at least twice each.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim.h"

#define NPOL 8

struct sum {
	char pol[32];
	long jobs, dp_top, pp_top, pp_hops, tp_split, bound;
	long dp_top_ring, pp_hops_ring, tp_split_ring;
	long dp_top_free, pp_hops_free, tp_split_free, placed_free;
	double weighted, weighted_ring;
};

struct row {
	int pol;
	unsigned id;
	double start, end;
	hwloc_bitmap_t set;
};

/* Top-level part of every node (as topology/hybrid/place_hybrid.c
 * counts it), or -1. */
static int *_parts(const topoml_topo_t *t, int *np)
{
	int *part = malloc(sizeof(int) * t->nnodes), *rep;

	rep = malloc(sizeof(int) * t->nnodes);
	*np = 0;
	for (int v = 0; part && rep && v < t->nnodes; v++) {
		int q;

		for (q = 0; q < *np; q++)
			if (t->family == TOPOML_DRAGONFLY ?
			    t->nodes[rep[q]].group == t->nodes[v].group :
			    topoml_common_level(t, rep[q], v) <
			    t->nlevels - 1)
				break;
		if (q == *np)
			rep[(*np)++] = v;
		part[v] = q;
	}
	free(rep);
	return part;
}

static int _cmp_int_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

static long _bound(const struct topoml_parallel *p, int n, const int *freec,
		   int np)
{
	int *c = malloc(sizeof(int) * np), k = 0, sum = 0, fit = 0;
	long b = 0;

	if (!c || p->dp < 2) {
		free(c);
		return 0;
	}
	memcpy(c, freec, sizeof(int) * np);
	qsort(c, np, sizeof(int), _cmp_int_desc);
	if (p->pp == 1) {
		while (sum < n && k < np)
			sum += c[k++];
		b = k >= 2 ? (long)p->tp * p->cp * k : 0;
	} else {
		int S = n / p->pp;

		for (int q = 0; q < np; q++)
			fit += c[q] / S;
		b = fit < p->pp ? 2L * p->tp * p->cp * (p->pp - fit) : 0;
	}
	free(c);
	return b;
}

/*
 * select/topoml's choice on the nodes that were free when the job
 * started: the engine's placement, then topoml_hybrid_rank.  A decision
 * on the same free nodes, not a replay (the later schedule would move).
 */
static void _place_free(const topoml_topo_t *t, hwloc_const_bitmap_t busy,
			const struct topoml_parallel *par, int n, int K,
			const double *w, struct sum *x)
{
	hwloc_bitmap_t fr = hwloc_bitmap_alloc();
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	struct topoml_hybrid_cost c;
	char why[256];

	hwloc_bitmap_set_range(fr, 0, t->nnodes - 1);
	hwloc_bitmap_andnot(fr, fr, busy);
	req.nnodes = n;
	req.avail = fr;
	if (!topoml_place(t, TOPOML_POLICY_TOPOML, &req, &pl, why,
			  sizeof(why)) &&
	    !topoml_hybrid_rank(t, &req, par, K, w, &pl, 1) &&
	    !topoml_hybrid_cost(t, pl.nodes, pl.n, K, par, w, &c)) {
		x->dp_top_free += c.kind[TOPOML_KIND_DP].cross_top;
		x->pp_hops_free += c.kind[TOPOML_KIND_PP].hops;
		x->tp_split_free += topoml_hybrid_tp_split(t, pl.nodes, pl.n,
							   K, par);
		x->placed_free++;
	}
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(fr);
}

int main(int argc, char **argv)
{
	topoml_errors_t errs = { 0 }, *err = &errs;
	struct topoml_trace_opts to = { 0 };
	struct topoml_trace *tr;
	topoml_topo_t *t;
	struct sum s[NPOL];
	struct row *rows = NULL;
	hwloc_bitmap_t busy;
	int nrows = 0, cap = 0, npol = 0, K, TP, np, *part, *freec;
	double w[TOPOML_KIND_COUNT];
	char line[1 << 16];
	FILE *f;

	if (argc != 6) {
		fprintf(stderr, "usage: hybrid_jobs TOPOLOGY JOBS TRACE K "
			"TP\n");
		return 2;
	}
	K = atoi(argv[4]);
	TP = atoi(argv[5]);
	t = topoml_load(argv[1], TOPOML_FMT_AUTO, err);
	tr = t ? topoml_trace_read(argv[3], &to, err) : NULL;
	f = tr ? fopen(argv[2], "r") : NULL;
	if (!t || !tr || !f || K < 1 || TP < 1) {
		topoml_errors_print(err, stderr);
		fprintf(stderr, "hybrid_jobs: cannot read the inputs\n");
		return 1;
	}
	topoml_kind_weights_default(w);
	memset(s, 0, sizeof(s));
	while (fgets(line, sizeof(line), f)) {
		char pol[32], names[sizeof(line)];
		unsigned id;
		double submit, start, end = -1;
		int p;

		if (sscanf(line, "%31s %u %lf %lf %*d %s", pol, &id, &submit,
			   &start, names) != 5 || !strcmp(names, "-"))
			continue;
		for (p = 0; p < npol && strcmp(s[p].pol, pol); p++)
			;
		if (p == npol) {
			if (npol == NPOL)
				continue;
			snprintf(s[npol++].pol, sizeof(s[0].pol), "%s", pol);
		}
		for (int j = 0; j < tr->njobs && end < 0; j++)
			if (tr->jobs[j].id == id)
				end = start + tr->jobs[j].runtime;
		if (nrows == cap) {
			cap = cap ? 2 * cap : 1024;
			rows = realloc(rows, sizeof(*rows) * cap);
			if (!rows)
				return 1;
		}
		rows[nrows] = (struct row){ p, id, start, end,
			topoml_nodeset_parse(t, names, NULL) };
		if (!rows[nrows].set || end < 0) {
			fprintf(stderr, "hybrid_jobs: %s: job %u: unknown "
				"nodes or not in the trace\n", argv[2], id);
			return 1;
		}
		nrows++;
	}
	fclose(f);
	part = _parts(t, &np);
	freec = calloc(np + 1, sizeof(int));
	busy = hwloc_bitmap_alloc();
	if (!part || !freec || !busy)
		return 1;
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		struct sum *x = &s[r->pol];
		struct topoml_parallel par;
		struct topoml_hybrid_cost c;
		struct topoml_placement pl = { 0 };
		struct topoml_place_req req = { 0 };
		int n = hwloc_bitmap_weight(r->set), v, k = 0;
		bool slurm = strcmp(x->pol, "topoml") != 0;

		if (!topoml_sim_hybrid_shape(n, K, TP, &par))
			continue;
		pl.n = n;
		pl.nodes = malloc(sizeof(int) * n);
		if (!pl.nodes)
			return 1;
		hwloc_bitmap_foreach_begin(v, r->set)
			pl.nodes[k++] = v;	/* Slurm's order: node index */
		hwloc_bitmap_foreach_end();
		/* free nodes per part when the job started */
		for (int q = 0; q < np; q++)
			freec[q] = 0;
		hwloc_bitmap_zero(busy);
		for (int j = 0; j < nrows; j++)
			if (j != i && rows[j].pol == r->pol &&
			    rows[j].start <= r->start && r->start < rows[j].end)
				hwloc_bitmap_or(busy, busy, rows[j].set);
		for (v = 0; v < t->nnodes; v++)
			freec[part[v]] += !hwloc_bitmap_isset(busy, v);
		x->bound += _bound(&par, n, freec, np);
		if (!slurm)
			_place_free(t, busy, &par, n, K, w, x);
		x->jobs++;
		if (!slurm) {
			/* the same nodes in plain ring order */
			topoml_ring_order(t, pl.nodes, n);
			if (!topoml_hybrid_cost(t, pl.nodes, n, K, &par, w,
						&c)) {
				x->dp_top_ring +=
					c.kind[TOPOML_KIND_DP].cross_top;
				x->pp_hops_ring += c.kind[TOPOML_KIND_PP].hops;
				x->weighted_ring += c.weighted;
				x->tp_split_ring += topoml_hybrid_tp_split(
					t, pl.nodes, n, K, &par);
			}
			/* select/topoml's order for an --ml-parallel job */
			req.nnodes = n;
			req.avail = r->set;
			if (topoml_hybrid_rank(t, &req, &par, K, w, &pl, 1))
				return 1;
		}
		if (!topoml_hybrid_cost(t, pl.nodes, n, K, &par, w, &c)) {
			x->dp_top += c.kind[TOPOML_KIND_DP].cross_top;
			x->pp_top += c.kind[TOPOML_KIND_PP].cross_top;
			x->pp_hops += c.kind[TOPOML_KIND_PP].hops;
			x->weighted += c.weighted;
			x->tp_split += topoml_hybrid_tp_split(t, pl.nodes, n, K,
							      &par);
		}
		free(pl.nodes);
	}
	printf("%-12s %6s %8s %8s %8s %10s %8s %12s | ring: %8s %10s %8s "
	       "%12s\n", "policy", "jobs", "DP top", "bound", "PP top",
	       "PP hops", "TP split", "weighted", "DP top", "PP hops",
	       "TP split", "weighted");
	for (int p = 0; p < npol; p++) {
		printf("%-12s %6ld %8ld %8ld %8ld %10ld %8ld %12.0f", s[p].pol,
		       s[p].jobs, s[p].dp_top, s[p].bound, s[p].pp_top,
		       s[p].pp_hops, s[p].tp_split, s[p].weighted);
		if (!strcmp(s[p].pol, "topoml"))
			printf(" | ring: %8ld %10ld %8ld %12.0f",
			       s[p].dp_top_ring, s[p].pp_hops_ring,
			       s[p].tp_split_ring, s[p].weighted_ring);
		printf("\n");
	}
	for (int p = 0; p < npol; p++)
		if (!strcmp(s[p].pol, "topoml"))
			printf("placed by topoml_hybrid_rank on the same free "
			       "nodes (%ld jobs): DP top %ld, PP hops %ld, TP "
			       "split %ld\n", s[p].placed_free,
			       s[p].dp_top_free, s[p].pp_hops_free,
			       s[p].tp_split_free);
	for (int i = 0; i < nrows; i++)
		hwloc_bitmap_free(rows[i].set);
	free(rows);
	free(part);
	free(freec);
	hwloc_bitmap_free(busy);
	topoml_trace_free(tr);
	topoml_free(t);
	topoml_errors_clear(err);
	return 0;
}
