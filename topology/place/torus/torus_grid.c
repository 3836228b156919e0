/*
 * The cells of a 3D torus for its box searches (torus_grid.h): prefix
 * sums of node sets, the nodes of a box, the free-box test, the one
 * tight-fit metric of a box and the choice among candidate boxes by it.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "place/torus/torus_grid.h"

void topoml__torus_marks(const topoml_topo_t *t, hwloc_const_bitmap_t set,
			 char in, char out, char hole, char *cell)
{
	size_t n = (size_t)t->dims[0] * t->dims[1] * t->dims[2];
	/* the set's words once, not hwloc_bitmap_isset() per cell: this runs
	 * on every placement, over every cell of the torus */
	const unsigned bpl = sizeof(unsigned long) * CHAR_BIT;
	unsigned nw = set ? ((unsigned)t->nnodes + bpl - 1) / bpl : 0;
	unsigned long *w = nw ? malloc(nw * sizeof(*w)) : NULL;

	for (unsigned k = 0; w && k < nw; k++)
		w[k] = hwloc_bitmap_to_ith_ulong(set, k);
	if (w) {
		for (size_t p = 0; p < n; p++) {
			int v = t->coord_node[p];

			cell[p] = v < 0 ? hole :
				  w[(unsigned)v / bpl] >> ((unsigned)v % bpl) &
				  1 ? in : out;
		}
	} else {
		for (size_t p = 0; p < n; p++) {
			int v = t->coord_node[p];

			cell[p] = v < 0 ? hole :
				  !set || hwloc_bitmap_isset(set, v) ? in :
				  out;
		}
	}
	free(w);
}

int topoml__torus_psum_cells(struct topoml_psum *g, const int d[3],
			     const char *cell)
{
	size_t X = d[0] + 1, XY = X * (d[1] + 1);

	memcpy(g->d, d, sizeof(g->d));
	g->p = calloc(XY * (d[2] + 1), sizeof(int));
	if (!g->p)
		return -1;
	/* the row's running sum plus the cells above it in y and z: the
	 * same sums as topoml__psum_build, three reads per cell not seven */
	for (int z = 1; z <= d[2]; z++)
		for (int y = 1; y <= d[1]; y++) {
			const char *c = cell + (size_t)d[0] *
					((y - 1) + (size_t)d[1] * (z - 1));
			int *o = g->p + z * XY + y * X;
			const int *oy = o - X, *oz = o - XY, *oyz = oz - X;
			int row = 0;

			for (int x = 1; x <= d[0]; x++) {
				row += c[x - 1];
				o[x] = row + oy[x] + oz[x] - oyz[x];
			}
		}
	return 0;
}

int topoml__torus_psum(const topoml_topo_t *t, hwloc_const_bitmap_t set,
		       char in, char out, char hole, struct topoml_psum *ps)
{
	size_t n = (size_t)t->dims[0] * t->dims[1] * t->dims[2];
	char *cell = malloc(n ? n : 1);
	int rc;

	if (!cell)
		return -1;
	topoml__torus_marks(t, set, in, out, hole, cell);
	rc = topoml__torus_psum_cells(ps, t->dims, cell);
	free(cell);
	return rc;
}

int topoml__torus_cells_of(struct topoml_torus_cells *c,
			   const topoml_topo_t *t, const char *busy,
			   hwloc_const_bitmap_t required, int nreq)
{
	*c = (struct topoml_torus_cells){ .nreq = nreq };
	if (topoml__torus_psum_cells(&c->busy, t->dims, busy) ||
	    (nreq && topoml__torus_psum(t, required, 1, 0, 0, &c->req))) {
		topoml__torus_cells_free(c);
		return -1;
	}
	return 0;
}

