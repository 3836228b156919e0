/*
 * Placement on a block topology (NVLink domains, Slurm 24.05+
 * topology/block): topoml's engine.
 *
 * topoml (topoml__place_block): the candidates include Slurm's, so a job
 * runs wherever stock block placement would let it: the aligned groups of
 * base blocks of the job's BlockSizes level, at most max_llblock groups of
 * the level below (both as in eval_nodes_block()), every group counted
 * (Slurm skips the last ones when the row is cut unevenly: step 2 in
 * sim/slurm_block.c).
 * Inside each, the fewest base blocks that hold the job, picked tightly
 * (the smallest blocks that still let the largest finish: whole empty
 * blocks stay whole for later jobs), in the smallest aligned run of
 * blocks that allows that many (below the job's level when BlockSizes
 * skips levels), in as few of its pairs, fours, ... as those blocks
 * allow, the job concentrated on them (fullest first, as Slurm).
 * Then the group with the fewest blocks, in the fullest enclosing groups
 * (the fewest free nodes in its aligned pair, then in its four, ...: the
 * emptier ones stay whole for the next larger job), the fewest free nodes
 * (Slurm's own tie-break, against fragmentation), the last of equals.
 * Multiples of the block size thus get whole blocks whenever whole
 * blocks are free.
 * A job no group of its level holds goes where Slurm would make it wait:
 * into the smallest larger aligned group that holds it on as few blocks
 * as an idle row would (its NVLink domains as few, only the ring steps
 * between them cross a higher level); only a job that needs more blocks
 * than that waits, or one the row is too crowded for (_crowded()).  On
 * ANL Theta's trace (1000 jobs on 72 NVL72 racks) topoml waits 329 s on
 * average, Slurm's rule 999 s (doc/results.md).
 *
 * Slurm 26.05's eval_nodes_block() (the slurm-block baseline) is in
 * libtopoml_sim: sim/slurm_block.c.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

/* _get_block_level(): the job's level, or -1 for the whole row. */
int topoml__block_level(const topoml_topo_t *t, int n, int *ll)
{
	int bpb = (n + t->block_base - 1) / t->block_base;
	int lvl = 0;

	while (lvl < 31 && (1 << lvl) < bpb)	/* ceil(log2(bpb)) */
		lvl++;

	if (ll) {
		*ll = 0;
		for (int k = lvl - 1; k >= 0 && lvl > 0; k--)
			if (k < 16 && (t->block_levels & (1u << k))) {
				*ll = k;
				break;
			}
	}
	for (int k = lvl; k < 16; k++)
		if (t->block_levels & (1u << k))
			return k;
	return -1;
}

/* ---- topoml's placement on blocks ----------------------------------- */

#define BLK_UP 8		/* enclosing levels compared */

struct bcand {
	int blocks;		/* base blocks used */
	int free;		/* free nodes in the group: the fit */
	/* free nodes in the aligned groups of 2, 4, ... times the
	 * group's size around it */
	int up[BLK_UP];
	int first;		/* first base block of the group */
	int cnt;		/* base blocks in the group */
	int *take;		/* nodes per base block of the group */
};

/*
 * Fewest blocks; then the fullest enclosing groups, the lowest level
 * first (a pair with 7 free nodes before one with 8, whatever the blocks
 * inside hold): a small job then fills the pairs and fours that larger
 * jobs could no longer use anyway, and a job of 19 to 36 nodes finds an
 * aligned pair more often, so fewer go to a larger group whose ring
 * steps cross a higher level (Theta's trace on nvl72x18.conf: ring
 * cost over its bound 1.0247 -> 1.0201, doc/results.md).  Then the
 * tightest group, then the last of equals, as Slurm ("<="), so that small
 * and large jobs pack from the same end of the row.  (Tried and no
 * better there: the group's own fit before the enclosing ones, the fewest
 * enclosing groups used before their fullness, a block other jobs use
 * counted a quarter block fuller.)
 */
static int _bcand_cmp(const void *a, const void *b)
{
	const struct bcand *x = a, *y = b;

	if (x->blocks != y->blocks)
		return x->blocks - y->blocks;
	for (int l = 0; l < BLK_UP; l++)
		if (x->up[l] != y->up[l])
			return x->up[l] - y->up[l];
	if (x->free != y->free)
		return x->free - y->free;
	return y->first - x->first;
}

