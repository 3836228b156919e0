/*
 * topoml's placement on a 3D torus (or mesh): a free contiguous sub-box,
 * Blue Gene style, so the links inside the box carry this job only.
 *
 *   1. a box of volume N, all free: shapes closest to a cube first (least
 *      a+b+c, then least spread between sides), every orientation, every
 *      origin (wrap-around respected); among origins of the best shape the
 *      one touching the most busy nodes or mesh edges (the tightest fit,
 *      keeping large free regions whole), then the lowest origin;
 *   (a size that no box of the torus has, 43 on 16^3, goes along Slurm's
 *   Hilbert curve instead: a run of consecutive free curve nodes, so that
 *   such jobs keep to compact curve segments; measured on the Mira trace
 *   this beats steps 2-4, which fragment the machine for the next jobs;
 *   the nodes at either end of a free run, the smallest bounding box;
 *   a run spread over a box 3.5 times its nodes, its ring a quarter
 *   longer than N: an all-free box of up to N + N/16 nodes instead,
 *   when its ring is shorter);
 *   2. else the most cube-like all-free box of volume > N (up to 2N):
 *      no other job inside the job's bounding box;
 *   3. else the most cube-like box of volume > N holding N free nodes,
 *      the fewest busy ones inside first;
 *   4. else the most compact free set (topoml__place_compact): around
 *      each of up to 64 seeds a region grown breadth-first through free
 *      neighbours (then the nearest free nodes); the set whose bounding
 *      box holds the fewest other jobs' nodes, then the smallest box,
 *      then the least total distance; replaced by a run of free nodes
 *      along Slurm's Hilbert curve when that ring is shorter with no
 *      more of other jobs' nodes in its box.
 * Boxes avoid free nodes inside the bounding box of a running job that
 * is no box itself (req->owner): links there would be shared.
 * The ring follows a Hamiltonian cycle of the box when one exists (one hop
 * per step, ring closed; any box with an even side), else a snake; a set
 * with holes then gets 2-opt.  Box tests are O(1) through 3D prefix sums of
 * the busy nodes (a wrapping box splits into up to 8).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"
#include "place/torus/torus_grid.h"

struct grid {
	const topoml_topo_t *t;
	int d[3];		/* torus dims */
	bool w[3];
	/* not-free cells (busy) and required ones (req): the box tests
	 * every candidate source shares (torus_grid.h) */
	struct topoml_torus_cells cells;
	struct topoml_psum shadow;	/* shadowed free cells, or none */
	int *run;		/* free cells from each cell on along x */
	int *rowmax;		/* per row (y, z): its longest run */
	/* _rows_ok's 2D sums of the rows with a run of rowp_a (0: none
	 * yet) */
	int *rowp, rowp_a;
	char *busy;		/* per cell: 1 not a free node */
	/* _win_busy's sums, and its passes along x (first side wa) and
	 * then y (second side wb; 0: none yet) */
	int *win[3];
	int wa, wb;
	/* per size 2^k: the aligned blocks of that side, 1 = all free
	 * (_blocks_free; built on first use) */
	char *blk[7];
	int nblk[7][3];
	int blk_free[7];	/* how many of them are all free */
	/* exact boxes, attempt 0: a candidate best by every key before the
	 * fit with this fit (the most any shape of the group can have) is
	 * the one topoml__torus_pick chooses, the first of the list to be
	 * so: _origins stops there (early_hit); 0: scan every origin */
	int early_fit;
	bool early_hit;
	bool early_zero;	/* one of the best keys before the fit seen */
	/* per axis and origin, the side a box needs from there to hold
	 * every required node's coordinate (INT_MAX: none; NULL: no
	 * required nodes): rules out most origins before any sum */
	int *rqside[3];
};

struct shape {
	int s[3];
	int vol;
	int per;		/* a + b + c */
	int spread;		/* max - min side */
};

/* A candidate of topoml's own shapes for the box search
 * (topoml__torus_pick): box first. */
struct tcand {
	struct topoml_torus_cand box;
	int align;		/* sides on the shape's own grid */
	int busy;
	int shadow;
	int brk;		/* free aligned blocks it breaks (_breaks) */
	int sh;			/* its shape (index into the shapes) */
};

static void _or_hilbert(const struct place_in *in,
			struct topoml_placement *out, bool ring_only);
static int _compact(const struct place_in *in, struct topoml_placement *out,
		    char *why, size_t whylen, const char *gcb,
		    const struct topoml_psum *gbn);
static void _best_ring(const topoml_topo_t *t, int *nodes, int n);
static int _near_box(struct grid *g, const struct place_in *in,
		     struct topoml_placement *out, int budget);

/*
 * The shortest free run along x from x on the box's four corner rows
 * (rows[0..3]: the run table at those rows): the box is all free only
 * if it is >= a, and when it is m < a, a busy cell lies at x + m on one
 * of those rows, so no origin up to x + m on this row of origins is
 * free either.
 */
static inline int _rows_min(const int *const rows[4], int x, int a)
{
	int m = rows[0][x], v;

	if (m < a)
		return m;
	for (int k = 1; k < 4; k++) {
		v = rows[k][x];
		if (v < m)
			m = v;
	}
	return m;
}

/* run[pos]: free cells from pos on along +x (wrapping when x wraps);
 * busy: 1 per cell not a free node.  rowmax[row]: the longest run of
 * each row (y, z) along x (NULL when out of memory). */
static int *_runs(const struct grid *g, const char *busy, int **rowmax)
{
	size_t vol = (size_t)g->d[0] * g->d[1] * g->d[2];
	int *r = malloc((vol ? vol : 1) * sizeof(int)), X = g->d[0];
	int *m = malloc((vol / (X ? X : 1) + 1) * sizeof(int));

	if (!r || !m) {
		free(r);
		free(m);
		*rowmax = NULL;
		return NULL;
	}
	for (size_t row = 0, k = 0; row < vol; row += X, k++) {
		const char *b = busy + row;
		int *rr = r + row, next = 0, best = 0, x;

		/* a wrapping row's runs go on across x = 0: into the free
		 * run at its start (the whole row at most) */
		if (g->w[0])
			while (next < X && !b[next])
				next++;
		for (x = X - 1; x >= 0; x--) {
			next = b[x] ? 0 : next + 1;
			rr[x] = next > X ? X : next;
			best = rr[x] > best ? rr[x] : best;
		}
		m[k] = best;
	}
	*rowmax = m;
	return r;
}

/*
 * Rows of origins (y, z) where a free box of shape sh may start: each of
 * its s[1] x s[2] rows along x holds a free run of s[0] somewhere (a
 * 2D window count over the rows' longest runs).  NULL: out of memory,
 * every row may.
 */
static char *_rows_ok(struct grid *g, const struct shape *sh)
{
	int Y = g->d[1], Z = g->d[2], a = sh->s[0], b = sh->s[1],
	    c = sh->s[2];
	int *p;
	char *ok = malloc((size_t)Y * Z);

	/* the sums per first side kept for the next shape with it */
	if (!g->rowp)
		g->rowp = calloc((size_t)(Y + 1) * (Z + 1), sizeof(int));
	p = g->rowp;
	if (!p || !ok || !g->rowmax) {
		free(ok);
		return NULL;
	}
#define P(y, z) p[(size_t)(z) * (Y + 1) + (y)]
	for (int z = 1; g->rowp_a != a && z <= Z; z++)
		for (int y = 1; y <= Y; y++)
			P(y, z) = (g->rowmax[(y - 1) + (size_t)Y * (z - 1)] >=
				   a) + P(y - 1, z) + P(y, z - 1) -
				  P(y - 1, z - 1);
	g->rowp_a = a;
	for (int z = 0; z < Z; z++)
		for (int y = 0; y < Y; y++) {
			int ys[2][2] = { { y, y + b } };
			int zs[2][2] = { { z, z + c } };
			int ny = 1, nz = 1, cnt = 0;

			if (y + b > Y) {	/* wraps (else not an origin) */
				ys[0][1] = Y;
				ys[1][0] = 0;
				ys[1][1] = y + b - Y;
				ny = 2;
			}
			if (z + c > Z) {
				zs[0][1] = Z;
				zs[1][0] = 0;
				zs[1][1] = z + c - Z;
				nz = 2;
			}
			for (int i = 0; i < ny; i++)
				for (int j = 0; j < nz; j++)
					cnt += P(ys[i][1], zs[j][1]) -
					       P(ys[i][0], zs[j][1]) -
					       P(ys[i][1], zs[j][0]) +
					       P(ys[i][0], zs[j][0]);
			ok[y + (size_t)Y * z] = cnt >= b * c;
		}
#undef P
	return ok;
}

static int _shape_cmp(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;

	if (x->per != y->per)
		return x->per - y->per;
	if (x->vol != y->vol)
		return x->vol - y->vol;
	if (x->spread != y->spread)
		return x->spread - y->spread;
	for (int d = 0; d < 3; d++)
		if (x->s[d] != y->s[d])
			return x->s[d] - y->s[d];
	return 0;
}

/* The keys before the fit (topoml__torus_pick): the fewest busy nodes
 * inside, shadowed ones, free blocks broken, then the most aligned. */
static int _tcand_key(const void *a, const void *b)
{
	const struct tcand *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy - y->busy;
	if (x->shadow != y->shadow)
		return x->shadow - y->shadow;
	if (x->brk != y->brk)
		return x->brk - y->brk;
	return y->align - x->align;
}

/* then the tightest fit, then the list's order: lowest origin (z, y, x)
 * of one shape, shapes in their order */
static const struct topoml_torus_rank _tcand_rank = { _tcand_key, NULL };

/* Shapes of volume in [vmin, vmax], cube-like first; the first keep of
 * them only (0: all). */
