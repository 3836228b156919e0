/*
 * Slurm 26.05's topology/torus3d: the box search behind topoml's engine
 * when slurmctld runs topology/torus3d (topoml__place_torus3d_topoml:
 * torus3d's boxes only, ranked by topoml's criteria) and behind the
 * slurm-torus3d baseline policy (libtopoml_sim, sim/baselines/: torus3d's
 * own choice), reimplemented from src/plugins/topology/torus3d/ of Slurm
 * 26.05.3 (eval_nodes_torus3d.c: _check_anchor, _is_better_candidate,
 * _get_frag_cost; torus3d_record.c: _build_axis_positions,
 * _build_placement_anchors, the validation).  The torus3d section of
 * topology.yaml (topology.yaml(5) of 26.05) it reads: load/load_yaml.c.
 *
 * What torus3d does with a job of N nodes:
 *   - no placement (box shape) of size N listed: refused
 *     ("Requested topology configuration is not available");
 *   - else every anchor of every placement of size N (placements sorted by
 *     size, stable; anchors x-major over seed + k * spacing, wrapping, z
 *     fastest) whose cells all hold nodes, all free, holding the required
 *     nodes, is a candidate; the best has the lowest highest node weight,
 *     then, against a candidate of the same placement, the fewest anchors
 *     of the next larger placement that it touches and that are all free
 *     (the fragmentation it causes), the first found on ties;
 *   - no candidate: the job waits, however many nodes are free.
 *
 * Slurm is GPL-2.0-or-later (Copyright (c) 2026 NVIDIA CORPORATION &
 * AFFILIATES for torus3d); no code is copied.  A torus without the
 * admin's shapes (t->torus3d NULL) gets a box of every size, each the
 * most cube-like, anchors at every cell (topoml_torus3d_every_size()).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "topoml/build.h"
#include "model/model_int.h"
#include "place/common/place_int.h"
#include "place/torus/torus_grid.h"

/* ---- the policy ---------------------------------------------------- */

/*
 * The next larger placement's anchors, for the fragmentation cost: on a
 * grid of their sorted positions per axis, 1 where the anchor's nodes are
 * all free (and it has one), so that the free anchors a box touches are
 * a box sum on that grid.
 */
struct frag {
	const struct topoml_t3d_shape *nx;
	int *pos[3];
	int n[3];
	struct topoml_psum free;
};

static int _frag_build(struct frag *f, const struct topoml_t3d_shape *nx,
		       const int dims[3], const struct topoml_psum *busy,
		       const struct topoml_psum *mapped)
{
	int vol = nx->dims[0] * nx->dims[1] * nx->dims[2], rc = -1;
	char *cell;

	f->nx = nx;
	for (int d = 0; d < 3; d++) {
		f->pos[d] = malloc(dims[d] * sizeof(int));
		if (!f->pos[d])
			return -1;
		f->n[d] = topoml__torus_anchors(dims[d], nx->spacing[d],
						nx->seed[d], f->pos[d]);
		qsort(f->pos[d], f->n[d], sizeof(int), topoml__int_cmp);
	}
	cell = malloc((size_t)f->n[0] * f->n[1] * f->n[2]);
	if (!cell)
		return -1;
	/* busy counts the holes too: no busy node when the box's busy
	 * cells are its holes (vol - mapped) */
	for (int iz = 0; iz < f->n[2]; iz++)
		for (int iy = 0; iy < f->n[1]; iy++)
			for (int ix = 0; ix < f->n[0]; ix++) {
				int o[3] = { f->pos[0][ix], f->pos[1][iy],
					     f->pos[2][iz] };
				int m = topoml__psum_wrap(mapped, o, nx->dims);

				cell[ix + (size_t)f->n[0] *
				     (iy + (size_t)f->n[1] * iz)] =
					m > 0 && topoml__psum_wrap(busy, o,
								  nx->dims) ==
						 vol - m;
			}
	rc = topoml__psum_build(&f->free, f->n, cell);
	free(cell);
	return rc;
}

static void _frag_clear(struct frag *f)
{
	for (int d = 0; d < 3; d++)
		free(f->pos[d]);
	topoml__psum_free(&f->free);
}

/* Free anchors of the next placement that the box (o, s) touches
 * (_get_frag_cost(): overlapping and wholly free). */
