/*
 * Torus geometry shared by the engine, the cost model and the simulator:
 * the smallest wrap-aware box around a set of nodes, the box sizes a
 * torus holds, the prefix sums the torus engines test boxes with, and
 * Slurm's Hilbert curve (model.c keeps it per torus).  A leaf: it calls
 * no other file of the engine (the ring order inside a box is placement's,
 * place/common/ring.c).  Defined once, so
 * that a placement, its score and the simulator's figures measure the
 * same box (model_int.h says where the callers still differ on purpose).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

int topoml__axis_extent(const char *occ, int size, bool wrap,
		       bool tie_wraps, int *start)
{
	int lo = -1, hi = -1, gap = -1, gap_end = 0, round;

	for (int c = 0; c < size; c++)
		if (occ[c]) {
			if (lo < 0)
				lo = c;
			hi = c;
		}
	if (lo < 0) {
		*start = 0;
		return 0;
	}
	*start = lo;
	if (!wrap)
		return hi - lo + 1;
	/*
	 * The largest gap of unused coordinates inside [lo, hi], the lowest
	 * first; two used neighbours have a gap of 0 between them.
	 */
	for (int c = lo + 1, run = 0; c <= hi; c++) {
		if (!occ[c]) {
			run++;
			continue;
		}
		if (run > gap) {
			gap = run;
			gap_end = c;
		}
		run = 0;
	}
	round = size - (hi - lo + 1);	/* the gap round the end */
	if (gap > round || (tie_wraps && gap >= 0 && gap == round)) {
		*start = gap_end;
		return size - gap;
	}
	return hi - lo + 1;
}

/* Used coordinates per dimension, then one topoml__axis_extent() each. */
static long _box(const topoml_topo_t *t, const int *nodes, int n,
		 hwloc_const_bitmap_t set, bool tie_wraps, int start[3],
		 int ext[3])
{
	int len = t->dims[0] + t->dims[1] + t->dims[2], v;
	char *occ = calloc(len > 0 ? len : 1, 1), *o[3];
	long vol = 1;

	if (!occ)
		return -1;
	o[0] = occ;
	o[1] = o[0] + t->dims[0];
	o[2] = o[1] + t->dims[1];
	if (!set) {
		for (int i = 0; i < n; i++)
			for (int d = 0; d < 3; d++)
				o[d][t->nodes[nodes[i]].coord[d]] = 1;
	} else {
		hwloc_bitmap_foreach_begin(v, set)
			for (int d = 0; d < 3; d++)
				o[d][t->nodes[v].coord[d]] = 1;
		hwloc_bitmap_foreach_end();
	}
	for (int d = 0; d < 3; d++) {
		ext[d] = topoml__axis_extent(o[d], t->dims[d], t->wrap[d],
					    tie_wraps, &start[d]);
		vol *= ext[d];
	}
	free(occ);
	return vol;
}

long topoml__torus_box(const topoml_topo_t *t, const int *nodes, int n,
		      bool tie_wraps, int start[3], int ext[3])
{
	return _box(t, nodes, n, NULL, tie_wraps, start, ext);
}

long topoml__torus_box_set(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			  bool tie_wraps, int start[3], int ext[3])
{
	return _box(t, NULL, 0, set, tie_wraps, start, ext);
}

/* A box of n nodes fits the torus (a x b x c = n within its sides). */
bool topoml_torus_box_size(const topoml_topo_t *t, int n)
{
	if (t->family != TOPOML_TORUS || n < 1)
		return false;
	for (int a = 1; a <= t->dims[0] && a <= n; a++)
		for (int b = 1; b <= t->dims[1] && (long)a * b <= n; b++)
			if (n % (a * b) == 0 && n / (a * b) <= t->dims[2])
				return true;
	return false;
}

bool topoml_torus_is_box(const topoml_topo_t *t, const int *nodes, int n)
{
	int start[3], ext[3];

	if (t->family != TOPOML_TORUS || n < 1)
		return false;
	return topoml__torus_box(t, nodes, n, true, start, ext) == n;
}

