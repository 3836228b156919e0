/*
 * Slurm 22.05's _eval_nodes() (src/plugins/select/cons_tres/job_test.c)
 * for a job of N whole nodes: best fit over runs of consecutive free
 * nodes, in node index order (policy "linear") or along
 * topology/3d_torus's Hilbert curve ("slurm-hilbert").
 *
 * In the core library, not with the other baselines (sim/place_slurm.c):
 * topoml's own torus engine (place_torus.c) takes a Hilbert run when no
 * box of the job's size exists or when its ring is shorter.  Same code
 * as Slurm's (loops, tie-breaks), CPU counts reduced to node counts.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

struct consec {
	int nodes;
	int start, end;		/* positions in the order */
	int req;		/* first required position, -1 */
	uint64_t weight;
	bool has_weight;
};

int topoml__place_slurm_linear(const struct place_in *in, bool hilbert,
			       struct topoml_placement *out, char *why,
			       size_t whylen)
{
	const topoml_topo_t *t = in->t;
	const uint64_t *wt = in->req->weight;
	int nn = t->nnodes, *ident = NULL, nc = 0, rc = -1;
	int rem = in->n, max_nodes = in->n;
	const int *order;
	struct consec *c = NULL;
	char *inmap = NULL;

	if (in->req->attempt > 0) {
		snprintf(why, whylen, "%s has no alternative placements",
			 hilbert ? "slurm-hilbert" : "linear");
		return -1;
	}
	if (hilbert) {
		order = topoml__torus_curve(t, NULL);
		if (!order) {
			snprintf(why, whylen,
				 "slurm-hilbert needs a 3D torus");
			return -1;
		}
	} else {
		order = ident = malloc((nn ? nn : 1) * sizeof(int));
		for (int i = 0; ident && i < nn; i++)
			ident[i] = i;
	}
	c = calloc(nn + 1, sizeof(*c));
	inmap = calloc(nn, 1);
	if (!order || !c || !inmap) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	/* Required nodes first. */
	for (int p = 0; p < nn && max_nodes > 0; p++) {
		if (!hwloc_bitmap_isset(in->required, order[p]))
			continue;
		inmap[p] = 1;
		rem--;
		max_nodes--;
	}
	if (in->nreq && rem <= 0)
		goto done;
	/* Runs of consecutive usable nodes of equal weight. */
	c[0].req = -1;
	for (int p = 0; p < nn; p++) {
		int v = order[p];
		bool usable = hwloc_bitmap_isset(in->avail, v);
		bool required = hwloc_bitmap_isset(in->required, v);
		uint64_t w = wt ? wt[v] : 0;

		if (usable && c[nc].has_weight && w != c[nc].weight) {
			if (c[nc].nodes == 0) {
				c[nc].req = -1;
			} else {
				c[nc].end = p - 1;
				c[++nc].req = -1;
			}
		}
		if (usable) {
			if (c[nc].nodes == 0)
				c[nc].start = p;
			if (required) {
				if (c[nc].req == -1)
					c[nc].req = p;
				continue;
			}
			c[nc].nodes++;
			c[nc].weight = w;
			c[nc].has_weight = true;
		} else if (c[nc].nodes == 0) {
			c[nc].req = -1;
			c[nc].has_weight = false;
		} else {
			c[nc].end = p - 1;
			c[++nc].req = -1;
			c[nc].has_weight = false;
		}
	}
	if (c[nc].nodes != 0)
		c[nc++].end = nn - 1;

	while (nc && max_nodes > 0) {
		int bn = 0, bi = 0, breq = -1;
		bool bsuff = false;
		uint64_t bw = 0;

		for (int i = 0; i < nc; i++) {
			bool suff, nb;

			if (c[i].nodes == 0)
				continue;
			suff = c[i].nodes >= rem;
			nb = bn == 0 || (breq == -1 && c[i].req != -1) ||
			     c[i].weight < bw;
			if (!nb && c[i].weight == bw &&
			    ((suff && !bsuff) || (suff && c[i].nodes < bn) ||
			     (!suff && c[i].nodes > bn)))
				nb = true;
			if (nb) {
				bn = c[i].nodes;
				bi = i;
				breq = c[i].req;
				bsuff = suff;
				bw = c[i].weight;
			}
		}
		if (bn == 0)
			break;
		if (breq != -1) {
			for (int p = breq; p <= c[bi].end; p++) {
				if (max_nodes == 0 || rem <= 0)
					break;
				if (inmap[p] ||
				    !hwloc_bitmap_isset(in->avail, order[p]))
					continue;
				inmap[p] = 1;
				rem--;
				max_nodes--;
			}
			for (int p = breq - 1; p >= c[bi].start; p--) {
				if (max_nodes == 0 || rem <= 0)
					break;
				if (inmap[p] ||
				    !hwloc_bitmap_isset(in->avail, order[p]))
					continue;
				inmap[p] = 1;
				rem--;
				max_nodes--;
			}
		} else {
			/* rem <= 1: the single best-fitting node, which
			 * for equal nodes is the first one */
			for (int p = c[bi].start; p <= c[bi].end; p++) {
				if (max_nodes == 0 || rem <= 0)
					break;
				if (inmap[p] ||
				    !hwloc_bitmap_isset(in->avail, order[p]))
					continue;
				inmap[p] = 1;
				rem--;
				max_nodes--;
			}
		}
		if (rem <= 0)
			break;
		c[bi].nodes = 0;
	}
done:
	if (rem > 0) {
		snprintf(why, whylen, "%s: no allocation found",
			 hilbert ? "slurm-hilbert" : "linear");
		goto out;
	}
	out->nodes = malloc(in->n * sizeof(int));
	if (!out->nodes) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	out->n = 0;
	for (int p = 0; p < nn; p++)
		if (inmap[p])
			out->nodes[out->n++] = order[p];
	rc = 0;
out:
	free(ident);
	free(c);
	free(inmap);
	return rc;
}

