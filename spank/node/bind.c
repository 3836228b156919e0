/*
 * Per-task GPU, CPU and HCA binding of the local tasks of a step.
 *
 * CUDA_VISIBLE_DEVICES never hides a task's peers (NVIDIA/nccl#1066,
 * nccl-tests#300): with one GPU per task every task of the node gets the
 * same list, ordered so that entry LOCAL_RANK is its own GPU; with several
 * GPUs per task its own come first and the others follow.  NCCL still
 * finds every peer for P2P/NVLink, and torch's cuda:LOCAL_RANK / cuda:0
 * conventions both pick the right device.  More tasks than GPUs: blocks of
 * consecutive local ranks share a GPU.  AMD (ROCR_VISIBLE_DEVICES): the
 * list is always in order.  In every case TOPOML_LOCAL_GPUS says where the
 * task's own GPUs are in the list, and TOPOML_DEVICE the first of them.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml.h"

static const struct hw_node *_sort_node;

static int _cmp_island(const void *a, const void *b)
{
	const struct hw_gpu *x = &_sort_node->gpus[*(const int *)a];
	const struct hw_gpu *y = &_sort_node->gpus[*(const int *)b];
	/* Unknown islands sort after known ones, each on its own. */
	long ix = x->island < 0 ? 100000 + x->index : x->island;
	long iy = y->island < 0 ? 100000 + y->index : y->island;

	if (ix != iy)
		return ix < iy ? -1 : 1;
	return x->index - y->index;
}

static int _cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int _rank_path(int p)
{
	return p == HW_PATH_UNKNOWN ? HW_PATH_SYS + 1 : p;
}

/* The HCAs at the smallest path from GPU g, in HCA order. */
static int _best_set(const struct hw_node *n, int g, int *ties)
{
	int best = 1000, nt = 0;

	for (int j = 0; j < n->nnics; j++) {
		int p = _rank_path(n->path[g * n->nnics + j]);

		if (p < best) {
			best = p;
			nt = 0;
		}
		if (p == best)
			ties[nt++] = j;
	}
	return nt;
}

/* HCA nearest to GPU g; ties shared out among the GPUs that tie. */
static int _nic_for_gpu(const struct hw_node *n, int g)
{
	int nt, r = 0, pick = -1, *ties, *other;

	if (!n->nnics)
		return -1;
	ties = calloc(n->nnics, sizeof(int));
	other = calloc(n->nnics, sizeof(int));
	if (!ties || !other)
		goto out;
	nt = _best_set(n, g, ties);
	for (int h = 0; h < g; h++)
		if (_best_set(n, h, other) == nt &&
		    !memcmp(ties, other, sizeof(int) * nt))
			r++;
	pick = ties[r % nt];
out:
	free(ties);
	free(other);
	return pick;
}

static bool _port_usable(const struct hw_port *p)
{
	return p->state == 0 || p->state == 4;
}

static void _append(char *buf, size_t len, const char *fmt, int v,
		    const char *s)
{
	size_t off = strlen(buf);

	if (off)
		snprintf(buf + off, len - off, ",");
	off = strlen(buf);
	if (s)
		snprintf(buf + off, len - off, fmt, s, v);
	else
		snprintf(buf + off, len - off, fmt, v);
}