static int _frag_cost(const struct frag *f, const int dims[3],
		      const int o[3], const int s[3])
{
	int lo[3][2], hi[3][2], np[3], total = 0;

	if (!f->nx)
		return 0;
	for (int d = 0; d < 3; d++) {
		int L = dims[d], w = s[d] + f->nx->dims[d] - 1;
		int a = ((o[d] - f->nx->dims[d] + 1) % L + L) % L, b;
		const int *p = f->pos[d];
		int n = f->n[d], ia, ib;

		/* anchors at a .. a+w-1 (mod L) touch the box */
		if (w >= L) {
			lo[d][0] = 0;
			hi[d][0] = n;
			np[d] = 1;
			continue;
		}
		b = a + w;	/* exclusive, may pass L */
		/* first index with pos >= v */
		ia = 0;
		while (ia < n && p[ia] < a)
			ia++;
		if (b <= L) {
			ib = ia;
			while (ib < n && p[ib] < b)
				ib++;
			lo[d][0] = ia;
			hi[d][0] = ib;
			np[d] = 1;
		} else {
			ib = 0;
			while (ib < n && p[ib] < b - L)
				ib++;
			lo[d][0] = ia;
			hi[d][0] = n;
			lo[d][1] = 0;
			hi[d][1] = ib;
			np[d] = 2;
		}
	}
	for (int x = 0; x < np[0]; x++)
		for (int y = 0; y < np[1]; y++)
			for (int z = 0; z < np[2]; z++) {
				int l[3] = { lo[0][x], lo[1][y], lo[2][z] };
				int h[3] = { hi[0][x], hi[1][y], hi[2][z] };

				total += topoml__psum_box(&f->free, l, h);
			}
	return total;
}

/* Set the box's nodes in set; the highest weight among them (buf: room
 * for the box's volume). */
static uint64_t _box_nodes(const topoml_topo_t *t, const int o[3],
			   const int s[3], const uint64_t *wt,
			   hwloc_bitmap_t set, int *buf)
{
	int m = topoml__torus_box_nodes(t, o, s, NULL, buf);
	uint64_t w = 0;

	if (set)
		hwloc_bitmap_zero(set);
	for (int k = 0; k < m; k++) {
		if (set)
			hwloc_bitmap_set(set, buf[k]);
		if (wt && wt[buf[k]] > w)
			w = wt[buf[k]];
	}
	return w;
}

/*
 * topoml's choice among torus3d's boxes (t->torus3d_only: slurmctld runs
 * topology/torus3d, which takes only a listed shape at a listed anchor):
 * torus3d's listed shapes are the candidate source of topoml's one box
 * search (topoml__torus_pick): the lowest highest node weight, as
 * torus3d, then the tightest fit (the most busy cells and mesh edges on
 * the box's faces, as topoml's own boxes), then torus3d's own
 * fragmentation cost, then torus3d's order.
 */
struct t3cand {
	struct topoml_torus_cand box;
	uint64_t w;		/* highest node weight, as torus3d */
	int shape;
	int frag;
};

static int _t3cand_w(const void *a, const void *b)
{
	const struct t3cand *x = a, *y = b;

	return x->w != y->w ? (x->w < y->w ? -1 : 1) : 0;
}

static int _t3cand_frag(const void *a, const void *b)
{
	const struct t3cand *x = a, *y = b;

	return x->frag - y->frag;
}

static const struct topoml_torus_rank _t3cand_rank = { _t3cand_w,
						       _t3cand_frag };

/* place.c's TOPOML_TORUS engine when t->torus3d_only; ranked (in->k). */
int topoml__place_torus3d_topoml(const struct place_in *in,
				 struct topoml_placement *out, char *why,
				 size_t whylen)
{
	return topoml__torus3d_boxes(in, true, out, why, whylen);
}