/*
 * The fewest base blocks of group [first, first + cnt) holding n, within
 * max_ll llblocks of bpll blocks: the tightest llblocks first, then the
 * tightest blocks inside them.  Returns the blocks used, or -1.
 */
static int _group_pick(const int *f, int cnt, int n, int bpll, int max_ll,
		       bool use_ll, int *take)
{
	int nll = (cnt + bpll - 1) / bpll, maxv = 1, k;
	int *llf = NULL, *lltake = NULL;
	unsigned char *ok = NULL;

	for (int i = 0; i < cnt; i++)
		maxv = f[i] > maxv ? f[i] : maxv;
	if (!use_ll)
		return topoml__choose(f, NULL, NULL, cnt, n, maxv, take);
	llf = calloc(nll, sizeof(int));
	lltake = calloc(nll, sizeof(int));
	ok = calloc(cnt, 1);
	k = -1;
	if (!llf || !lltake || !ok)
		goto out;
	for (int i = 0; i < cnt; i++)
		llf[i / bpll] += f[i];
	maxv = 1;
	for (int j = 0; j < nll; j++)
		maxv = llf[j] > maxv ? llf[j] : maxv;
	k = topoml__choose(llf, NULL, NULL, nll, n, maxv, lltake);
	if (k < 0 || k > max_ll) {
		k = -1;
		goto out;
	}
	for (int i = 0; i < cnt; i++)
		ok[i] = lltake[i / bpll] > 0;
	maxv = 1;
	for (int i = 0; i < cnt; i++)
		maxv = f[i] > maxv ? f[i] : maxv;
	k = topoml__choose(f, NULL, ok, cnt, n, maxv, take);
out:
	free(llf);
	free(lltake);
	free(ok);
	return k;
}

/*
 * Enclosing groups a pick of a run of m blocks uses, summed over the
 * BlockSizes levels above the base block (levels: t->block_levels): each
 * level's groups are entered once each way by the ring when more than
 * one (cost/cost.c).  The run is aligned, so are its groups.
 */
static int _ups(const int *take, int m, unsigned levels)
{
	int x = 0;

	for (int l = 1; l < 16 && (1 << l) < 2 * m; l++) {
		int c = 0, last = -1;

		if (!(levels & (1u << l)))
			continue;
		for (int i = 0; i < m; i++)
			if (take[i] && i >> l != last) {
				last = i >> l;
				c++;
			}
		x += c > 1 ? c : 0;
	}
	return x;
}

/*
 * n nodes on k blocks of a run of m: from the highest level down, the
 * fewest groups of that level that hold n (the tightest), kept while k
 * blocks inside them still hold n; then the tightest k blocks there.
 * Kept only when that enters fewer groups than the tightest k blocks of
 * the whole run (take's pick when called): a job of 5 blocks in a group
 * of 8 on two whole pairs and one block (ring steps across 3 pairs), not
 * on 5 blocks of 4 pairs.  Only then: packing jobs into fewer pairs
 * where it saves nothing leaves pairs too broken for the next job (on
 * Theta's trace the mean wait rose by a tenth).
 */
static void _level_pick(const int *f, int m, int n, int k, int maxv,
			unsigned levels, int *take)
{
	unsigned char *ok = malloc(m), *in = malloc(m);
	int *uf = malloc(m * sizeof(int)), *ut = malloc(m * sizeof(int));
	int *t2 = malloc(m * sizeof(int));

	if (!ok || !in || !uf || !ut || !t2)
		goto out;
	memset(ok, 1, m);
	for (int l = 15; l >= 1; l--) {
		int u = 1 << l, nu = (m + u - 1) / u, umax = 1;

		if (!(levels & (1u << l)) || u >= m)
			continue;
		for (int j = 0; j < nu; j++) {
			uf[j] = 0;
			for (int i = j * u; i < m && i < (j + 1) * u; i++)
				uf[j] += ok[i] ? f[i] : 0;
			umax = uf[j] > umax ? uf[j] : umax;
		}
		if (topoml__choose(uf, NULL, NULL, nu, n, umax, ut) < 0)
			break;
		for (int i = 0; i < m; i++)
			in[i] = ok[i] && ut[i / u] > 0;
		if (topoml__choose(f, NULL, in, m, n, maxv, NULL) == k)
			memcpy(ok, in, m);
	}
	if (topoml__choose(f, NULL, ok, m, n, maxv, t2) == k &&
	    _ups(t2, m, levels) < _ups(take, m, levels))
		memcpy(take, t2, m * sizeof(int));
out:
	free(ok);
	free(in);
	free(uf);
	free(ut);
	free(t2);
}

