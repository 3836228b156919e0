/*
 * Synthetic topologies for tests, simulations and benchmarks.  Nodes are
 * <prefix>1 .. <prefix>N in leaf / router / x-fastest coordinate order, so
 * they line up with a test cluster's CLOUD nodes c[1-N].
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "topoml/build.h"
#include "sim.h"

#define NAME_MAX_LEN 256

static const char *_prefix(const char *prefix)
{
	return prefix && *prefix ? prefix : "node";
}

/* Add node <prefix><i+1>; -1 on failure. */
static int _node(topoml_topo_t *t, const char *prefix, int i)
{
	char name[NAME_MAX_LEN];

	snprintf(name, sizeof(name), "%s%d", prefix, i + 1);
	return topoml_add_node(t, name, 0, NULL);
}

/* Generated models are valid by construction; NULL only without memory. */
static topoml_topo_t *_done(topoml_topo_t *t)
{
	if (topoml_finalize(t, NULL)) {
		topoml_free(t);
		t = NULL;
	}
	return t;
}

/*
 * Leaves hold per_leaf nodes each; every level above groups up to radix
 * switches under one parent.  levels = 0: add levels until one root is
 * left; otherwise exactly that many switch levels, the top one a single
 * root over whatever is left.
 */
topoml_topo_t *topoml_gen_fat_tree(const char *prefix, int nnodes,
				   int per_leaf, int radix, int levels)
{
	topoml_topo_t *t;
	int nleaves, first = 0, count, level, i;
	char name[NAME_MAX_LEN];

	if (nnodes < 1 || per_leaf < 1 || radix < 0 || levels < 0)
		return NULL;
	if (!radix)
		radix = per_leaf > 2 ? per_leaf : 2;
	if (radix < 2 && levels == 0)
		return NULL;
	prefix = _prefix(prefix);
	t = topoml_new(TOPOML_FAT_TREE, "generated");
	if (!t)
		return NULL;
	nleaves = (nnodes + per_leaf - 1) / per_leaf;
	for (i = 0; i < nleaves; i++) {
		int sw, k;

		snprintf(name, sizeof(name), "s0-%d", i);
		sw = topoml_add_switch(t, name, 0, NULL);
		if (sw < 0)
			goto fail;
		for (k = i * per_leaf; k < nnodes && k < (i + 1) * per_leaf;
		     k++) {
			int n = _node(t, prefix, k);

			if (n < 0 || topoml_attach_node(t, sw, n, NULL))
				goto fail;
		}
	}
	count = nleaves;
	for (level = 1; levels ? level < levels : count > 1; level++) {
		bool top = levels && level == levels - 1;
		int nup = top ? 1 : (count + radix - 1) / radix;
		int base = t->nswitches;

		for (i = 0; i < nup; i++) {
			snprintf(name, sizeof(name), "s%d-%d", level, i);
			if (topoml_add_switch(t, name, 0, NULL) < 0)
				goto fail;
		}
		for (i = 0; i < count; i++)
			topoml_link_switches(t, base + (top ? 0 : i / radix),
					     first + i);
		first = base;
		count = nup;
	}
	return _done(t);
fail:
	topoml_free(t);
	return NULL;
}

topoml_topo_t *topoml_gen_dragonfly(const char *prefix, int groups,
				    int routers, int per_router,
				    enum topoml_df_arrangement arr)
{
	topoml_topo_t *t;
	char name[NAME_MAX_LEN];
	int g, r, k, node = 0;

	if (groups < 1 || routers < 1 || per_router < 1 ||
	    arr < TOPOML_DF_ALL_TO_ALL || arr > TOPOML_DF_RELATIVE)
		return NULL;
	prefix = _prefix(prefix);
	t = topoml_new(TOPOML_DRAGONFLY, "generated");
	if (!t)
		return NULL;
	t->df_arrangement = arr;
	for (g = 0; g < groups; g++) {
		int gi;

		snprintf(name, sizeof(name), "g%d", g);
		gi = topoml_add_group(t, name, 0, NULL);
		if (gi < 0)
			goto fail;
		for (r = 0; r < routers; r++) {
			int ri;

			snprintf(name, sizeof(name), "g%dr%d", g, r);
			ri = topoml_add_switch(t, name, 0, NULL);
			if (ri < 0)
				goto fail;
			topoml_group_add_router(t, gi, ri);
			for (k = 0; k < per_router; k++) {
				int n = _node(t, prefix, node++);

				if (n < 0 || topoml_attach_node(t, ri, n, NULL))
					goto fail;
			}
		}
	}
	return _done(t);
fail:
	topoml_free(t);
	return NULL;
}

topoml_topo_t *topoml_gen_torus(const char *prefix, int x, int y, int z,
				bool wrap)
{
	topoml_topo_t *t;
	int i = 0, a, b, c;

	if (x < 1 || y < 1 || z < 1 || (long)x * y * z > 1L << 26)
		return NULL;
	prefix = _prefix(prefix);
	t = topoml_new(TOPOML_TORUS, "generated");
	if (!t)
		return NULL;
	t->dims[0] = x;
	t->dims[1] = y;
	t->dims[2] = z;
	t->wrap[0] = t->wrap[1] = t->wrap[2] = wrap;
	for (c = 0; c < z; c++)
		for (b = 0; b < y; b++)
			for (a = 0; a < x; a++) {
				int n = _node(t, prefix, i++);

				if (n < 0)
					goto fail;
				t->nodes[n].coord[0] = a;
				t->nodes[n].coord[1] = b;
				t->nodes[n].coord[2] = c;
			}
	return _done(t);
fail:
	topoml_free(t);
	return NULL;
}