/*
 * Whether the curve's positions [st, st + len) are all nodes, i is the
 * index of one of them, and free: positions are distinct and ascending, so
 * the window is whole when its ends are where they would be.
 */
static bool _window_free(const uint64_t *pos, const int *pre, int nn, int i,
			 uint64_t st, uint64_t len)
{
	long lo = i - (long)(pos[i] - st), hi = lo + (long)len;

	return lo >= 0 && hi <= nn && pos[lo] == st &&
	       pos[hi - 1] == st + len - 1 &&
	       (uint64_t)(pre[hi] - pre[lo]) == len;
}

/*
 * Buddy best fit along the curve: a power-of-two size n takes a window of
 * the curve of n positions from a multiple of n (a box of the curve's
 * cube) whose cells are all nodes and all free, the one inside the
 * smallest such all-free window of 2n, 4n, ... positions, so that large
 * free windows stay whole.  Positions are the curve's own, not the rank
 * among the nodes: on a torus whose sides are no powers of two a window
 * is still a box, never a run across the curve's jumps.  Without one, or
 * for other sizes, Slurm's best-fit run.  One discipline for every job:
 * exact boxes placed anywhere break the curve's free runs, and runs
 * break the boxes (doc/sim-results.md, issue 16).
 */
int topoml__place_curve(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	const topoml_topo_t *t = in->t;
	int nn = t->nnodes, n = in->n, best = -1;
	uint64_t bestblk = 0;
	const uint64_t *pos;
	const int *node = topoml__torus_curve(t, &pos);
	int *pre = NULL;

	if (n < 1 || (n & (n - 1)) || n > nn || !node)
		goto run;
	pre = malloc((nn + 1) * sizeof(int));
	if (!pre)
		goto run;
	/* pre[i]: free nodes among the first i along the curve */
	pre[0] = 0;
	for (int i = 0; i < nn; i++)
		pre[i + 1] = pre[i] + hwloc_bitmap_isset(in->avail, node[i]);
	for (int i = 0; i + n <= nn;) {
		uint64_t st = pos[i] / n * n, blk = n;

		/* the window of i's position: every cell a node, all free */
		if (pos[i] != st || !_window_free(pos, pre, nn, i, st, n)) {
			/* on to the next window's first position */
			while (i < nn && pos[i] < st + n)
				i++;
			continue;
		}
		/* the largest all-free window around it */
		while (blk * 2 <= (uint64_t)nn &&
		       _window_free(pos, pre, nn, i, pos[i] / (blk * 2) *
				    (blk * 2), blk * 2))
			blk *= 2;
		if (best < 0 || blk < bestblk) {
			best = i;
			bestblk = blk;
		}
		i += n;
	}
	if (best >= 0) {
		out->nodes = malloc(n * sizeof(int));
		if (!out->nodes)
			goto run;
		out->n = n;
		memcpy(out->nodes, node + best, n * sizeof(int));
		free(pre);
		return 0;
	}
run:
	free(pre);
	return topoml__place_slurm_linear(in, true, out, why, whylen);
}