static void _hca(const struct hw_node *n, struct ml_task_bind *b)
{
	int *seen = calloc(n->nnics + 1, sizeof(int));

	if (!seen)
		return;
	b->nic = -1;
	for (int k = 0; k < b->ngpus; k++) {
		int j = _nic_for_gpu(n, b->gpus[k]);
		const struct hw_nic *c;
		int usable = 0;

		if (j < 0 || seen[j])
			continue;
		seen[j] = 1;
		c = &n->nics[j];
		if (c->kind == HW_NIC_CXI) {
			/* libfabric's cxi domain: no verbs ports. */
			_append(b->cxi, sizeof(b->cxi), "%s", 0, c->name);
			if (b->nic < 0) {
				b->nic = j;
				b->cxi_primary = true;
				b->gdr_path = n->path[b->gpus[k] * n->nnics + j];
				snprintf(b->netdev, sizeof(b->netdev), "%s",
					 c->netdev);
			}
			continue;
		}
		for (int p = 0; p < c->nports; p++)
			if (_port_usable(&c->ports[p])) {
				_append(b->ib_hca, sizeof(b->ib_hca), "%s:%d",
					c->ports[p].num, c->name);
				if (!usable++ && b->nic < 0) {
					b->nic = j;
					b->gdr_path = n->path[b->gpus[k] *
							      n->nnics + j];
					b->roce = c->ports[p].link_layer ==
						HW_LL_ETH;
					b->gid_index = c->ports[p].gid_index;
					snprintf(b->netdev, sizeof(b->netdev),
						 "%s", c->netdev);
				}
			}
	}
	free(seen);
}

/* GPUs order[i-1] and order[i] are in different places (CPU locality, or
 * NVLink island for nvlink). */
static bool _boundary(const struct hw_node *n, enum ml_gpu_bind mode,
		      const int *order, int i)
{
	const struct hw_gpu *a = &n->gpus[order[i - 1]], *b = &n->gpus[order[i]];

	if (mode == ML_GPU_BIND_NVLINK && (a->island != b->island ||
					   a->island < 0))
		return true;
	return !hwloc_bitmap_isequal(a->cpuset, b->cpuset);
}

/*
 * How many GPUs each task gets when there are more GPUs than tasks: G/T,
 * and G%T tasks one more.  Which tasks get the extra one is chosen so that
 * as few tasks as possible straddle a socket or island boundary.
 */
static void _chunks(const struct hw_node *n, enum ml_gpu_bind mode,
		    const int *order, int G, int T, int *size)
{
	int q = G / T, r = G % T, best = -1;
	unsigned bestmask = (1u << r) - 1;

	if (r && T <= 16) {
		for (unsigned m = 0; m < (1u << T); m++) {
			int cost = 0, pos = 0;

			if (__builtin_popcount(m) != r)
				continue;
			for (int t = 0; t < T; t++) {
				int k = q + ((m >> t) & 1);

				for (int i = pos + 1; i < pos + k; i++)
					cost += _boundary(n, mode, order, i);
				pos += k;
			}
			/* The first tasks get the extra GPU on a tie. */
			if (best < 0 || cost < best ||
			    (cost == best && m == ((1u << r) - 1))) {
				best = cost;
				bestmask = m;
			}
		}
	}
	for (int t = 0; t < T; t++)
		size[t] = q + (r && T <= 16 ? (int)((bestmask >> t) & 1) :
			       t < r);
}

/*
 * Fewer tasks than GPUs (each task drives several, with data loaders to
 * feed): the cores of a package that no GPU of the node is local to (an
 * EPYC's GPU-less NUMA domains) go to the tasks whose GPUs are on that
 * package, split without overlap, as mpibind's greedy mapping does.
 */
static int _greedy(const struct hw_node *n, struct ml_task_bind *out,
		   int ntasks)
{
	hwloc_bitmap_t local = hwloc_bitmap_alloc();
	hwloc_bitmap_t spare = hwloc_bitmap_alloc();
	int *members = malloc(sizeof(int) * (ntasks + 1));
	int *cores = malloc(sizeof(int) * (n->ncores + 1)), rc = -1;

	if (!local || !spare || !members || !cores)
		goto out;
	for (int i = 0; i < n->ngpus; i++)
		hwloc_bitmap_or(local, local, n->gpus[i].cpuset);
	for (int p = 0; p < n->npkgs; p++) {
		int m = 0, C = 0;

		hwloc_bitmap_andnot(spare, n->pkgs[p], local);
		hwloc_bitmap_and(spare, spare, n->cpuset);
		for (int c = 0; c < n->ncores; c++)
			if (hwloc_bitmap_isincluded(n->cores[c], spare))
				cores[C++] = c;
		for (int t = 0; t < ntasks; t++)
			if (hwloc_bitmap_intersects(out[t].cpuset, n->pkgs[p]))
				members[m++] = t;
		for (int j = 0; C && j < m; j++) {
			int lo = j * C / m, hi = (j + 1) * C / m;

			for (int c = lo; c < hi; c++)
				hwloc_bitmap_or(out[members[j]].cpuset,
						out[members[j]].cpuset,
						n->cores[cores[c]]);
		}
	}
	rc = 0;
out:
	hwloc_bitmap_free(local);
	hwloc_bitmap_free(spare);
	free(members);
	free(cores);
	return rc;
}

