/*
 * The slurm-block baseline (libtopoml_sim): Slurm 24.05+ topology/block.
 *
 * slurm-block (topoml__place_slurm_block): Slurm 26.05's
 * eval_nodes_block() of src/plugins/topology/block/eval_nodes_block.c for
 * a job of N whole nodes (-N N --exclusive, every node with the same
 * CPUs, no GRES, no --segment), with CPU counts reduced to node counts,
 * which is exact for whole equal nodes.  Reimplemented from reading that
 * function (same steps, same tie-breaks, same quirks), not copied:
 *
 *  1. The job's level: ceil(log2(ceil(N / base))) base blocks, rounded up
 *     to the next BlockSizes level (none: the whole row).  The row is cut
 *     into aligned "blocks" of that many base blocks; the job must fit in
 *     one.  "llblocks" (the level below) bound how many lower-level groups
 *     it may touch: ceil(N / llblock size).
 *  2. The block: the first one holding a required node; else, among those
 *     whose max_llblock fullest llblocks hold N free nodes, the one with
 *     the lowest node weight, then the fewest free nodes (the last of
 *     equals wins: "<=").  The llblocks counted are the first bpb / bpll
 *     (integer division) of the block: when the row is one block and not
 *     a multiple of an llblock, its last llblock never counts (6 blocks
 *     of 4, levels of 1, 2, 4 blocks: a job of 20 never runs).
 *  3. Nodes of the lowest weights in that block until N are candidates;
 *     lower weight classes are taken whole (as required nodes).
 *  4. Base blocks one at a time (_choose_best_bblock()): prefer one in an
 *     llblock already used, then an llblock that fits the rest (the
 *     smallest such), else the fullest llblock; inside, a base block that
 *     fits the rest (the smallest, last of equals), else the fullest.  Its
 *     free candidates are taken in node index order.
 * A job that fits no block waits (-1), as in Slurm.  The node list, hence
 * Slurm's rank order, is node index order.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "sim/baselines/baselines.h"

struct blk {
	const topoml_topo_t *t;
	int nb;			/* base blocks */
	int base;		/* nodes per base block */
	int ll;			/* llblock level */
	int *on_bb;		/* candidate nodes per base block */
	int *on_ll;		/* per llblock, or NULL (not needed) */
	unsigned char *req;	/* base block already used */
};

/* _bblocks_in_same_block(); -1 (none yet) is in no llblock. */
static bool _same(int a, int b, int lvl)
{
	if (a < 0 || b < 0)
		return a == b;
	return (a >> lvl) == (b >> lvl);
}

/* _choose_best_bblock(): may base block i replace *best? */
static void _choose(const struct blk *k, int rem, int i, bool *best_same,
		    bool *best_fit, int *best)
{
	bool fit = k->on_bb[i] >= rem, same = false;

	if (k->on_ll && !_same(*best, i, k->ll)) {
		int lo = i & ~((1 << k->ll) - 1), hi = i | ((1 << k->ll) - 1);
		int bc, ic;
		bool ifit, bfit;

		for (int j = lo; j < k->nb && j <= hi; j++)
			if (k->req[j]) {
				same = true;
				break;
			}
		if (*best == -1 || (same && !*best_same)) {
			*best = i;
			*best_fit = fit;
			*best_same = same;
			return;
		}
		if (!same && *best_same)
			return;
		bc = k->on_ll[*best >> k->ll];
		ic = k->on_ll[i >> k->ll];
		ifit = ic >= rem;
		bfit = bc >= rem;
		if (ifit != bfit) {
			if (ifit) {
				*best = i;
				*best_fit = fit;
				*best_same = same;
			}
			return;
		}
		if (ic != bc) {
			/* both fit: the smaller; neither: the larger */
			if (ifit ? ic < bc : ic > bc) {
				*best = i;
				*best_fit = fit;
				*best_same = same;
			}
			return;
		}
	}
	if (*best == -1 || (fit && !*best_fit) ||
	    (!fit && !*best_fit && k->on_bb[i] >= k->on_bb[*best]) ||
	    (fit && k->on_bb[i] <= k->on_bb[*best])) {
		*best = i;
		*best_fit = fit;
	}
}

static uint64_t _weight(const struct place_in *in, int node)
{
	return in->req->weight ? in->req->weight[node] : 0;
}