int topoml__torus_span_lb(const topoml_topo_t *t, int n)
{
	int best = t->dims[0] * t->dims[1] * t->dims[2];
	int base = n < 1 ? 1 : (n + t->dims[2] - 1) / t->dims[2];

	/*
	 * A base a x b of fewer than n / dims[2] positions needs a taller
	 * box than the torus: from the first one that does not; a base of
	 * best positions or more cannot beat best (c >= 1), nor any wider
	 * one (the same minimum, a fraction of the divisions: the node
	 * sharing search asks for it once per size it meets).
	 */
	for (int a = 1; a <= t->dims[0] && (n < 1 || a < best); a++)
		for (int b = n < 1 ? 1 : (base + a - 1) / a;
		     b <= t->dims[1] && (n < 1 || a * b < best); b++) {
			int c = (n + a * b - 1) / (a * b);

			if (c <= t->dims[2] && a * b * c < best)
				best = a * b * c;
		}
	return best;
}

int topoml__torus_ring_lb(const topoml_topo_t *t, int n)
{
	bool bip = true;

	for (int d = 0; d < 3; d++)
		if (t->wrap[d] && t->dims[d] > 2 && (t->dims[d] & 1))
			bip = false;
	return (bip && n > 2 && (n & 1)) ? n + 1 : n;
}

bool topoml_torus_wants_box(const topoml_topo_t *t, const int *nodes, int n,
			    double max_span)
{
	int start[3], ext[3];
	long span;

	if (t->family != TOPOML_TORUS || n < 2 ||
	    !topoml_torus_box_size(t, n))
		return false;
	span = topoml__torus_box(t, nodes, n, true, start, ext);
	/* a size with a box has n as its smallest span: the factor is of n */
	return span > n && span > (max_span > 1 ? max_span : 1) * n;
}

int topoml__psum_alloc(struct topoml_psum *g, const int d[3])
{
	memcpy(g->d, d, sizeof(g->d));
	g->p = calloc((size_t)(d[0] + 1) * (d[1] + 1) * (d[2] + 1),
		      sizeof(int));
	return g->p ? 0 : -1;
}

/* A running sum along x, then topoml__psum_finish_yz(). */
void topoml__psum_finish(struct topoml_psum *g)
{
	const int *e = g->d;

	for (int z = 1; z <= e[2]; z++)
		for (int y = 1; y <= e[1]; y++) {
			int *row = &g->p[topoml__psum_at(g, 0, y, z)];

			for (int x = 1; x <= e[0]; x++)
				row[x] += row[x - 1];
		}
	topoml__psum_finish_yz(g, NULL);
}

/* The 3D recurrence on rows summed along x, P(y, z) = R(y, z) + P(y - 1,
 * z) + P(y, z - 1) - P(y - 1, z - 1): one pass, three reads a cell. */
void topoml__psum_finish_yz(struct topoml_psum *g, uint16_t *p16)
{
	const int *e = g->d;
	size_t w = (size_t)e[0] + 1, n = w * (e[1] + 1);

	if (p16)	/* the zero borders: the plane z = 0 */
		memset(p16, 0, n * sizeof(*p16));
	for (int z = 1; z <= e[2]; z++) {
		if (p16)	/* the row y = 0 */
			memset(&p16[topoml__psum_at(g, 0, 0, z)], 0,
			       w * sizeof(*p16));
		for (int y = 1; y <= e[1]; y++) {
			size_t at = topoml__psum_at(g, 0, y, z);
			int *row = &g->p[at];
			const int *up = row - w, *back = row - n;
			const int *bu = back - w;

			for (int x = 1; x <= e[0]; x++)
				row[x] += up[x] + back[x] - bu[x];
			if (!p16)
				continue;
			for (int x = 0; x <= e[0]; x++)
				p16[at + x] = (uint16_t)row[x];
		}
	}
}

