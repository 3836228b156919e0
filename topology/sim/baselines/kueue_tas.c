/*
 * Kueue's Topology Aware Scheduling (TAS) as baselines of libtopoml_sim:
 * kueue-bestfit, kueue-leastfree, kueue-balanced.
 *
 * Follows kubernetes-sigs/kueue at commit ff69552e79ad (main,
 * v0.20.0-devel-377, 2026-08-22), read and reimplemented, not copied:
 *   pkg/cache/scheduler/tas_flavor_snapshot.go: findTopologyAssignment,
 *     fillInCountsHelper, findLevelWithFitDomains, findBestFitDomainBy,
 *     updateCountsToMinimumGeneric, sortedDomains, buildAssignment;
 *   pkg/cache/scheduler/tas_balanced_placement.go: the balanced placement
 *     (findBestDomainsForBalancedPlacement, evaluateGreedyAssignment,
 *     balanceThresholdValue, pruneDomainsBelowThreshold,
 *     selectOptimalDomainSetToFit, placeSlicesOnDomainsBalanced);
 *   keps/2724-topology-aware-scheduling/README.md, "Selecting the
 *     algorithm" (since v0.15): preferred and required requests get
 *     BestFit, unconstrained ones LeastFreeCapacity (TASProfileMixed, the
 *     default), preferred ones BalancedPlacement under the alpha gate
 *     TASBalancedPlacement.  TASProfileLeastFreeCapacity (LeastFree for
 *     every request) was removed in v0.17, MostFreeCapacity before.
 *
 * The job is one PodSet of one-pod slices (no slice topology, no leader,
 * no node affinity), one pod a node for whole-node jobs.  Then Kueue's
 * slice and pod counts of a domain are the same number (cnt below): its
 * free nodes.  A job that shares nodes (req->units > 0, the free units of
 * each node given) is `units' pods of one unit each, a node holding as
 * many pods as it has free units: Kueue's count of pods per domain by
 * capacity.
 *
 * The labels, as the Kueue docs tell users to set them (a tree of node
 * labels, widest first, hostname last; "rack" and "block" in their
 * examples):
 *   fat-tree   one level per switch tier, leaf switch = rack, the tier
 *              above = block, higher tiers above that (a tier with one
 *              value, the root, is not a label; a value is the partition
 *              of leaves a tier joins, named by its switch);
 *   dragonfly  group = block (one label level, as for any fabric whose
 *              docs give no hierarchy), router = rack;
 *   torus      refused: Kueue's model is a tree of labels and its docs
 *              give no way to label a torus's neighbourhoods.
 * Kueue sorts domains by their label values as strings (levelValues,
 * strings.Compare): so here, with the switch, group and node names.
 *
 * What the job asks for (the level a Kueue user writes):
 *   kueue-bestfit    required rack when the job fits a rack (by size),
 *                    else required block when it fits a block, else
 *                    preferred block: BestFit in every case;
 *   kueue-leastfree  podset-unconstrained-topology, the one request that
 *                    gets LeastFreeCapacity now: for whole nodes (all of
 *                    capacity 1) that is the first free nodes in label
 *                    order;
 *   kueue-balanced   TASBalancedPlacement on: required rack when the job
 *                    fits a rack (BestFit, as the KEP's matrix says for
 *                    required), else preferred block, which balances the
 *                    job's nodes over racks.
 * A required level that no domain holds now makes the job wait, as in
 * Kueue.  Pods with consecutive indexes go to the same domain
 * (buildAssignment's order), so the node list is in label order.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "model/model_int.h"
#include "sim/baselines/baselines.h"

#define KQ_MAXLEV 16

struct kdom {
	int level;		/* 0: the widest label */
	const char *name;	/* label value */
	int parent;		/* -1 at level 0 */
	int nchild, ccap;
	int *child;
	int node;		/* hostname level: the node, else -1 */
	int nn;			/* nodes below (the domain's size) */
	long cnt;		/* Kueue's podCount (= sliceCount) */
};

struct ktree {
	int nlev;		/* levels, hostname last */
	struct kdom *d;
	int nd, cap;
	int *lev[KQ_MAXLEV];	/* the domains of each level */
	int nlevd[KQ_MAXLEV], levcap[KQ_MAXLEV];
	int size[KQ_MAXLEV];	/* the largest domain of a level, nodes */
	/* balanced placement: the persistent lists of its DP */
	struct { int d, prev; } *dp;
	int ndp, dpcap;
};

