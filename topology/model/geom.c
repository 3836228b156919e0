/*
 * Torus geometry shared by the engine, the cost model and the simulator:
 * the smallest wrap-aware box around a set of nodes, the ring order
 * inside it, the prefix sums the torus engines test boxes with, and
 * Slurm's Hilbert curve (model.c keeps it per torus).  Defined once, so
 * that a placement, its score and the simulator's figures measure the
 * same box (model_int.h says where the callers still differ on purpose).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

int topoml_axis_extent(const char *occ, int size, bool wrap,
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

/* Used coordinates per dimension, then one topoml_axis_extent() each. */
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
		ext[d] = topoml_axis_extent(o[d], t->dims[d], t->wrap[d],
					    tie_wraps, &start[d]);
		vol *= ext[d];
	}
	free(occ);
	return vol;
}

long topoml_torus_box(const topoml_topo_t *t, const int *nodes, int n,
		      bool tie_wraps, int start[3], int ext[3])
{
	return _box(t, nodes, n, NULL, tie_wraps, start, ext);
}

long topoml_torus_box_set(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			  bool tie_wraps, int start[3], int ext[3])
{
	return _box(t, NULL, 0, set, tie_wraps, start, ext);
}

bool topoml_torus_is_box(const topoml_topo_t *t, const int *nodes, int n)
{
	int start[3], ext[3];

	if (t->family != TOPOML_TORUS || n < 1)
		return false;
	return topoml_torus_box(t, nodes, n, true, start, ext) == n;
}

bool topoml_torus_wants_box(const topoml_topo_t *t, const int *nodes, int n,
			    double max_span)
{
	int start[3], ext[3];
	long span;

	if (t->family != TOPOML_TORUS || n < 2 ||
	    !topoml_torus_box_size(t, n))
		return false;
	span = topoml_torus_box(t, nodes, n, true, start, ext);
	/* a size with a box has n as its smallest span: the factor is of n */
	return span > n && span > (max_span > 1 ? max_span : 1) * n;
}

/* ---- ring order inside a box -------------------------------------- */

/*
 * Index of (x, m) on a closed tour of an r x c grid, rows r even: row 0
 * left to right, rows 1..r-1 serpentine over columns c-1..1, then column 0
 * back up.  Every step, closing one included, is one hop.
 */
static long _cycle_index(int x, int m, int r, int c)
{
	if (x == 0)
		return m;
	if (m >= 1)
		return c + (long)(x - 1) * (c - 1) +
		       ((x & 1) ? (c - 1 - m) : (m - 1));
	return c + (long)(r - 1) * (c - 1) + (r - 1 - x);
}

/*
 * 2-opt on the closed ring: reverse a segment whenever that shortens the
 * ring, until no move helps or about 4M pair tests are spent.
 * Deterministic.  Hops come from the nodes' coordinates, kept beside the
 * ring (xyz per position, reversed with it), and a table of wrapped
 * distances per axis: the same hops as topoml_hops(), several times
 * faster (a 512-node fallback ring on a 97k-node torus: ~5 -> ~1 ms).
 */
#define TWO_OPT_WINDOW 64

static void _two_opt(const topoml_topo_t *t, int *nodes, int n)
{
	long budget = 1L << 17;	/* under 1 ms: slurmctld holds its locks */
	bool better = true;
	int len = 0, *c, *tab, *w[3];

	if (n < 4)
		return;
	for (int d = 0; d < 3; d++)
		len += 2 * t->dims[d];
	c = malloc(3 * (size_t)n * sizeof(int));
	tab = malloc(len * sizeof(int));
	if (!c || !tab)
		goto out;
	/* w[d][delta], delta in (-dims, dims): hops along axis d */
	for (int d = 0, off = 0; d < 3; off += 2 * t->dims[d], d++) {
		w[d] = tab + off + t->dims[d];
		for (int x = 1 - t->dims[d]; x < t->dims[d]; x++) {
			int h = abs(x);

			if (t->wrap[d] && t->dims[d] - h < h)
				h = t->dims[d] - h;
			w[d][x] = h;
		}
	}
	for (int i = 0; i < n; i++)
		memcpy(c + 3 * i, t->nodes[nodes[i]].coord, 3 * sizeof(int));
#define HOPS(p, q) (w[0][c[3 * (p)] - c[3 * (q)]] + \
		    w[1][c[3 * (p) + 1] - c[3 * (q) + 1]] + \
		    w[2][c[3 * (p) + 2] - c[3 * (q) + 2]])
	while (better && budget > 0) {
		better = false;
		for (int i = 0; i < n - 1 && budget > 0; i++) {
			int dab = HOPS(i, i + 1);

			/* detours over holes are local: a window of the
			 * ring, so a pass is O(n), not O(n^2) */
			int end = n - i > TWO_OPT_WINDOW ? i + TWO_OPT_WINDOW : n;

			for (int j = i + 2; j < end && budget > 0; j++) {
				int k = (j + 1) % n, gain;

				budget--;
				if (nodes[k] == nodes[i])
					continue;
				gain = dab + HOPS(j, k) - HOPS(i, j) -
				       HOPS(i + 1, k);
				if (gain <= 0)
					continue;
				budget -= (j - i) / 2;	/* the reversal */
				for (int l = i + 1, r = j; l < r; l++, r--) {
					int x = nodes[l], xc[3];
					int *cl = c + 3 * l, *cr = c + 3 * r;

					nodes[l] = nodes[r];
					nodes[r] = x;
					memcpy(xc, cl, sizeof(xc));
					memcpy(cl, cr, sizeof(xc));
					memcpy(cr, xc, sizeof(xc));
				}
				dab = HOPS(i, i + 1);
				better = true;
			}
		}
	}
