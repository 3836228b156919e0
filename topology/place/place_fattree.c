/*
 * topoml's placement on a fat-tree (any Slurm topology.conf tree).
 *
 * Order of preference, as in DESIGN.md section 3:
 *   1. fewest leaf switches (each extra leaf puts ring traffic on uplinks);
 *   2. the lowest common switch (traffic between leaves stays low);
 *   3. the tightest fit: the candidate subtree with the fewest free nodes
 *      (a single leaf other jobs use counted a quarter leaf freer),
 *      and inside it the smallest leaves that still do with that many
 *      leaves, so whole empty leaves and subtrees stay free for large jobs.
 * With job owners known, a multi-leaf job prefers, among equally tight
 * leaves, those that carry no other multi-leaf job (their uplink traffic
 * would compete); avoiding them outright leaves fragments that cost later
 * jobs more leaves.  The isolate hint goes further and uses only leaves
 * with no other job when it can, even at the price of more leaves.
 *
 * Work is per switch and per leaf (free counts from one pass over the
 * words of the free set), never per node pair.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

enum {
	LEAF_DIRTY = 1,		/* has a node that is not free */
	LEAF_SHARED = 2,	/* carries a node of a multi-leaf job */
};

enum {
	FILTER_NONE = 0,
	FILTER_CLEAN,		/* isolate: leaves without other jobs */
	FILTER_PREFER,		/* multi-leaf: leaves of no other multi-leaf
				 * job first among equals */
};

struct cand {
	int sw;			/* switch, or nswitches = all leaves */
	int filter;
	int pass;		/* isolate candidates first */
	int k;			/* leaves used */
	int level;
	int free;		/* free nodes below: the fit */
	int cost;		/* the fit in quarter nodes, shared leaf
				 * penalised (one leaf candidates) */
	uint32_t oldest;	/* one leaf: its oldest job's id (none:
				 * UINT32_MAX); else 0 */
};

struct ft {
	const struct place_in *in;
	const topoml_topo_t *t;
	int ns;
	int *free;		/* per switch; leaves only */
	int *reqc;		/* per switch; leaves only */
	unsigned char *cls;	/* per switch; leaves only */
	uint32_t *oldest;	/* per switch; leaves only: lowest job id */
	int *sub_off;		/* ns + 2: leaves below each switch, CSR */
	int *sub;
	int maxleaf;
	/* scratch for one candidate */
	int *f, *r, *take;
	unsigned char *ok;
};

static int _collect_leaves(struct ft *ft, int **sub, int *len, int *stamp,
			   int *stack)
{
	const topoml_topo_t *t = ft->t;
	int ns = ft->ns;

	ft->sub_off[0] = 0;
	for (int s = 0; s <= ns; s++) {
		int top = 0;

		if (s == ns) {	/* virtual root: every leaf */
			for (int l = 0; l < ns; l++) {
				if (t->switches[l].nchildren)
					continue;
				if (topoml__grow((void **)sub, *len,
						sizeof(int)))
					return -1;
				(*sub)[(*len)++] = l;
			}
			ft->sub_off[s + 1] = *len;
			break;
		}
		stack[top++] = s;
		stamp[s] = s;
		while (top) {
			int x = stack[--top];
			const struct topoml_switch *sw = &t->switches[x];

			if (!sw->nchildren) {
				if (topoml__grow((void **)sub, *len,
						sizeof(int)))
					return -1;
				(*sub)[(*len)++] = x;
				continue;
			}
			/* reversed: leaves come out in switch order */
			for (int c = sw->nchildren - 1; c >= 0; c--) {
				int y = sw->children[c];

				if (stamp[y] == s)
					continue;
				stamp[y] = s;
				stack[top++] = y;
			}
		}
		ft->sub_off[s + 1] = *len;
	}
	return 0;
}


static void _classify(struct ft *ft)
{
	const topoml_topo_t *t = ft->t;
	const uint32_t *owner = ft->in->req->owner;
	struct topoml_job_unit *pairs = NULL;
	int np = 0;

	for (int s = 0; s < ft->ns; s++) {
		const struct topoml_switch *sw = &t->switches[s];
		uint32_t last = 0;

		if (sw->nchildren)
			continue;
		if (ft->free[s] < sw->nnodes)
			ft->cls[s] |= LEAF_DIRTY;
		if (!owner || ft->free[s] == sw->nnodes)
			continue;	/* an all-free leaf has no job */
		for (int k = 0; k < sw->nnodes; k++) {
			uint32_t j = owner[sw->nodes[k]];

			if (!j || j == last)
				continue;
			last = j;
			if (!ft->oldest[s] || j < ft->oldest[s])
				ft->oldest[s] = j;
			if (topoml__grow((void **)&pairs, np, sizeof(*pairs)))
				goto out;
			pairs[np].job = j;
			pairs[np++].unit = s;
		}
	}
	/* a failure leaves the leaves unmarked: only a preference */
	(void)topoml__mark_multi_unit(pairs, np, ft->cls, LEAF_SHARED);
out:
	free(pairs);
}