static int _push(int **v, int *n, int *cap, int x)
{
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 8;
		int *p = realloc(*v, c * sizeof(int));

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* A new domain: its index, or -1. */
static int _new(struct ktree *k, int level, const char *name, int parent,
		int node, long cnt)
{
	int i;

	if (k->nd == k->cap) {
		int c = k->cap ? 2 * k->cap : 64;
		struct kdom *p = realloc(k->d, c * sizeof(*p));

		if (!p)
			return -1;
		k->d = p;
		k->cap = c;
	}
	i = k->nd++;
	k->d[i] = (struct kdom){ .level = level, .name = name,
				 .parent = parent, .node = node, .cnt = cnt };
	if (parent >= 0 && _push(&k->d[parent].child, &k->d[parent].nchild,
				 &k->d[parent].ccap, i))
		return -1;
	return i;
}

static void _free_tree(struct ktree *k)
{
	for (int i = 0; i < k->nd; i++)
		free(k->d[i].child);
	for (int l = 0; l < KQ_MAXLEV; l++)
		free(k->lev[l]);
	free(k->d);
	free(k->dp);
}

/* ---- the labels ------------------------------------------------------ */

/* Fat-tree: the label of node v at each tier of tiers[0..m) (widest
 * first) is its leaf's class there (topoml__leaf_class). */
struct labels {
	int m;			/* levels above hostname */
	int tier[KQ_MAXLEV];	/* fat-tree tier of each */
	const char **name[KQ_MAXLEV];	/* class -> label value */
	int nkeys;
};

static int _node_key(const topoml_topo_t *t, const struct labels *lb, int v,
		     int i)
{
	bool exact;
	int leaf = t->nodes[v].leaf;

	if (t->family == TOPOML_DRAGONFLY)
		return i == 0 ? t->nodes[v].group : leaf;
	return topoml__leaf_class(t, leaf, lb->tier[i], &exact);
}

static int _fat_tree_labels(const topoml_topo_t *t, struct labels *lb)
{
	int ns = t->nswitches, prev = -1, tiers[KQ_MAXLEV], m = 0;
	char *seen = malloc(ns ? ns : 1);
	int *lvl = malloc((ns ? ns : 1) * sizeof(int));

	if (!seen || !lvl)
		goto oom;
	for (int l = 0; l < t->nlevels && m < KQ_MAXLEV - 1; l++) {
		int nc = 0;
		bool exact;

		memset(seen, 0, ns);
		for (int v = 0; v < t->nnodes; v++) {
			int c, leaf = t->nodes[v].leaf;

			if (leaf < 0)
				continue;
			c = topoml__leaf_class(t, leaf, l, &exact);
			if (c >= 0 && c < ns && !seen[c]) {
				seen[c] = 1;
				nc++;
			}
		}
		/* racks always; above them a tier that joins racks and is
		 * not the root */
		if (l == 0 || (nc > 1 && nc < prev)) {
			tiers[m++] = l;
			prev = nc;
		}
	}
	lb->m = m;
	lb->nkeys = ns;
	for (int i = 0; i < m; i++) {
		int l = tiers[m - 1 - i];
		bool exact;

		lb->tier[i] = l;
		lb->name[i] = calloc(ns ? ns : 1, sizeof(char *));
		if (!lb->name[i])
			goto oom;
		/* a class's value: its switch of the highest level <= l,
		 * the smallest name of equals */
		for (int c = 0; c < ns; c++)
			lvl[c] = -1;
		for (int s = 0; s < ns; s++) {
			const struct topoml_switch *w = &t->switches[s];
			int c;

			if (w->level > l)
				continue;
			c = topoml__leaf_class(t, s, l, &exact);
			if (c < 0 || c >= ns)
				continue;
			if (w->level > lvl[c] || (w->level == lvl[c] &&
			    strcmp(w->name, lb->name[i][c]) < 0)) {
				lvl[c] = w->level;
				lb->name[i][c] = w->name;
			}
		}
	}
	free(seen);
	free(lvl);
	return 0;
oom:
	free(seen);
	free(lvl);
	return -1;
}

/*
 * The domain tree of t's labelled nodes, each host's cnt its capacity:
 * 1 (or its free units when shared) when in avail, else 0.
 */
static int _build(struct ktree *k, const topoml_topo_t *t,
		  hwloc_const_bitmap_t avail, const uint32_t *fu,
		  char *why, size_t whylen)
{
	struct labels lb = { 0 };
	int *map[KQ_MAXLEV] = { 0 }, rc = -1, H;

	memset(k, 0, sizeof(*k));
	if (t->family == TOPOML_TORUS) {
		snprintf(why, whylen, "Kueue TAS needs a tree of node labels "
			 "(block > rack > hostname); its docs give none for "
			 "a torus");
		return -1;
	}
	if (t->family == TOPOML_DRAGONFLY) {
		lb.m = 2;
		lb.nkeys = t->ngroups > t->nswitches ? t->ngroups
						      : t->nswitches;
	} else if (_fat_tree_labels(t, &lb)) {
		goto oom;
	}
	H = lb.m;
	k->nlev = H + 1;
	for (int i = 0; i < H; i++) {
		map[i] = malloc((lb.nkeys ? lb.nkeys : 1) * sizeof(int));
		if (!map[i])
			goto oom;
		for (int c = 0; c < lb.nkeys; c++)
			map[i][c] = -1;
	}
	for (int v = 0; v < t->nnodes; v++) {
		int parent = -1, h;
		long cap = 0;

		if (t->nodes[v].leaf < 0 || (t->family == TOPOML_DRAGONFLY &&
					     t->nodes[v].group < 0))
			continue;	/* unlabelled: not a TAS node */
		for (int i = 0; i < H; i++) {
			int c = _node_key(t, &lb, v, i);
			const char *name;

			if (c < 0 || c >= lb.nkeys)
				break;
			if (map[i][c] < 0) {
				name = t->family == TOPOML_DRAGONFLY ?
					(i == 0 ? t->groups[c].name :
					 t->switches[c].name) : lb.name[i][c];
				map[i][c] = _new(k, i, name ? name : "",
						 parent, -1, 0);
				if (map[i][c] < 0 ||
				    _push(&k->lev[i], &k->nlevd[i],
					  &k->levcap[i], map[i][c]))
					goto oom;
			}
			parent = map[i][c];
		}
		if (hwloc_bitmap_isset(avail, v))
			cap = fu ? fu[v] : 1;
		h = _new(k, H, t->nodes[v].name, parent, v, cap);
		if (h < 0 || _push(&k->lev[H], &k->nlevd[H], &k->levcap[H],
				   h))
			goto oom;
		for (int d = h; d >= 0; d = k->d[d].parent) {
			k->d[d].nn++;
			if (k->d[d].nn > k->size[k->d[d].level])
				k->size[k->d[d].level] = k->d[d].nn;
		}
	}
	if (!k->nlevd[H]) {
		snprintf(why, whylen, "no node has Kueue topology labels");
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	for (int i = 0; i < KQ_MAXLEV; i++) {
		free(map[i]);
		if (t->family != TOPOML_DRAGONFLY)
			free(lb.name[i]);
	}
	if (rc)
		_free_tree(k);
	return rc;
}

/* fillInCountsHelper for one-pod slices: a parent holds its children's
 * pods. */
static long _fill(struct ktree *k, int d)
{
	if (k->d[d].nchild) {
		long s = 0;

		for (int i = 0; i < k->d[d].nchild; i++)
			s += _fill(k, k->d[d].child[i]);
		k->d[d].cnt = s;
	}
	return k->d[d].cnt;
}

/* ---- order ----------------------------------------------------------- */

static const struct ktree *_k;	/* qsort's context (one thread) */

static int _path(const struct ktree *k, int d, const char **p)
{
	int n = 0;

	for (int x = d; x >= 0 && n < KQ_MAXLEV; x = k->d[x].parent)
		p[n++] = k->d[x].name;
	for (int i = 0; i < n / 2; i++) {
		const char *s = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = s;
	}
	return n;
}

/* compareDomainLevelValues: label values, widest first, as strings. */
static int _cmp_values(const struct ktree *k, int a, int b)
{
	const char *pa[KQ_MAXLEV], *pb[KQ_MAXLEV];
	int na = _path(k, a, pa), nb = _path(k, b, pb);

	for (int i = 0; i < na && i < nb; i++) {
		int c = strcmp(pa[i], pb[i]);

		if (c)
			return c;
	}
	return na - nb;
}

static int _by_values(const void *x, const void *y)
{
	return _cmp_values(_k, *(const int *)x, *(const int *)y);
}

/* sortedDomains, BestFit: most slices first (podCount, the same number
 * here, ascending next breaks no tie), then label values. */
static int _most_free(const void *x, const void *y)
{
	long a = _k->d[*(const int *)x].cnt, b = _k->d[*(const int *)y].cnt;

	if (a != b)
		return a > b ? -1 : 1;
	return _by_values(x, y);
}

/* sortedDomains, LeastFreeCapacity: fewest slices first. */
static int _least_free(const void *x, const void *y)
{
	long a = _k->d[*(const int *)x].cnt, b = _k->d[*(const int *)y].cnt;

	if (a != b)
		return a < b ? -1 : 1;
	return _by_values(x, y);
}

static void _sort(const struct ktree *k, int *v, int n,
		  int (*cmp)(const void *, const void *))
{
	_k = k;
	if (n > 1)
		qsort(v, n, sizeof(int), cmp);
}

/* calculateDomainsEntropy over d's children's pod counts. */
static double _entropy(const struct ktree *k, int d)
{
	long total = 0;
	double e = 0;

	for (int i = 0; i < k->d[d].nchild; i++)
		total += k->d[k->d[d].child[i]].cnt;
	if (!total)
		return 0;
	for (int i = 0; i < k->d[d].nchild; i++) {
		long c = k->d[k->d[d].child[i]].cnt;

		if (c > 0)
			e -= (double)c / total * log2((double)c / total);
	}
	return e;
}

/* compareDomainCapacityAndEntropy: most slices, then the most even
 * children, then label values. */
static int _capacity_entropy(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	long ca = _k->d[a].cnt, cb = _k->d[b].cnt;
	double ea, eb;

	if (ca != cb)
		return ca > cb ? -1 : 1;
	ea = _entropy(_k, a);
	eb = _entropy(_k, b);
	if (ea != eb)
		return eb > ea ? 1 : -1;
	return _cmp_values(_k, a, b);
}

/* ---- BestFit and LeastFreeCapacity ----------------------------------- */

/* findBestFitDomainBy: the first of v[0..n) with the fewest slices still
 * >= need; v[0] when none holds it. */
static int _best_fit(const struct ktree *k, const int *v, int n, long need)
{
	long best = -1;
	int bi = 0;

	for (int i = 0; i < n; i++) {
		long c = k->d[v[i]].cnt;

		if (c >= need && (best < 0 || c < best)) {
			best = c;
			bi = i;
		}
	}
	return bi;
}

/*
 * updateCountsToMinimumGeneric without leaders: down the list, take each
 * domain whole until one holds the rest (BestFit: the best fitting of
 * those left), which gets the rest.  The domains used into res; their
 * count, or -1 (Kueue logs "unexpected remainingCount").
 */
static int _update_min(struct ktree *k, const int *v, int n, long count,
		       bool best_fit, int *res)
{
	long rem = count;
	int nr = 0;

	for (int i = 0; i < n; i++) {
		int d = v[i];

		if (best_fit && k->d[d].cnt >= rem)
			d = v[i + _best_fit(k, v + i, n - i, rem)];
		if (k->d[d].cnt >= rem) {
			k->d[d].cnt = rem;
			res[nr++] = d;
			return nr;
		}
		rem -= k->d[d].cnt;
		res[nr++] = d;
	}
	return -1;
}

/* A level as the docs' examples name it. */
static const char *_level_name(const struct ktree *k, int L)
{
	static const char *const names[] = { "hostname", "rack", "block" };
	int up = k->nlev - 1 - L;

	return up >= 0 && up < 3 ? names[up] : "upper level";
}

static const char *_kind_name(enum topoml_kueue_kind kind)
{
	return kind == TOPOML_KUEUE_REQUIRED ? "required" :
	       kind == TOPOML_KUEUE_PREFERRED ? "preferred" : "unconstrained";
}

/*
 * findLevelWithFitDomains: at level L, the one domain that holds the job
 * (BestFit: the best fitting; LeastFree: the first of the fewest free);
 * else a required request fails, a preferred one tries the level above,
 * and at the top (or unconstrained) the job is split over the domains in
 * their order (BestFit: the last one the best fitting).  The domains
 * into res (*nres); returns the level, or -1 with why.
 */
static int _fit_level(struct ktree *k, int L, long n,
		      enum topoml_kueue_kind kind, int *res, int *nres,
		      char *why, size_t whylen)
{
	bool lf = kind == TOPOML_KUEUE_UNCONSTRAINED;
	int *v = k->lev[L], nv = k->nlevd[L], top;
	long rem = n;

	_sort(k, v, nv, lf ? _least_free : _most_free);
	top = v[0];
	if (!lf && k->d[top].cnt >= n)
		top = v[_best_fit(k, v, nv, n)];
	if (lf) {
		for (int i = 0; i < nv; i++) {
			if (k->d[v[i]].cnt >= n) {
				res[0] = v[i];
				*nres = 1;
				return L;
			}
		}
	}
	if (k->d[top].cnt >= n) {
		res[0] = top;
		*nres = 1;
		return L;
	}
	if (kind == TOPOML_KUEUE_REQUIRED) {
		snprintf(why, whylen, "Kueue TAS (required %s): no %s holds "
			 "%ld pods now, the most free %ld", _level_name(k, L),
			 _level_name(k, L), n, k->d[top].cnt);
		return -1;
	}
	if (L > 0 && !lf)
		return _fit_level(k, L - 1, n, kind, res, nres, why, whylen);
	*nres = 0;
	for (int i = 0; rem > 0 && i < nv; i++) {
		int d = v[i];

		if (!lf && k->d[d].cnt >= rem)
			d = v[i + _best_fit(k, v + i, nv - i, rem)];
		res[(*nres)++] = d;
		rem -= k->d[d].cnt;
	}
	if (rem > 0) {
		snprintf(why, whylen, "Kueue TAS (%s): %ld pods wanted, %ld "
			 "free", _kind_name(kind), n, n - rem);
		return -1;
	}
	return L;
}

/* ---- BalancedPlacement (tas_balanced_placement.go) -------------------- */

static int _clone(struct ktree *k, int d, int parent)
{
	int c = _new(k, k->d[d].level, k->d[d].name, parent, k->d[d].node,
		     k->d[d].cnt);

	if (c < 0)
		return -1;
	k->d[c].nn = k->d[d].nn;
	for (int i = 0; i < k->d[d].nchild; i++)
		if (_clone(k, k->d[d].child[i], c) < 0)
			return -1;
	return c;
}

static void _clear(struct ktree *k, int d)
{
	k->d[d].cnt = 0;
	for (int i = 0; i < k->d[d].nchild; i++)
		_clear(k, k->d[d].child[i]);
}

/* The children of v[0..n) into out (room for them all): their count. */
static int _children(const struct ktree *k, const int *v, int n, int *out)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < k->d[v[i]].nchild; j++)
			out[m++] = k->d[v[i]].child[j];
	return m;
}