int topoml__torus_cells(struct topoml_torus_cells *c, const topoml_topo_t *t,
			hwloc_const_bitmap_t avail,
			hwloc_const_bitmap_t required, int nreq)
{
	size_t n = (size_t)t->dims[0] * t->dims[1] * t->dims[2];
	char *busy = malloc(n ? n : 1);
	int rc;

	*c = (struct topoml_torus_cells){ .nreq = nreq };
	if (!busy)
		return -1;
	topoml__torus_marks(t, avail, 0, 1, 1, busy);
	rc = topoml__torus_cells_of(c, t, busy, required, nreq);
	free(busy);
	return rc;
}

void topoml__torus_cells_free(struct topoml_torus_cells *c)
{
	topoml__psum_free(&c->busy);
	topoml__psum_free(&c->req);
}

int topoml__torus_anchors(int size, int stride, int seed, int *pos)
{
	int n = 0, p = seed;

	pos[n++] = p;
	if (!stride)
		return 1;
	for (;;) {
		p = (p + stride) % size;
		if (p == pos[0] || n >= size)
			break;
		pos[n++] = p;
	}
	return n;
}

int topoml__torus_box_nodes(const topoml_topo_t *t, const int o[3],
			    const int s[3], hwloc_const_bitmap_t set,
			    int *nodes)
{
	int m = 0;

	for (int z = 0; z < s[2]; z++)
		for (int y = 0; y < s[1]; y++)
			for (int x = 0; x < s[0]; x++) {
				int c[3] = { (o[0] + x) % t->dims[0],
					     (o[1] + y) % t->dims[1],
					     (o[2] + z) % t->dims[2] };
				int v = t->coord_node[topoml__torus_pos(t, c)];

				if (v >= 0 &&
				    (!set || hwloc_bitmap_isset(set, v)))
					nodes[m++] = v;
			}
	return m;
}

int topoml__torus_free_box(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
			   int n)
{
	struct topoml_torus_cells cells;
	const int *d = t->dims;
	int found = 0;

	if (topoml__torus_cells(&cells, t, avail, NULL, 0))
		return -1;
	for (int a = 1; a <= d[0] && a <= n && !found; a++) {
		if (n % a)
			continue;
		for (int b = 1; b <= d[1] && a * b <= n && !found; b++) {
			int s[3] = { a, b, n / (a * b) }, lim[3];

			if ((n / a) % b || s[2] > d[2])
				continue;
			/* origins: every cell on a wrapping axis, else those
			 * that keep the box inside */
			for (int k = 0; k < 3; k++)
				lim[k] = t->wrap[k] && d[k] > 1 ? d[k] :
					 d[k] - s[k] + 1;
			for (int z = 0; z < lim[2] && !found; z++)
				for (int y = 0; y < lim[1] && !found; y++)
					for (int x = 0; x < lim[0] && !found;
					     x++) {
						int o[3] = { x, y, z };

						found = topoml__torus_box_free(
							&cells, o, s);
					}
		}
	}
	topoml__torus_cells_free(&cells);
	return found;
}

int topoml__torus_contact(const struct topoml_psum *busy, const int d[3],
			  const bool w[3], const int o[3], const int s[3])
{
	int c = 0;

	for (int k = 0; k < 3; k++) {
		int fs[3] = { s[0], s[1], s[2] }, fo[3];
		int area;

		if (w[k] && s[k] >= d[k])
			continue;	/* wraps onto itself: no face */
		fs[k] = 1;
		area = fs[0] * fs[1] * fs[2];
		for (int side = 0; side < 2; side++) {
			int pos = side ? o[k] + s[k] : o[k] - 1;

			memcpy(fo, o, sizeof(fo));
			if (w[k]) {
				/* o < d and s < d here: one wrap at most */
				pos += pos < 0 ? d[k] : pos >= d[k] ? -d[k] : 0;
			} else if (pos < 0 || pos >= d[k]) {
				c += area;	/* the mesh edge */
				continue;
			}
			fo[k] = pos;
			c += topoml__torus_wrap(busy, fo, fs);
		}
	}
	return c;
}