/* Load the leaves below sw into the scratch arrays; returns their count. */
static int _load(struct ft *ft, int sw, int filter, int *freesum,
		 int *reqsum, int *maxok)
{
	int n = 0, fs = 0, rs = 0, mx = 0;

	for (int x = ft->sub_off[sw]; x < ft->sub_off[sw + 1]; x++) {
		int l = ft->sub[x];
		unsigned char c = ft->cls[l];

		ft->f[n] = ft->free[l];
		ft->r[n] = ft->reqc[l];
		ft->ok[n] = !(filter == FILTER_CLEAN && (c & LEAF_DIRTY));
		/* a multi-leaf job: among equally tight leaves, those with
		 * no other multi-leaf job (their uplinks are free) */
		if (ft->ok[n] && filter == FILTER_PREFER && !(c & LEAF_SHARED))
			ft->ok[n] = 2;
		fs += ft->free[l];
		rs += ft->reqc[l];
		if (ft->ok[n] && ft->free[l] > mx)
			mx = ft->free[l];
		n++;
	}
	*freesum = fs;
	*reqsum = rs;
	*maxok = mx;
	return n;
}

static int _count(struct ft *ft, int sw, int filter, int *freesum)
{
	int rs, mx, n = _load(ft, sw, filter, freesum, &rs, &mx);

	if (rs < ft->in->nreq || *freesum < ft->in->n)
		return -1;
	if (!ft->in->nreq && mx >= ft->in->n)
		return 1;	/* one leaf does: no need to count */
	return topoml__choose(ft->f, ft->r, ft->ok, n,
			      ft->in->n - ft->in->nreq, ft->maxleaf, NULL);
}

static int _build(struct ft *ft, const struct cand *c, hwloc_bitmap_t set)
{
	int fs, rs, mx, n = _load(ft, c->sw, c->filter, &fs, &rs, &mx);

	if (topoml__choose(ft->f, ft->r, ft->ok, n, ft->in->n - ft->in->nreq,
			   ft->maxleaf, ft->take) < 0)
		return -1;
	hwloc_bitmap_copy(set, ft->in->required);
	for (int i = 0; i < n; i++)
		if (ft->take[i] > ft->r[i])
			topoml__take_switch(ft->in,
					    ft->sub[ft->sub_off[c->sw] + i],
					    ft->take[i] - ft->r[i], set);
	return 0;
}

static int _cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->pass != y->pass)
		return x->pass - y->pass;
	if (x->k != y->k)
		return x->k - y->k;
	if (x->level != y->level)
		return x->level - y->level;
	if (x->cost != y->cost)
		return x->cost - y->cost;
	if (x->oldest != y->oldest)
		return x->oldest < y->oldest ? -1 : 1;
	return x->sw - y->sw;
}

static void _add(struct cand **cv, int *nc, struct cand c)
{
	if (topoml__grow((void **)cv, *nc, sizeof(**cv)))
		return;
	(*cv)[(*nc)++] = c;
}

