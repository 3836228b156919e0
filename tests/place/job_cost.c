/*
 * See job_cost.h.  The sequence follows select_plugin/select_topoml.c's
 * _place: topoml_place_ranked (3 choices, unscored), _hybrid_rank,
 * _hybrid_wait's localities (the best the machine allows included, as
 * its first call computes it) and _publish's order; the shape's gate is
 * _job_parallel's (parse, resolve, topoml_hybrid_max_ranks).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "topoml/jobcomment.h"
#include "job_cost.h"
#include "sim.h"

/* t again, with NVLink domains of `per` consecutive nodes c1.. (the
 * loader's "nvlink_domains" list: the model as a site file gives it). */
static topoml_topo_t *_with_domains(topoml_topo_t *t, int per)
{
	topoml_errors_t err = { 0 };
	topoml_topo_t *u = NULL;
	char *text = NULL, path[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int fd = -1;

	if (!t || !f || topoml_write_json(t, f) || fflush(f))
		goto out;
	while (len && text[len - 1] != '}')
		len--;
	if (!len)
		goto out;
	fseeko(f, (off_t)len - 1, SEEK_SET);
	fputs(", \"nvlink_domains\": [", f);
	for (int v = 0; v < t->nnodes; v += per)
		fprintf(f, "%s{\"name\": \"d%d\", \"nodes\": \"c[%d-%d]\"}",
			v ? ", " : "", v / per, v + 1,
			v + per < t->nnodes ? v + per : t->nnodes);
	fputs("] }\n", f);
	fd = fclose(f);
	f = NULL;
	if (fd)
		goto out;
	fd = -1;
	fd = memfd_create("job_cost", MFD_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	u = topoml_load(path, TOPOML_FMT_JSON, &err);
	if (!u)
		topoml_errors_print(&err, stderr);
	topoml_errors_clear(&err);
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	free(text);
	topoml_free(t);
	return u;
}

topoml_topo_t *job_cost_fabric(enum job_cost_fabric f, int nnodes)
{
	int side = 1;

	switch (f) {
	case JC_FATTREE_NVL:
		return _with_domains(topoml_gen_fat_tree("c", nnodes, 32, 16,
							 0), 8);
	case JC_SMALL_DOMAINS:
		return _with_domains(topoml_gen_fat_tree("c", nnodes, 32, 16,
							 0), 2);
	case JC_DRAGONFLY:
		return _with_domains(topoml_gen_dragonfly("c",
					(nnodes + 255) / 256, 16, 16,
					TOPOML_DF_ALL_TO_ALL), 4);
	case JC_TORUS:
		while ((side + 1) * (side + 1) * (side + 1) <= nnodes)
			side++;
		return topoml_gen_torus("c", side, side, side, true);
	default:
		return NULL;
	}
}

static unsigned _rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static double _cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* _job_parallel: the shape select/topoml would price, or false. */
static bool _shape(const topoml_topo_t *t, const struct job_cost_in *in,
		   int workers, struct topoml_parallel *p)
{
	char err[256];

	return in->parallel && workers > 0 && in->tpn > 0 &&
	       in->tpn < 65535 &&
	       (long)workers * in->tpn <= topoml_hybrid_max_ranks(t) &&
	       !topoml_parallel_parse(in->parallel, p, err, sizeof(err)) &&
	       !topoml_parallel_resolve(p, workers * in->tpn, err,
					sizeof(err));
}

double job_cost_ms(const topoml_topo_t *t, const struct job_cost_in *in)
{
	hwloc_bitmap_t avail = hwloc_bitmap_alloc();
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	hwloc_bitmap_t req_set = NULL;
	struct topoml_placement choice[3];
	struct topoml_place_req req = { 0 };
	struct topoml_parallel p;
	double w[TOPOML_KIND_COUNT], t0, ms = -1;
	unsigned s = in->seed;
	int busy = 0, n, spares = in->spares, workers;
	char why[256];

	memset(choice, 0, sizeof(choice));
	topoml_kind_weights_default(w);
	if (!avail || !all)
		goto out;
	hwloc_bitmap_set_range(avail, 0, t->nnodes - 1);
	hwloc_bitmap_copy(all, avail);
	while (busy < (long)t->nnodes * in->busy_pct / 100) {
		int len = 1 + _rand(&s) % 64, at = _rand(&s) % t->nnodes;

		for (int v = at; v < at + len && v < t->nnodes; v++)
			if (hwloc_bitmap_isset(avail, v)) {
				hwloc_bitmap_clr(avail, v);
				busy++;
			}
	}
	if (in->nrequired > 0) {
		req_set = hwloc_bitmap_alloc();
		for (int k = 0; req_set && k < in->nrequired; k++)
			hwloc_bitmap_set(req_set, _rand(&s) % t->nnodes);
	}
	req.nnodes = in->nnodes;
	req.avail = avail;
	req.required = req_set;
	req.hint = in->hint;
	req.max_leaves = in->max_leaves;
	req.unscored = true;
	/* _job_workers: spares leave at least one worker, else none */
	if (spares < 0 || spares >= in->nnodes)
		spares = 0;
	workers = in->nnodes - spares;

	t0 = _cpu_ms();
	n = topoml_place_ranked(t, TOPOML_POLICY_TOPOML, &req, 3, choice,
				why, sizeof(why));
	if (n > 0 && _shape(t, in, workers, &p)) {
		struct topoml_hybrid_locality now, best;

		topoml_hybrid_rank_spares(t, &req, &p, in->tpn, w, choice, n,
					  spares);
		if (!in->nrequired &&
		    !topoml_hybrid_locality(t, choice[0].nodes, workers,
					    in->tpn, &p, w, &now))
			topoml_hybrid_best_locality(t, all, workers, &p,
						    in->tpn, w, &best);
		if (spares)
			topoml_spares_last(t, choice[0].nodes, choice[0].n,
					   spares);
		topoml_hybrid_order(t, choice[0].nodes, workers, in->tpn, &p,
				    w);
	}
	if (n > 0)
		ms = _cpu_ms() - t0;
	for (int k = 0; k < 3; k++)
		topoml_placement_clear(&choice[k]);
out:
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(all);
	if (req_set)
		hwloc_bitmap_free(req_set);
	return ms;
}
