/*
 * bench_load: generate a 100k-node fat-tree, write it as JSON and as
 * topology.conf into a temporary directory, then load each several times:
 * median load time, and the peak RSS (getrusage of the loading process).
 * Also: generation time, and hop queries per second on the model.
 *
 * The driver stays small and runs each step in a child of its own, so a
 * child's peak RSS is its own work (Linux carries the parent's resident
 * size into a child's ru_maxrss across fork + exec).
 *
 * Usage: bench_load [NODES [PER_LEAF [REPEAT]]]
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "topoml.h"
#include "sim.h"

static double _now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int _cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Child: generate, time hop queries, write JSON and conf into dir. */
static int _generate(const char *dir, int nnodes, int per_leaf)
{
	char path[4096];
	topoml_topo_t *t;
	double t0, gen, q;
	long sum = 0, nq = 2000000, i;
	unsigned int seed = 1;
	FILE *f;

	t0 = _now();
	t = topoml_gen_fat_tree("c", nnodes, per_leaf, 0, 0);
	gen = _now() - t0;
	if (!t)
		return 1;
	printf("generate fat-tree: %d nodes, %d per leaf, %d switches, "
	       "%d levels: %.1f ms\n", t->nnodes, per_leaf, t->nswitches,
	       t->nlevels, gen * 1e3);
	/* random pairs: the placement engine's inner loop */
	t0 = _now();
	for (i = 0; i < nq; i++)
		sum += topoml_hops(t, rand_r(&seed) % nnodes,
				   rand_r(&seed) % nnodes);
	q = _now() - t0;
	printf("hops: %.1f M queries/s (mean %.2f hops)\n", nq / q / 1e6,
	       (double)sum / nq);
	snprintf(path, sizeof(path), "%s/fat-tree.json", dir);
	f = fopen(path, "w");
	if (!f || topoml_write_json(t, f) || fclose(f))
		return 1;
	snprintf(path, sizeof(path), "%s/topology.conf", dir);
	f = fopen(path, "w");
	if (!f || topoml_write_conf(t, f) || fclose(f))
		return 1;
	topoml_free(t);
	return 0;
}

/* Child: load path repeat times; print the median. */
static int _load(const char *path, int nnodes, int repeat)
{
	double *times = calloc(repeat, sizeof(double)), med;
	topoml_errors_t err = { 0 };
	struct stat st;
	int i;

	if (!*path)
		return 0;	/* the baseline: load nothing */
	if (!times || stat(path, &st))
		return 1;
	for (i = 0; i < repeat; i++) {
		double t0 = _now();
		topoml_topo_t *t = topoml_load(path, TOPOML_FMT_AUTO, &err);

		times[i] = _now() - t0;
		if (!t || t->nnodes != nnodes) {
			fprintf(stderr, "bench_load: %s did not load back:\n",
				path);
			topoml_errors_print(&err, stderr);
			return 1;
		}
		topoml_free(t);
	}
	qsort(times, repeat, sizeof(*times), _cmp);
	med = repeat % 2 ? times[repeat / 2] :
	      (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
	printf("load %s: %d nodes, %.2f MiB file: median %.1f ms "
	       "(min %.1f, max %.1f, %d runs)", strrchr(path, '/') + 1,
	       nnodes, st.st_size / 1048576.0, med * 1e3, times[0] * 1e3,
	       times[repeat - 1] * 1e3, repeat);
	fflush(stdout);
	free(times);
	return 0;
}

/* Run this program with args; its peak RSS in KiB, or -1. */
static long _child(char **args)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ))
		return -1;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/bench_load.XXXXXX", path[64], cmd[96];
	char nodes_s[16], per_s[16], rep_s[16];
	static const char *files[] = { "fat-tree.json", "topology.conf" };
	int nnodes, per_leaf, repeat, rc = 1;
	long base, peak;
	size_t i;

	if (argc == 5 && !strcmp(argv[1], "--generate"))
		return _generate(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "--load"))
		return _load(argv[2], atoi(argv[3]), atoi(argv[4]));
	nnodes = argc > 1 ? atoi(argv[1]) : 100000;
	per_leaf = argc > 2 ? atoi(argv[2]) : 32;
	repeat = argc > 3 ? atoi(argv[3]) : 5;
	if (nnodes < 1 || per_leaf < 1 || repeat < 1 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: bench_load [NODES [PER_LEAF [REPEAT]]]\n");
		return 2;
	}
	snprintf(nodes_s, sizeof(nodes_s), "%d", nnodes);
	snprintf(per_s, sizeof(per_s), "%d", per_leaf);
	snprintf(rep_s, sizeof(rep_s), "%d", repeat);
	{
		char *args[] = { "bench_load", "--generate", dir, nodes_s,
				 per_s, NULL };

		peak = _child(args);
		if (peak < 0)
			goto out;
		printf("peak RSS generating and writing: %.1f MiB\n",
		       peak / 1024.0);
	}
	{
		char *args[] = { "bench_load", "--load", "", nodes_s, rep_s,
				 NULL };

		base = _child(args);
		if (base < 0)
			goto out;
		printf("peak RSS of the same program loading nothing: %.1f MiB\n",
		       base / 1024.0);
	}
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char *args[] = { "bench_load", "--load", path, nodes_s, rep_s,
				 NULL };

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		peak = _child(args);
		if (peak < 0)
			goto out;
		printf(", peak RSS %.1f MiB (+%.1f MiB over loading nothing)\n",
		       peak / 1024.0, (peak - base) / 1024.0);
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench_load: failed\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		rc = 1;
	return rc;
}