/*
 * The lowest common level inside the group: the smallest aligned run of
 * base blocks (2, 4, ... of them, the group itself last) that still
 * holds the job on k blocks, the one with the fewest free nodes (the last
 * of equals); take is redone there, in as few of its pairs, fours, ...
 * as _level_pick() finds.  Ring steps between the job's blocks then stay
 * in the smallest aggregated block, as the fat-tree engine keeps them
 * under the lowest common switch.
 */
static void _narrow(const int *f, int cnt, int n, int k, int bpll,
		    int max_ll, unsigned levels, int *take)
{
	int maxv = 1, *t2 = malloc(cnt * sizeof(int));

	if (!t2)
		return;

	for (int i = 0; i < cnt; i++)
		maxv = f[i] > maxv ? f[i] : maxv;
	for (int size = 1; size < 2 * cnt; size *= 2) {
		int best = -1, bfree = 0, m;

		if (size < k)
			continue;
		for (int r = 0; r < cnt; r += size) {
			int sum = 0;

			m = cnt - r < size ? cnt - r : size;
			for (int i = r; i < r + m; i++)
				sum += f[i];
			if (sum < n || (best >= 0 && sum > bfree) ||
			    topoml__choose(f + r, NULL, NULL, m, n, maxv,
					   NULL) != k)
				continue;
			best = r;
			bfree = sum;
		}
		if (best < 0)
			continue;
		m = cnt - best < size ? cnt - best : size;
		memset(t2, 0, cnt * sizeof(int));
		topoml__choose(f + best, NULL, NULL, m, n, maxv, t2 + best);
		_level_pick(f + best, m, n, k, maxv, levels, t2 + best);
		/* still within Slurm's llblock limit */
		for (int i = 0, last = -1, nll = 0; i < cnt; i++) {
			if (!t2[i] || i / bpll == last)
				continue;
			last = i / bpll;
			if (++nll > max_ll)
				goto out;
		}
		memcpy(take, t2, cnt * sizeof(int));
		break;
	}
out:
	free(t2);
}

/*
 * Concentrate the job on the blocks chosen: the fullest (most free) taken
 * whole first, the rest on the last one, as Slurm fills them.  Fewer rank
 * pairs then cross a block (an 18 + 2 split has 36 crossing pairs, 10 +
 * 10 has 100), and what stays free in the chosen blocks stays in one.
 */
static void _concentrate(const int *f, int cnt, int n, int *take)
{
	int left = n, nsel = 0, *sel = malloc(cnt * sizeof(int));

	if (!sel)
		return;
	for (int i = 0; i < cnt; i++)
		if (take[i] > 0)
			sel[nsel++] = i;
	/* by free nodes, most first; the earlier of equals first */
	for (int a = 1; a < nsel; a++)
		for (int b = a; b > 0 && f[sel[b - 1]] < f[sel[b]]; b--) {
			int x = sel[b];

			sel[b] = sel[b - 1];
			sel[b - 1] = x;
		}
	for (int j = 0; j < nsel; j++) {
		take[sel[j]] = f[sel[j]] < left ? f[sel[j]] : left;
		left -= take[sel[j]];
	}
	free(sel);
}

/* One pass over the row: aligned groups of bpb base blocks, the job on
 * at most max_ll llblocks of bpll blocks when use_ll, on at most max_k
 * blocks when max_k > 0. */
struct bpass {
	int bpb, bpll, max_ll, max_k;
	bool use_ll;
};

/*
 * The candidates of pass g into c (room for every group of it): how
 * many, or -1 when out of memory.
 */
