/*
 * Placement rules of --ml-spares: which nodes of a placement are the
 * spares (see topoml/place.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/place.h"
#include "topoml.h"
#include "model/model_int.h"

/* The leaf (dragonfly: group) of node v, -1 on a torus. */
static int _domain(const topoml_topo_t *t, int v)
{
	if (v < 0 || v >= t->nnodes)
		return -1;
	return t->family == TOPOML_DRAGONFLY ? t->nodes[v].group :
	       t->nodes[v].leaf;
}

int topoml_spares_last(const struct topoml_topo *t, int *nodes, int n, int k)
{
	int *count = NULL, *out = NULL, ndom = 0, taken = 0, w = 0, rc = 0;
	bool *spare = NULL;

	if (!t || k < 1 || k >= n)
		return 0;
	for (int i = 0; i < n; i++)
		if (_domain(t, nodes[i]) >= ndom)
			ndom = _domain(t, nodes[i]) + 1;
	/* unsigned: n > k >= 1 here, which the compiler's size-range
	 * check (-Walloc-size-larger-than under ASan) cannot see */
	count = calloc((unsigned)ndom + 1, sizeof(int));
	spare = calloc((unsigned)n, sizeof(bool));
	out = malloc(sizeof(int) * (unsigned)n);
	if (!count || !spare || !out)
		goto out;
	for (int i = 0; i < n; i++)
		if (_domain(t, nodes[i]) >= 0)
			count[_domain(t, nodes[i])]++;
	while (taken < k) {
		int best = -1;

		/* The fullest domain left; ties: the lowest index. */
		for (int d = 0; d < ndom; d++)
			if (count[d] > 0 &&
			    (best < 0 || count[d] > count[best]))
				best = d;
		/* Its nodes latest in the ring first (none: the ring's end,
		 * a torus, whose snake order keeps it compact). */
		for (int i = n - 1; i >= 0 && taken < k; i--) {
			if (spare[i] || (best >= 0 &&
					 _domain(t, nodes[i]) != best))
				continue;
			spare[i] = true;
			taken++;
		}
		if (best < 0)
			break;
		count[best] = 0;
	}
	for (int i = 0; i < n; i++)
		if (!spare[i])
			out[w++] = nodes[i];
	for (int i = 0; i < n; i++)
		if (spare[i])
			out[w++] = nodes[i];
	memcpy(nodes, out, sizeof(int) * (unsigned)n);
	rc = k;
out:
	free(count);
	free(spare);
	free(out);
	return rc;
}

int topoml_spares_workers(const struct topoml_topo *t, int *nodes, int n,
			  int k)
{
	if (!t || n < 1)
		return n > 0 ? n : 0;
	topoml_ring_order(t, nodes, n);
	return n - topoml_spares_last(t, nodes, n, k);
}