int topoml__place_slurm_block(const struct place_in *in,
			      struct topoml_placement *out, char *why,
			      size_t whylen)
{
	const topoml_topo_t *t = in->t;
	struct blk k = { .t = t, .nb = t->nblocks, .base = t->block_base };
	int n = in->n, rem, lvl, bpb, nblk, bpll, max_ll, llcnt = 0;
	int binx = -1, bcnt = 0, rc = -1, last;
	uint64_t bw = 0;
	int *on_blk = NULL, *bb_of = NULL;
	hwloc_bitmap_t sel = hwloc_bitmap_dup(in->required);
	hwloc_bitmap_t cand = hwloc_bitmap_alloc(), tmp = hwloc_bitmap_alloc();
	uint64_t *wv = NULL;
	int nw = 0;

	if (k.nb <= 0 || k.base <= 0) {
		snprintf(why, whylen, "policy slurm-block needs a block "
			 "topology (BlockName= lines)");
		goto out;
	}
	lvl = topoml__block_level(t, n, &k.ll);
	bpb = lvl < 0 ? k.nb : 1 << lvl;
	nblk = lvl < 0 ? 1 : (k.nb + bpb - 1) / bpb;
	bpll = 1 << k.ll;
	max_ll = (n + bpll * k.base - 1) / (bpll * k.base);
	k.on_bb = calloc(k.nb, sizeof(int));
	k.req = calloc(k.nb, 1);
	on_blk = calloc(nblk, sizeof(int));
	bb_of = malloc(k.nb * sizeof(int));
	wv = malloc((hwloc_bitmap_weight(in->avail) + 1) * sizeof(*wv));
	if (bpb != bpll * max_ll) {
		llcnt = (k.nb + bpll - 1) / bpll;
		k.on_ll = calloc(llcnt, sizeof(int));
	}
	if (!sel || !cand || !tmp || !k.on_bb || !k.req || !on_blk ||
	    !bb_of || !wv || (llcnt && !k.on_ll)) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	rem = n - in->nreq;
	for (int i = 0; i < k.nb; i++) {
		int f = topoml__and_weight(t->switches[i].desc, in->avail);

		bb_of[i] = i / bpb;
		on_blk[i / bpb] += f;
		if (k.on_ll)
			k.on_ll[i / bpll] += f;
	}
	/* Distinct node weights, ascending (the node weight list). */
	{
		int v;

		hwloc_bitmap_foreach_begin(v, in->avail) {
			uint64_t w = _weight(in, v);
			int j;

			for (j = 0; j < nw && wv[j] != w; j++)
				;
			if (j == nw)
				wv[nw++] = w;
		} hwloc_bitmap_foreach_end();
		for (int a = 1; a < nw; a++)
			for (int b = a; b > 0 && wv[b - 1] > wv[b]; b--) {
				uint64_t x = wv[b];

				wv[b] = wv[b - 1];
				wv[b - 1] = x;
			}
	}

	/* 2. the block */
	for (int b = 0; b < nblk; b++) {
		int avail_bnc = 0, v;
		uint64_t lw = UINT64_MAX;

		hwloc_bitmap_zero(tmp);
		for (int i = b * bpb; i < k.nb && i < (b + 1) * bpb; i++)
			hwloc_bitmap_or(tmp, tmp, t->switches[i].desc);
		hwloc_bitmap_and(tmp, tmp, in->avail);
		if (!k.on_ll) {
			avail_bnc = on_blk[b];
		} else {
			int per = bpb / bpll, off = b * per, m;
			int *v2 = k.on_ll + off;

			per = per < llcnt - off ? per : llcnt - off;
			m = max_ll < per ? max_ll : per;
			/* the m fullest llblocks (Slurm sorts in place) */
			for (int a = 1; a < per; a++)
				for (int c = a; c > 0 && v2[c - 1] < v2[c];
				     c--) {
					int x = v2[c];

					v2[c] = v2[c - 1];
					v2[c - 1] = x;
				}
			for (int j = 0; j < m; j++)
				avail_bnc += v2[j];
		}
		if (in->nreq && hwloc_bitmap_intersects(in->required, tmp)) {
			binx = b;
			break;
		}
		if (avail_bnc < rem)
			continue;
		if (in->nreq)
			continue;
		hwloc_bitmap_foreach_begin(v, tmp) {
			if (_weight(in, v) < lw)
				lw = _weight(in, v);
		} hwloc_bitmap_foreach_end();
		if (lw == UINT64_MAX)
			continue;
		if (binx == -1 || lw < bw || (lw == bw && on_blk[b] <= bcnt)) {
			binx = b;
			bw = lw;
			bcnt = on_blk[b];
		}
	}
	if (binx == -1) {
		snprintf(why, whylen, "no block of %d base blocks has %d "
			 "free nodes (Slurm: the job waits)", bpb, n);
		goto out;
	}
	hwloc_bitmap_zero(tmp);
	for (int i = binx * bpb; i < k.nb && i < (binx + 1) * bpb; i++)
		hwloc_bitmap_or(tmp, tmp, t->switches[i].desc);
	if (in->nreq && !hwloc_bitmap_isincluded(in->required, tmp)) {
		snprintf(why, whylen, "the required nodes are not in one "
			 "block of %d base blocks", bpb);
		goto out;
	}
	hwloc_bitmap_and(tmp, tmp, in->avail);
	if (in->nreq) {
		last = -1;
		for (int i = 0; i < k.nb && k.on_ll; i++) {
			if (bb_of[i] != binx ||
			    !hwloc_bitmap_intersects(in->required,
						     t->switches[i].desc))
				continue;
			k.req[i] = 1;
			if (!_same(last, i, k.ll)) {
				max_ll--;
				last = i;
			}
		}
		if (max_ll < 0) {
			snprintf(why, whylen, "the required nodes span more "
				 "lower-level blocks than the job may");
			goto out;
		}
		if (rem <= 0)
			goto done;
	}

	/* 3. candidates by weight class; lower classes taken whole */
	{
		hwloc_bitmap_t req2 = hwloc_bitmap_alloc();
		int cnt = 0, v;

		if (!req2) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
		for (int c = 0; c < nw && cnt < rem; c++) {
			if (cnt > 0)
				hwloc_bitmap_or(req2, req2, cand);
			hwloc_bitmap_foreach_begin(v, tmp) {
				if (_weight(in, v) != wv[c] ||
				    hwloc_bitmap_isset(in->required, v))
					continue;
				hwloc_bitmap_set(cand, v);
				cnt++;
			} hwloc_bitmap_foreach_end();
		}
		if (cnt < rem) {
			hwloc_bitmap_free(req2);
			snprintf(why, whylen, "block %d has %d of %d free "
				 "nodes", binx, cnt, rem);
			goto out;
		}
		if (!hwloc_bitmap_iszero(req2)) {
			hwloc_bitmap_or(sel, sel, req2);
			rem -= hwloc_bitmap_weight(req2);
			last = -1;
			for (int i = 0; i < k.nb; i++) {
				if (bb_of[i] != binx)
					continue;
				if (k.req[i]) {
					last = i;
					continue;
				}
				if (!hwloc_bitmap_intersects(req2,
						t->switches[i].desc))
					continue;
				k.req[i] = 1;
				if (!_same(last, i, k.ll)) {
					max_ll--;
					last = i;
				}
			}
		}
		hwloc_bitmap_free(req2);
		if (max_ll < 0) {
			snprintf(why, whylen, "the lowest-weight nodes span "
				 "more lower-level blocks than the job may");
			goto out;
		}
	}
	/* more nodes from base blocks already in use */
	for (int i = 0; i < k.nb && rem > 0; i++) {
		int v;

		if (!k.req[i])
			continue;
		hwloc_bitmap_and(tmp, t->switches[i].desc, cand);
		hwloc_bitmap_andnot(tmp, tmp, sel);
		hwloc_bitmap_foreach_begin(v, tmp) {
			if (rem <= 0)
				break;
			hwloc_bitmap_set(sel, v);
			rem--;
		} hwloc_bitmap_foreach_end();
	}
	if (rem <= 0)
		goto done;

	/* 4. base blocks one at a time */
	if (k.on_ll)
		memset(k.on_ll, 0, llcnt * sizeof(int));
	for (int i = 0; i < k.nb; i++) {
		if (bb_of[i] != binx || k.req[i])
			continue;
		k.on_bb[i] = topoml__and_weight(t->switches[i].desc, cand);
		if (k.on_ll)
			k.on_ll[i / bpll] += k.on_bb[i];
	}
	for (int prev = rem + 1; prev != rem;) {
		int best = -1, v;
		bool best_fit = false, best_same = true;

		prev = rem;
		for (int i = 0; i < k.nb; i++)
			if (bb_of[i] == binx && !k.req[i])
				_choose(&k, rem, i, &best_same, &best_fit,
					&best);
		if (best == -1 || (max_ll <= 0 && !best_same))
			break;
		k.req[best] = 1;
		hwloc_bitmap_and(tmp, t->switches[best].desc, cand);
		hwloc_bitmap_andnot(tmp, tmp, sel);
		hwloc_bitmap_foreach_begin(v, tmp) {
			hwloc_bitmap_set(sel, v);
			if (--rem <= 0)
				break;
		} hwloc_bitmap_foreach_end();
		if (rem <= 0)
			goto done;
		if (!best_same)
			max_ll--;
	}
	snprintf(why, whylen, "block %d: %d nodes short within the "
		 "lower-level block limit", binx, rem);
	goto out;
done:
	{
		int v, i = 0;

		out->nodes = malloc(n * sizeof(int));
		if (!out->nodes) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
		hwloc_bitmap_foreach_begin(v, sel) {
			if (i < n)
				out->nodes[i++] = v;
		} hwloc_bitmap_foreach_end();
		out->n = i;
		rc = 0;
	}
out:
	hwloc_bitmap_free(sel);
	hwloc_bitmap_free(cand);
	hwloc_bitmap_free(tmp);
	free(k.on_bb);
	free(k.on_ll);
	free(k.req);
	free(on_blk);
	free(bb_of);
	free(wv);
	return rc;
}
