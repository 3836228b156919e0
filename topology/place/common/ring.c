/*
 * Ring order: the rank order of a job's nodes, so that neighbours in the
 * ring are close in the fabric (leaves in depth-first order on a
 * fat-tree, groups then routers on a dragonfly, a closed tour of the box
 * on a torus).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
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
	qsort(o, n, sizeof(*o), _tord_cmp);
	for (int i = 0; i < n; i++)
		nodes[i] = o[i].node;
	free(o);
	/* Holes in the box (a fallback placement): the tour jumps over
	 * them; 2-opt takes the worst detours out. */
	if ((long)ext[0] * ext[1] * ext[2] > n)
		_two_opt(t, nodes, n);
}