/* evaluateGreedyAssignment: whether the most free of v hold n, how many
 * it takes, and the last one taken (*last). */
static bool _greedy(struct ktree *k, const int *v, int n_v, long n,
		    int *count, int *last, int *tmp)
{
	long rem = n;
	int i;

	memcpy(tmp, v, n_v * sizeof(int));
	_sort(k, tmp, n_v, _most_free);
	*count = 0;
	*last = -1;
	for (i = 0; rem > 0 && i < n_v && k->d[tmp[i]].cnt > 0; i++) {
		(*count)++;
		*last = tmp[i];
		rem -= k->d[tmp[i]].cnt;
	}
	return rem <= 0;
}

static int _dp_node(struct ktree *k, int d, int prev)
{
	if (k->ndp == k->dpcap) {
		int c = k->dpcap ? 2 * k->dpcap : 256;
		void *p = realloc(k->dp, c * sizeof(*k->dp));

		if (!p)
			return -1;
		k->dp = p;
		k->dpcap = c;
	}
	k->dp[k->ndp].d = d;
	k->dp[k->ndp].prev = prev;
	return k->ndp++;
}

/* One DP row: pods left -> the first list that got there. */
struct dprow {
	long *left;
	int *list;
	int n, cap;
};

static int _row_find(const struct dprow *r, long left)
{
	int lo = 0, hi = r->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (r->left[mid] < left)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Keep the first list reaching `left'. */
static int _row_put(struct dprow *r, long left, int list)
{
	int i = _row_find(r, left);

	if (i < r->n && r->left[i] == left)
		return 0;
	if (r->n == r->cap) {
		int c = r->cap ? 2 * r->cap : 16;
		long *l = realloc(r->left, c * sizeof(long));
		int *s;

		if (!l)
			return -1;
		r->left = l;
		s = realloc(r->list, c * sizeof(int));
		if (!s)
			return -1;
		r->list = s;
		r->cap = c;
	}
	memmove(r->left + i + 1, r->left + i, (r->n - i) * sizeof(long));
	memmove(r->list + i + 1, r->list + i, (r->n - i) * sizeof(int));
	r->left[i] = left;
	r->list[i] = list;
	r->n++;
	return 0;
}

/*
 * selectOptimalDomainSetToFit: of v, as few domains as the greedy
 * assignment takes, holding n with the least spare: the first such set
 * in the order (entropy: compareDomainCapacityAndEntropy, else label
 * values).  Into res; its size, 0 when none, -1 out of memory.
 */
static int _optimal_set(struct ktree *k, const int *v, int n_v, long n,
			bool entropy, int *res, int *tmp)
{
	struct dprow *row;
	int m, last, rc = -1, best = -1;
	int *ord;

	if (!_greedy(k, v, n_v, n, &m, &last, tmp))
		return 0;
	ord = malloc((n_v ? n_v : 1) * sizeof(int));
	row = calloc(m + 1, sizeof(*row));
	if (!ord || !row)
		goto out;
	memcpy(ord, v, n_v * sizeof(int));
	_sort(k, ord, n_v, entropy ? _capacity_entropy : _by_values);
	k->ndp = 0;
	if (_row_put(&row[0], n, -1))
		goto out;
	for (int j = 0; j < n_v; j++) {
		int d = ord[j];

		if (k->d[d].cnt <= 0)
			continue;	/* "pick this domain" needs a slice */
		for (int i = m; i > 0; i--) {
			for (int x = 0; x < row[i - 1].n; x++) {
				long after = row[i - 1].left[x] - k->d[d].cnt;
				int node, at = _row_find(&row[i], after);

				if (row[i - 1].left[x] <= 0 ||
				    (at < row[i].n && row[i].left[at] == after))
					continue;	/* done, or not first */
				node = _dp_node(k, d, row[i - 1].list[x]);
				if (node < 0 || _row_put(&row[i], after, node))
					goto out;
			}
		}
	}
	/* the most pods left that is <= 0: the least spare */
	for (int x = 0; x < row[m].n; x++)
		if (row[m].left[x] <= 0)
			best = row[m].list[x];
	rc = 0;
	for (int l = best; best >= 0 && l >= 0; l = k->dp[l].prev)
		rc++;
	for (int l = best, i = rc - 1; best >= 0 && l >= 0;
	     l = k->dp[l].prev)
		res[i--] = k->dp[l].d;
out:
	for (int i = 0; row && i <= m; i++) {
		free(row[i].left);
		free(row[i].list);
	}
	free(row);
	free(ord);
	return rc;
}

/* pruneDomainsBelowThreshold for one-pod slices and no leader. */
static void _prune(struct ktree *k, const int *v, int n_v, long T)
{
	for (int i = 0; i < n_v; i++)
		for (int j = 0; j < k->d[v[i]].nchild; j++)
			if (k->d[k->d[v[i]].child[j]].cnt < T)
				_clear(k, k->d[v[i]].child[j]);
	for (int i = 0; i < n_v; i++)
		if (_fill(k, v[i]) < T)
			_clear(k, v[i]);
}

/*
 * findBestDomainsForBalancedPlacement, then applyBalancedPlacementAlgorithm
 * at preferred level L (< the hostname level H).  1 with the domains of
 * level *lev and their counts in res (*nres); 0 when balanced placement
 * does not apply or fails (Kueue then falls back to BestFit); -1 out of
 * memory.  Works on copies of the domains, as Kueue does.
 */
static int _balanced(struct ktree *k, int L, long n, int *res, int *nres,
		     int *lev, int *buf, int *tmp)
{
	int H = k->nlev - 1, nsets, *best = NULL, nbest = 0, bestcnt = 0;
	long bestT = 0;
	int rc = -1;

	nsets = L == 0 ? 1 : k->nlevd[L - 1];
	if (L > 0)
		_sort(k, k->lev[L - 1], nsets, _by_values);
	for (int s = 0; s < nsets; s++) {
		const int *sib = L == 0 ? k->lev[0] :
			k->d[k->lev[L - 1][s]].child;
		int nsib = L == 0 ? k->nlevd[0] :
			k->d[k->lev[L - 1][s]].nchild;
		int *cand = malloc((nsib ? nsib : 1) * sizeof(int));
		int nlow, cnt, last, rcnt, rlast;
		long T;

		if (!cand)
			goto out;
		/* sib may move when the pool grows: copy it first */
		memcpy(tmp, sib, nsib * sizeof(int));
		for (int i = 0; i < nsib; i++) {
			cand[i] = _clone(k, tmp[i], -1);
			if (cand[i] < 0) {
				free(cand);
				goto out;
			}
		}
		nlow = L < H ? _children(k, cand, nsib, buf) : nsib;
		if (L >= H)
			memcpy(buf, cand, nsib * sizeof(int));
		if (!_greedy(k, buf, nlow, n, &cnt, &last, tmp)) {
			free(cand);
			continue;
		}
		/* balanceThresholdValue */
		T = n / cnt;
		if (last >= 0 && k->d[last].cnt < T)
			T = k->d[last].cnt;
		if (T < bestT) {
			free(cand);
			continue;
		}
		_prune(k, cand, nsib, T);
		if (!_greedy(k, cand, nsib, n, &rcnt, &rlast, tmp) ||
		    !(T > bestT || rcnt < bestcnt)) {
			free(cand);
			continue;
		}
		free(best);
		best = cand;
		nbest = nsib;
		bestT = T;
		bestcnt = rcnt;
	}
	rc = 0;
	if (bestT <= 0)
		goto out;
	/* applyBalancedPlacementAlgorithm */
	if (L < H) {
		int m = _optimal_set(k, best, nbest, n, true, res, tmp);

		if (m <= 0) {
			rc = m;
			goto out;
		}
		nbest = _children(k, res, m, buf);
		*lev = L + 1;
	} else {
		memcpy(buf, best, nbest * sizeof(int));
		*lev = L;
	}
	/* placeSlicesOnDomainsBalanced */
	{
		int m = _optimal_set(k, buf, nbest, n, false, res, tmp);
		long extra;

		if (m <= 0 || n < (long)m * bestT) {
			rc = m < 0 ? -1 : 0;
			goto out;
		}
		_sort(k, res, m, _most_free);
		extra = n - (long)m * bestT;
		for (int i = 0; i < m; i++) {
			long take = 0;

			if (extra > 0) {
				take = k->d[res[i]].cnt - bestT;
				if (take > extra)
					take = extra;
			}
			k->d[res[i]].cnt = bestT + take;
			extra -= take;
		}
		if (extra > 0)
			goto out;
		*nres = m;
		rc = 1;
	}
out:
	free(best);
	return rc;
}

/* ---- the assignment --------------------------------------------------- */

static int _assign(struct ktree *k, const struct topoml_kueue_req *rq,
		   long n, struct topoml_placement *out, int *units,
		   char *why, size_t whylen)
{
	int H = k->nlev - 1, L, fit = -1, nres = 0, nfit, rc = -1;
	int nall = k->nd * 4 + 16;	/* clones stay below 3x */
	int *res = malloc(nall * sizeof(int));
	int *cur = malloc(nall * sizeof(int));
	int *buf = malloc(nall * sizeof(int));
	int *tmp = malloc(nall * sizeof(int));
	bool balanced = false, lf = rq->kind == TOPOML_KUEUE_UNCONSTRAINED;

	if (!res || !cur || !buf || !tmp) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	L = lf ? H : H - rq->level;
	if (L < 0 || L > H) {
		snprintf(why, whylen, "Kueue TAS: no label level %d above "
			 "hostname (%d here)", rq->level, H);
		goto out;
	}
	/* phase 1: the pods each domain holds */
	for (int i = 0; i < k->nlevd[0]; i++)
		_fill(k, k->lev[0][i]);
	/* phase 2a */
	if (rq->balanced && rq->kind == TOPOML_KUEUE_PREFERRED && L < H) {
		int b = _balanced(k, L, n, cur, &nfit, &fit, buf, tmp);

		if (b < 0) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
		balanced = b > 0;
	}
	if (!balanced) {
		fit = _fit_level(k, L, n, rq->kind, cur, &nfit, why, whylen);
		if (fit < 0)
			goto out;
	}
	/* phase 2b: counts at the fit level, then down */
	nres = _update_min(k, cur, nfit, n, !lf, res);
	for (int l = fit; !balanced && nres > 0 && l < H; l++) {
		int m = _children(k, res, nres, buf);

		_sort(k, buf, m, lf ? _least_free : _most_free);
		nres = _update_min(k, buf, m, n, !lf, res);
	}
	for (int l = fit; balanced && nres > 0 && l < H; l++) {
		int m = 0;

		for (int i = 0; i < nres; i++) {
			int d = res[i], nc = k->d[d].nchild, got;

			memcpy(tmp, k->d[d].child, nc * sizeof(int));
			_sort(k, tmp, nc, _most_free);
			got = _update_min(k, tmp, nc, k->d[d].cnt, true,
					  buf + m);
			if (got < 0) {
				m = -1;
				break;
			}
			m += got;
		}
		nres = m;
		memcpy(res, buf, (nres > 0 ? nres : 0) * sizeof(int));
	}
	if (nres <= 0) {
		snprintf(why, whylen, "Kueue TAS: internal error, %ld pods "
			 "not assigned", n);
		goto out;
	}
	/* buildAssignment: the hosts given pods, in label order */
	_sort(k, res, nres, _by_values);
	out->nodes = malloc(nres * sizeof(int));
	if (!out->nodes) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	out->n = 0;
	for (int i = 0; i < nres; i++)
		if (k->d[res[i]].cnt > 0) {
			if (units)
				units[out->n] = (int)k->d[res[i]].cnt;
			out->nodes[out->n++] = k->d[res[i]].node;
		}
	rc = 0;
out:
	free(res);
	free(cur);
	free(buf);
	free(tmp);
	return rc;
}

static int _kueue_place(const struct place_in *in,
			const struct topoml_kueue_req *rq,
			struct topoml_placement *out, int *units, char *why,
			size_t whylen)
{
	const struct topoml_place_req *req = in->req;
	bool shared = req->units > 0 && req->free_units;
	struct ktree k;
	int rc;

	if (in->nreq > 0) {
		snprintf(why, whylen, "Kueue TAS takes no required nodes");
		return -1;
	}
	if (_build(&k, in->t, in->avail, shared ? req->free_units : NULL,
		   why, whylen))
		return -1;
	rc = _assign(&k, rq, shared ? (long)req->units : in->n, out,
		     shared ? units : NULL, why, whylen);
	_free_tree(&k);
	if (!rc && out->n < in->n) {
		/* Kueue knows pods, not a least node count */
		snprintf(why, whylen, "Kueue TAS packs the %u units on %d "
			 "nodes, fewer than the %d wanted", req->units, out->n,
			 in->n);
		topoml_placement_clear(out);
		return -1;
	}
	return rc;
}

int topoml__kueue_place(const struct place_in *in,
			const struct topoml_kueue_req *rq,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	return _kueue_place(in, rq, out, NULL, why, whylen);
}

int topoml__place_kueue_units(const struct place_in *in,
			      enum topoml_kueue_algo algo,
			      struct topoml_placement *out, int *units,
			      char *why, size_t whylen)
{
	struct topoml_kueue_req rq = { .kind = TOPOML_KUEUE_PREFERRED };
	struct ktree k;
	int H, rack, block;

	if (in->req->attempt > 0) {
		/* Kueue has one answer per state */
		snprintf(why, whylen, "Kueue TAS has no alternative "
			 "placements");
		return -1;
	}
	if (algo == TOPOML_KUEUE_LEASTFREE) {
		rq.kind = TOPOML_KUEUE_UNCONSTRAINED;
		return _kueue_place(in, &rq, out, units, why, whylen);
	}
	/* the level a user writes: by the job's size, on the whole
	 * machine's labels */
	if (_build(&k, in->t, in->avail, NULL, why, whylen))
		return -1;
	H = k.nlev - 1;
	rack = H - 1;
	block = H - 2;
	if (in->n <= k.size[rack]) {
		rq.kind = TOPOML_KUEUE_REQUIRED;
		rq.level = 1;
	} else if (algo == TOPOML_KUEUE_BESTFIT && block >= 0 &&
		   in->n <= k.size[block]) {
		rq.kind = TOPOML_KUEUE_REQUIRED;
		rq.level = 2;
	} else {
		rq.level = block >= 0 ? 2 : 1;
		rq.balanced = algo == TOPOML_KUEUE_BALANCED;
	}
	_free_tree(&k);
	return _kueue_place(in, &rq, out, units, why, whylen);
}

int topoml__place_kueue(const struct place_in *in,
			enum topoml_kueue_algo algo,
			struct topoml_placement *out, char *why,
			size_t whylen)
{
	return topoml__place_kueue_units(in, algo, out, NULL, why, whylen);
}