int ml_bind_compute(const struct hw_node *n, enum ml_gpu_bind mode,
		    int ntasks, const int *pool, int npool,
		    struct ml_task_bind *out, char *err, size_t errlen)
{
	int *order = NULL, *group = NULL, G, rc = -1;
	bool amd;

	memset(out, 0, sizeof(*out) * ntasks);
	for (int t = 0; t < ntasks; t++) {
		out[t].nic = -1;
		out[t].gid_index = -1;
		out[t].cpuset = hwloc_bitmap_alloc();
		if (!out[t].cpuset)
			goto nomem;
	}
	if (mode == ML_GPU_BIND_NONE || ntasks <= 0)
		return 0;
	G = pool ? npool : n->ngpus;
	if (G <= 0)
		return 0;	/* no GPU: nothing to bind to */
	order = malloc(sizeof(int) * G);
	group = malloc(sizeof(int) * ntasks);
	if (!order || !group)
		goto nomem;
	for (int i = 0; i < G; i++) {
		order[i] = pool ? pool[i] : i;
		if (order[i] < 0 || order[i] >= n->ngpus) {
			snprintf(err, errlen, "GPU %d is not on this node",
				 order[i]);
			goto out;
		}
	}
	qsort(order, G, sizeof(int), _cmp_int);
	if (mode == ML_GPU_BIND_NVLINK) {
		_sort_node = n;
		qsort(order, G, sizeof(int), _cmp_island);
	}

	if (ntasks <= G)
		_chunks(n, mode, order, G, ntasks, group);
	amd = hw_node_amd(n);
	for (int t = 0, pos = 0; t < ntasks; t++) {
		struct ml_task_bind *b = &out[t];
		int start, k;
		char *p;

		if (ntasks <= G) {
			k = group[t];
			start = pos;
			pos += k;
		} else {
			/* Blocks of consecutive local ranks per GPU (the
			 * first T % G GPUs one more), as mpibind and Slurm's
			 * --ntasks-per-gpu: neighbours share a GPU and its
			 * socket. */
			int q = ntasks / G, r = ntasks % G;

			k = 1;
			start = t < r * (q + 1) ? t / (q + 1) :
				r + (t - r * (q + 1)) / q;
		}
		b->amd = amd;
		b->ngpus = k;
		b->gpus = malloc(sizeof(int) * k);
		if (!b->gpus)
			goto nomem;
		for (int i = 0; i < k; i++)
			b->gpus[i] = order[start + i];

		p = b->cuda_visible;
		/* ROCm: the step's GPUs in order (ROCR_VISIBLE_DEVICES is
		 * not relied on to reorder), own ones found by position. */
		if (k == 1 || amd) {
			for (int i = 0; i < G; i++)
				_append(b->cuda_visible, sizeof(b->cuda_visible),
					"%d", n->gpus[order[i]].index, NULL);
			for (int i = 0; i < k; i++)
				_append(b->local_gpus, sizeof(b->local_gpus),
					"%d", start + i, NULL);
		} else {
			for (int i = 0; i < k; i++) {
				_append(p, sizeof(b->cuda_visible), "%d",
					n->gpus[b->gpus[i]].index, NULL);
				_append(b->local_gpus, sizeof(b->local_gpus),
					"%d", i, NULL);
			}
			for (int i = 0; i < G; i++)
				if (i < start || i >= start + k)
					_append(p, sizeof(b->cuda_visible),
						"%d", n->gpus[order[i]].index,
						NULL);
		}
		for (int i = 0; i < k; i++)
			hwloc_bitmap_or(b->cpuset, b->cpuset,
					n->gpus[b->gpus[i]].cpuset);
		hwloc_bitmap_and(b->cpuset, b->cpuset, n->cpuset);
		_hca(n, b);
	}