static struct shape *_shapes(const struct grid *g, int vmin, int vmax,
			     int keep, int *ns)
{
	struct shape *sv = NULL;
	int n = 0;

	for (int a = 1; a <= g->d[0]; a++)
		for (int b = 1; b <= g->d[1]; b++) {
			long ab = (long)a * b;
			int cmin = (int)((vmin + ab - 1) / ab);

			if (cmin < 1)
				cmin = 1;
			for (int c = cmin; c <= g->d[2]; c++) {
				long v = ab * c;
				int mx, mn;

				if (v > vmax)
					break;
				if (topoml__grow((void **)&sv, n,
						sizeof(*sv))) {
					free(sv);
					*ns = 0;
					return NULL;
				}
				mx = a > b ? a : b;
				mx = mx > c ? mx : c;
				mn = a < b ? a : b;
				mn = mn < c ? mn : c;
				sv[n++] = (struct shape){ { a, b, c }, (int)v,
							  a + b + c, mx - mn };
			}
		}
	if (keep > 0 && n > 4 * keep) {
		/* the first keep of the order only (a large torus has
		 * thousands of shapes and tries a few): the least, then the
		 * least of the rest, ... (the order is total) */
		for (int j = 0; j < keep; j++) {
			int m = j;
			struct shape tmp;

			for (int k = j + 1; k < n; k++)
				if (_shape_cmp(&sv[k], &sv[m]) < 0)
					m = k;
			tmp = sv[j];
			sv[j] = sv[m];
			sv[m] = tmp;
		}
		n = keep;
	} else if (n) {	/* qsort(NULL, 0, ...) is undefined */
		qsort(sv, n, sizeof(*sv), _shape_cmp);
	}
	*ns = n;
	return sv;
}

/* block indices of side L covering [o, o + s) on an axis of size d */
static int _blocks(int o, int s, int d, int L, int *b)
{
	int n = 0, last = -1;

	if (s <= L) {	/* the common case: one block, or two */
		int e = o + s - 1;

		b[0] = o / L;
		e = (e >= d ? e - d : e) / L;
		if (e == b[0])
			return 1;
		b[1] = e;
		return 2;
	}

	for (int k = 0; k < s; k++) {
		int c = (o + k) % d, i = c / L;

		if (i != last && (n == 0 || i != b[0])) {
			b[n++] = i;
			last = i;
		}
		if (n == 64)
			break;
	}
	return n;
}

/* Which aligned blocks of side 2^k are all free (g->blk[k]); -1: none
 * (out of memory). */
static int _blocks_free(struct grid *g, int k)
{
	int L = 1 << k, *nb = g->nblk[k];

	if (g->blk[k])
		return 0;
	for (int d = 0; d < 3; d++)
		nb[d] = (g->d[d] + L - 1) / L;
	g->blk[k] = malloc((size_t)nb[0] * nb[1] * nb[2]);
	if (!g->blk[k])
		return -1;
	for (int z = 0; z < nb[2]; z++)
		for (int y = 0; y < nb[1]; y++)
			for (int x = 0; x < nb[0]; x++) {
				int bo[3] = { x * L, y * L, z * L }, bs[3];
				size_t at;

				for (int d = 0; d < 3; d++)
					bs[d] = bo[d] + L > g->d[d] ?
						g->d[d] - bo[d] : L;
				at = x + (size_t)nb[0] *
					    (y + (size_t)nb[1] * z);

				g->blk[k][at] =
					!topoml__torus_wrap(&g->cells.busy, bo,
							  bs);
				g->blk_free[k] += g->blk[k][at];
			}
	return 0;
}

/*
 * Buddy best fit: the all-free aligned blocks (cubes of side 2^k at
 * multiples of 2^k, clipped at the torus' end) larger than the box that
 * the box would break, counted per size, the largest size most
 * significant: taking a box out of a block already in use keeps the
 * large free blocks whole for the large jobs to come.  Measured on the
 * 16^3 torus against the same engine without it: Mira / 16 bounding box
 * 1.340 -> 1.288 x N, exact boxes 62.5 -> 65.1 %; Theta 1.077 -> 1.075.
 */
static int _breaks(struct grid *g, const int o[3], const struct shape *sh)
{
	int key = 0, maxd = g->d[0];

	for (int d = 1; d < 3; d++)
		if (g->d[d] > maxd)
			maxd = g->d[d];
	for (int k = 1; (1 << k) <= maxd && k < 7; k++) {
		int L = 1 << k, b[3][64], nb[3], cnt = 0, *n = g->nblk[k];

		if ((long)L * L * L <= sh->vol || _blocks_free(g, k) ||
		    !g->blk_free[k])
			continue;
		if (sh->s[0] <= L && sh->s[1] <= L && sh->s[2] <= L) {
			/* the common case: one block or two per axis, by
			 * shifts (_blocks' answer) */
			for (int d = 0; d < 3; d++) {
				int e = o[d] + sh->s[d] - 1;

				b[d][0] = o[d] >> k;
				b[d][1] = (e >= g->d[d] ? e - g->d[d] : e) >> k;
				nb[d] = b[d][1] == b[d][0] ? 1 : 2;
			}
		} else {
			for (int d = 0; d < 3; d++)
				nb[d] = _blocks(o[d], sh->s[d], g->d[d], L,
						b[d]);
		}
		for (int i = 0; i < nb[0]; i++)
			for (int j = 0; j < nb[1]; j++)
				for (int l = 0; l < nb[2]; l++) {
					size_t at = b[0][i] + (size_t)n[0] *
						    (b[1][j] + (size_t)n[1] *
						     b[2][l]);

					cnt += g->blk[k][at];
				}
		key += (cnt > 15 ? 15 : cnt) << (4 * k);
	}
	return key;
}

/* Box origins along axis ax for a side of s. */
static int _lim(const struct grid *g, int ax, int s)
{
	return g->w[ax] ? (s >= g->d[ax] ? 1 : g->d[ax]) : g->d[ax] - s + 1;
}

/*
 * Rows of the sliding sums, four cells at a time (vector extensions, no
 * intrinsics): o = prev + add - sub over n cells, the least of them into
 * *mn when given; and o += in.
 */
typedef int v4i __attribute__((vector_size(16)));