static int _candidates(const struct place_in *in, const int *f,
		       const struct bpass *g, struct bcand *c)
{
	const topoml_topo_t *t = in->t;
	int nb = t->nblocks, n = in->n, ncand = 0;

	for (int first = 0; first < nb; first += g->bpb) {
		int cnt = nb - first < g->bpb ? nb - first : g->bpb;
		int sum = 0, k;

		for (int i = first; i < first + cnt; i++)
			sum += f[i];
		if (sum < n)
			continue;
		c[ncand].take = calloc(cnt, sizeof(int));
		if (!c[ncand].take)
			return -1;
		k = _group_pick(f + first, cnt, n, g->bpll, g->max_ll,
				g->use_ll, c[ncand].take);
		/* --switches=N: at most N blocks */
		if (k < 0 || (in->req->max_leaves > 0 &&
			      k > in->req->max_leaves) ||
		    (g->max_k > 0 && k > g->max_k)) {
			free(c[ncand].take);
			c[ncand].take = NULL;
			continue;
		}
		_narrow(f + first, cnt, n, k, g->bpll,
			g->use_ll ? g->max_ll : cnt, t->block_levels,
			c[ncand].take);
		_concentrate(f + first, cnt, n, c[ncand].take);
		for (int l = 0, m = 2 * g->bpb; l < BLK_UP; l++, m *= 2) {
			int st = first / m * m, up = 0;

			/* beyond the row: equal for every candidate */
			for (int i = st; m < 2 * nb && i < st + m && i < nb;
			     i++)
				up += f[i];
			c[ncand].up[l] = up;
		}
		c[ncand].blocks = k;
		c[ncand].free = sum;
		c[ncand].cnt = cnt;
		c[ncand++].first = first;
	}
	return ncand;
}

/* The fewest base blocks of the row that hold n nodes, every node free:
 * the span's lower bound (cost/cost.c). */
static int _blocks_bound(const topoml_topo_t *t, int n)
{
	int nb = t->nblocks, *cap = malloc(nb * sizeof(int)), k = 0;

	if (!cap)
		return 0;
	for (int i = 0; i < nb; i++)
		cap[i] = t->switches[i].nnodes;
	for (int i = 1; i < nb; i++)	/* most first (nb is small) */
		for (int j = i; j > 0 && cap[j - 1] < cap[j]; j--) {
			int x = cap[j];

			cap[j] = cap[j - 1];
			cap[j - 1] = x;
		}
	for (int left = n; k < nb && left > 0; k++)
		left -= cap[k];
	free(cap);
	return k;
}

/*
 * A crowded row: a job no aligned group of its level holds now would
 * leave fewer free nodes than half its size if it went into a larger
 * group, and an aligned group of its level would hold it once jobs
 * running on it end.  It then waits for that group (or for the room),
 * as under Slurm's rule: on a machine that is always full, larger
 * groups break the aligned groups the next jobs need, and the small
 * jobs then wait behind them (Mira's trace on nvl72x18.conf: 46293 s of
 * mean wait without the hold, 17047 s with it; Theta's 106 s and
 * 114.5 s).  Only the nodes of the job's universe (its partition)
 * count, free or held by running jobs (owner; without it, every node
 * not free), so that a job whose partition has no such group never
 * waits for one.
 */
static bool _crowded(const struct place_in *in, const int *f, int bpb)
{
	const topoml_topo_t *t = in->t;
	const uint32_t *owner = in->req->owner;
	hwloc_const_bitmap_t uni = in->req->universe;
	int nb = t->nblocks, n = in->n, tot = 0;

	for (int i = 0; i < nb; i++)
		tot += f[i];
	if (2 * (tot - n) >= n)
		return false;
	for (int first = 0; first < nb; first += bpb) {
		int could = 0;

		for (int i = first; i < nb && i < first + bpb; i++) {
			int v;

			hwloc_bitmap_foreach_begin(v, t->switches[i].desc)
				if (v < t->nnodes &&
				    (!uni || hwloc_bitmap_isset(uni, v)) &&
				    (hwloc_bitmap_isset(in->avail, v) ||
				     !owner || owner[v]))
					could++;
			hwloc_bitmap_foreach_end();
		}
		if (could >= n)
			return true;
	}
	return false;
}

