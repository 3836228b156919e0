/*
 * bench_place: placement latency per topology family, size and policy on a
 * half-busy machine.  The busy half is made of job-shaped runs of
 * consecutive nodes (1-64), as a scheduler leaves a machine; each sample
 * places one job of 1-512 nodes (at most 1/8 of the machine) and is timed
 * alone, score included.  Prints median and p99 per cell, then the
 * search's CPU time against issue 33's targets on the largest machines.
 *
 *   bench_place [SECONDS_PER_CELL]     (default 1.5, env BENCH_PLACE_SECONDS)
 * BENCH_PLACE_SAMPLES=N: N samples per cell whatever they take (the same
 * machines and jobs on every run); BENCH_PLACE_DUMP=FILE: each search's
 * nodes there, a line per sample, its CPU time after a '#' (placements
 * before and after a change to the search must diff equal; a shared
 * job's line has its score and spare units after a '=');
 * BENCH_PLACE_NODES=N: the machines of N nodes only (1024, 4096, 16384
 * or 100000);
 * BENCH_PLACE_CELL=shared: the node-sharing cell only (the torus);
 * BENCH_PLACE_NARROW=1: its rows of sums read 8 to a vector, as on a CPU
 * without AVX2.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topoml.h"
#include "sim.h"
#include "place/common/place_int.h"

#define MAX_SAMPLES 400

static int _samples;	/* BENCH_PLACE_SAMPLES, else 0: by time */
static FILE *_dump;	/* BENCH_PLACE_DUMP */

static double _now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of this thread: what a placement costs, without the time the
 * scheduler gives other processes on a shared machine (wall-time p99 there
 * is mostly preemption: the same request ranges 0.1-7 ms). */
static double _cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int _dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A reproducible generator, not rand(): same machine on every libc. */
static unsigned long _rng = 88172645463325252UL;

static unsigned _rand(void)
{
	_rng ^= _rng << 13;
	_rng ^= _rng >> 7;
	_rng ^= _rng << 17;
	return (unsigned)(_rng >> 11);
}

static hwloc_bitmap_t _half_busy(const topoml_topo_t *t)
{
	hwloc_bitmap_t a = hwloc_bitmap_alloc();
	int busy = 0;

	hwloc_bitmap_set_range(a, 0, t->nnodes - 1);
	while (busy < t->nnodes / 2) {
		int len = 1 + _rand() % 64, start = _rand() % t->nnodes;

		for (int i = start; i < start + len && i < t->nnodes; i++) {
			if (!hwloc_bitmap_isset(a, i))
				continue;
			hwloc_bitmap_clr(a, i);
			busy++;
		}
	}
	return a;
}

static topoml_topo_t *_make(int fam, int n)
{
	int side = 1;

	switch (fam) {
	case TOPOML_FAT_TREE:
		return topoml_gen_fat_tree("c", n, 32, 16, 0);
	case TOPOML_DRAGONFLY:
		/* 16 routers x 16 nodes per group */
		return topoml_gen_dragonfly("d", (n + 255) / 256, 16, 16,
					    TOPOML_DF_ALL_TO_ALL);
	case TOPOML_TORUS:
		while ((side + 1) * (side + 1) * (side + 1) <= n)
			side++;
		return topoml_gen_torus("t", side, side, side, true);
	}
	return NULL;
}

/*
 * Issue 33's targets for the search alone (CPU time, what slurmctld
 * spends per placement) on the machines of about 100k nodes: median
 * <= 1 ms, p99 <= 5 ms, per family; one line each after the table.
 */
#define TARGET_NODES 90000
#define TARGET_MEDIAN_MS 1.0
#define TARGET_P99_MS 5.0

static struct {
	char name[48];
	int nodes;
	double median, p99;
} _targets[8];
static int _ntargets;

static void _target_add(const topoml_topo_t *t, const char *what,
			const double *sorted, int n)
{
	if (t->nnodes < TARGET_NODES || _ntargets == 8)
		return;
	snprintf(_targets[_ntargets].name, sizeof(_targets[0].name), "%s %s",
		 topoml_family_name(t->family), what);
	_targets[_ntargets].nodes = t->nnodes;
	_targets[_ntargets].median = sorted[n / 2];
	_targets[_ntargets++].p99 = sorted[(int)(0.99 * (n - 1) + 0.5)];
}

static void _targets_print(void)
{
	for (int i = 0; i < _ntargets; i++)
		printf("target %-16s %7d search cpu median %6.3f <= %.0f ms, "
		       "p99 %6.3f <= %.0f ms: %s\n", _targets[i].name,
		       _targets[i].nodes, _targets[i].median, TARGET_MEDIAN_MS,
		       _targets[i].p99, TARGET_P99_MS,
		       _targets[i].median <= TARGET_MEDIAN_MS &&
		       _targets[i].p99 <= TARGET_P99_MS ? "met" : "MISSED");
}