	/* Tasks local to the same CPUs share their cores out, mpibind
	 * style, instead of all piling onto the same ones. */
	for (int t = 0; t < ntasks; t++)
		group[t] = -1;
	for (int t = 0; t < ntasks; t++) {
		int m = 0, j = 0, C = 0, *members, *cores;

		if (group[t] >= 0 || hwloc_bitmap_iszero(out[t].cpuset))
			continue;
		members = malloc(sizeof(int) * ntasks);
		cores = malloc(sizeof(int) * (n->ncores + 1));
		if (!members || !cores) {
			free(members);
			free(cores);
			goto nomem;
		}
		for (int u = t; u < ntasks; u++)
			if (group[u] < 0 &&
			    hwloc_bitmap_isequal(out[u].cpuset, out[t].cpuset)) {
				group[u] = t;
				members[m++] = u;
			}
		for (int c = 0; c < n->ncores; c++)
			if (hwloc_bitmap_isincluded(n->cores[c], out[t].cpuset))
				cores[C++] = c;
		if (C) {
			hwloc_bitmap_t all = hwloc_bitmap_dup(out[t].cpuset);

			for (j = 0; j < m; j++) {
				struct ml_task_bind *b = &out[members[j]];
				int lo = j * C / m, hi = (j + 1) * C / m;

				if (hi <= lo)
					hi = lo + 1;
				hwloc_bitmap_zero(b->cpuset);
				for (int c = lo; c < hi && c < C; c++)
					hwloc_bitmap_or(b->cpuset, b->cpuset,
							n->cores[cores[c]]);
			}
			hwloc_bitmap_free(all);
		}
		free(members);
		free(cores);
	}
	if (ntasks < G && _greedy(n, out, ntasks))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	free(order);
	free(group);
	if (rc)
		ml_bind_free(out, ntasks);
	return rc;
}

void ml_bind_free(struct ml_task_bind *b, int ntasks)
{
	for (int t = 0; t < ntasks; t++) {
		free(b[t].gpus);
		b[t].gpus = NULL;
		hwloc_bitmap_free(b[t].cpuset);
		b[t].cpuset = NULL;
	}
}

void ml_bind_print(const struct hw_node *n, const struct ml_task_bind *b,
		   int ntasks, FILE *f)
{
	char buf[4096];

	for (int t = 0; t < ntasks; t++) {
		fprintf(f, "task %d: gpus=", t);
		if (!b[t].ngpus)
			fputs("-", f);
		for (int i = 0; i < b[t].ngpus; i++)
			fprintf(f, "%s%s", i ? "," : "",
				n->gpus[b[t].gpus[i]].busid);
		if (hwloc_bitmap_iszero(b[t].cpuset))
			snprintf(buf, sizeof(buf), "-");
		else
			hwloc_bitmap_list_snprintf(buf, sizeof(buf),
						   b[t].cpuset);
		fprintf(f, " %s=%s local=%s cpus=%s hca=%s gdr=%s",
			b[t].amd ? "rocr" : "cuda",
			b[t].cuda_visible[0] ? b[t].cuda_visible : "-",
			b[t].local_gpus[0] ? b[t].local_gpus : "-", buf,
			b[t].ib_hca[0] ? b[t].ib_hca : "-",
			b[t].nic >= 0 ? hw_path_name(b[t].gdr_path) : "-");
		if (b[t].cxi[0])
			fprintf(f, " cxi=%s", b[t].cxi);
		fputc('\n', f);
	}
}