int topoml__place_fat_tree(const struct place_in *in,
			   struct topoml_placement *out, char *why,
			   size_t whylen)
{
	const topoml_topo_t *t = in->t;
	const struct topoml_place_req *req = in->req;
	struct ft ft = { .in = in, .t = t, .ns = t->nswitches };
	struct place_seen seen = { 0 };
	struct cand *cv = NULL, cur;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int *stamp = NULL, *stack = NULL, len = 0, cap = 0, nc = 0;
	int ns = t->nswitches, rc = -1, found = 0, maxn = 0, best_k = -1;
	int k = in->k > 1 ? in->k : 1;
	bool has_root = false;
	int v;

	ft.free = topoml__leaf_free(t, in->avail);
	ft.reqc = calloc(ns + 1, sizeof(int));
	ft.cls = calloc(ns + 1, 1);
	ft.oldest = calloc(ns + 1, sizeof(uint32_t));
	ft.sub_off = calloc(ns + 2, sizeof(int));
	stamp = malloc((ns + 1) * sizeof(int));
	stack = malloc((ns + 1) * sizeof(int) * 2 + 16);
	if (!set || !ft.free || !ft.reqc || !ft.cls || !ft.oldest ||
	    !ft.sub_off || !stamp || !stack)
		goto oom;
	for (int s = 0; s < ns; s++) {
		stamp[s] = -1;
		if (t->switches[s].nnodes > ft.maxleaf)
			ft.maxleaf = t->switches[s].nnodes;
		if (t->switches[s].nchildren)
			ft.free[s] = 0;
	}
	hwloc_bitmap_foreach_begin(v, in->required)
		if (t->nodes[v].leaf >= 0)
			ft.reqc[t->nodes[v].leaf]++;
	hwloc_bitmap_foreach_end();
	/* the stack holds at most every switch once per pushing parent */
	free(stack);
	cap = 0;
	for (int s = 0; s < ns; s++)
		cap += t->switches[s].nchildren;
	stack = malloc((cap + ns + 1) * sizeof(int));
	if (!stack || _collect_leaves(&ft, &ft.sub, &len, stamp, stack))
		goto oom;
	for (int s = 0; s <= ns; s++) {
		int n = ft.sub_off[s + 1] - ft.sub_off[s];

		if (n > maxn)
			maxn = n;
		if (s < ns && n == ft.sub_off[ns + 1] - ft.sub_off[ns])
			has_root = true;
	}
	ft.f = malloc((maxn + 1) * sizeof(int));
	ft.r = malloc((maxn + 1) * sizeof(int));
	ft.take = malloc((maxn + 1) * sizeof(int));
	ft.ok = malloc(maxn + 1);
	if (!ft.f || !ft.r || !ft.take || !ft.ok)
		goto oom;
	_classify(&ft);

	/* Candidates: every switch (and all leaves together) that can hold
	 * the job with its required nodes. */
	for (int s = 0; s <= ns; s++) {
		struct cand c = { .sw = s };
		int fs = 0, k;

		/* quick reject on the free count alone */
		for (int x = ft.sub_off[s]; x < ft.sub_off[s + 1]; x++)
			fs += ft.free[ft.sub[x]];
		if (fs < in->n)
			continue;
		/* the virtual root only when no switch reaches every leaf */
		if (s == ns && has_root)
			continue;

		c.level = s < ns ? t->switches[s].level : t->nlevels;
		k = _count(&ft, s, FILTER_NONE, &fs);
		if (k < 0)
			continue;
		c.free = fs;
		/* A leaf other jobs use counts a quarter leaf more free
		 * nodes: pure best fit put a small job into a leaf that
		 * other jobs barely use rather than into an empty one and
		 * shared more leaves than Slurm's tree; empty leaves first
		 * outright scatters small jobs.  A used leaf still wins once
		 * it is a quarter full (as the block placer does). */
		c.cost = 4 * fs;
		if (s < ns && !t->switches[s].nchildren &&
		    (ft.cls[s] & LEAF_DIRTY))
			c.cost += t->switches[s].nnodes;
		/* Among equally tight leaves, the one whose oldest job is
		 * oldest (lowest id: job ids grow with submission).  Run
		 * times are heavy tailed: the longer a job has run, the
		 * longer it is likely to go on, so that leaf would stay
		 * busy anyway, while a leaf of younger jobs is likely to
		 * drain first and free whole for a multi-node job.  Lowest
		 * switch first instead left, on a machine always full, the
		 * free nodes of a 2-leaf fabric split one a leaf more often
		 * than linear's order did. */
		if (s < ns && !t->switches[s].nchildren)
			c.oldest = ft.oldest[s] ? ft.oldest[s] : UINT32_MAX;
		if (best_k < 0 || k < best_k)
			best_k = k;
		if (req->max_leaves > 0 && k > req->max_leaves)
			continue;
		if (req->hint == TOPOML_HINT_ISOLATE) {
			int kc = _count(&ft, s, FILTER_CLEAN, &fs);

			if (kc >= 0 && !(req->max_leaves > 0 &&
					 kc > req->max_leaves)) {
				struct cand ci = c;

				ci.filter = FILTER_CLEAN;
				ci.k = kc;
				_add(&cv, &nc, ci);
			}
		}
		c.pass = req->hint == TOPOML_HINT_ISOLATE ? 1 : 0;
		c.k = k;
		/* Avoiding leaves of other multi-leaf jobs outright costs
		 * fragments (more leaves for later jobs, measured on real
		 * traces): only among equally tight choices. */
		if (k > 1 && req->owner)
			c.filter = FILTER_PREFER;
		_add(&cv, &nc, c);
	}
	if (!nc) {
		if (best_k > 0)
			snprintf(why, whylen,
				 "%d nodes need %d leaf switches, --switches allows %d",
				 in->n, best_k, req->max_leaves);
		else
			snprintf(why, whylen,
				 "no switch reaches %d free nodes with the required ones",
				 in->n);
		goto out;
	}
	/* Best first, by repeated selection: few placements are wanted,
	 * candidates number thousands (every leaf for a small job). */
	for (int left = nc; left > 0 && found < k; left--) {
		int b = -1;

		for (int i = 0; i < nc; i++)
			if (cv[i].sw >= 0 &&
			    (b < 0 || _cand_cmp(&cv[i], &cv[b]) < 0))
				b = i;
		cur = cv[b];
		cv[b].sw = -1;
		if (_build(&ft, &cur, set))
			continue;
		if (k > 1 && !topoml__seen_add(&seen, set))
			continue;
		if (topoml__placement_from_set(t, set, &out[found]))
			goto oom;
		found++;
	}
	if (found) {
		rc = found;
		goto out;
	}
	snprintf(why, whylen, "no candidate placement left (0 distinct)");
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
	rc = -1;
out:
	topoml__seen_clear(&seen);
	hwloc_bitmap_free(set);
	free(cv);
	free(stamp);
	free(stack);
	free(ft.free);
	free(ft.reqc);
	free(ft.cls);
	free(ft.oldest);
	free(ft.sub_off);
	free(ft.sub);
	free(ft.f);
	free(ft.r);
	free(ft.take);
	free(ft.ok);
	return rc;
}