/* curve: TorusPlacement=curve (the topoml policy only) */
static void _cell(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		  enum topoml_policy pol, bool curve, double seconds)
{
	static const int sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512 };
	double ms[MAX_SAMPLES], start = _now_ms(), ns[MAX_SAMPLES];
	double cpu[MAX_SAMPLES], ncpu[MAX_SAMPLES];
	int n = 0, fails = 0, maxn = t->nnodes / 8;
	char why[256];

	while (n < MAX_SAMPLES && (_samples ? n < _samples :
	       n < 20 || _now_ms() - start < seconds * 1e3)) {
		struct topoml_place_req r = { .avail = avail,
					      .torus_curve = curve };
		struct topoml_placement p;
		double t0;

		r.nnodes = sizes[_rand() % 10];
		if (r.nnodes > maxn)
			r.nnodes = maxn > 0 ? maxn : 1;
		double c0 = _cpu_ms();

		t0 = _now_ms();
		if (topoml_place(t, pol, &r, &p, why, sizeof(why)))
			fails++;
		ms[n] = _now_ms() - t0;
		cpu[n] = _cpu_ms() - c0;
		topoml_placement_clear(&p);
		/* the search alone, as select/topoml runs it (unscored):
		 * timed on its own, not as the difference of two timings
		 * of the score, which is noisier than the search is long */
		r.unscored = true;
		c0 = _cpu_ms();
		t0 = _now_ms();
		int rc = topoml_place(t, pol, &r, &p, why, sizeof(why));

		ns[n] = _now_ms() - t0;
		ncpu[n] = _cpu_ms() - c0;
		if (_dump) {
			fprintf(_dump, "%s %d %s %d:",
				topoml_family_name(t->family), t->nnodes,
				curve ? "curve" : topoml_policy_name(pol),
				r.nnodes);
			for (int i = 0; !rc && i < p.n; i++)
				fprintf(_dump, " %d", p.nodes[i]);
			fprintf(_dump, "%s # %.3f\n", rc ? " none" : "",
				ncpu[n]);
		}
		if (!rc)
			topoml_placement_clear(&p);
		n++;
	}
	qsort(ms, n, sizeof(double), _dcmp);
	qsort(cpu, n, sizeof(double), _dcmp);
	printf("%-10s %7d %-16s %10.3f %10.3f %10.3f %7d%s\n",
	       topoml_family_name(t->family), t->nnodes,
	       curve ? "topoml curve" : topoml_policy_name(pol), ms[n / 2],
	       ms[(int)(0.99 * (n - 1) + 0.5)],
	       cpu[(int)(0.99 * (n - 1) + 0.5)], n,
	       fails ? "  (some could not be placed)" : "");
	if (pol == TOPOML_POLICY_TOPOML) {
		qsort(ncpu, n, sizeof(double), _dcmp);
		_target_add(t, curve ? "curve" : "topoml", ncpu, n);
	}
	if (t->family != TOPOML_DRAGONFLY && pol == TOPOML_POLICY_TOPOML) {
		qsort(ns, n, sizeof(double), _dcmp);
		printf("%-10s %7d %-16s %10.3f %10.3f %10.3f %7d\n",
		       topoml_family_name(t->family), t->nnodes,
		       curve ? "curve, no score" : "topoml, no score",
		       ns[n / 2],
		       ns[(int)(0.99 * (n - 1) + 0.5)],
		       ncpu[(int)(0.99 * (n - 1) + 0.5)], n);
	}
	fflush(stdout);
}

/*
 * Jobs that share nodes on a torus (select/topoml with node sharing): 4
 * units a node (Theta's jobs, -c 4), a quarter of the free nodes partly
 * used (1-3 units left); each job needs 4 x (2-512 nodes) units less
 * 0-3, on at least a quarter of that many nodes.  The search alone
 * (unscored), CPU time: median and p99, with a target line at 100k:
 * the same targets as every family's.
 */
#define SHARED_UNITS 4

static struct {
	int nodes;
	double median, p99;
} _shared_target;

