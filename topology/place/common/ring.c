/*
 * Ring order: the rank order of a job's nodes, so that neighbours in the
 * ring are close in the fabric (leaves in depth-first order on a
 * fat-tree, groups then routers on a dragonfly, a closed tour of the box
 * on a torus).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

/* ---- ring order ----------------------------------------------------- */

struct ord {
	long key;
	int node;
};

static int _ord_cmp(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->node - y->node;
}

/*
 * Leaves numbered in depth-first order from the roots, so that leaves
 * under the same switch are consecutive in the ring and the ring crosses
 * each subtree boundary once.
 */
static int *_leaf_dfs_rank(const topoml_topo_t *t)
{
	int ns = t->nswitches, top = 0, next = 0;
	int *rank = malloc((ns ? ns : 1) * sizeof(int));
	int *stack = NULL;
	char *seen = calloc(ns ? ns : 1, 1);
	int cap = 0;

	if (!rank || !seen)
		goto fail;
	for (int i = 0; i < ns; i++) {
		rank[i] = -1;
		cap += 1 + t->switches[i].nchildren;
	}
	stack = malloc((cap ? cap : 1) * sizeof(int));
	if (!stack)
		goto fail;
	for (int root = 0; root < ns; root++) {
		if (t->switches[root].nparents || seen[root])
			continue;
		stack[top++] = root;
		while (top) {
			int s = stack[--top];
			const struct topoml_switch *sw = &t->switches[s];

			if (seen[s])
				continue;
			seen[s] = 1;
			if (!sw->nchildren)
				rank[s] = next++;
			for (int c = sw->nchildren - 1; c >= 0; c--)
				if (!seen[sw->children[c]])
					stack[top++] = sw->children[c];
		}
	}
	for (int i = 0; i < ns; i++)	/* loops without a root: any order */
		if (rank[i] < 0)
			rank[i] = next++;
	free(stack);
	free(seen);
	return rank;
fail:
	free(rank);
	free(stack);
	free(seen);
	return NULL;
}

