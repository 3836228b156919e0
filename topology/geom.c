/*
 * Torus geometry shared by the engine, the cost model and the simulator:
 * the smallest wrap-aware box around a set of nodes.  One definition, so
 * that the placement, its score and the simulator's figures agree (they
 * used to differ on an empty set and on where a wrapping box starts).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
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
	if (nodes) {
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