static void _shared_cell(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			 double seconds)
{
	static const int sizes[] = { 2, 4, 8, 16, 32, 64, 128, 256, 512 };
	double cpu[MAX_SAMPLES], start = _now_ms();
	uint32_t *fu = calloc(t->nnodes, sizeof(*fu));
	hwloc_bitmap_t part = hwloc_bitmap_alloc();
	int n = 0, fails = 0, maxn = t->nnodes / 8, v;
	char why[256];

	if (!fu || !part) {
		fprintf(stderr, "bench_place: out of memory\n");
		exit(1);
	}
	hwloc_bitmap_foreach_begin(v, avail)
		if (_rand() % 4) {
			fu[v] = SHARED_UNITS;
		} else {
			fu[v] = 1 + _rand() % (SHARED_UNITS - 1);
			hwloc_bitmap_set(part, v);
		}
	hwloc_bitmap_foreach_end();
	while (n < MAX_SAMPLES && (_samples ? n < _samples :
	       n < 20 || _now_ms() - start < seconds * 1e3)) {
		struct topoml_place_req r = { .avail = avail, .free_units = fu,
					      .partial = part,
					      .unscored = true };
		struct topoml_placement p;
		int k = sizes[_rand() % 9], rc;
		double c0;

		if (k > maxn)
			k = maxn > 1 ? maxn : 2;
		r.units = SHARED_UNITS * k - _rand() % SHARED_UNITS;
		r.nnodes = (k + 3) / 4;
		c0 = _cpu_ms();
		rc = topoml_place(t, TOPOML_POLICY_TOPOML, &r, &p, why,
				  sizeof(why));
		cpu[n] = _cpu_ms() - c0;
		if (_dump) {
			long spare = -(long)r.units;

			fprintf(_dump, "%s %d shared %u/%d:",
				topoml_family_name(t->family), t->nnodes,
				r.units, r.nnodes);
			for (int i = 0; !rc && i < p.n; i++) {
				fprintf(_dump, " %d", p.nodes[i]);
				spare += fu[p.nodes[i]];
			}
			/* what the search ranks by: span and ring over
			 * their bounds, then the units spare */
			if (!rc) {
				topoml_ring_order(t, p.nodes, p.n);
				topoml_score(t, avail, &p);
				fprintf(_dump, " = %.4f %ld",
					p.n < 2 ? 2.0 :
					(double)p.score.span /
					p.score.span_lower_bound +
					p.score.ring_cost /
					p.score.ring_lower_bound, spare);
			}
			fprintf(_dump, "%s # %.3f\n", rc ? " none" : "",
				cpu[n]);
		}
		if (rc)
			fails++;
		else
			topoml_placement_clear(&p);
		n++;
	}
	qsort(cpu, n, sizeof(double), _dcmp);
	printf("%-10s %7d %-16s %10.3f %10.3f %10s %7d%s\n",
	       topoml_family_name(t->family), t->nnodes, "topoml shared",
	       cpu[n / 2], cpu[(int)(0.99 * (n - 1) + 0.5)], "(cpu)", n,
	       fails ? "  (some could not be placed)" : "");
	fflush(stdout);
	if (t->nnodes >= TARGET_NODES) {
		_shared_target.nodes = t->nnodes;
		_shared_target.median = cpu[n / 2];
		_shared_target.p99 = cpu[(int)(0.99 * (n - 1) + 0.5)];
	}
	free(fu);
	hwloc_bitmap_free(part);
}

/*
 * TorusBoxWait's will-run (select/topoml's _box_plan): the first time an
 * exact box is all free, each busy node free at one of 500 end times.
 */