void topoml_ring_order(const topoml_topo_t *t, int *nodes, int n)
{
	struct ord *o;
	int *rank = NULL;

	if (!t || !nodes || n < 2)
		return;
	if (t->family == TOPOML_TORUS) {
		topoml__torus_ring_order(t, nodes, n);
		return;
	}
	o = malloc(n * sizeof(*o));
	if (!o)
		return;
	if (t->family == TOPOML_FAT_TREE)
		rank = _leaf_dfs_rank(t);
	for (int i = 0; i < n; i++) {
		const struct topoml_node *nd = &t->nodes[nodes[i]];
		int leaf = nd->leaf < 0 ? 0 : nd->leaf;

		o[i].node = nodes[i];
		if (t->family == TOPOML_DRAGONFLY)
			o[i].key = (long)nd->group * t->nswitches + leaf;
		else
			o[i].key = rank ? rank[leaf] : leaf;
	}
	qsort(o, n, sizeof(*o), _ord_cmp);
	for (int i = 0; i < n; i++)
		nodes[i] = o[i].node;
	free(o);
	free(rank);
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
 * ring, until no move helps or about 128k pair tests are spent.
 * Deterministic.  Hops come from the nodes' coordinates, kept beside the
 * ring (one array per axis, reversed with it), as topoml_hops() counts
 * them: the gains of a row's pair tests four at a time (_gains), the
 * first that shortens the ring taken, then the rest of the row again
 * from there, the same moves as testing them one by one (a 512-node
 * fallback ring on a 97k-node torus: ~0.65 -> ~0.2 ms).
 */
#define TWO_OPT_WINDOW 64

/* the same for one difference */
static inline int _hop1(int x, int D)
{
	int a = abs(x);

	return D - a < a ? D - a : a;
}

typedef int32_t v4i __attribute__((vector_size(16)));

/* hops along one axis for a coordinate difference x: |x|, or the way
 * round when shorter (D: the axis' size when it wraps, else too large
 * to matter) */
static inline v4i _vhops(v4i x, v4i D)
{
	v4i s = x >> 31, a = (x ^ s) - s, r = D - a, m = r < a;

	return (r & m) | (a & ~m);
}

static inline v4i _vload(const int32_t *p)
{
	v4i v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * g[j - j0] for j in [j0, j1): dab + hops(j, j + 1) - hops(i, j) -
 * hops(i + 1, j + 1), the gain of reversing i + 1 .. j; position n is
 * position 0 again (the ring's close), the arrays padded past it.
 */
static void _gains(int32_t *const c[3], const int32_t D[3], int i, int dab,
		   int j0, int j1, int32_t *g)
{
	v4i dv = { 0 }, ci[3], ci1[3], Dv[3];

	for (int d = 0; d < 3; d++) {
		v4i z = { 0 };

		ci[d] = z + c[d][i];
		ci1[d] = z + c[d][i + 1];
		Dv[d] = z + D[d];
	}
	dv += dab;
	for (int j = j0; j < j1; j += 4) {
		v4i gain = dv;

		for (int d = 0; d < 3; d++) {
			v4i pj = _vload(c[d] + j), pk = _vload(c[d] + j + 1);

			gain += _vhops(pj - pk, Dv[d]) -
				_vhops(ci[d] - pj, Dv[d]) -
				_vhops(ci1[d] - pk, Dv[d]);
		}
		memcpy(g + (j - j0), &gain, sizeof(gain));
	}
}

/*
 * The first k in [j, j1) whose move gains, where i's edge is one hop:
 * a move gains 1 + hops(k, k + 1) - hops(i, k) - hops(i + 1, k + 1),
 * and the last two are a hop each at least (distinct nodes), so only an
 * edge (e, its hops capped at 255) of least hops or more can: 2, or 3
 * where every ring of the torus is even (a gain is even there: hops'
 * parities are the nodes' colours).  8 edges are passed at once where
 * none is, the others found by ctz.  j1 when none.
 */
static int _first_gain_at_jumps(int32_t *const c[3], const int32_t D[3],
				const uint8_t *e, const int *nodes, int n,
				int i, int j, int j1, int least)
{
	const uint64_t b1 = 0x0101010101010101ULL, b4 = ~b1 - 2 * b1;

	for (int k = j; k < j1; k += 8) {
		uint64_t w, jm;

		memcpy(&w, e + k, sizeof(w));	/* e: 8 bytes past n */
		if (j1 - k < 8)
			w &= (1ULL << (8 * (j1 - k))) - 1;
		/* the bytes >= 2; >= 3: >= 4, or 3 */
		jm = least == 2 ? w & ~b1 : (w & b4) | (w & (w >> 1) & b1);
		while (jm) {
			int b = __builtin_ctzll(jm) / 8, x = k + b, g = 1;

			jm &= ~(0xffULL << (8 * b));
			for (int d = 0; d < 3; d++)
				g += _hop1(c[d][x] - c[d][x + 1], D[d]) -
				     _hop1(c[d][i] - c[d][x], D[d]) -
				     _hop1(c[d][i + 1] - c[d][x + 1], D[d]);
			if (g > 0 && nodes[(x + 1) % n] != nodes[i])
				return x;
		}
	}
	return j1;
}

/*
 * Whether no move after since changed a position in [i, end]: mod[p] is
 * the move that last changed p, blk[b] the last of positions 8b .. 8b + 7
 * (a block's stamp read, its positions only at the window's ends).
 */
static bool _window_clean(const int *mod, const int *blk, int i, int end,
			  int since)
{
	int b0 = i >> 3, b1 = end >> 3;

	for (int b = b0; b <= b1; b++) {
		int lo, hi;

		if (blk[b] <= since)
			continue;
		if (b > b0 && b < b1)
			return false;
		lo = b == b0 ? i : b << 3;
		hi = b == b1 ? end : (b << 3) + 7;
		for (int p = lo; p <= hi; p++)
			if (mod[p] > since)
				return false;
	}
	return true;
}

void topoml__ring_two_opt(const topoml_topo_t *t, int *nodes, int n)
{
	long budget = 1L << 17;	/* under 1 ms: slurmctld holds its locks */
	bool better = true;
	int32_t *c[3] = { NULL }, D[3];
	int32_t g[TWO_OPT_WINDOW + 4];
	uint8_t *e = NULL;
	int *mod = NULL, *blk = NULL, *clean = NULL, moves = 0, least = 3;

	if (n < 4)
		return;
	for (int d = 0; d < 3; d++) {
		/* positions 0 .. n, n again 0, and a vector's room past */
		c[d] = malloc((n + 8) * sizeof(int32_t));
		if (!c[d])
			goto out;
		D[d] = t->wrap[d] ? t->dims[d] : INT32_MAX;
		if (t->wrap[d] && t->dims[d] > 2 && (t->dims[d] & 1))
			least = 2;	/* an odd ring */
	}
	/* e[k]: the hops of edge (k, k + 1), capped (reversed with it) */
	e = malloc(n + 8);
	/* mod[p]: the move that last changed position p (0: none);
	 * clean[i]: the moves made when i's window last found none (-1) */
	mod = calloc(n + 1, sizeof(int));
	blk = calloc(n / 8 + 1, sizeof(int));
	clean = malloc(n * sizeof(int));
	if (!e || !mod || !blk || !clean)
		goto out;
	memset(clean, -1, n * sizeof(int));
	for (int i = 0; i <= n + 7; i++) {
		const int *xyz = t->nodes[nodes[i < n ? i : 0]].coord;

		for (int d = 0; d < 3; d++)
			c[d][i] = i <= n ? xyz[d] : 0;
	}
#define HOPS(p, q) (_hop1(c[0][p] - c[0][q], D[0]) + \
		    _hop1(c[1][p] - c[1][q], D[1]) + \
		    _hop1(c[2][p] - c[2][q], D[2]))
#define EDGE(p) (HOPS(p, p + 1) < 255 ? HOPS(p, p + 1) : 255)
	for (int i = 0; i < n; i++)
		e[i] = EDGE(i);
	while (better && budget > 0) {
		better = false;
		for (int i = 0; i < n - 1 && budget > 0; i++) {
			int dab = HOPS(i, i + 1);

			/* detours over holes are local: a window of the
			 * ring, so a pass is O(n), not O(n^2) */
			int end = n - i > TWO_OPT_WINDOW ? i + TWO_OPT_WINDOW : n;
			int j = i + 2, seen = moves;

			/* a window no move changed since it found none finds
			 * none again: its tests counted, not made */
			if (clean[i] >= 0 &&
			    _window_clean(mod, blk, i, end, clean[i])) {
				if (end > j)
					budget -= end - j < budget ? end - j :
						  budget;
				continue;
			}
			while (j < end && budget > 0) {
				/* the tests the budget allows, a test each */
				int j1 = end - j < budget ? end :
					 j + (int)budget;
				int k = j;

				if (dab == 1) {
					k = _first_gain_at_jumps(c, D, e, nodes,
								 n, i, j, j1,
								 least);
				} else {
					_gains(c, D, i, dab, j, j1, g);
					/* the first that shortens the ring
					 * (position n is 0 again: k == i,
					 * no move) */
					while (k < j1 &&
					       (g[k - j] <= 0 ||
						nodes[(k + 1) % n] == nodes[i]))
						k++;
				}
				budget -= (k < j1 ? k + 1 : j1) - j;
				if (k == j1) {
					j = j1;
					continue;
				}
				budget -= (k - i) / 2;	/* the reversal */
				for (int l = i + 1, r = k; l < r; l++, r--) {
					int x = nodes[l];

					nodes[l] = nodes[r];
					nodes[r] = x;
					for (int d = 0; d < 3; d++) {
						int32_t y = c[d][l];

						c[d][l] = c[d][r];
						c[d][r] = y;
					}
				}
				/* the edges inside the segment, reversed;
				 * its two ends anew */
				for (int l = i + 1, r = k - 1; l < r;
				     l++, r--) {
					uint8_t y = e[l];

					e[l] = e[r];
					e[r] = y;
				}
				e[i] = EDGE(i);
				e[k] = EDGE(k);
				moves++;
				for (int l = i + 1; l <= k; l++)
					mod[l] = moves;
				for (int b = (i + 1) >> 3; b <= k >> 3; b++)
					blk[b] = moves;
				dab = HOPS(i, i + 1);
				better = true;
				j = k + 1;
			}
			if (j >= end && moves == seen)
				clean[i] = moves;
		}
	}
#undef EDGE
#undef HOPS
out:
	for (int d = 0; d < 3; d++)
		free(c[d]);
	free(e);
	free(mod);
	free(blk);
	free(clean);
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

/*
 * The n nodes of o into nodes in key order, where the keys are distinct
 * and below vol, and vol is at most 8 n: a slot a key.  False (nothing
 * done) where not.
 */
static bool _tord_place(const struct tord *o, int n, long vol, int *nodes)
{
	int *slot, k = 0;

	if (vol > 8L * n + 64)
		return false;
	slot = malloc(vol * sizeof(int));
	if (!slot)
		return false;
	memset(slot, -1, vol * sizeof(int));
	for (int i = 0; i < n; i++) {
		if (o[i].key < 0 || o[i].key >= vol || slot[o[i].key] >= 0) {
			free(slot);
			return false;
		}
		slot[o[i].key] = o[i].node;
	}
	for (long x = 0; x < vol; x++)
		if (slot[x] >= 0)
			nodes[k++] = slot[x];
	free(slot);
	return true;
}

void topoml__torus_ring_order(const topoml_topo_t *t, int *nodes, int n)
{
	int start[3], ext[3];
	struct tord *o;

	if (n < 2 || topoml__torus_box(t, nodes, n, true, start, ext) < 0)
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
	/* each node's key is its cell's place on the tour, distinct and
	 * below the box's volume: placed by key where the box is small,
	 * not compared (a large job's 8 boxes' rings) */
	if (!_tord_place(o, n, (long)ext[0] * ext[1] * ext[2], nodes)) {
		qsort(o, n, sizeof(*o), _tord_cmp);
		for (int i = 0; i < n; i++)
			nodes[i] = o[i].node;
	}
	free(o);
	/* Holes in the box (a fallback placement): the tour jumps over
	 * them; 2-opt takes the worst detours out. */
	if ((long)ext[0] * ext[1] * ext[2] > n)
		topoml__ring_two_opt(t, nodes, n);
}