int topoml__place_block(const struct place_in *in,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	const topoml_topo_t *t = in->t;
	int nb = t->nblocks, n = in->n, ll, lvl, nblk = 0;
	int *f = NULL, ncand = 0, rc = -1, found = 0;
	int k = in->k > 1 ? in->k : 1;
	struct bcand *c = NULL;
	hwloc_bitmap_t set = NULL;
	struct bpass g = { 0 };
	int bpb;		/* the job's level, as Slurm's */
	bool use_ll, crowded;

	/* Required nodes and isolation (whole blocks without other jobs)
	 * are the fat-tree engine's job. */
	if (in->nreq || nb <= 0 || t->block_base <= 0 ||
	    in->req->hint == TOPOML_HINT_ISOLATE)
		return topoml__place_fat_tree(in, out, why, whylen);
	lvl = topoml__block_level(t, n, &ll);
	g.bpb = lvl < 0 ? nb : 1 << lvl;
	nblk = (nb + g.bpb - 1) / g.bpb;
	g.bpll = 1 << ll;
	g.max_ll = (n + g.bpll * t->block_base - 1) /
		   (g.bpll * t->block_base);
	g.use_ll = g.bpb != g.bpll * g.max_ll;
	f = malloc(nb * sizeof(int));
	c = calloc(nblk, sizeof(*c));
	set = hwloc_bitmap_alloc();
	if (!f || !c || !set) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	for (int i = 0; i < nb; i++)
		f[i] = topoml__and_weight(t->switches[i].desc, in->avail);
	bpb = g.bpb;
	use_ll = g.use_ll;
	ncand = _candidates(in, f, &g, c);
	/*
	 * No aligned group of the job's level holds it: the smallest larger
	 * aligned group that holds it on the fewest blocks the row could
	 * (its NVLink domains as few as on an idle machine; only ring steps
	 * between blocks go further), rather than wait as Slurm does.
	 */
	crowded = !ncand && !in->req->block_aligned && !in->req->admitted &&
		  (g.bpb < nb || g.use_ll) && _crowded(in, f, g.bpb);
	while (!ncand && !in->req->block_aligned && !crowded &&
	       (g.bpb < nb || g.use_ll)) {
		g.bpb = 2 * g.bpb < nb ? 2 * g.bpb : nb;
		g.use_ll = false;
		if (!g.max_k && !(g.max_k = _blocks_bound(t, n)))
			break;
		ncand = _candidates(in, f, &g, c);
	}
	/* a share of a job already admitted: on more blocks than the
	 * fewest that hold it rather than on none (a whole job waits) */
	if (!ncand && in->req->admitted && g.max_k > 0) {
		g.max_k = 0;
		ncand = _candidates(in, f, &g, c);
	}
	if (ncand < 0) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	qsort(c, ncand, sizeof(*c), _bcand_cmp);
	/* Groups are disjoint: each candidate is distinct. */
	if (!ncand) {
		if (crowded)
			snprintf(why, whylen, "no aligned group of %d base "
				 "blocks holds %d free nodes%s, and a larger "
				 "one would leave fewer than %d free: the job "
				 "waits for one", bpb, n, use_ll ?
				 " in few enough lower-level groups" : "",
				 (n + 1) / 2);
		else
			snprintf(why, whylen, "no aligned group of %d base "
				 "blocks holds %d free nodes%s, nor any on %d "
				 "blocks (the fewest that hold them): the job "
				 "waits", bpb, n, use_ll ? " in few enough "
				 "lower-level groups" : "", g.max_k);
		goto out;
	}
	for (found = 0; found < ncand && found < k; found++) {
		const struct bcand *b = &c[found];

		hwloc_bitmap_zero(set);
		for (int i = 0; i < b->cnt; i++) {
			int left = b->take[i], v;

			if (left <= 0)
				continue;
			hwloc_bitmap_foreach_begin(v,
					t->switches[b->first + i].desc) {
				if (left <= 0)
					break;
				if (!hwloc_bitmap_isset(in->avail, v))
					continue;
				hwloc_bitmap_set(set, v);
				left--;
			} hwloc_bitmap_foreach_end();
		}
		if (topoml__placement_from_set(t, set, &out[found])) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
	}
	rc = found;
out:
	for (int i = 0; c && i < nblk; i++)	/* unused ones are NULL */
		free(c[i].take);
	free(c);
	free(f);
	hwloc_bitmap_free(set);
	return rc;
}
