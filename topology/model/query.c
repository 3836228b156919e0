/*
 * The model's queries: names, free nodes per leaf, the hops and common
 * level of two nodes that the placement engine and the cost model ask
 * millions of times, the one-line summary.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "model/model_int.h"
#include "model/cache.h"

#define WBITS (8 * (int)sizeof(unsigned long))

const char *topoml__where(const topoml_topo_t *t, int line, char *buf,
			 size_t len)
{
	const char *src = t->source ? t->source : "topology";

	if (line > 0)
		snprintf(buf, len, "%s:%d", src, line);
	else
		snprintf(buf, len, "%s", src);
	return buf;
}

int *topoml__leaf_free(const topoml_topo_t *t, hwloc_const_bitmap_t avail)
{
	int *cnt = calloc(t->nswitches ? t->nswitches : 1, sizeof(int));
	int nw = (t->nnodes + WBITS - 1) / WBITS;
	unsigned long *w = calloc(nw ? nw : 1, sizeof(*w));

	if (!cnt || !w) {
		free(cnt);
		free(w);
		return NULL;
	}
	/* One copy of avail's words, then plain bit tests per leaf node:
	 * no per-node library calls on a 100k-node machine. */
	for (int i = 0; i < nw; i++)
		w[i] = hwloc_bitmap_to_ith_ulong(avail, i);
	for (int s = 0; s < t->nswitches; s++) {
		const struct topoml_switch *sw = &t->switches[s];
		int c = 0, lo, hi;

		if (!sw->nnodes)
			continue;
		lo = sw->nodes[0];
		hi = sw->nodes[sw->nnodes - 1];
		if (hi - lo + 1 == sw->nnodes && hi < t->nnodes) {
			/* consecutive indices (the usual case): popcount
			 * the word range */
			int wl = lo / WBITS, wh = hi / WBITS;

			for (int i = wl; i <= wh; i++) {
				unsigned long m = w[i];

				if (i == wl)
					m &= ~0UL << (lo % WBITS);
				if (i == wh && (hi % WBITS) != WBITS - 1)
					m &= (1UL << (hi % WBITS + 1)) - 1;
				c += __builtin_popcountl(m);
			}
			cnt[s] = c;
			continue;
		}
		for (int k = 0; k < sw->nnodes; k++) {
			int v = sw->nodes[k];

			c += (w[v / WBITS] >> (v % WBITS)) & 1;
		}
		cnt[s] = c;
	}
	free(w);
	return cnt;
}

int topoml__min_items(const int *f, int n, int need)
{
	int sum = 0;

	if (need <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		sum += f[i];
		if (sum >= need)
			return i + 1;
	}
	return -1;
}

const char *topoml_family_name(enum topoml_family f)
{
	switch (f) {
	case TOPOML_FAT_TREE:
		return "fat-tree";
	case TOPOML_DRAGONFLY:
		return "dragonfly";
	case TOPOML_TORUS:
		return "torus";
	}
	return "unknown";
}

const char *topoml_topo_kind(const topoml_topo_t *t)
{
	if (t && t->nblocks > 0)
		return "block";
	return topoml_family_name(t ? t->family : 0);
}

int topoml__leaf_class(const topoml_topo_t *t, int leaf, int level,
		       bool *exact)
{
	const struct topoml_cache *c = t->cache;

	if (t->family != TOPOML_FAT_TREE || !c || !c->cls || leaf < 0 ||
	    leaf >= t->nswitches || level < 0 || level >= t->nlevels) {
		*exact = false;
		return -1;
	}
	*exact = c->cls_ok[level];
	return c->cls[(size_t)level * t->nswitches + leaf];
}

int topoml__gdist_uniform(const topoml_topo_t *t, double *mean)
{
	const struct topoml_cache *c = t->cache;

	if (!c || !c->gdist) {
		if (mean)
			*mean = 1;
		return 1;
	}
	if (mean)
		*mean = c->gdist_mean;
	return c->gdist_uniform;
}

const int *topoml__torus_curve(const topoml_topo_t *t, const uint64_t **pos)
{
	const struct topoml_cache *c = t->cache;

	if (t->family != TOPOML_TORUS || !c || !c->curve_node)
		return NULL;
	if (pos)
		*pos = c->curve_pos;
	return c->curve_node;
}

int topoml_node_by_name(const topoml_topo_t *t, const char *name)
{
	return t ? topoml__index_find(t->node_index, name) : -1;
}

int topoml_switch_by_name(const topoml_topo_t *t, const char *name)
{
	return t ? topoml__index_find(t->switch_index, name) : -1;
}

int topoml_torus_distance(const topoml_topo_t *t, const int a[3],
			  const int b[3])
{
	int d, sum = 0;

	for (d = 0; d < 3; d++) {
		int x = abs(a[d] - b[d]);

		if (t->wrap[d] && t->dims[d] - x < x)
			x = t->dims[d] - x;
		sum += x;
	}
	return sum;
}

static bool _valid(const topoml_topo_t *t, int a, int b)
{
	return t && a >= 0 && b >= 0 && a < t->nnodes && b < t->nnodes;
}

static int _fat_tree_level(const topoml_topo_t *t, int a, int b)
{
	const struct topoml_cache *c = t->cache;
	int la = t->nodes[a].leaf, lb = t->nodes[b].leaf, k;

	if (la == lb)
		return 0;
	if (!c)
		return t->nlevels;
	for (k = c->anc_off[la]; k < c->anc_off[la + 1]; k++)
		if (hwloc_bitmap_isset(c->anc_set[lb], c->anc[k]))
			return t->switches[c->anc[k]].level;
	return t->nlevels;
}