int topoml__torus3d_boxes(const struct place_in *in, bool ml,
			  struct topoml_placement *out, char *why,
			  size_t whylen)
{
	const topoml_topo_t *t = in->t;
	const struct topoml_torus3d *c = t->torus3d;
	struct topoml_torus3d *own = NULL;
	const uint64_t *wt = in->req->weight;
	struct topoml_torus_cells cells = { 0 };
	struct topoml_psum mapped = { 0 };
	struct frag fr = { 0 };
	int best_shape = -1, best_frag = -1, rc = -1, bo[3] = { 0 };
	int *pos[3] = { NULL }, npos[3], *buf = NULL;
	uint64_t best_w = 0;
	long vol;
	hwloc_bitmap_t set = NULL;
	struct t3cand *cv = NULL;
	int nc = 0, want = in->k > 1 ? in->k : 1;
	struct place_seen seen = { 0 };

	if (t->family != TOPOML_TORUS) {
		snprintf(why, whylen, "policy slurm-torus3d needs a 3D torus");
		return -1;
	}
	/* no admin's shapes: a box of every size (as `topoml sim` does) */
	if (!c && !(c = own = topoml_torus3d_every_size(t)))
		goto oom;
	for (int d = 0; d < 3; d++)
		if (c->dims[d] != t->dims[d]) {
			snprintf(why, whylen, "torus3d dims %dx%dx%d differ "
				 "from the topology's", c->dims[0],
				 c->dims[1], c->dims[2]);
			goto out;
		}
	if (!topoml_torus3d_size_ok(c, in->n)) {
		snprintf(why, whylen, "Requested topology configuration is "
			 "not available: no torus3d placement of %d nodes",
			 in->n);
		goto out;
	}
	vol = (long)t->dims[0] * t->dims[1] * t->dims[2];
	buf = malloc((vol ? vol : 1) * sizeof(int));
	for (int d = 0; d < 3; d++)
		pos[d] = malloc(t->dims[d] * sizeof(int));
	if (!buf || !pos[0] || !pos[1] || !pos[2])
		goto oom;
	/* the engine's box test (torus_grid.c); mapped: a cell with a node,
	 * for the fragmentation cost */
	if (topoml__torus_cells(&cells, t, in->avail, in->required,
				in->nreq) ||
	    topoml__torus_psum(t, NULL, 1, 1, 0, &mapped))
		goto oom;
	for (int i = 0; i < c->nshapes; i++) {
		const struct topoml_t3d_shape *s = &c->shapes[i], *nx = NULL;

		if (s->size != in->n)
			continue;
		for (int j = i + 1; j < c->nshapes && !nx; j++)
			if (c->shapes[j].size > in->n)
				nx = &c->shapes[j];
		if (nx != fr.nx) {
			_frag_clear(&fr);
			memset(&fr, 0, sizeof(fr));
			if (nx && _frag_build(&fr, nx, t->dims, &cells.busy,
					      &mapped))
				goto oom;
		}
		for (int d = 0; d < 3; d++)
			npos[d] = topoml__torus_anchors(t->dims[d],
							s->spacing[d],
							s->seed[d], pos[d]);
		for (int ix = 0; ix < npos[0]; ix++)
			for (int iy = 0; iy < npos[1]; iy++)
				for (int iz = 0; iz < npos[2]; iz++) {
					int o[3] = { pos[0][ix], pos[1][iy],
						     pos[2][iz] }, f;
					uint64_t w = 0;

					/* every cell a free node, the
					 * required ones inside */
					if (!topoml__torus_box_free(&cells, o,
								    s->dims))
						continue;
					if (ml) {
						struct t3cand *g;

						if (topoml__grow((void **)&cv,
								 nc,
								 sizeof(*cv)))
							goto oom;
						g = cv;
						g[nc].box = (struct
							topoml_torus_cand){
							.o = { o[0], o[1],
							       o[2] },
							.s = s->dims,
							.fit = -1 };
						g[nc].w = wt ? _box_nodes(
							t, o, s->dims, wt,
							NULL, buf) : 0;
						g[nc].shape = i;
						g[nc].frag = _frag_cost(
							&fr, t->dims, o,
							s->dims);
						nc++;
						continue;
					}
					if (wt)
						w = _box_nodes(t, o, s->dims,
							       wt, NULL, buf);
					if (best_shape >= 0 && w > best_w)
						continue;
					if (best_shape >= 0 && w == best_w) {
						/* against the same placement
						 * only; else the first found
						 * stays */
						if (best_shape != i)
							continue;
						if (best_frag < 0)
							best_frag = _frag_cost(
								&fr, t->dims,
								bo, s->dims);
						f = _frag_cost(&fr, t->dims, o,
							       s->dims);
						if (f >= best_frag)
							continue;
						best_frag = f;
					} else {
						best_frag = -1;
					}
					best_shape = i;
					best_w = w;
					memcpy(bo, o, sizeof(bo));
				}
	}
	if (ml && nc) {
		int found = 0;

		set = hwloc_bitmap_alloc();
		if (!set)
			goto oom;
		while (found < want) {
			int i = topoml__torus_pick(t, &cells, cv, sizeof(*cv),
						   nc, &_t3cand_rank);

			if (i < 0)
				break;
			_box_nodes(t, cv[i].box.o,
				   c->shapes[cv[i].shape].dims, NULL, set,
				   buf);
			if (want > 1 && !topoml__seen_add(&seen, set))
				continue;
			if (topoml__placement_from_set(t, set, &out[found]))
				goto oom;
			found++;
		}
		rc = found;
		goto out;
	}
	if (best_shape < 0) {
		snprintf(why, whylen, "No suitable topology unit found: no "
			 "free torus3d box of %d nodes", in->n);
		goto out;
	}
	set = hwloc_bitmap_alloc();
	if (!set)
		goto oom;
	_box_nodes(t, bo, c->shapes[best_shape].dims, NULL, set, buf);
	rc = topoml__placement_from_set(t, set, out);
	if (!rc)
		goto out;
oom:
	snprintf(why, whylen, "out of memory");
	rc = -1;
out:
	_frag_clear(&fr);
	topoml__seen_clear(&seen);
	free(cv);
	free(buf);
	topoml__torus_cells_free(&cells);
	topoml__psum_free(&mapped);
	for (int d = 0; d < 3; d++)
		free(pos[d]);
	hwloc_bitmap_free(set);
	topoml_torus3d_free(own);
	return rc;
}