static void _box_free_by_cell(const topoml_topo_t *t,
			      hwloc_const_bitmap_t avail, double seconds)
{
	static const int sizes[] = { 8, 16, 32, 64, 128, 256, 512 };
	double ms[MAX_SAMPLES], start = _now_ms();
	int64_t *free_at = malloc(t->nnodes * sizeof(*free_at));
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), then = hwloc_bitmap_alloc();
	int n = 0, fails = 0;

	if (!free_at || !all || !then) {
		fprintf(stderr, "bench_place: out of memory\n");
		exit(1);
	}
	for (int v = 0; v < t->nnodes; v++)
		free_at[v] = hwloc_bitmap_isset(avail, v) ? 0 :
			     1 + _rand() % 500;
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	while (n < MAX_SAMPLES && (_samples ? n < _samples :
	       n < 20 || _now_ms() - start < seconds * 1e3)) {
		int size = sizes[_rand() % 7];
		double t0 = _now_ms();

		if (topoml_torus_box_free_by(t, all, free_at, size, then) < 0)
			fails++;
		ms[n++] = _now_ms() - t0;
	}
	qsort(ms, n, sizeof(double), _dcmp);
	printf("%-10s %7d %-16s %10.3f %10.3f %10s %7d%s\n",
	       topoml_family_name(t->family), t->nnodes, "box free by",
	       ms[n / 2], ms[(int)(0.99 * (n - 1) + 0.5)], "-", n,
	       fails ? "  (some found none)" : "");
	fflush(stdout);
	free(free_at);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(then);
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1024, 4096, 16384, 100000 };
	static const struct {
		int family;
		enum topoml_policy pol[3];
	} cells[] = {
		{ TOPOML_FAT_TREE, { TOPOML_POLICY_TOPOML,
				     TOPOML_POLICY_SLURM_TREE,
				     TOPOML_POLICY_LINEAR } },
		{ TOPOML_DRAGONFLY, { TOPOML_POLICY_TOPOML,
				      TOPOML_POLICY_SLURM_DRAGONFLY,
				      TOPOML_POLICY_LINEAR } },
		{ TOPOML_TORUS, { TOPOML_POLICY_TOPOML,
				  TOPOML_POLICY_SLURM_HILBERT,
				  TOPOML_POLICY_LINEAR } },
	};
	const char *env = getenv("BENCH_PLACE_SECONDS");
	double seconds = argc > 1 ? atof(argv[1]) : env ? atof(env) : 1.5;
	const char *dump = getenv("BENCH_PLACE_DUMP");

	env = getenv("BENCH_PLACE_NARROW");
	if (env && atoi(env))
		topoml__shared_wide = false;
	env = getenv("BENCH_PLACE_SAMPLES");
	_samples = env ? atoi(env) : 0;
	_samples = _samples < 0 ? 0 : _samples > MAX_SAMPLES ? MAX_SAMPLES :
		   _samples;
	if (dump && *dump && !(_dump = fopen(dump, "w"))) {
		perror(dump);
		return 1;
	}

	topoml_sim_register_baselines();
	printf("placement latency, half-busy machine, jobs of 1-512 nodes, "
	       "score included (ms)\n");
	printf("%-10s %7s %-16s %10s %10s %10s %7s\n", "family", "nodes",
	       "policy", "median", "p99", "p99 (cpu)", "samples");
	/* BENCH_PLACE_FAMILY=fat-tree (or dragonfly, torus): that one only */
	const char *only = getenv("BENCH_PLACE_FAMILY");
	const char *nodes = getenv("BENCH_PLACE_NODES");
	const char *cell = getenv("BENCH_PLACE_CELL");
	bool shared = cell && !strcmp(cell, "shared");

	for (unsigned c = 0; c < sizeof(cells) / sizeof(cells[0]); c++) {
		if (only && *only && strcmp(only,
				topoml_family_name(cells[c].family)))
			continue;
		if (shared && cells[c].family != TOPOML_TORUS)
			continue;
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			topoml_topo_t *t;
			hwloc_bitmap_t a;

			if (nodes && *nodes && atoi(nodes) != sizes[s])
				continue;
			t = _make(cells[c].family, sizes[s]);

			if (!t) {
				fprintf(stderr, "bench_place: cannot generate %s of %d nodes\n",
					topoml_family_name(cells[c].family),
					sizes[s]);
				return 1;
			}
			a = _half_busy(t);
			if (shared) {
				_shared_cell(t, a, seconds);
				hwloc_bitmap_free(a);
				topoml_free(t);
				continue;
			}
			for (int p = 0; p < 3; p++)
				_cell(t, a, cells[c].pol[p], false, seconds);
			/* Slurm 26.05 torus3d, a box shape for every size;
			 * the box a job waiting for one plans (TorusBoxWait) */
			if (cells[c].family == TOPOML_TORUS) {
				struct topoml_torus3d *t3d =
					topoml_torus3d_every_size(t);

				_cell(t, a, TOPOML_POLICY_TOPOML, true,
				      seconds);

				t->torus3d = t3d;
				if (t3d)
					_cell(t, a, TOPOML_POLICY_SLURM_TORUS3D,
					      false, seconds);
				t->torus3d = NULL;
				topoml_torus3d_free(t3d);
				_box_free_by_cell(t, a, seconds);
				_shared_cell(t, a, seconds);
			}
			hwloc_bitmap_free(a);
			topoml_free(t);
		}
	}
	_targets_print();
	if (_shared_target.nodes)
		printf("target torus shared    %7d search cpu median %6.3f "
		       "<= %.0f ms, p99 %6.3f <= %.0f ms: %s\n",
		       _shared_target.nodes, _shared_target.median,
		       TARGET_MEDIAN_MS, _shared_target.p99,
		       TARGET_P99_MS,
		       _shared_target.median <= TARGET_MEDIAN_MS &&
		       _shared_target.p99 <= TARGET_P99_MS ?
		       "met" : "MISSED");
	if (_dump)
		fclose(_dump);
	return 0;
}