int topoml__psum_build(struct topoml_psum *g, const int d[3],
		      const char *cell)
{
	if (topoml__psum_alloc(g, d))
		return -1;
	for (int z = 0; z < d[2]; z++)
		for (int y = 0; y < d[1]; y++) {
			int *row = &g->p[topoml__psum_at(g, 1, y + 1, z + 1)];
			const char *c = &cell[(size_t)d[0] *
					      (y + (size_t)d[1] * z)];

			for (int x = 0; x < d[0]; x++)
				row[x] = c[x];
		}
	topoml__psum_finish(g);
	return 0;
}

void topoml__psum_free(struct topoml_psum *g)
{
	free(g->p);
	g->p = NULL;
}

int topoml__psum_wrap(const struct topoml_psum *g, const int o[3],
		     const int s[3])
{
	int lo[3][2], hi[3][2], np[3], total = 0;

	for (int d = 0; d < 3; d++) {
		lo[d][0] = o[d];
		if (o[d] + s[d] <= g->d[d]) {
			hi[d][0] = o[d] + s[d];
			np[d] = 1;
		} else {
			hi[d][0] = g->d[d];
			lo[d][1] = 0;
			hi[d][1] = o[d] + s[d] - g->d[d];
			np[d] = 2;
		}
	}
	for (int a = 0; a < np[0]; a++)
		for (int b = 0; b < np[1]; b++)
			for (int c = 0; c < np[2]; c++) {
				int l[3] = { lo[0][a], lo[1][b], lo[2][c] };
				int h[3] = { hi[0][a], hi[1][b], hi[2][c] };

				total += topoml__psum_box(g, l, h);
			}
	return total;
}

/* hilbert.c's AxestoTranspose(), for b bits and 3 dimensions. */
static void _axes_to_transpose(unsigned *x, int b, int n)
{
	unsigned p, q, t;
	int i;

	for (q = 1u << (b - 1); q > 1; q >>= 1) {
		p = q - 1;
		if (x[0] & q)
			x[0] ^= p;
		for (i = 1; i < n; i++) {
			if (x[i] & q) {
				x[0] ^= p;
			} else {
				t = (x[0] ^ x[i]) & p;
				x[0] ^= t;
				x[i] ^= t;
			}
		}
	}
	for (i = 1; i < n; i++)
		x[i] ^= x[i - 1];
	t = x[n - 1];
	for (i = 1; i < b; i <<= 1)
		x[n - 1] ^= x[n - 1] >> i;
	t ^= x[n - 1];
	for (i = n - 2; i >= 0; i--)
		x[i] ^= t;
}

struct curve_rank {
	uint64_t pos;
	int node;
};

static int _curve_cmp(const void *a, const void *b)
{
	const struct curve_rank *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->node - y->node;
}

int topoml__hilbert_curve(const topoml_topo_t *t, uint64_t *pos, int *node)
{
	struct curve_rank *r = malloc((t->nnodes ? t->nnodes : 1) *
				      sizeof(*r));
	int b = 5;

	if (!r)
		return -1;
	for (int d = 0; d < 3; d++)
		while ((1 << b) < t->dims[d])
			b++;
	for (int i = 0; i < t->nnodes; i++) {
		unsigned h[3];
		uint64_t rank = 0;

		for (int d = 0; d < 3; d++)
			h[d] = t->nodes[i].coord[d] < 0 ? 0 :
			       (unsigned)t->nodes[i].coord[d];
		_axes_to_transpose(h, b, 3);
		for (int bit = b - 1; bit >= 0; bit--)
			for (int d = 0; d < 3; d++)
				rank = (rank << 1) | ((h[d] >> bit) & 1);
		r[i].pos = rank;
		r[i].node = i;
	}
	qsort(r, t->nnodes, sizeof(*r), _curve_cmp);
	for (int i = 0; i < t->nnodes; i++) {
		pos[i] = r[i].pos;
		node[i] = r[i].node;
	}
	free(r);
	return 0;
}