int topoml__torus_fit_above(const struct topoml_torus_cells *c,
			    const int d[3], const bool w[3], const int o[3],
			    const int s[3], int floor)
{
	size_t st[3] = { 1, (size_t)d[0], (size_t)d[0] * d[1] };
	int left;	/* the most the fit can still be */

	/* a face of up to a few cells: read them, not eight prefix sums */
	if (!c->cell || s[0] * s[1] + s[1] * s[2] + s[0] * s[2] > 32) {
		int f = topoml__torus_contact(&c->busy, d, w, o, s);

		return f > floor ? f : -1;
	}
	left = topoml__torus_fit_max(d, w, s);
	for (int k = 0; k < 3; k++) {
		int i = k ? 0 : 1, j = k == 2 ? 1 : 2;

		if (w[k] && s[k] >= d[k])
			continue;	/* wraps onto itself: no face */
		for (int side = 0; side < 2; side++) {
			int pos = side ? o[k] + s[k] : o[k] - 1;

			if (w[k])
				pos += pos < 0 ? d[k] : pos >= d[k] ? -d[k] : 0;
			else if (pos < 0 || pos >= d[k])
				continue;	/* the mesh edge: busy */
			for (int a = 0; a < s[i]; a++) {
				int ci = o[i] + a;
				size_t at;

				ci -= ci >= d[i] ? d[i] : 0;
				at = pos * st[k] + ci * st[i];
				for (int b = 0; b < s[j]; b++) {
					int cj = o[j] + b;

					cj -= cj >= d[j] ? d[j] : 0;
					left -= !c->cell[at + cj * st[j]];
				}
				/* it only falls from here: not above */
				if (left <= floor)
					return -1;
			}
		}
	}
	return left;
}

int topoml__torus_fit(const struct topoml_torus_cells *c, const int d[3],
		      const bool w[3], const int o[3], const int s[3])
{
	return topoml__torus_fit_above(c, d, w, o, s, -1);
}

static inline struct topoml_torus_cand *_cand(void *cv, size_t size, int i)
{
	return (struct topoml_torus_cand *)((char *)cv + (size_t)i * size);
}

/* The full order of two candidates (topoml__torus_pick). */
static int _cand_cmp(const struct topoml_torus_rank *r,
		     const struct topoml_torus_cand *x,
		     const struct topoml_torus_cand *y)
{
	int k = r->before ? r->before(x, y) : 0;

	if (k)
		return k;
	if (x->fit != y->fit)
		return y->fit - x->fit;
	if (r->after && (k = r->after(x, y)))
		return k;
	return x < y ? -1 : x > y;
}

int topoml__torus_pick(const topoml_topo_t *t,
		       const struct topoml_torus_cells *cells, void *cv,
		       size_t size, int nc, const struct topoml_torus_rank *r)
{
	struct topoml_torus_cand *best = NULL;
	const int *d = t->dims;
	bool w[3];
	int k = -1, maxfit = 0;

	for (int e = 0; e < 3; e++)
		w[e] = t->wrap[e] && d[e] > 1;
	/* the best by the keys before the fit, the first of them */
	for (int j = 0; j < nc; j++) {
		struct topoml_torus_cand *c = _cand(cv, size, j);
		int m;

		if (c->taken)
			continue;
		if (!best || (r->before && r->before(c, best) < 0)) {
			best = c;
			k = j;
		}
		m = topoml__torus_fit_max(d, w, c->s);
		maxfit = m > maxfit ? m : maxfit;
	}
	if (!best)
		return -1;
	/* the fit among those tied with it, in list order, until one is
	 * busy all round with nothing after the fit to tell them apart (no
	 * later one can beat it) */
	for (int j = k; j < nc; j++) {
		struct topoml_torus_cand *c = _cand(cv, size, j);

		if (c->taken || (r->before && r->before(c, best)))
			continue;
		if (c->fit < 0)
			c->fit = topoml__torus_fit(cells, d, w, c->o, c->s);
		if (_cand_cmp(r, c, best) < 0) {
			best = c;
			k = j;
		}
		if (!r->after && best->fit == maxfit)
			break;
	}
	best->taken = true;
	return k;
}