#undef HOPS
out:
	free(c);
	free(tab);
}

struct tord {
	long key;
	int node;
};

static int _tord_cmp(const void *a, const void *b)
{
	const struct tord *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->node - y->node;
}

void topoml__torus_ring_order(const topoml_topo_t *t, int *nodes, int n)
{
	int start[3], ext[3];
	struct tord *o;

	if (n < 2 || topoml_torus_box(t, nodes, n, true, start, ext) < 0)
		return;
	o = malloc(n * sizeof(*o));
	if (!o)
		return;
	/*
	 * The tour: rows along dimension d0, columns along a snake through
	 * the other two (d1 fastest), so consecutive columns are neighbours.
	 * A closed tour needs an even side: take d0 even when one is (a box
	 * with an even side and two sides >= 2 has a Hamiltonian cycle).
	 */
	int d0 = -1, d1, d2;

	for (int d = 0; d < 3 && d0 < 0; d++)
		if (ext[d] >= 2 && !(ext[d] & 1))
			d0 = d;
	for (int d = 0; d < 3 && d0 < 0; d++)
		if (ext[d] >= 2)
			d0 = d;
	if (d0 < 0)
		d0 = 0;
	d1 = d0 == 0 ? 1 : 0;
	d2 = 3 - d0 - d1;
	for (int i = 0; i < n; i++) {
		const int *c = t->nodes[nodes[i]].coord;
		int r[3], m, M = ext[d1] * ext[d2], R = ext[d0];

		for (int d = 0; d < 3; d++)
			r[d] = ((c[d] - start[d]) % t->dims[d] + t->dims[d]) %
			       t->dims[d];
		m = r[d2] * ext[d1] +
		    ((r[d2] & 1) ? ext[d1] - 1 - r[d1] : r[d1]);
		if (R >= 2 && M >= 2 && !(R & 1))
			o[i].key = _cycle_index(r[d0], m, R, M);
		else if (R >= 2 && M >= 2 && !(M & 1))
			o[i].key = _cycle_index(m, r[d0], M, R);
		else
			o[i].key = (long)m * R +
				   ((m & 1) ? R - 1 - r[d0] : r[d0]);
		o[i].node = nodes[i];
	}
	qsort(o, n, sizeof(*o), _tord_cmp);
	for (int i = 0; i < n; i++)
		nodes[i] = o[i].node;
	free(o);
	/* Holes in the box (a fallback placement): the tour jumps over
	 * them; 2-opt takes the worst detours out. */
	if ((long)ext[0] * ext[1] * ext[2] > n)
		_two_opt(t, nodes, n);
}

int topoml_psum_build(struct topoml_psum *g, const int d[3],
		      const char *cell)
{
	memcpy(g->d, d, sizeof(g->d));
	g->p = calloc((size_t)(d[0] + 1) * (d[1] + 1) * (d[2] + 1),
		      sizeof(int));
	if (!g->p)
		return -1;
	for (int z = 1; z <= d[2]; z++)
		for (int y = 1; y <= d[1]; y++)
			for (int x = 1; x <= d[0]; x++)
				g->p[topoml__psum_at(g, x, y, z)] =
					cell[(x - 1) + (size_t)d[0] *
					     ((y - 1) + (size_t)d[1] * (z - 1))] +
					g->p[topoml__psum_at(g, x - 1, y, z)] +
					g->p[topoml__psum_at(g, x, y - 1, z)] +
					g->p[topoml__psum_at(g, x, y, z - 1)] -
					g->p[topoml__psum_at(g, x - 1, y - 1,
							     z)] -
					g->p[topoml__psum_at(g, x - 1, y,
							     z - 1)] -
					g->p[topoml__psum_at(g, x, y - 1,
							     z - 1)] +
					g->p[topoml__psum_at(g, x - 1, y - 1,
							     z - 1)];
	return 0;
}

void topoml_psum_free(struct topoml_psum *g)
{
	free(g->p);
	g->p = NULL;
}

int topoml_psum_wrap(const struct topoml_psum *g, const int o[3],
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

				total += topoml_psum_box(g, l, h);
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
