/*
 * Cost of one training step of a hybrid-parallel job by traffic kind
 * (issue 14 item 2).  Counts transfers between ranks, not bytes: each kind
 * has a relative weight (what one of its transfers costs against one of
 * data parallel's), set by the site or the user.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"
#include "topoml.h"

static const char *const kind_names[TOPOML_KIND_COUNT] = {
	"tp", "cp", "ep", "dp", "pp"
};

const char *topoml_kind_name(enum topoml_kind k)
{
	return (int)k >= 0 && k < TOPOML_KIND_COUNT ? kind_names[k] : "?";
}

/*
 * Tensor parallel all-reduces activations twice per layer; context
 * parallel passes keys and values around its ring per layer, expert
 * parallel dispatches and combines tokens per MoE layer; pipeline sends
 * one activation per micro-batch and stage; data parallel reduces the
 * gradients once per step.  Orders of magnitude, not measurements.
 */
void topoml_kind_weights_default(double w[TOPOML_KIND_COUNT])
{
	w[TOPOML_KIND_TP] = 16;
	w[TOPOML_KIND_CP] = 4;
	w[TOPOML_KIND_EP] = 4;
	w[TOPOML_KIND_DP] = 1;
	w[TOPOML_KIND_PP] = 2;
}

void topoml_kind_weights_format(const double w[TOPOML_KIND_COUNT], char *buf,
				size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (int k = 0; k < TOPOML_KIND_COUNT && at < len; k++) {
		int n = snprintf(buf + at, len - at, "%s%s=%g", k ? "," : "",
				 kind_names[k], w[k]);

		if (n < 0)
			break;
		at += (size_t)n;
	}
}