static inline v4i _ld(const int *p)
{
	v4i v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void _rows_step(int *o, const int *prev, const int *add,
		       const int *sub, int n, int *mn)
{
	v4i vm = { 0 };
	int x = 0, m = mn ? *mn : 0;

	vm += m;
	for (; x + 4 <= n; x += 4) {
		v4i r = _ld(prev + x) + _ld(add + x) - _ld(sub + x), lt;

		memcpy(o + x, &r, sizeof(r));
		lt = r < vm;
		vm = (r & lt) | (vm & ~lt);
	}
	for (int k = 0; mn && k < 4; k++)
		m = vm[k] < m ? vm[k] : m;
	for (; x < n; x++) {
		o[x] = prev[x] + add[x] - sub[x];
		m = o[x] < m ? o[x] : m;
	}
	if (mn)
		*mn = m;
}

static void _rows_add(int *o, const int *in, int n)
{
	int x = 0;

	for (; x + 4 <= n; x += 4) {
		v4i r = _ld(o + x) + _ld(in + x);

		memcpy(o + x, &r, sizeof(r));
	}
	for (; x < n; x++)
		o[x] += in[x];
}

/*
 * The busy cells of the box of sides s at every origin (below _lim on
 * each axis) into g->win[0]: sliding sums along x, then y, then z, the
 * counts the prefix sums give, for all origins in O(cells) of reads in
 * memory order (a prefix sum per origin reads eight scattered cells);
 * the passes along x and y kept for the next shape with the same first
 * sides; the least of them in *least.  -1: out of memory.
 */
static int _win_busy(struct grid *g, const int s[3], int *least)
{
	int X = g->d[0], Y = g->d[1], Z = g->d[2], lim[3], mn = INT_MAX;
	size_t XY = (size_t)X * Y, vol = XY * Z;
	int *a, *b, *o3;

	for (int k = 0; k < 3; k++)
		if (!g->win[k] && !(g->win[k] = malloc((vol ? vol : 1) *
							sizeof(int))))
			return -1;
	o3 = g->win[0];
	a = g->win[1];
	b = g->win[2];
	for (int d = 0; d < 3; d++)
		lim[d] = _lim(g, d, s[d]);
	/* along x, every row: a (kept while the shapes' first side is) */
	for (size_t row = 0; g->wa != s[0] && row < vol; row += X) {
		const char *c = g->busy + row;
		int *o = a + row, sum = 0, x;

		for (int i = 0; i < s[0]; i++)
			sum += c[i];
		o[0] = sum;
		for (x = 1; x < lim[0] && x + s[0] <= X; x++) {
			sum += c[x + s[0] - 1] - c[x - 1];
			o[x] = sum;
		}
		for (; x < lim[0]; x++) {	/* round the end */
			sum += c[x + s[0] - 1 - X] - c[x - 1];
			o[x] = sum;
		}
	}
	if (g->wa != s[0])
		g->wb = 0;
	g->wa = s[0];
	/* along y, whole x-rows at once: b (kept while the first two
	 * sides are) */
	for (int z = 0; g->wb != s[1] && z < Z; z++) {
		const int *in = a + z * XY;
		int *out = b + z * XY;

		memset(out, 0, lim[0] * sizeof(int));
		for (int i = 0; i < s[1]; i++)
			_rows_add(out, in + (size_t)i * X, lim[0]);
		for (int y = 1; y < lim[1]; y++) {
			int e = y + s[1] - 1;
			const int *add = in + (size_t)(e >= Y ? e - Y : e) * X;
			const int *sub = in + (size_t)(y - 1) * X;
			const int *prev = out + (size_t)(y - 1) * X;
			int *o = out + (size_t)y * X;

			_rows_step(o, prev, add, sub, lim[0], NULL);
		}
	}
	g->wb = s[1];
	/* along z, whole planes: o3 */
	for (int y = 0; y < lim[1]; y++) {
		int *o = o3 + (size_t)y * X;

		memset(o, 0, lim[0] * sizeof(int));
		for (int i = 0; i < s[2]; i++)
			_rows_add(o, b + i * XY + (size_t)y * X, lim[0]);
	}
	for (int y = 0; y < lim[1]; y++)
		for (int x = 0; x < lim[0]; x++)
			mn = o3[(size_t)y * X + x] < mn ?
			     o3[(size_t)y * X + x] : mn;
	for (int z = 1; z < lim[2]; z++) {
		int e = z + s[2] - 1;
		const int *add = b + (size_t)(e >= Z ? e - Z : e) * XY;
		const int *sub = b + (size_t)(z - 1) * XY;
		const int *prev = o3 + (size_t)(z - 1) * XY;
		int *o = o3 + (size_t)z * XY;

		/* whole planes when the rows are (x wraps) */
		if (lim[0] == X)
			_rows_step(o, prev, add, sub, lim[1] * X, &mn);
		else
			for (int y = 0; y < lim[1]; y++)
				_rows_step(o + (size_t)y * X,
					   prev + (size_t)y * X,
					   add + (size_t)y * X,
					   sub + (size_t)y * X, lim[0], &mn);
	}
	*least = mn;
	return 0;
}

/*
 * Feasible origins of shape sh: all free (exact) or >= n free nodes;
 * aligned: only origins on the shape's own grid (multiples of its sides).
 * Appended to cv's *nc entries (grown by topoml__grow), sh set on each.
 */
static struct tcand *_origins(struct grid *g, const struct shape *sh,
			      int n, int nreq, bool all_free, bool aligned,
			      struct tcand *cv, int *nc)
{
	int cnt = *nc, lim[3], st[3];
	bool rows_test = (all_free || sh->vol == n) && g->run;
	char *ok = rows_test && !aligned ? _rows_ok(g, sh) : NULL;
	/* boxes holding n free nodes, not all free: no run shortcut, the
	 * busy count of every origin by sliding sums instead */
	int least = 0;
	const int *win = !rows_test && g->busy &&
			 !_win_busy(g, sh->s, &least) ? g->win[0] : NULL;
	/* can this shape's boxes have the most fit of the group? */
	bool efit = g->early_fit && g->busy &&
		    topoml__torus_fit_max(g->d, g->w, sh->s) == g->early_fit;

	for (int d = 0; d < 3; d++) {
		lim[d] = _lim(g, d, sh->s[d]);
		st[d] = aligned ? sh->s[d] : 1;
	}
	/* no origin holds n free nodes: none to scan */
	if (win && sh->vol - least < n)
		lim[2] = 0;
	for (int z = 0; z < lim[2]; z += st[2])
		for (int y = 0; y < lim[1]; y += st[1]) {
			size_t dx = g->d[0], dxy = dx * g->d[1];
			int y2 = (y + sh->s[1] - 1) % g->d[1];
			int z2 = (z + sh->s[2] - 1) % g->d[2];
			const int *rows[4] = { NULL };

			/* the origin's sides on the shape's grid, y and z
			 * (align), once per row */
			int ayz = (y % sh->s[1] == 0) + (z % sh->s[2] == 0);

			/* a row without a long enough run: no origin */
			if (ok && !ok[y + (size_t)g->d[1] * z])
				continue;
			/* a row whose boxes miss a required node */
			if (nreq && g->rqside[0] &&
			    (g->rqside[1][y] > sh->s[1] ||
			     g->rqside[2][z] > sh->s[2]))
				continue;
			if (g->run) {
				rows[0] = g->run + dx * y + dxy * z;
				rows[1] = g->run + dx * y2 + dxy * z;
				rows[2] = g->run + dx * y + dxy * z2;
				rows[3] = g->run + dx * y2 + dxy * z2;
			}
			for (int x = 0; x < lim[0]; x += st[0]) {
				int o[3] = { x, y, z }, b;

				/* all free: the four corner rows along x
				 * first (most origins fail there), skipping
				 * the origins the same busy cell rules out */
				if (rows_test) {
					int m = _rows_min(rows, x, sh->s[0]);

					if (m < sh->s[0]) {
						if (st[0] == 1)
							x += m;
						continue;
					}
				}
				/* rows of the corner rows only (sides of 2 at
				 * most across x), all of them free from x on
				 * for s[0]: none busy, no sums to read */
				b = rows_test && sh->s[1] <= 2 &&
				    sh->s[2] <= 2 ? 0 :
				    win ? win[x + dx * y + dxy * z] :
				    topoml__torus_wrap(&g->cells.busy, o,
						       sh->s);

				if (sh->vol - b < n || (all_free && b))
					continue;
				if (nreq && g->rqside[0] &&
				    g->rqside[0][x] > sh->s[0])
					continue;
				if (nreq && topoml__torus_wrap(&g->cells.req, o,
							     sh->s) < nreq)
					continue;
				struct tcand c = {
					.box = { .o = { x, y, z }, .s = sh->s,
						 .fit = -1 },
					.busy = b, .sh = -1 };

				c.shadow = g->shadow.p ?
					   topoml__torus_wrap(&g->shadow, o,
							      sh->s) : 0;
				c.align = ayz + (sh->s[0] == 1 ||
						 x % sh->s[0] == 0);
				/* looking for a hit: the blocks broken (the
				 * dearer key) later, but at once for those of
				 * the best keys otherwise */
				c.brk = b ? 0 : g->early_fit ? -1 :
					_breaks(g, o, sh);
				if (g->early_fit && !b && !c.shadow &&
				    c.align == 3) {
					/* busy all round: the most fit */
					bool enc = efit &&
						   topoml__torus_fit_above(
							&g->cells, g->d, g->w,
							o, sh->s,
							g->early_fit - 1) >= 0;

					if (enc || !g->early_zero)
						c.brk = _breaks(g, o, sh);
					g->early_zero |= !c.brk;
					if (enc && !c.brk) {
						/* busy all round: the fit the
						 * pick would compute, the most
						 * there is; the pick's choice,
						 * alone */
						if (!cnt && topoml__grow(
							(void **)&cv, 0,
							sizeof(*cv))) {
							free(ok);
							*nc = 0;
							return cv;
						}
						c.box.fit = g->early_fit;
						cv[0] = c;
						g->early_hit = true;
						free(ok);
						*nc = 1;
						return cv;
					}
				}
				/* with one of the best keys (early_zero) only
				 * those can be chosen: no others kept (the
				 * blocks of those aligned counted later) */
				if (g->early_zero && (b || c.shadow ||
						      c.align < 3 || c.brk > 0))
					continue;
				if (topoml__grow((void **)&cv, cnt,
						sizeof(*cv))) {
					free(ok);
					*nc = cnt;
					return cv;
				}
				cv[cnt++] = c;
			}
		}
	free(ok);
	*nc = cnt;
	return cv;
}

/* The set for a box: required nodes, then free ones in ring order. */
static int _box_set(const struct grid *g, const struct place_in *in,
		    const struct shape *sh, const int o[3],
		    hwloc_bitmap_t set)
{
	const topoml_topo_t *t = g->t;
	int *nodes = malloc(sh->vol * sizeof(int)), m, want;

	if (!nodes)
		return -1;
	m = topoml__torus_box_nodes(t, o, sh->s, in->avail, nodes);
	topoml__torus_ring_order(t, nodes, m);
	hwloc_bitmap_copy(set, in->required);
	want = in->n - in->nreq;
	for (int i = 0; i < m && want > 0; i++) {
		if (hwloc_bitmap_isset(set, nodes[i]))
			continue;
		hwloc_bitmap_set(set, nodes[i]);
		want--;
	}
	free(nodes);
	return want > 0 ? -1 : 0;
}

struct on {
	uint32_t job;
	int node;
};

static int _on_cmp(const void *a, const void *b)
{
	const struct on *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->node - y->node;
}

/*
 * Free nodes inside the bounding box of a running job that is not a box
 * itself (a fallback placement): a box placed there would share links
 * with that job.  Boxes avoid them when they can.
 */
static hwloc_bitmap_t _shadowed(const topoml_topo_t *t,
				const struct place_in *in)
{
	const uint32_t *owner = in->req->owner;
	hwloc_bitmap_t sh = hwloc_bitmap_alloc();
	struct on *v = malloc(t->nnodes * sizeof(*v));
	int *box = malloc((size_t)t->dims[0] * t->dims[1] * t->dims[2] *
			  sizeof(int));
	char *occ[3] = { NULL };
	int n = 0;

	for (int d = 0; d < 3; d++)
		occ[d] = malloc(t->dims[d]);
	if (!sh || !v || !box || !occ[0] || !occ[1] || !occ[2])
		goto out;
	for (int i = 0; i < t->nnodes; i++)
		if (owner[i]) {
			v[n].job = owner[i];
			v[n++].node = i;
		}
	qsort(v, n, sizeof(*v), _on_cmp);
	for (int i = 0; i < n;) {
		int j = i, start[3], ext[3];
		long vol = 1;

		while (j < n && v[j].job == v[i].job)
			j++;
		for (int d = 0; d < 3; d++) {
			memset(occ[d], 0, t->dims[d]);
			for (int k = i; k < j; k++)
				occ[d][t->nodes[v[k].node].coord[d]] = 1;
			ext[d] = topoml__axis_extent(occ[d], t->dims[d],
						    t->wrap[d], true,
						    &start[d]);
			vol *= ext[d];
		}
		if (vol > j - i) {
			int m = topoml__torus_box_nodes(t, start, ext,
							in->avail, box);

			for (int k = 0; k < m; k++)
				hwloc_bitmap_set(sh, box[k]);
		}
		i = j;
	}
out:
	free(v);
	free(box);
	for (int d = 0; d < 3; d++)
		free(occ[d]);
	return sh;
}

/* The grid's shape alone: t's dims, and which axes wrap. */
static void _grid_dims(struct grid *g, const topoml_topo_t *t)
{
	*g = (struct grid){ .t = t };
	for (int d = 0; d < 3; d++) {
		g->d[d] = t->dims[d];
		g->w[d] = t->wrap[d] && t->dims[d] > 1;
	}
}

/*
 * The grid of avail on t: dims, wrap, the cells (busy and required
 * prefix sums), and the free runs along x with their row maxima (NULL
 * when out of memory: the box tests then skip that shortcut).  0, or -1
 * when out of memory.
 */
static int _grid_init(struct grid *g, const topoml_topo_t *t,
		      hwloc_const_bitmap_t avail,
		      hwloc_const_bitmap_t required, int nreq)
{
	size_t vol = (size_t)t->dims[0] * t->dims[1] * t->dims[2];
	char *busy = malloc(vol ? vol : 1);
	int rc;

	_grid_dims(g, t);
	if (!busy)
		return -1;
	/* the cells once, for the runs and the prefix sums */
	topoml__torus_marks(t, avail, 0, 1, 1, busy);
	g->run = _runs(g, busy, &g->rowmax);
	rc = topoml__torus_cells_of(&g->cells, t, busy, required, nreq);
	g->busy = busy;
	g->cells.cell = busy;
	if (!rc && nreq && required) {
		int v, maxd = 1;
		char *has;

		for (int k = 0; k < 3; k++)
			maxd = g->d[k] > maxd ? g->d[k] : maxd;
		if (!(has = malloc(maxd)))
			return -1;
		for (int k = 0; k < 3; k++) {
			int d = g->d[k];

			memset(has, 0, d);
			hwloc_bitmap_foreach_begin(v, required)
				if (v < t->nnodes && t->nodes[v].coord[k] >= 0)
					has[t->nodes[v].coord[k]] = 1;
			hwloc_bitmap_foreach_end();
			if (!(g->rqside[k] = malloc(d * sizeof(int)))) {
				free(has);
				return -1;
			}
			/* from o, the farthest required coordinate ahead (on
			 * a ring: the nearest one behind o): a box of a side
			 * above that offset holds them all.  O(d) an axis. */
			if (g->w[k]) {
				int last = -1;

				/* last required coordinate before each o,
				 * round the ring: two passes */
				int *need = g->rqside[k];

				for (int pass = 0; pass < 2; pass++)
					for (int o = 0; o < d; o++) {
						if (pass)
							need[o] = last < 0 ?
								  INT_MAX :
								  (last - o +
								   d) % d + 1;
						if (has[o])
							last = o;
					}
			} else {
				int lo = -1, hi = -1;

				for (int c = 0; c < d; c++)
					if (has[c]) {
						hi = c;
						lo = lo < 0 ? c : lo;
					}
				for (int o = 0; o < d; o++)
					g->rqside[k][o] = lo < 0 || o > lo ?
						INT_MAX : hi - o + 1;
			}
		}
		free(has);
	}
	return rc;
}

static void _grid_free(struct grid *g)
{
	for (int k = 0; k < 3; k++)
		free(g->rqside[k]);
	topoml__torus_cells_free(&g->cells);
	topoml__psum_free(&g->shadow);
	free(g->run);
	free(g->rowmax);
	free(g->rowp);
	free(g->busy);
	for (int k = 0; k < 3; k++)
		free(g->win[k]);
	for (int k = 0; k < 7; k++)
		free(g->blk[k]);
}

/*
 * Sliding maximum along one line of d cells (stride st apart): out[o] for
 * o < lim is the largest of the s cells from o on (wrapping when w).  The
 * line is first copied out unrolled (buf: 2d entries), then a monotone
 * deque of positions (q, 2d entries): O(lim + s).
 */
static void _line_max(const int64_t *in, int64_t *out, int d, size_t st,
		      int s, bool w, int lim, int *q, int64_t *buf)
{
	int head = 0, tail = 0, len = lim + s - 1;

	for (int k = 0; k < len; k++)
		buf[k] = in[(size_t)(w && k >= d ? k - d : k) * st];
	for (int k = 0; k < len; k++) {
		while (tail > head && buf[q[tail - 1]] <= buf[k])
			tail--;
		q[tail++] = k;
		if (k < s - 1)
			continue;
		if (q[head] <= k - s)
			head++;
		out[(size_t)(k - s + 1) * st] = buf[q[head]];
	}
}

/*
 * The sliding maximum along axis ax, window s (in -> out), on the lines
 * whose other coordinates are below ext (the axes done before it: only
 * the origins there).  Along x a deque per line (lines are contiguous);
 * along y and z van Herk / Gil-Werman on whole x-runs at once (the
 * maxima from each block of s cells' start and to its end, pre and suf:
 * up to 2d x-runs each), so that the inner loops read memory in order.
 */
static void _axis_max(const struct grid *g, const int64_t *in,
		      int64_t *out, int ax, int s, const int ext[3], int *q,
		      int64_t *buf, int64_t *pre, int64_t *suf)
{
	int d = g->d[ax], lim = _lim(g, ax, s), len = lim + s - 1;
	int e0 = ext[0], nj = ax == 1 ? ext[2] : ext[1];
	size_t st[3] = { 1, (size_t)g->d[0], (size_t)g->d[0] * g->d[1] };
	size_t sj = ax == 1 ? st[2] : st[1];

	if (ax == 0) {
		for (int z = 0; z < ext[2]; z++)
			for (int y = 0; y < ext[1]; y++) {
				size_t base = y * st[1] + z * st[2];

				_line_max(in + base, out + base, d, 1, s,
					  g->w[0], lim, q, buf);
			}
		return;
	}
	for (int j = 0; j < nj; j++) {
		const int64_t *src = in + j * sj;

		for (int k = 0; k < len; k++) {
			const int64_t *a = src +
				(size_t)(g->w[ax] && k >= d ? k - d : k) *
				st[ax];
			int64_t *p = pre + (size_t)k * e0;

			if (k % s == 0) {
				memcpy(p, a, e0 * sizeof(*p));
				continue;
			}
			for (int x = 0; x < e0; x++)
				p[x] = a[x] > p[x - e0] ? a[x] : p[x - e0];
		}
		for (int k = len - 1; k >= 0; k--) {
			const int64_t *a = src +
				(size_t)(g->w[ax] && k >= d ? k - d : k) *
				st[ax];
			int64_t *h = suf + (size_t)k * e0;

			if (k % s == s - 1 || k == len - 1) {
				memcpy(h, a, e0 * sizeof(*h));
				continue;
			}
			for (int x = 0; x < e0; x++)
				h[x] = a[x] > h[x + e0] ? a[x] : h[x + e0];
		}
		for (int o = 0; o < lim; o++) {
			const int64_t *h = suf + (size_t)o * e0;
			const int64_t *p = pre + (size_t)(o + s - 1) * e0;
			int64_t *r = out + j * sj + (size_t)o * st[ax];

			for (int x = 0; x < e0; x++)
				r[x] = h[x] > p[x] ? h[x] : p[x];
		}
	}
}

static int _shape_abc(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;

	for (int d = 0; d < 3; d++)
		if (x->s[d] != y->s[d])
			return x->s[d] - y->s[d];
	return 0;
}

static int64_t _min_of_max(const struct grid *g, const int64_t *m,
			   const int s[3])
{
	int64_t best = INT64_MAX;
	int lim[3];

	for (int d = 0; d < 3; d++)
		lim[d] = _lim(g, d, s[d]);
	for (int z = 0; z < lim[2]; z++)
		for (int y = 0; y < lim[1]; y++)
			for (int x = 0; x < lim[0]; x++) {
				int64_t v = m[x + (size_t)g->d[0] *
					      (y + (size_t)g->d[1] * z)];

				if (v < best)
					best = v;
			}
	return best;
}

/*
 * A box is all free from the latest of its cells' free times on, so the
 * first time any box of n is all free is the least, over shapes and
 * origins, of that maximum: three separable sliding maxima per shape
 * (the passes along x and y kept while the shapes, sorted by sides,
 * share them), O(cells) each.
 */
int64_t topoml_torus_box_free_by(const topoml_topo_t *t,
				 hwloc_const_bitmap_t nodes,
				 const int64_t *free_at, int n,
				 hwloc_bitmap_t then)
{
	struct grid g;
	struct shape *sv = NULL;
	int64_t *f = NULL, *mx = NULL, *mxy = NULL, *mxyz = NULL, *buf = NULL;
	int64_t *pre = NULL, *suf = NULL;
	int64_t when = INT64_MAX;
	int nsh = 0, *q = NULL, maxd = 1, v;
	size_t vol;

	if (t->family != TOPOML_TORUS || n < 1 || !topoml_torus_box_size(t, n))
		return -1;
	_grid_dims(&g, t);
	for (int d = 0; d < 3; d++)
		maxd = g.d[d] > maxd ? g.d[d] : maxd;
	vol = (size_t)g.d[0] * g.d[1] * g.d[2];
	sv = _shapes(&g, n, n, 0, &nsh);
	f = malloc(vol * sizeof(*f));
	mx = malloc(vol * sizeof(*mx));
	mxy = malloc(vol * sizeof(*mxy));
	mxyz = malloc(vol * sizeof(*mxyz));
	q = malloc(2 * (size_t)maxd * sizeof(*q));
	buf = malloc(2 * (size_t)maxd * sizeof(*buf));
	pre = malloc(2 * (size_t)maxd * g.d[0] * sizeof(*pre));
	suf = malloc(2 * (size_t)maxd * g.d[0] * sizeof(*suf));
	if (!sv || !f || !mx || !mxy || !mxyz || !q || !buf || !pre || !suf) {
		when = -1;
		goto out;
	}
	/* cells without a candidate node never free */
	for (size_t p = 0; p < vol; p++)
		f[p] = INT64_MAX;
	hwloc_bitmap_foreach_begin(v, nodes)
		if (v < t->nnodes)
			f[topoml__torus_pos(t, t->nodes[v].coord)] =
				free_at[v] > 0 ? free_at[v] : 0;
	hwloc_bitmap_foreach_end();
	qsort(sv, nsh, sizeof(*sv), _shape_abc);
	for (int i = 0; i < nsh && when > 0; i++) {
		const int *s = sv[i].s;
		int ex[3] = { g.d[0], g.d[1], g.d[2] };
		int64_t b;

		if (!i || s[0] != sv[i - 1].s[0])
			_axis_max(&g, f, mx, 0, s[0], ex, q, buf, pre, suf);
		ex[0] = _lim(&g, 0, s[0]);
		if (!i || s[0] != sv[i - 1].s[0] || s[1] != sv[i - 1].s[1])
			_axis_max(&g, mx, mxy, 1, s[1], ex, q, buf, pre, suf);
		ex[1] = _lim(&g, 1, s[1]);
		_axis_max(&g, mxy, mxyz, 2, s[2], ex, q, buf, pre, suf);
		b = _min_of_max(&g, mxyz, s);
		when = b < when ? b : when;
	}
	if (when == INT64_MAX) {
		when = -1;
		goto out;
	}
	hwloc_bitmap_zero(then);
	hwloc_bitmap_foreach_begin(v, nodes)
		if (v < t->nnodes && free_at[v] <= when)
			hwloc_bitmap_set(then, v);
	hwloc_bitmap_foreach_end();
out:
	free(sv);
	free(f);
	free(mx);
	free(mxy);
	free(mxyz);
	free(q);
	free(buf);
	free(pre);
	free(suf);
	return when;
}

/*
 * Exact boxes without a hit, every candidate all free: the pick's choice
 * when one aligned outside every shadow breaks no block.  Those are the
 * best by the keys before the fit, so the pick takes the tightest fit
 * among them, the first in the list of equals: in list order, the fit of
 * each only when it beats the best so far (topoml__torus_fit_above), its
 * blocks only then, not the blocks of all of them (thousands for a small
 * job).  Its index, or -1: none (the blocks of all counted then, as
 * before).
 */
static int _zero_pick(struct grid *g, const struct shape *sv,
		      struct tcand *cv, int nc)
{
	int k = -1, best = -1;

	for (int j = 0; j < nc; j++)
		if (cv[j].busy)
			return -1;	/* not exact boxes */
	for (int j = 0; j < nc; j++) {
		struct tcand *c = &cv[j];
		int f;

		if (c->shadow || c->align < 3)
			continue;
		f = c->box.fit >= 0 ? (c->box.fit > best ? c->box.fit : -1) :
		    topoml__torus_fit_above(&g->cells, g->d, g->w, c->box.o,
					    c->box.s, best);
		if (f < 0)
			continue;
		c->box.fit = f;
		if (c->brk < 0)
			c->brk = _breaks(g, c->box.o, &sv[c->sh]);
		if (!c->brk) {
			k = j;
			best = f;
		}
	}
	return k;
}

/*
 * A size no box has: n consecutive free nodes of Slurm's Hilbert order,
 * as Slurm takes them, but from either end of any free run that holds
 * them: the window with the smallest bounding box, then the one in the
 * shortest run (Slurm's best fit), then the first.  Taken from an end, a
 * run stays one run (windows inside one split it in two: on Theta's
 * first 600 jobs, 16x16x18, span / bound 2.150 against the ends' 1.822).
 * Returns 1 when no run holds n nodes, or with required nodes or node
 * weights (Slurm's rules then): the caller takes Slurm's placement.
 */
static int _curve_window(const struct place_in *in,
			 struct topoml_placement *out)
{
	const topoml_topo_t *t = in->t;
	const int *node = topoml__torus_curve(t, NULL);
	int nn = t->nnodes, n = in->n, best = -1, brun = INT_MAX;
	int st[3], ex[3];
	long bvol = LONG_MAX;

	if (!node || in->nreq || in->req->weight || n < 1 || n > nn)
		return 1;
	for (int s = 0, e; s < nn; s = e) {
		e = s + 1;
		if (!hwloc_bitmap_isset(in->avail, node[s]))
			continue;
		while (e < nn && hwloc_bitmap_isset(in->avail, node[e]))
			e++;
		/* the run's two ends (one when it holds n exactly) */
		for (int k = 0, p = s; e - s >= n && k < 2; k++, p = e - n) {
			long v;

			if (k && p == s)
				break;
			v = topoml__torus_box(t, node + p, n, true, st, ex);
			if (v >= 0 && (v < bvol ||
				       (v == bvol && e - s < brun))) {
				bvol = v;
				brun = e - s;
				best = p;
			}
		}
	}
	if (best < 0)
		return 1;
	out->nodes = malloc(n * sizeof(int));
	if (!out->nodes)
		return -1;
	out->n = n;
	memcpy(out->nodes, node + best, n * sizeof(int));
	return 0;
}

int topoml__place_torus(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	const topoml_topo_t *t = in->t;
	struct grid g;
	struct place_seen seen = { 0 };
	struct shape *sv = NULL;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int nsh = 0, found = 0, rc = -1, vol, budget;
	bool exact_shape = false;

	/* the site's choice of one discipline, the curve's, for every job
	 * (required nodes and later attempts: the boxes below) */
	if (in->req->torus_curve && !in->nreq && !in->req->attempt) {
		hwloc_bitmap_free(set);
		rc = topoml__place_curve(in, out, why, whylen);
		if (!rc)
			_best_ring(t, out->nodes, out->n);
		return rc;
	}
	if (_grid_init(&g, t, in->avail, in->required, in->nreq) || !set)
		goto oom;
	vol = g.d[0] * g.d[1] * g.d[2];
	/* shapes larger than the job tried per phase: 64 up to 4096 nodes,
	 * 2 on a 97k-node torus (each one scans every origin) */
	budget = (1 << 18) / vol;
	budget = budget < 2 ? 2 : budget > 64 ? 64 : budget;
	if (in->req->owner) {
		hwloc_bitmap_t sh = _shadowed(t, in);

		if (sh && !hwloc_bitmap_iszero(sh))
			/* else none */
			(void)topoml__torus_psum(t, sh, 1, 0, 0, &g.shadow);
		hwloc_bitmap_free(sh);
	}
	/* 0: exact boxes; 1: larger boxes, all free (no other job inside
	 * the job's box); 2: larger boxes holding n free nodes. */
	for (int phase = 0; phase < 3; phase++) {
		int vmin = phase ? in->n + 1 : in->n;
		int vmax = phase ? (2 * in->n < vol ? 2 * in->n : vol) : in->n;
		int tried = 0;

		if (phase < 2) {
			free(sv);
			/* phases 1 and 2 try budget + 1 shapes at most */
			sv = _shapes(&g, vmin, vmax, phase ? budget + 1 : 0,
				     &nsh);
		}
		if (phase == 0)
			exact_shape = nsh > 0;
		/* A size no box of this torus has (43 on 16^3): along the
		 * Hilbert curve, as Slurm would; such jobs then keep to
		 * compact curve segments instead of fragmenting the boxes. */
		if (phase == 1 && !exact_shape) {
			struct place_in hin = *in;
			struct topoml_place_req hreq = *in->req;

			hreq.attempt = 0;
			hin.req = &hreq;
			int cw = _curve_window(in, out);

			if (cw < 0)
				goto oom;
			if (!cw || !topoml__place_slurm_linear(&hin, true, out,
							       why, whylen)) {
				_best_ring(t, out->nodes, out->n);
				if (_near_box(&g, in, out, budget))
					goto oom;
				if (found++ == in->req->attempt) {
					rc = 0;
					goto out;
				}
				hwloc_bitmap_zero(set);
				for (int k = 0; k < out->n; k++)
					hwloc_bitmap_set(set, out->nodes[k]);
				topoml__seen_add(&seen, set);
				topoml_placement_clear(out);
			}
		}
		for (int i = 0; i < nsh; i++) {
			struct tcand *cv;
			int nc, gend = i + 1, k0;

			/* Bound the search for boxes larger than the job on a
			 * busy machine (each shape scans the whole torus):
			 * about 256k box tests, then the next phase. */
			if (phase && tried > budget)
				break;
			tried++;
			cv = NULL;
			/* Exact boxes on the shape's grid, free and outside
			 * every shadow: then only those of this orientation
			 * (free space stays in aligned boxes), the others
			 * need no test. */
			nc = 0;
			if (phase == 0 && !in->req->attempt) {
				int gl = i + 1;

				while (gl < nsh && sv[gl].per == sv[i].per &&
				       sv[gl].spread == sv[i].spread)
					gl++;
				g.early_hit = false;
				g.early_zero = false;
				g.early_fit = 0;
				for (int k = i; k < gl; k++) {
					int m = topoml__torus_fit_max(
						g.d, g.w, sv[k].s);

					g.early_fit = m > g.early_fit ?
						      m : g.early_fit;
				}
				cv = _origins(&g, &sv[i], in->n, in->nreq,
					      false, true, NULL, &nc);
				int j = 0;

				while (j < nc && (cv[j].busy || cv[j].shadow ||
						  cv[j].align < 3))
					j++;
				if (j == nc) {
					free(cv);
					cv = NULL;
				}
			}
			if (!cv) {
				nc = 0;
				cv = _origins(&g, &sv[i], in->n, in->nreq,
					      phase == 1, false, NULL, &nc);
			}
			for (int j = 0; j < nc; j++)
				cv[j].sh = i;
			/* exact boxes: every orientation of the shape in one
			 * list, so that the blocks broken choose among them */
			while (phase == 0 && !g.early_hit && gend < nsh &&
			       sv[gend].per == sv[i].per &&
			       sv[gend].spread == sv[i].spread) {
				int m = nc;

				cv = _origins(&g, &sv[gend], in->n, in->nreq,
					      false, false, cv, &nc);
				/* a hit: alone, first in the list */
				for (int j = g.early_hit ? 0 : m; j < nc; j++)
					cv[j].sh = gend;
				gend++;
			}
			/* (the group's other shapes, skipped on a hit: i
			 * moves past them below all the same) */
			while (g.early_hit && gend < nsh &&
			       sv[gend].per == sv[i].per &&
			       sv[gend].spread == sv[i].spread)
				gend++;
			/* No hit: the blocks broken, left for after the scan.
			 * Every candidate is all free (exact boxes); when one
			 * outside every shadow, aligned on all three axes,
			 * breaks no block, the best keys before the fit are
			 * those, and the pick chooses among them alone: only
			 * those aligned need the blocks counted. */
			if (g.early_fit && !g.early_hit &&
			    (k0 = _zero_pick(&g, sv, cv, nc)) >= 0) {
				/* the pick's choice, alone */
				cv[0] = cv[k0];
				nc = 1;
			} else if (g.early_fit && !g.early_hit) {
				bool zero = false;
				int m = 0;

				for (int j = 0; j < nc; j++) {
					if (cv[j].shadow || cv[j].align < 3)
						continue;
					if (cv[j].brk < 0)
						cv[j].brk = _breaks(&g,
							cv[j].box.o,
							&sv[cv[j].sh]);
					zero |= !cv[j].brk;
				}
				for (int j = 0; zero && j < nc; j++)
					if (!cv[j].busy && !cv[j].shadow &&
					    cv[j].align == 3 && !cv[j].brk)
						cv[m++] = cv[j];
				if (zero)
					nc = m;
			}
			for (int j = 0; !g.early_hit && j < nc; j++)
				if (cv[j].brk < 0)
					cv[j].brk = _breaks(&g, cv[j].box.o,
							    &sv[cv[j].sh]);
			g.early_fit = 0;
			/* best origin first, by repeated selection (a small
			 * job has thousands of origins, attempts are few): the
			 * one box search's choice, the tightest fit among the
			 * best by the keys before it */
			for (int left = nc; left > 0; left--) {
				int k = topoml__torus_pick(t, &g.cells, cv,
							   sizeof(*cv), nc,
							   &_tcand_rank);

				if (_box_set(&g, in, &sv[cv[k].sh], cv[k].box.o,
					     set))
					continue;
				if (!topoml__seen_add(&seen, set))
					continue;
				if (found++ == in->req->attempt) {
					free(cv);
					rc = topoml__placement_from_set(t, set,
									out);
					if (rc)
						goto oom;
					goto out;
				}
			}
			free(cv);
			i = gend - 1;
		}
	}
	/* 4: no box: the most compact free set (attempts 0 only). */
	if (in->req->attempt == found) {
		/* the grid's cells; its busy sums count other jobs' nodes
		 * when every cell holds a node */
		rc = _compact(in, out, why, whylen, g.busy,
			      t->nnodes == vol && g.cells.busy.p ?
			      &g.cells.busy : NULL);
		if (!rc)
			_or_hilbert(in, out, !exact_shape);
		goto out;
	}
	snprintf(why, whylen, "no candidate placement left (attempt %d, %d distinct)",
		 in->req->attempt, found);
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
	rc = -1;
out:
	topoml__seen_clear(&seen);
	hwloc_bitmap_free(set);
	free(sv);
	_grid_free(&g);
	return rc;
}

/* ---- compact fallback --------------------------------------------- */

struct dn {
	int d;
	int node;
};

static int _dn_cmp(const void *a, const void *b)
{
	const struct dn *x = a, *y = b;

	if (x->d != y->d)
		return x->d - y->d;
	return x->node - y->node;
}

/*
 * Smallest wrap-aware box around a set: its volume, and in *busy the
 * nodes inside it that are not free (other jobs' nodes: their links and
 * this job's would cross); from bn, the prefix sums of those nodes, when
 * given.
 */
static long _bbox(const topoml_topo_t *t, hwloc_const_bitmap_t set,
		  hwloc_const_bitmap_t avail, const char *fr,
		  const struct topoml_psum *bn, long *busy)
{
	int start[3], ext[3];
	long vol = topoml__torus_box_set(t, set, true, start, ext);

	*busy = 0;
	if (vol < 0)
		return LONG_MAX >> 33;
	if (bn && bn->p) {
		*busy = topoml__torus_wrap(bn, start, ext);
		return vol;
	}
	/* start < dims and ext <= dims: one wrap at most per axis */
	for (int z = 0, c[3]; z < ext[2]; z++) {
		c[2] = start[2] + z - (start[2] + z >= t->dims[2] ?
				       t->dims[2] : 0);
		for (int y = 0; y < ext[1]; y++) {
			c[1] = start[1] + y - (start[1] + y >= t->dims[1] ?
					       t->dims[1] : 0);
			for (int x = 0; x < ext[0]; x++) {
				int n;

				c[0] = start[0] + x -
				       (start[0] + x >= t->dims[0] ?
					t->dims[0] : 0);
				n = t->coord_node[topoml__torus_pos(t, c)];
				if (n >= 0 && !(fr ? fr[n] :
						hwloc_bitmap_isset(avail, n)))
					(*busy)++;
			}
		}
	}
	return vol;
}

/* Stable counting sort: hop counts are small, node order breaks ties. */
static void _sort_by_distance(struct dn *dv, int n)
{
	int maxd = 0, *cnt;
	struct dn *tmp;

	for (int i = 0; i < n; i++)
		maxd = dv[i].d > maxd ? dv[i].d : maxd;
	cnt = calloc(maxd + 2, sizeof(int));
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	if (!cnt || !tmp) {
		free(cnt);
		free(tmp);
		qsort(dv, n, sizeof(*dv), _dn_cmp);
		return;
	}
	for (int i = 0; i < n; i++)
		cnt[dv[i].d + 1]++;
	for (int d = 0; d <= maxd; d++)
		cnt[d + 1] += cnt[d];
	for (int i = 0; i < n; i++)
		tmp[cnt[dv[i].d]++] = dv[i];
	memcpy(dv, tmp, n * sizeof(*dv));
	free(cnt);
	free(tmp);
}

static double _ring(const topoml_topo_t *t, const int *nodes, int n)
{
	double c = 0;

	for (int i = 0; n > 1 && i < n; i++)
		c += topoml_hops(t, nodes[i], nodes[(i + 1) % n]);
	return c;
}

/* The shorter of the given order and topoml__torus_ring_order()'s. */
static void _best_ring(const topoml_topo_t *t, int *nodes, int n)
{
	int *o = malloc((n ? n : 1) * sizeof(int));

	if (!o)
		return;
	memcpy(o, nodes, n * sizeof(int));
	topoml__torus_ring_order(t, o, n);
	if (_ring(t, o, n) < _ring(t, nodes, n))
		memcpy(nodes, o, n * sizeof(int));
	free(o);
}

/*
 * A fallback set (out) gives way to another (c: the near box, the curve's
 * run) of as many nodes with a shorter ring and a box no larger (cbox,
 * obox: the caller's measure of it); c's nodes then move to out.
 */
static void _take_shorter(const topoml_topo_t *t,
			  struct topoml_placement *out,
			  struct topoml_placement *c, long cbox, long obox)
{
	if (c->n != out->n || cbox > obox ||
	    !(_ring(t, c->nodes, c->n) < _ring(t, out->nodes, out->n)))
		return;
	free(out->nodes);
	out->nodes = c->nodes;
	c->nodes = NULL;
}

/*
 * A size no box has (67 on 8x8x18): the smallest all-free box a little
 * larger (2x2x17 for 67), most cube-like first, and n of its nodes along
 * its ring (the box's Hamiltonian cycle less a stretch of it: the ring
 * closes over the nodes left out, free ones of no job, so each ring step
 * keeps links of its own).  It replaces the curve's run in out when that
 * run is spread (below): on a busy torus such a run snakes between other
 * jobs and shares their links.  Returns 0 (out replaced or kept), -1 out
 * of memory.
 */
static int _near_box(struct grid *g, const struct place_in *in,
		     struct topoml_placement *out, int budget)
{
	const topoml_topo_t *t = in->t;
	int n = in->n, vol = g->d[0] * g->d[1] * g->d[2], nsh = 0, rc = 0;
	/* a sixteenth more nodes at most (each one more is left free
	 * inside the box): up to 72 for 67 on 8x8x18 (2x4x9, 3x3x8); an
	 * eighth made Mira's sizes on 16^3 (load kept) worse */
	int vmax = n + 1 + n / 16, st[3], ex[3];
	struct shape *sv;
	hwloc_bitmap_t set;
	struct topoml_placement nb = { 0 };
	double r0;
	long v0;

	if (in->nreq || in->req->weight || n < 2 || vmax > vol)
		return 0;
	/* Only in place of a spread run: its box 3.5 times its nodes or
	 * more and its ring a quarter longer.  A box leaves nodes free
	 * between jobs, and where the run was compact the next jobs' runs
	 * paid for it (16x16x18, Theta's first 1000 jobs: span / bound
	 * 3.08 against 1.64 with every shorter ring taken); the ring's
	 * quarter kept the tori of doc/results.md as they were (a fifth:
	 * rings 0.2 % longer on 16^3 and 10^3 for Theta's jobs). */
	r0 = _ring(t, out->nodes, n);
	v0 = topoml__torus_box(t, out->nodes, n, true, st, ex);
	if (2 * v0 < 7L * n || 4 * r0 < 5.0 * n)
		return 0;
	sv = _shapes(g, n + 1, vmax, 0, &nsh);
	set = hwloc_bitmap_alloc();
	if (!set || (!sv && nsh)) {
		rc = -1;
		goto out;
	}
	/* the fewest nodes left free first, then the most cube-like */
	for (int i = 1; i < nsh; i++)
		for (int j = i; j > 0 && (sv[j].vol < sv[j - 1].vol ||
					  (sv[j].vol == sv[j - 1].vol &&
					   _shape_cmp(&sv[j], &sv[j - 1]) < 0));
		     j--) {
			struct shape x = sv[j];

			sv[j] = sv[j - 1];
			sv[j - 1] = x;
		}
	for (int i = 0, tried = 0; i < nsh && tried <= budget; i++) {
		int nc = 0, k;
		struct tcand *cv = _origins(g, &sv[i], n, 0, true, false,
					    NULL, &nc);

		tried++;
		if (!cv && nc) {
			rc = -1;
			goto out;
		}
		for (int j = 0; j < nc; j++) {
			cv[j].sh = i;
			if (cv[j].brk < 0)
				cv[j].brk = _breaks(g, cv[j].box.o, &sv[i]);
		}
		k = nc ? topoml__torus_pick(t, &g->cells, cv, sizeof(*cv),
					    nc, &_tcand_rank) : -1;
		if (k >= 0 && !cv[k].busy &&
		    !_box_set(g, in, &sv[i], cv[k].box.o, set)) {
			free(cv);
			if (topoml__placement_from_set(t, set, &nb)) {
				rc = -1;
				goto out;
			}
			_best_ring(t, nb.nodes, nb.n);
			break;
		}
		free(cv);
	}
	if (nb.n == n)
		_take_shorter(t, out, &nb, topoml__torus_box(t, nb.nodes, n,
							     true, st, ex), v0);
out:
	topoml_placement_clear(&nb);
	hwloc_bitmap_free(set);
	free(sv);
	return rc;
}

/*
 * On a fragmented torus a run of free nodes along Slurm's Hilbert curve
 * is sometimes the shorter ring: it replaces the fallback set when its
 * ring is shorter and its bounding box holds no more of other jobs' nodes
 * (ring_only: a size no box can have, isolation is out of reach anyway).
 */
static void _or_hilbert(const struct place_in *in,
			struct topoml_placement *out, bool ring_only)
{
	struct topoml_placement h = { 0 };
	hwloc_bitmap_t hs = hwloc_bitmap_alloc(), ms = hwloc_bitmap_alloc();
	long hb = 0, mb = 0;
	char why[128];

	/* a ring of one hop per step is as short as rings get: no run can
	 * replace it.  The run scans every node along the curve: about
	 * 1.4 ms on a 97k-node torus, as much as the rest of the search,
	 * and there it replaced none of 31 loose placements (46^3, a
	 * quarter to three quarters busy, 300-1000 nodes), so tori above
	 * 32k nodes skip it. */
	if (!hs || !ms || in->t->nnodes > 1 << 15 ||
	    _ring(in->t, out->nodes, out->n) <= out->n ||
	    topoml__place_slurm_linear(in, true, &h, why, sizeof(why)))
		goto out;
	for (int i = 0; i < h.n; i++)
		hwloc_bitmap_set(hs, h.nodes[i]);
	for (int i = 0; i < out->n; i++)
		hwloc_bitmap_set(ms, out->nodes[i]);
	if (!ring_only) {
		_bbox(in->t, hs, in->avail, NULL, NULL, &hb);
		_bbox(in->t, ms, in->avail, NULL, NULL, &mb);
	}
	/* the run's ring order (2-opt: the costly part) only when its box
	 * could win */
	if (h.n != out->n || hb > mb)
		goto out;
	topoml__torus_ring_order(in->t, h.nodes, h.n);
	_take_shorter(in->t, out, &h, hb, mb);
out:
	topoml_placement_clear(&h);
	hwloc_bitmap_free(hs);
	hwloc_bitmap_free(ms);
}

/*
 * Breadth-first from seed through free torus neighbours: add up to want
 * free nodes to cur (depth summed into *cost).  Returns how many are still
 * wanted (the seed's free region was too small).  cur NULL: an empty set,
 * left to the caller to fill: the cells added are q[0 .. *added).
 */
/* breadth-first queue entry: its depth, coordinates and cell (read here,
 * not from the node table: a cache miss per node there); the node only
 * when cur is given (the caller's, else from the cell) */
struct bq {
	int node, d;
	int c[3];
	int pos;	/* its cell */
};

static int _grow(const topoml_topo_t *t, uint64_t *bits, int seed,
		 int want, hwloc_bitmap_t cur, struct bq *q, long *cost,
		 int *added)
{
	const int *dim = t->dims;
	const int st[3] = { 1, dim[0], dim[0] * dim[1] };
	int head = 0, tail = 0;

	/* bits, a bit per cell: not a free node, or queued in this search
	 * (cleared again below).  12 KiB for 97k cells, in the first-level
	 * cache: the search is bound by these reads. */
	q[tail].node = seed;
	memcpy(q[tail].c, t->nodes[seed].coord, sizeof(q[tail].c));
	q[tail].pos = topoml__torus_pos(t, q[tail].c);
	q[tail++].d = 0;
	bits[q[0].pos >> 6] |= 1ULL << (q[0].pos & 63);
	while (head < tail && want > 0) {
		struct bq *x = &q[head++];

		if (!cur) {	/* an empty set: every node is new */
			*cost += x->d;
			want--;
		} else {
			x->node = t->coord_node[x->pos];
			if (!hwloc_bitmap_isset(cur, x->node)) {
				hwloc_bitmap_set(cur, x->node);
				*cost += x->d;
				want--;
			}
		}
		for (int d = 0; d < 3; d++)
			for (int dir = -1; dir <= 1; dir += 2) {
				int c = x->c[d] + dir, p = x->pos + dir * st[d];

				if (c < 0 || c >= dim[d]) {
					if (!t->wrap[d])
						continue;
					/* round the torus */
					p += c < 0 ? dim[d] * st[d] :
					     -dim[d] * st[d];
					c += c < 0 ? dim[d] : -dim[d];
				}
				/* queued unless seen or busy, without a
				 * branch (half the cells are busy: a branch
				 * would be mispredicted every other time);
				 * q has room for one entry past the last */
				uint64_t w = bits[p >> 6], b = 1ULL << (p & 63);

				bits[p >> 6] = w | b;
				q[tail] = *x;
				q[tail].c[d] = c;
				q[tail].pos = p;
				q[tail].d = x->d + 1;
				tail += !(w & b);
			}
	}
	/* the queued cells were free: free again for the next seed */
	for (int k = 0; k < tail; k++)
		bits[q[k].pos >> 6] &= ~(1ULL << (q[k].pos & 63));
	*added = head;
	return want;
}

/*
 * _bbox of the first n nodes of a breadth-first queue (their coordinates
 * there): the box topoml__torus_box_set() gives for them, its busy nodes
 * from the prefix sums bn (else fr, cell by cell).  occ: room for the
 * dims' sum.
 */
static long _bbox_q(const topoml_topo_t *t, const struct bq *q, int n,
		    const char *fr, char *occ, const struct topoml_psum *bn,
		    long *busy)
{
	int start[3], ext[3];
	char *o[3] = { occ, occ + t->dims[0], occ + t->dims[0] + t->dims[1] };
	long vol = 1;

	memset(occ, 0, t->dims[0] + t->dims[1] + t->dims[2]);
	for (int i = 0; i < n; i++)
		for (int d = 0; d < 3; d++)
			o[d][q[i].c[d]] = 1;
	for (int d = 0; d < 3; d++) {
		ext[d] = topoml__axis_extent(o[d], t->dims[d], t->wrap[d],
					    true, &start[d]);
		vol *= ext[d];
	}
	*busy = bn->p ? topoml__torus_wrap(bn, start, ext) : 0;
	if (!bn->p) {	/* no sums (out of memory): cell by cell */
		hwloc_bitmap_t set = hwloc_bitmap_alloc();

		for (int i = 0; set && i < n; i++)
			hwloc_bitmap_set(set, t->coord_node[q[i].pos]);
		vol = set ? _bbox(t, set, NULL, fr, NULL, busy) : vol;
		hwloc_bitmap_free(set);
	}
	return vol;
}

/*
 * The nearest free nodes not in cur round seed, up to want of them:
 * breadth first over every cell of the torus (busy ones and holes too:
 * hop distance is geometric), ring by ring; within a ring, node order.
 * lay[cell] == stamp: queued in this search; buf: 3 x cells of the
 * torus (this ring, the next, the nodes taken).  Returns how many are
 * still wanted.
 */
static int _nearest(const topoml_topo_t *t, const char *fr, int *lay,
		    int stamp, int seed, int want, hwloc_bitmap_t cur,
		    int *buf, long *cost)
{
	size_t vol = (size_t)t->dims[0] * t->dims[1] * t->dims[2];
	int *ring = buf, *next = buf + vol, *take = buf + 2 * vol;
	int nring = 1, d = 0;

	ring[0] = topoml__torus_pos(t, t->nodes[seed].coord);
	lay[ring[0]] = stamp;
	while (nring && want > 0) {
		int ntake = 0, nnext = 0;

		for (int i = 0; i < nring; i++) {
			int v = t->coord_node[ring[i]];

			if (v >= 0 && fr[v] && !hwloc_bitmap_isset(cur, v))
				take[ntake++] = v;
		}
		qsort(take, ntake, sizeof(int), topoml__int_cmp);
		for (int i = 0; i < ntake && want > 0; i++) {
			hwloc_bitmap_set(cur, take[i]);
			*cost += d;
			want--;
		}
		if (want <= 0)
			break;
		/* the next ring: unqueued neighbours of this one */
		for (int i = 0; i < nring; i++) {
			int c[3];

			topoml__grid_coord(t->dims, ring[i], c);
			for (int k = 0; k < 3; k++)
				for (int dir = -1; dir <= 1; dir += 2) {
					int nc[3] = { c[0], c[1], c[2] }, p;

					nc[k] += dir;
					if (nc[k] < 0 || nc[k] >= t->dims[k]) {
						if (!t->wrap[k])
							continue;
						nc[k] = (nc[k] + t->dims[k]) %
							t->dims[k];
					}
					p = topoml__torus_pos(t, nc);
					if (lay[p] == stamp)
						continue;
					lay[p] = stamp;
					next[nnext++] = p;
				}
		}
		memcpy(ring, next, nnext * sizeof(int));
		nring = nnext;
		d++;
	}
	return want;
}

/*
 * Around each of a few seeds spread over the free nodes, the n nearest
 * free nodes (required ones forced in); keep the set with the least total
 * distance to its seed.  For fat-trees and dragonflies the engines never
 * get here; the hop count makes it work for them too.
 */
int topoml__place_compact(const struct place_in *in,
			  struct topoml_placement *out, char *why,
			  size_t whylen)
{
	return _compact(in, out, why, whylen, NULL, NULL);
}

/*
 * gcb: per cell not a free node of in->avail, and gbn: the prefix sums
 * of other jobs' nodes per cell, when the caller has them (the box
 * search's grid), else NULL: built here.
 */
static int _compact(const struct place_in *in, struct topoml_placement *out,
		    char *why, size_t whylen, const char *gcb,
		    const struct topoml_psum *gbn)
{
	const topoml_topo_t *t = in->t;
	int nfree = hwloc_bitmap_weight(in->avail), nseeds, step, i = 0;
	int *fl = malloc((nfree ? nfree : 1) * sizeof(int));
	/* by distance, when the regions fall short */
	struct dn *dv = NULL;
	hwloc_bitmap_t best = hwloc_bitmap_alloc(), cur = hwloc_bitmap_alloc();
	/* room for _grow's every free node, and one entry past */
	struct bq *qv = malloc(((size_t)(nfree >= 0 && nfree < t->nnodes ?
					 nfree : t->nnodes) + 1) *
			       sizeof(*qv));
	/* free flags and search stamps by node: the searches read them
	 * millions of times */
	char *fr = calloc(t->nnodes ? t->nnodes : 1, 1);
	size_t cells = t->family == TOPOML_TORUS ?
		       (size_t)t->dims[0] * t->dims[1] * t->dims[2] : 0;
	/* a bit per cell: not a free node, or in the region (_grow) */
	uint64_t *bits = cells ? calloc(cells / 64 + 1, sizeof(*bits)) :
			 NULL;
	char *cb = cells && !gcb ? malloc(cells) : NULL;
	/* _nearest's stamps and rings, on its first call (most regions
	 * need none: no 400 KB to clear per placement) */
	int *lay = NULL, *nbuf = NULL;
	long best_cost = LONG_MAX;
	struct topoml_psum bn = { .p = NULL };
	/* the best region's cells when the queue holds it (nbest >= 0), and the
	 * used coordinates per axis of a region (_bbox_q) */
	int *bestv = malloc((in->n > 0 ? in->n : 1) * sizeof(int));
	int nbest = -1;
	char *occ = cells && bestv ?
		    malloc(t->dims[0] + t->dims[1] + t->dims[2]) : NULL;
	int rc = -1;

	if (!fl || !best || !cur) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	/* the free nodes in order, by the set's words */
	for (int k = 0, bpl = sizeof(unsigned long) * CHAR_BIT;
	     k * bpl < t->nnodes; k++) {
		unsigned long w = hwloc_bitmap_to_ith_ulong(in->avail, k);

		for (; w; w &= w - 1) {	/* its set bits, lowest first */
			int b = __builtin_ctzl(w);

			if (k * bpl + b < t->nnodes)
				fl[i++] = k * bpl + b;
		}
	}
	nfree = i;
	for (int k = 0; fr && k < nfree; k++)
		fr[fl[k]] = 1;
	/* per cell: not a free node (the regions grow through the others),
	 * and other jobs' nodes, summed: each seed's bounding box counts
	 * them in O(1), not cell by cell */
	if (cells && fr && (cb || !gbn)) {
		char *c = gbn ? NULL : malloc(cells);

		for (size_t p = 0; p < cells; p++) {
			int n = t->coord_node[p];

			if (cb)
				cb[p] = n < 0 || !fr[n];
			if (c)
				c[p] = n >= 0 && !fr[n];
		}
		if (c)
			(void)topoml__torus_psum_cells(&bn, t->dims, c);
		free(c);
	}
	if (gcb) {
		cb = (char *)gcb;
		if (gbn)
			bn = *gbn;
	}
	for (size_t p = 0; bits && cb && p < cells; p += 64) {
		uint64_t w = 0;

		for (size_t b = 0; b < 64 && p + b < cells; b++)
			w |= (uint64_t)(cb[p + b] != 0) << b;
		bits[p >> 6] = w;
	}
	/* as many seeds as about 4M distance computations allow */
	nseeds = nfree ? (1 << 22) / nfree : 0;
	nseeds = nseeds < 16 ? 16 : nseeds > 64 ? 64 : nseeds;
	nseeds = nseeds > nfree ? nfree : nseeds;
	step = nseeds ? nfree / nseeds : 1;
	for (int s = 0; s < nseeds; s++) {
		int seed = fl[s * step], want = in->n - in->nreq;
		long cost = 0;

		if (in->nreq)
			seed = hwloc_bitmap_first(in->required);
		hwloc_bitmap_copy(cur, in->required);
		/* torus: grow a connected region through free neighbours,
		 * breadth first (a ring through it steps one hop at a time) */
		if (t->family == TOPOML_TORUS && qv && fr && bits && cb) {
			/* no required node: the region's nodes and box from
			 * the queue alone, cur only if more must be found */
			bool listed = !in->nreq && occ;
			int added = 0;

			want = _grow(t, bits, seed, want,
				     listed ? NULL : cur, qv, &cost, &added);
			if (listed && want <= 0) {
				long busy, vol = _bbox_q(t, qv, added, fr,
							 occ, &bn, &busy);

				cost += (busy << 44) + (vol << 24);
				if (cost < best_cost) {
					best_cost = cost;
					for (int k = 0; k < added; k++)
						bestv[k] = qv[k].pos;
					nbest = added;
				}
				continue;
			}
			for (int k = 0; listed && k < added; k++)
				hwloc_bitmap_set(cur,
						 t->coord_node[qv[k].pos]);
		}
		/* torus: the nearest free nodes by rings of equal distance
		 * round the seed (a breadth-first search over every cell),
		 * node order within a ring, as the sort below gives them */
		if (want > 0 && cells && !lay) {
			lay = calloc(cells, sizeof(int));
			nbuf = malloc(3 * cells * sizeof(int));
		}
		if (want > 0 && t->family == TOPOML_TORUS && fr && lay &&
		    nbuf)
			want = _nearest(t, fr, lay, s + 1, seed, want, cur,
					nbuf, &cost);
		if (want > 0 && !dv &&
		    !(dv = malloc((nfree ? nfree : 1) * sizeof(*dv)))) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
		if (want > 0) {
			for (int k = 0; k < nfree; k++) {
				dv[k].node = fl[k];
				dv[k].d = topoml_hops(t, seed, fl[k]);
			}
			_sort_by_distance(dv, nfree);
			for (int k = 0; k < nfree && want > 0; k++) {
				if (hwloc_bitmap_isset(cur, dv[k].node))
					continue;
				hwloc_bitmap_set(cur, dv[k].node);
				cost += dv[k].d;
				want--;
			}
		}
		/* fewest other jobs' nodes in the bounding box (shared
		 * links), then the smallest box, then the least distance */
		if (t->family == TOPOML_TORUS) {
			long busy, vol = _bbox(t, cur, in->avail, fr, &bn,
					       &busy);

			cost += (busy << 44) + (vol << 24);
		}
		if (want <= 0 && cost < best_cost) {
			best_cost = cost;
			hwloc_bitmap_copy(best, cur);
			nbest = -1;
		}
		if (in->nreq)
			break;
	}
	if (best_cost == LONG_MAX) {
		snprintf(why, whylen, "not enough free nodes");
		goto out;
	}
	if (nbest >= 0) {	/* a region of the queue */
		hwloc_bitmap_zero(best);
		for (int k = 0; k < nbest; k++)
			hwloc_bitmap_set(best, t->coord_node[bestv[k]]);
	}
	rc = topoml__placement_from_set(t, best, out);
out:
	if (gcb) {	/* the caller's */
		cb = NULL;
		if (gbn)
			bn.p = NULL;
	}
	topoml__psum_free(&bn);
	free(occ);
	free(bestv);
	free(qv);
	free(fr);
	free(bits);
	free(cb);
	free(lay);
	free(nbuf);
	free(fl);
	free(dv);
	hwloc_bitmap_free(best);
	hwloc_bitmap_free(cur);
	return rc;
}