int topoml_common_level(const topoml_topo_t *t, int a, int b)
{
	if (!_valid(t, a, b))
		return -1;
	if (a == b)
		return -1;
	switch (t->family) {
	case TOPOML_FAT_TREE:
		return _fat_tree_level(t, a, b);
	case TOPOML_DRAGONFLY:
		if (t->nodes[a].leaf == t->nodes[b].leaf)
			return 0;
		return t->nodes[a].group == t->nodes[b].group ? 1 : 2;
	case TOPOML_TORUS:
		return topoml_torus_distance(t, t->nodes[a].coord,
					     t->nodes[b].coord);
	}
	return -1;
}

int topoml_global_hops(const topoml_topo_t *t, int a, int b)
{
	int ga, gb;

	if (!_valid(t, a, b) || t->family != TOPOML_DRAGONFLY)
		return 0;
	ga = t->nodes[a].group;
	gb = t->nodes[b].group;
	if (ga == gb || ga < 0 || gb < 0)
		return 0;
	if (!t->cache || !t->cache->gdist)
		return 1;
	return t->cache->gdist[(size_t)ga * t->ngroups + gb];
}

int topoml_hops(const topoml_topo_t *t, int a, int b)
{
	int lvl;

	if (!_valid(t, a, b))
		return -1;
	if (a == b)
		return 0;
	switch (t->family) {
	case TOPOML_FAT_TREE:
		return 2 * (_fat_tree_level(t, a, b) + 1);
	case TOPOML_DRAGONFLY:
		lvl = topoml_common_level(t, a, b);
		if (lvl < 2)
			return lvl + 2;
		/* node-router, local, global, local, router-node; each
		 * extra global hop adds a local one in the group between */
		return 3 + 2 * topoml_global_hops(t, a, b);
	case TOPOML_TORUS:
		return topoml_torus_distance(t, t->nodes[a].coord,
					     t->nodes[b].coord);
	}
	return -1;
}

void topoml_summary(const topoml_topo_t *t, char *buf, size_t len)
{
	const struct topoml_cache *c = t->cache;
	static const char *arr[] = { "explicit", "all-to-all", "absolute",
				     "relative" };
	char extra[64] = "", parts[48] = "";

	if (t->nblocks > 0) {
		char sizes[128] = "";
		size_t o = 0;

		for (int k = 0; k < 16 && o < sizeof(sizes) - 16; k++)
			if (t->block_levels & (1u << k))
				o += snprintf(sizes + o, sizeof(sizes) - o,
					      "%s%d", o ? "," : "",
					      t->block_base << k);
		snprintf(buf, len, "block: %d node%s, %d block%s of %d "
			 "(BlockSizes=%s), %d aggregated, %d level%s",
			 t->nnodes, t->nnodes == 1 ? "" : "s", t->nblocks,
			 t->nblocks == 1 ? "" : "s", t->block_base, sizes,
			 t->nswitches - t->nblocks, t->nlevels,
			 t->nlevels == 1 ? "" : "s");
		return;
	}
	if (t->nnvl > 0)
		snprintf(extra, sizeof(extra), ", %d NVLink domain%s",
			 t->nnvl, t->nnvl == 1 ? "" : "s");
	switch (t->family) {
	case TOPOML_FAT_TREE:
		if (c && c->nparts > 1)
			snprintf(parts, sizeof(parts),
				 ", %d unconnected parts", c->nparts);
		snprintf(buf, len,
			 "fat-tree: %d node%s, %d switch%s (%d lea%s), %d level%s%s%s",
			 t->nnodes, t->nnodes == 1 ? "" : "s", t->nswitches,
			 t->nswitches == 1 ? "" : "es", c ? c->nleaves : 0,
			 c && c->nleaves == 1 ? "f" : "ves", t->nlevels,
			 t->nlevels == 1 ? "" : "s", parts, extra);
		break;
	case TOPOML_DRAGONFLY:
		snprintf(buf, len,
			 "dragonfly: %d node%s, %d group%s, %d router%s, %s global links%s",
			 t->nnodes, t->nnodes == 1 ? "" : "s", t->ngroups,
			 t->ngroups == 1 ? "" : "s", t->nswitches,
			 t->nswitches == 1 ? "" : "s",
			 arr[t->df_arrangement <= TOPOML_DF_RELATIVE ?
			     t->df_arrangement : 0], extra);
		break;
	case TOPOML_TORUS:
		if (t->wrap[0] || t->wrap[1] || t->wrap[2])
			snprintf(extra, sizeof(extra), "wrap %s%s%s",
				 t->wrap[0] ? "x" : "", t->wrap[1] ? "y" : "",
				 t->wrap[2] ? "z" : "");
		else
			snprintf(extra, sizeof(extra), "no wrap");
		snprintf(buf, len, "%s: %d node%s, %dx%dx%d, %s",
			 (t->wrap[0] || t->wrap[1] || t->wrap[2]) ?
			 "torus" : "mesh",
			 t->nnodes, t->nnodes == 1 ? "" : "s", t->dims[0],
			 t->dims[1], t->dims[2], extra);
		break;
	default:
		snprintf(buf, len, "unknown topology");
	}
}