int topoml_kind_weights_parse(const char *s, double w[TOPOML_KIND_COUNT],
			      char *err, size_t errlen)
{
	char *copy = s ? strdup(s) : NULL, *tok, *save = NULL;
	int rc = -1;

	if (!copy) {
		snprintf(err, errlen, "no weights");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		double v;
		int k;

		if (!eq) {
			snprintf(err, errlen, "'%s': expected KIND=WEIGHT",
				 tok);
			goto out;
		}
		*eq = '\0';
		for (k = 0; k < TOPOML_KIND_COUNT; k++)
			if (!strcmp(tok, kind_names[k]))
				break;
		if (k == TOPOML_KIND_COUNT) {
			snprintf(err, errlen, "unknown kind '%s' (expected "
				 "tp, cp, ep, dp or pp)", tok);
			goto out;
		}
		errno = 0;
		v = strtod(eq + 1, &end);
		if (errno || end == eq + 1 || *end || !(v >= 0) || v > 1e9) {
			snprintf(err, errlen, "%s: '%s' is not a weight >= 0",
				 tok, eq + 1);
			goto out;
		}
		w[k] = v;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

/*
 * Node (leaf, group) pairs one call may price one by one where no
 * closed form holds (switches that do not nest, dragonfly groups at
 * different distances); beyond it a bound stands in.  About 1 ms.
 */
#define HYBRID_PAIR_BUDGET (1L << 18)

struct _ctx {
	const topoml_topo_t *t;
	const int *nodes;
	int tpn;
	struct topoml_kind_cost *c;
	/* all-to-all groups (_a2a): their nodes and ranks per node */
	int *v, *key;
	long *m;
	long *sum;		/* per key, zero between uses */
	int *used, *rep;	/* keys in use, a node of each */
	int ncap;		/* keys: 0 .. ncap - 1 */
	long budget;		/* pair lookups left to this call */
	/* the last group _a2a priced: its nodes, counts and cost */
	int *pv, pk;
	long *pm;
	struct topoml_kind_cost pc;
};

/* cnt transfers between the ranks of positions pa and pb. */
static void _pairs(const struct _ctx *x, long pa, long pb, long cnt)
{
	const topoml_topo_t *t = x->t;
	int na = x->nodes[pa], nb = x->nodes[pb];
	const struct topoml_node *A = &t->nodes[na], *B = &t->nodes[nb];
	struct topoml_kind_cost *c = x->c;

	c->steps += cnt;
	if (na == nb)
		return;
	c->off_node += cnt;
	c->hops += cnt * topoml_hops(t, na, nb);
	if (A->leaf != B->leaf || A->leaf < 0)
		c->cross_leaf += cnt;
	if (t->family == TOPOML_DRAGONFLY) {
		if (A->group != B->group)
			c->cross_top += cnt;
	} else if (t->family != TOPOML_TORUS && t->nlevels > 1 &&
		   topoml_common_level(t, na, nb) >= t->nlevels - 1) {
		c->cross_top += cnt;
	}
	if (t->nnvl > 0 && (A->nvl < 0 || A->nvl != B->nvl))
		c->cross_nvl += cnt;
}

/*
 * The transfers rank r -> r + delta for r in [lo, hi): priced once per
 * run of ranks whose two ends stay on the same two nodes, so a kind's
 * cost grows with the nodes, not with the ranks per node.
 */
static void _batch(const struct _ctx *x, long lo, long hi, long delta)
{
	long tpn = x->tpn;

	while (lo < hi) {
		long pa = lo / tpn, pb = (lo + delta) / tpn, end = hi;

		if ((pa + 1) * tpn < end)
			end = (pa + 1) * tpn;
		if ((pb + 1) * tpn - delta < end)
			end = (pb + 1) * tpn - delta;
		_pairs(x, pa, pb, end - lo);
		lo = end;
	}
}

/*
 * Rings of m members base + stride * i, one for each of the stride
 * consecutive bases from base (they fill the stride): m transfers each,
 * i -> i + 1 and the last back to the first, as two batches.
 */
static void _rings(const struct _ctx *x, long base, long stride, long m)
{
	if (m < 2)
		return;
	_batch(x, base, base + stride * (m - 1), stride);
	_batch(x, base + stride * (m - 1), base + stride * m,
	       -stride * (m - 1));
}

static long _c2(long m)
{
	return m * (m - 1) / 2;
}

/*
 * Pairs of ranks of the group (x->v, x->m: k nodes) with equal keys
 * x->key[j] >= 0; a negative key is in no pair.
 */
static long _same(struct _ctx *x, int k)
{
	long pairs = 0;
	int nu = 0;

	for (int j = 0; j < k; j++) {
		int q = x->key[j];

		if (q < 0)
			continue;
		if (!x->sum[q])
			x->used[nu++] = q;
		x->sum[q] += x->m[j];
	}
	for (int u = 0; u < nu; u++) {
		pairs += _c2(x->sum[x->used[u]]);
		x->sum[x->used[u]] = 0;
	}
	return pairs;
}

enum _by { BY_NODE, BY_LEAF, BY_GROUP, BY_NVL };

/*
 * x->key[] for the group's k nodes: their node, leaf, group or domain;
 * with `all`, a node without one (-1) shares the key ncap - 1 (the
 * engine's common level takes two such nodes as one leaf or group),
 * else it is in no pair; with `only_set`, nodes without a leaf (group,
 * domain) are in no pair of node either.
 */
static void _keys(struct _ctx *x, int k, enum _by by, bool all)
{
	for (int j = 0; j < k; j++) {
		const struct topoml_node *N = &x->t->nodes[x->v[j]];
		int q = by == BY_NODE ? x->v[j] : by == BY_LEAF ? N->leaf :
			by == BY_GROUP ? N->group : N->nvl;

		x->key[j] = q >= 0 ? q : all ? x->ncap - 1 : -1;
	}
}

/* Off-node pairs sharing a leaf (group, domain), nodes without one apart. */
static long _same_off(struct _ctx *x, int k, enum _by by)
{
	long within;

	_keys(x, k, by, false);
	within = _same(x, k);
	for (int j = 0; j < k; j++)	/* same node: same leaf */
		if (x->key[j] >= 0)
			x->key[j] = x->v[j];
	return within - _same(x, k);
}

struct _wx {
	long x, m;
};

static int _wx_cmp(const void *a, const void *b)
{
	const struct _wx *p = a, *q = b;

	return (p->x > q->x) - (p->x < q->x);
}

/* Torus hops summed over the group's pairs: per axis, sorted positions. */
static long _torus_hops(struct _ctx *x, int k)
{
	const topoml_topo_t *t = x->t;
	struct _wx *w = malloc(sizeof(*w) * (k > 0 ? k : 1));
	long hops = 0;

	if (!w)
		return -1;
	for (int d = 0; d < 3; d++) {
		long D = t->dims[d], wn = 0, sn = 0, wf = 0, sf = 0;
		int far = 0;

		for (int j = 0; j < k; j++)
			w[j] = (struct _wx){ t->nodes[x->v[j]].coord[d],
					     x->m[j] };
		qsort(w, k, sizeof(*w), _wx_cmp);
		/*
		 * Earlier positions more than half the ring away go round
		 * the wrap: D - (x_j - x_i).  Sums of weights and weighted
		 * positions, near and far.
		 */
		for (int j = 0; j < k; j++) {
			while (t->wrap[d] && far < j &&
			       2 * (w[j].x - w[far].x) > D) {
				wn -= w[far].m;
				sn -= w[far].m * w[far].x;
				wf += w[far].m;
				sf += w[far].m * w[far].x;
				far++;
			}
			hops += w[j].m * (w[j].x * wn - sn) +
				w[j].m * (wf * (D - w[j].x) + sf);
			wn += w[j].m;
			sn += w[j].m * w[j].x;
		}
	}
	free(w);
	return hops;
}

/*
 * Per key (x->key[] of the group's k nodes, -1 in none): the ranks in
 * x->sum[], a node in x->rep[]; the keys in x->used[0..return).  The
 * caller clears x->sum[] of them (_unsum).
 */
static int _sum_by_key(struct _ctx *x, int k)
{
	int nu = 0;

	for (int j = 0; j < k; j++) {
		int q = x->key[j];

		if (q < 0)
			continue;
		if (!x->sum[q]) {
			x->used[nu++] = q;
			x->rep[q] = x->v[j];
		}
		x->sum[q] += x->m[j];
	}
	return nu;
}

static void _unsum(struct _ctx *x, int nu)
{
	for (int u = 0; u < nu; u++)
		x->sum[x->used[u]] = 0;
}

/* Within the call's budget, nu * nu / 2 more lookups. */
static bool _afford(struct _ctx *x, int nu)
{
	long cost = (long)nu * nu / 2;

	if (cost > x->budget)
		return false;
	x->budget -= cost;
	return true;
}

/*
 * Fat tree: the common levels of the group's pairs summed, by the leaf
 * classes of each level (model/model.c): pairs whose level exceeds l are those
 * of different classes at l.  Where the switches do not nest, leaf
 * pairs one by one, within the call's budget (beyond it the classes'
 * bound).  *top: the pairs through the top level.
 */
static long _tree_levels(struct _ctx *x, int k, long tot, long *top)
{
	const topoml_topo_t *t = x->t;
	long sum = 0;
	bool exact = true;
	int nu;

	*top = 0;
	for (int l = 0; l < t->nlevels; l++) {
		long diff;
		bool ok;

		for (int j = 0; j < k; j++)
			x->key[j] = topoml__leaf_class(t,
				t->nodes[x->v[j]].leaf, l, &ok);
		exact = exact && ok;
		diff = tot - _same(x, k);
		sum += diff;
		if (l == t->nlevels - 2)
			*top = diff;
	}
	if (exact)
		return sum;
	_keys(x, k, BY_LEAF, false);
	nu = _sum_by_key(x, k);
	if (_afford(x, nu)) {
		sum = *top = 0;
		for (int a = 0; a < nu; a++)
			for (int b = a + 1; b < nu; b++) {
				long w = x->sum[x->used[a]] *
					 x->sum[x->used[b]];
				int l = topoml_common_level(t,
					x->rep[x->used[a]],
					x->rep[x->used[b]]);

				sum += w * l;
				if (t->nlevels > 1 && l >= t->nlevels - 1)
					*top += w;
			}
	}
	_unsum(x, nu);
	return sum;
}

/*
 * Dragonfly: global hops of the group's pairs between groups; where
 * they are not all one apart, group pairs within the budget, beyond it
 * the mean distance.
 */
static long _global_hops(struct _ctx *x, int k)
{
	const topoml_topo_t *t = x->t;
	double mean;
	int u = topoml__gdist_uniform(t, &mean), nu;
	long in = 0, pairs, sum;

	_keys(x, k, BY_GROUP, false);
	for (int j = 0; j < k; j++)
		in += x->key[j] >= 0 ? x->m[j] : 0;
	pairs = _c2(in) - _same(x, k);	/* both in groups, different */
	if (u > 0 || !pairs)
		return (long)u * pairs;
	nu = _sum_by_key(x, k);
	if (_afford(x, nu)) {
		sum = 0;
		for (int a = 0; a < nu; a++)
			for (int b = a + 1; b < nu; b++)
				sum += x->sum[x->used[a]] *
				       x->sum[x->used[b]] *
				       topoml_global_hops(t,
					x->rep[x->used[a]],
					x->rep[x->used[b]]);
	} else {
		sum = (long)(mean * (double)pairs + 0.5);
	}
	_unsum(x, nu);
	return sum;
}

/*
 * Expert-parallel all-to-all among the E ranks base + stride * i: each
 * pair once, as _pair would count it, by closed forms over the group's
 * nodes and ranks per node (consecutive ranks share a node), so that
 * the cost grows with the nodes, not with E squared.
 */
static int _a2a_price(struct _ctx *x, struct topoml_kind_cost *c, int k,
		      long tot);

static void _kind_add(struct topoml_kind_cost *c,
		      const struct topoml_kind_cost *d, long times)
{
	c->steps += d->steps * times;
	c->off_node += d->off_node * times;
	c->cross_leaf += d->cross_leaf * times;
	c->cross_top += d->cross_top * times;
	c->cross_nvl += d->cross_nvl * times;
	c->hops += d->hops * times;
}

/*
 * The groups of bases base, base + 1, .. (at most `most`) while they sit
 * on the same nodes as the first (no rank crosses into the next node):
 * priced once, counted for each.  Returns how many it counted, or -1.
 */
static long _a2a(struct _ctx *x, long base, long stride, int E, long most)
{
	long tot = _c2(E), reps = most;
	int k = 0;

	for (long i = 0; i < E; k++) {
		long pos = (base + stride * i) / x->tpn;
		long last = ((pos + 1) * x->tpn - 1 - base) / stride;

		if (last > E - 1)
			last = E - 1;
		x->v[k] = x->nodes[pos];
		x->m[k] = last - i + 1;
		/* the run's last rank reaches the next node first */
		if ((pos + 1) * x->tpn - (base + stride * last) < reps)
			reps = (pos + 1) * x->tpn - (base + stride * last);
		i = last + 1;
	}
	/* the next groups often sit on the same nodes too */
	if (k != x->pk || memcmp(x->v, x->pv, sizeof(int) * k) ||
	    memcmp(x->m, x->pm, sizeof(long) * k)) {
		memcpy(x->pv, x->v, sizeof(int) * k);
		memcpy(x->pm, x->m, sizeof(long) * k);
		x->pk = k;
		memset(&x->pc, 0, sizeof(x->pc));
		if (_a2a_price(x, &x->pc, k, tot))
			return -1;
	}
	_kind_add(x->c, &x->pc, reps);
	return reps;
}

/* _a2a's group, its k nodes and counts in x->v and x->m, into c. */
static int _a2a_price(struct _ctx *x, struct topoml_kind_cost *c, int k,
		      long tot)
{
	const topoml_topo_t *t = x->t;
	long off, sr, top;

	c->steps += tot;
	if (k == 1)
		return 0;	/* one node: nothing leaves it */
	_keys(x, k, BY_NODE, false);
	off = tot - _same(x, k);
	c->off_node += off;
	c->cross_leaf += off - _same_off(x, k, BY_LEAF);
	if (t->nnvl > 0)
		c->cross_nvl += off - _same_off(x, k, BY_NVL);
	switch (t->family) {
	case TOPOML_FAT_TREE:
		c->hops += 2 * off + 2 * _tree_levels(x, k, tot, &top);
		c->cross_top += t->nlevels > 1 ? top : 0;
		break;
	case TOPOML_DRAGONFLY:
		_keys(x, k, BY_LEAF, true);
		sr = _same(x, k);
		_keys(x, k, BY_NODE, false);
		sr -= _same(x, k);	/* off node, one router */
		c->hops += 2 * sr + 3 * (off - sr) + 2 * _global_hops(x, k);
		_keys(x, k, BY_GROUP, true);
		c->cross_top += tot - _same(x, k);
		break;
	case TOPOML_TORUS:
		if ((top = _torus_hops(x, k)) < 0)
			return -1;
		c->hops += top;
		break;
	}
	return 0;
}

int topoml_hybrid_cost(const topoml_topo_t *t, const int *nodes, int n,
		       int tasks_per_node, const struct topoml_parallel *p,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_hybrid_cost *out)
{
	int T = p->tp, C = p->cp, D = p->dp, P = p->pp, E = p->ep;
	int world = n * tasks_per_node;
	struct _ctx x = { .t = t, .nodes = nodes, .tpn = tasks_per_node };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (n < 1 || tasks_per_node < 1 || D < 1 ||
	    (long)T * C * D * P != world || (C * D) % E)
		return -1;
	x.ncap = t->nnodes > t->nswitches ? t->nnodes : t->nswitches;
	x.ncap = x.ncap > t->ngroups ? x.ncap : t->ngroups;
	x.ncap = (x.ncap > t->nnvl ? x.ncap : t->nnvl) + 1;
	x.budget = HYBRID_PAIR_BUDGET;
	x.v = malloc(sizeof(int) * (size_t)n);
	x.key = malloc(sizeof(int) * (size_t)n);
	x.m = malloc(sizeof(long) * (size_t)n);
	x.sum = calloc(x.ncap, sizeof(long));
	x.used = malloc(sizeof(int) * (size_t)x.ncap);
	x.rep = malloc(sizeof(int) * (size_t)x.ncap);
	x.pv = malloc(sizeof(int) * (size_t)n);
	x.pm = malloc(sizeof(long) * (size_t)n);
	x.pk = -1;
	if (!x.pv || !x.pm || !x.v || !x.key || !x.m || !x.sum || !x.used || !x.rep)
		goto fail;
	/* TP rings: T consecutive ranks. */
	x.c = &out->kind[TOPOML_KIND_TP];
	for (long g = 0; T > 1 && g < world / T; g++)
		_rings(&x, g * T, 1, T);
	for (long pp = 0; pp < P; pp++) {
		long stage = (long)T * C * D * pp;

		/* CP rings: for each (tp, dp), C ranks T apart */
		x.c = &out->kind[TOPOML_KIND_CP];
		for (long dp = 0; C > 1 && dp < D; dp++)
			_rings(&x, stage + (long)T * C * dp, T, C);
		/* DP rings: for each (tp, cp), D ranks T * C apart */
		x.c = &out->kind[TOPOML_KIND_DP];
		_rings(&x, stage, (long)T * C, D);
		/* EP all-to-all: E consecutive (cp, dp) slots. */
		x.c = &out->kind[TOPOML_KIND_EP];
		for (int g = 0; E > 1 && g < C * D / E; g++)
			for (long tp = 0, r; tp < T; tp += r)
				if ((r = _a2a(&x, tp + (long)T * g * E + stage,
					      T, E, T - tp)) < 1)
					goto fail;
	}
	/* PP: stage s to s + 1, for each (tp, cp, dp). */
	x.c = &out->kind[TOPOML_KIND_PP];
	for (long pp = 0; pp + 1 < P; pp++)
		_batch(&x, (long)T * C * D * pp, (long)T * C * D * (pp + 1),
		       (long)T * C * D);
	for (int k = 0; k < TOPOML_KIND_COUNT; k++)
		out->weighted += w[k] * (double)out->kind[k].hops;
	rc = 0;
fail:
	free(x.v);
	free(x.key);
	free(x.m);
	free(x.sum);
	free(x.used);
	free(x.rep);
	free(x.pv);
	free(x.pm);
	return rc;
}
