/*
 * topoml plan (issue 34): memory and step time of a transformer's
 * training layouts, and the search for the fastest that fit.  See
 * topoml/plan.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/plan.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Dense 16-bit tensor-core peaks (no sparsity), memory as sold. */
const struct topoml_plan_gpu_info topoml_plan_gpus[] = {
	{ "v100", 32, 125 },
	{ "a100-40", 40, 312 },
	{ "a100", 80, 312 },
	{ "h100", 80, 989 },
	{ "h200", 141, 989 },
	{ "b200", 180, 2250 },
	{ "gb200", 186, 2500 },
	{ "mi250x", 128, 383 },
	{ "mi300x", 192, 1307 },
	{ NULL, 0, 0 },
};

/* NVLink per GPU and direction; NIC: the node's NICs over its GPUs. */
const struct topoml_plan_node_info topoml_plan_nodes[] = {
	{ "dgx-1v", "v100", 8, 150, 6.25 },
	{ "dgx-a100", "a100", 8, 300, 25 },
	{ "dgx-a100-40", "a100-40", 8, 300, 25 },
	{ "dgx-h100", "h100", 8, 450, 50 },
	{ "hgx-h200", "h200", 8, 450, 50 },
	{ "dgx-b200", "b200", 8, 900, 50 },
	{ "gb200-nvl72", "gb200", 4, 900, 100 },
	{ "mi250x-node", "mi250x", 8, 100, 25 },
	{ "mi300x-node", "mi300x", 8, 448, 50 },
	{ NULL, NULL, 0, 0, 0 },
};

static const char *const level_names[TOPOML_PLAN_LEVELS] = {
	"nvlink", "leaf", "spine", "global", "torus"
};

const char *topoml_plan_level_name(enum topoml_plan_level l)
{
	return (int)l >= 0 && l < TOPOML_PLAN_LEVELS ? level_names[l] : "?";
}

const struct topoml_plan_gpu_info *topoml_plan_gpu(const char *name)
{
	for (const struct topoml_plan_gpu_info *g = topoml_plan_gpus; g->name;
	     g++)
		if (!strcmp(g->name, name))
			return g;
	return NULL;
}

const struct topoml_plan_node_info *topoml_plan_node(const char *name)
{
	for (const struct topoml_plan_node_info *n = topoml_plan_nodes;
	     n->name; n++)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

int topoml_plan_machine_init(struct topoml_plan_machine *m,
			     const char *node_model)
{
	const struct topoml_plan_node_info *n = topoml_plan_node(node_model);
	const struct topoml_plan_gpu_info *g = n ? topoml_plan_gpu(n->gpu)
						 : NULL;

	memset(m, 0, sizeof(*m));
	if (!g)
		return -1;
	m->gpu = g->name;
	m->mem_gib = g->mem_gib;
	m->tflops = g->tflops;
	m->gpus_per_node = n->gpus_per_node;
	m->bw[TOPOML_PLAN_NVLINK] = n->nvlink_gbs;
	m->bw[TOPOML_PLAN_LEAF] = n->nic_gbs;
	m->bw[TOPOML_PLAN_SPINE] = n->nic_gbs;
	/* dragonfly global links are usually tapered about 2:1 */
	m->bw[TOPOML_PLAN_GLOBAL] = n->nic_gbs / 2;
	m->bw[TOPOML_PLAN_TORUS] = n->nic_gbs;
	m->efficiency = 0.6;
	m->reserve = 0.1;
	return 0;
}

double topoml_plan_site_bw(const topoml_topo_t *t,
			   struct topoml_plan_machine *m)
{
	double leaf = 0, up = 0;

	if (t->family != TOPOML_FAT_TREE || t->nlevels < 2)
		return 1;
	for (int i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *sw = &t->switches[i];
		double *v = sw->level ? &up : &leaf;

		if (!(sw->link_speed > 0))
			return 1;	/* not given for every switch */
		if (!*v || sw->link_speed < *v)
			*v = sw->link_speed;
	}
	if (up >= leaf)
		return 1;
	m->bw[TOPOML_PLAN_SPINE] *= up / leaf;
	return up / leaf;
}

void topoml_plan_model_init(struct topoml_plan_model *m)
{
	memset(m, 0, sizeof(*m));
	m->param_bytes = 2;
	m->grad_bytes = 4;
	m->opt_bytes = 12;
	m->seq_parallel = true;
	m->flash = true;
	m->experts = 1;
	m->topk = 1;
}

int topoml_plan_bw_parse(const char *s, double bw[TOPOML_PLAN_LEVELS],
			 char *err, size_t errlen)
{
	char *copy = s ? strdup(s) : NULL, *tok, *save = NULL;
	int rc = -1;

	if (!copy) {
		snprintf(err, errlen, "no bandwidths");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		double v;
		int l;

		if (!eq) {
			snprintf(err, errlen, "'%s': expected LEVEL=GB/s", tok);
			goto out;
		}
		*eq = '\0';
		for (l = 0; l < TOPOML_PLAN_LEVELS; l++)
			if (!strcmp(tok, level_names[l]))
				break;
		if (l == TOPOML_PLAN_LEVELS) {
			snprintf(err, errlen, "unknown level '%s' (expected "
				 "nvlink, leaf, spine, global or torus)", tok);
			goto out;
		}
		errno = 0;
		v = strtod(eq + 1, &end);
		if (errno || end == eq + 1 || *end || !(v > 0) || v > 1e6) {
			snprintf(err, errlen, "%s: '%s' is not a bandwidth > 0",
				 tok, eq + 1);
			goto out;
		}
		bw[l] = v;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

/* ---- the model ----------------------------------------------------- */

static bool _moe(const struct topoml_plan_model *m)
{
	return m->experts > 1;
}

/* Weights of one layer: attention 4h^2, MLP 2hf per expert, router. */
static double _layer_params(const struct topoml_plan_model *m, int ep)
{
	double h = m->hidden, f = m->ffn;

	if (_moe(m))
		return 4 * h * h + h * m->experts +
		       2 * h * f * ((double)m->experts / ep);
	return 4 * h * h + 2 * h * f;
}

double topoml_plan_params(const struct topoml_plan_model *m)
{
	return m->layers * _layer_params(m, 1) +
	       (double)m->hidden * (m->vocab + m->seq);
}

/*
 * Forward FLOPs of one token: per layer the attention projections
 * (8h^2), the scores and their use (4sh), the MLP of the k experts a
 * token goes to (4hfk) and the router; the logits (2hV).  For f = 4h,
 * k = 1 this is Narayanan et al.'s 24h^2(1 + s/6h) + 2hV.
 */
static double _fwd_flops_token(const struct topoml_plan_model *m)
{
	double h = m->hidden, f = m->ffn, s = m->seq;
	double k = _moe(m) ? m->topk : 1;
	double layer = 8 * h * h + 4 * s * h + 4 * h * f * k +
		       (_moe(m) ? 2 * h * m->experts : 0);

	return m->layers * layer + 2 * h * m->vocab;
}

/*
 * Activation bytes of one layer for one micro-batch of b sequences of
 * s' = s / cp tokens (Korthikanti et al. 2022, eq. 1-2): sbh(10 + 24/t
 * + 5as/(ht)); with sequence parallelism all of it over t.  The MLP's
 * share (16 of the 24) grows with f k / 4h; flash attention keeps no
 * scores.  Full recomputation keeps the layer's input, 2sbh.
 */
static double _act_layer(const struct topoml_plan_model *m, int tp, int cp,
			 int b, bool full)
{
	double s = (double)m->seq / cp, h = m->hidden, t = tp;
	double fk = (double)m->ffn * (_moe(m) ? m->topk : 1) / (4.0 * h);
	double shard = 8 + 16 * fk, keep = 10;
	double score = m->flash ? 0 : 5.0 * m->heads * s / h;

	if (!full)
		return 2 * s * b * h / (m->seq_parallel ? t : 1);
	if (m->seq_parallel)
		return s * b * h * ((shard + keep) / t + score / t);
	return s * b * h * (keep + shard / t + score / t);
}

/* ---- the fabric ---------------------------------------------------- */

struct _shape_cache {
	int tp, pp, cp, ep;
	enum topoml_plan_level level[TOPOML_KIND_COUNT];
	double hops[TOPOML_KIND_COUNT];	/* mean links per transfer */
};

struct topoml_plan_ctx {
	const topoml_topo_t *t;
	struct topoml_plan_machine m;
	int nnodes;
	int *nodes;			/* ring order */
	int *order;			/* nodes in a shape's rank order */
	struct _shape_cache *cache;
	int ncache, capcache;
};

struct topoml_plan_ctx *topoml_plan_new(const topoml_topo_t *t, int nnodes,
					const struct topoml_plan_machine *m,
					char *why, size_t whylen)
{
	struct topoml_plan_ctx *c;
	struct topoml_place_req req = { 0 };
	struct topoml_placement pl = { 0 };
	hwloc_bitmap_t all;

	if (nnodes < 1 || nnodes > t->nnodes) {
		snprintf(why, whylen, "%d nodes asked, the topology has %d",
			 nnodes, t->nnodes);
		return NULL;
	}
	if (m->gpus_per_node < 1 || !(m->tflops > 0) || !(m->mem_gib > 0) ||
	    !(m->efficiency > 0) || m->efficiency > 1) {
		snprintf(why, whylen, "incomplete machine description");
		return NULL;
	}
	if ((long)nnodes * m->gpus_per_node > topoml_hybrid_max_ranks(t)) {
		snprintf(why, whylen, "%d nodes of %d GPUs: more ranks than "
			 "the cost model prices (%ld)", nnodes,
			 m->gpus_per_node, topoml_hybrid_max_ranks(t));
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	all = hwloc_bitmap_alloc();
	if (!c || !all)
		goto oom;
	hwloc_bitmap_set_range(all, 0, t->nnodes - 1);
	req.nnodes = nnodes;
	req.avail = all;
	req.hint = TOPOML_HINT_ALLREDUCE;
	req.unscored = true;
	if (topoml_place(t, TOPOML_POLICY_TOPOML, &req, &pl, why, whylen)) {
		hwloc_bitmap_free(all);
		free(c);
		return NULL;
	}
	hwloc_bitmap_free(all);
	c->t = t;
	c->m = *m;
	c->nnodes = nnodes;
	c->nodes = pl.nodes;	/* taken over */
	c->order = malloc(nnodes * sizeof(*c->order));
	if (!c->order) {
		topoml_plan_free(c);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	return c;
oom:
	hwloc_bitmap_free(all);
	free(c);
	snprintf(why, whylen, "out of memory");
	return NULL;
}

void topoml_plan_free(struct topoml_plan_ctx *c)
{
	if (!c)
		return;
	free(c->nodes);
	free(c->order);
	free(c->cache);
	free(c);
}

/*
 * The highest level each kind's transfers cross on the placement, from
 * the placement's cost model: a ring or all-to-all runs at the pace of
 * its slowest link.
 */
static const struct _shape_cache *_levels(struct topoml_plan_ctx *c,
					  const struct topoml_parallel *p)
{
	const topoml_topo_t *t = c->t;
	struct topoml_hybrid_cost cost;
	struct _shape_cache *e;
	double w[TOPOML_KIND_COUNT];

	for (int i = 0; i < c->ncache; i++) {
		e = &c->cache[i];
		if (e->tp == p->tp && e->pp == p->pp && e->cp == p->cp &&
		    e->ep == p->ep)
			return e;
	}
	if (c->ncache == c->capcache) {
		int cap = c->capcache ? 2 * c->capcache : 64;
		void *n = realloc(c->cache, cap * sizeof(*c->cache));

		if (!n)
			return NULL;
		c->cache = n;
		c->capcache = cap;
	}
	topoml_kind_weights_default(w);
	/* the nodes in the order select/topoml gives this shape's ranks
	 * (pipeline stages kept inside top-level parts) */
	memcpy(c->order, c->nodes, c->nnodes * sizeof(*c->order));
	topoml_hybrid_order(t, c->order, c->nnodes, c->m.gpus_per_node, p,
			    w);
	if (topoml_hybrid_cost(t, c->order, c->nnodes, c->m.gpus_per_node, p,
			       w, &cost))
		return NULL;
	e = &c->cache[c->ncache++];
	e->tp = p->tp;
	e->pp = p->pp;
	e->cp = p->cp;
	e->ep = p->ep;
	for (int k = 0; k < TOPOML_KIND_COUNT; k++) {
		const struct topoml_kind_cost *kc = &cost.kind[k];
		enum topoml_plan_level l = TOPOML_PLAN_NVLINK;

		e->hops[k] = kc->off_node ? (double)kc->hops / kc->off_node
					  : 0;
		if (!kc->off_node || (t->nnvl > 0 && !kc->cross_nvl))
			l = TOPOML_PLAN_NVLINK;
		else if (t->family == TOPOML_TORUS)
			l = TOPOML_PLAN_TORUS;
		else if (t->family == TOPOML_DRAGONFLY)
			l = kc->cross_top ? TOPOML_PLAN_GLOBAL
					  : TOPOML_PLAN_LEAF;
		else
			l = kc->cross_leaf ? TOPOML_PLAN_SPINE
					   : TOPOML_PLAN_LEAF;
		e->level[k] = l;
	}
	return e;
}

/* Bytes per second of kind k's transfers. */
static double _bw(const struct topoml_plan_ctx *c,
		  const struct _shape_cache *e, int k)
{
	double bw = c->m.bw[e->level[k]] * 1e9;

	/* a transfer over h torus hops shares each link with h - 1 others */
	if (e->level[k] == TOPOML_PLAN_TORUS && e->hops[k] > 1)
		bw /= e->hops[k];
	return bw;
}

bool topoml_plan_fits(const struct topoml_plan_ctx *c,
		      const struct topoml_plan *p)
{
	return p->mem_gib <= c->m.mem_gib * (1 - c->m.reserve);
}

/* Memory only: state and activations of the fullest stage, in bytes. */
static void _memory(const struct topoml_plan_model *m,
		    const struct topoml_parallel *p, int mb, bool rc,
		    int nmb, double *state, double *act)
{
	double lps = (double)m->layers / p->pp;
	double dense = lps * _layer_params(m, p->ep) / p->tp +
		       (double)m->hidden * (m->vocab + m->seq) / p->tp;
	double opt_shard = m->zero1 ? (double)p->dp * p->cp : 1;
	int inflight = nmb < p->pp ? nmb : p->pp;
	double s = (double)m->seq / p->cp;

	*state = dense * (m->param_bytes + m->grad_bytes +
			  m->opt_bytes / opt_shard);
	/* 1F1B: the first stage holds pp micro-batches of its layers
	 * (Korthikanti et al. sec. 4.2.3), one layer in full while it
	 * recomputes; the logits in fp32 on the last */
	*act = lps * inflight * _act_layer(m, p->tp, p->cp, mb, !rc) +
	       (rc ? _act_layer(m, p->tp, p->cp, mb, true) : 0) +
	       4.0 * s * mb * m->vocab / p->tp;
}

int topoml_plan_eval(struct topoml_plan_ctx *c,
		     const struct topoml_plan_model *m,
		     const struct topoml_parallel *par, int mb, bool rc,
		     struct topoml_plan *out, char *why, size_t whylen)
{
	struct topoml_parallel p = *par;
	const struct _shape_cache *e;
	long gpus = (long)c->nnodes * c->m.gpus_per_node;
	double state, act, flops, tcomp, lps, s, h = m->hidden, msg, ar;
	double peak = c->m.tflops * 1e12 * c->m.efficiency;
	double passes = rc ? 4 : 3;

	memset(out, 0, sizeof(*out));
	if (p.ep < 1)
		p.ep = 1;
	if (p.cp < 1)
		p.cp = 1;
	if (topoml_parallel_resolve(&p, (int)gpus, why, whylen))
		return -1;
	if (m->layers % p.pp || m->batch % (p.dp * mb) ||
	    m->heads % p.tp || m->seq % p.cp ||
	    (_moe(m) ? m->experts % p.ep : p.ep != 1)) {
		snprintf(why, whylen, "the model's sizes do not divide by "
			 "this layout");
		return -1;
	}
	e = _levels(c, &p);
	if (!e) {
		snprintf(why, whylen, "cannot price the layout");
		return -1;
	}
	out->par = p;
	out->mb = mb;
	out->recompute = rc;
	out->nmb = m->batch / (p.dp * mb);
	_memory(m, &p, mb, rc, out->nmb, &state, &act);
	out->mem_state_gib = state / GIB;
	out->mem_act_gib = act / GIB;
	out->mem_gib = out->mem_state_gib + out->mem_act_gib;

	flops = passes * _fwd_flops_token(m) * m->batch * m->seq;
	tcomp = flops / gpus / peak;
	out->t_compute = tcomp;
	out->t_bubble = tcomp * (p.pp - 1) / out->nmb;

	lps = (double)m->layers / p.pp;
	s = (double)m->seq / p.cp;
	/* activations of one micro-batch at a layer boundary, 16-bit */
	msg = mb * s * h * 2;
	/* TP: 2 all-reduces (or reduce-scatter + all-gather) forward, 2
	 * backward, 2 more to recompute */
	ar = p.tp > 1 ? 2.0 * (p.tp - 1) / p.tp * msg : 0;
	out->t_tp = out->nmb * lps * (rc ? 6 : 4) * ar /
		    _bw(c, e, TOPOML_KIND_TP);
	/* CP: keys and values around the ring, forward, twice backward */
	if (p.cp > 1)
		out->t_cp = out->nmb * lps * (rc ? 4 : 3) * 2 * msg / p.tp *
			    (p.cp - 1) / _bw(c, e, TOPOML_KIND_CP);
	/* EP: dispatch and combine, forward and backward */
	if (p.ep > 1)
		out->t_ep = out->nmb * lps * (rc ? 6 : 4) * msg * m->topk /
			    p.tp * (p.ep - 1) / p.ep /
			    _bw(c, e, TOPOML_KIND_EP);
	/* PP: an activation forward and a gradient back per micro-batch
	 * and stage (scattered over the tensor group), on the critical
	 * path m + p - 1 times */
	if (p.pp > 1)
		out->t_pp = (out->nmb + p.pp - 1) * 2 * msg / p.tp /
			    _bw(c, e, TOPOML_KIND_PP);
	/* DP: the gradients' ring all-reduce over dp * cp ranks (experts'
	 * over dp * cp / ep), after the last micro-batch */
	{
		double dense = lps * 4 * h * h / p.tp +
			       h * (double)(m->vocab + m->seq) / p.tp;
		double expert = lps * (_layer_params(m, p.ep) - 4 * h * h) /
				p.tp;
		double g = (double)p.dp * p.cp, ge = g / p.ep;
		double bytes = 0;

		if (g > 1)
			bytes += 2 * (g - 1) / g * dense * m->grad_bytes;
		if (ge > 1)
			bytes += 2 * (ge - 1) / ge * expert * m->grad_bytes;
		out->t_dp = bytes / _bw(c, e, TOPOML_KIND_DP);
	}
	out->t_step = out->t_compute + out->t_bubble + out->t_tp +
		      out->t_cp + out->t_ep + out->t_pp + out->t_dp;
	out->tflops = flops / gpus / out->t_step / 1e12;
	out->tokens_per_s = (double)m->batch * m->seq / out->t_step;
	for (int k = 0; k < TOPOML_KIND_COUNT; k++)
		out->level[k] = e->level[k];
	return 0;
}

static int _check_model(const struct topoml_plan_model *m, char *why,
			size_t whylen)
{
	if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->ffn < 1 ||
	    m->vocab < 1 || m->seq < 1 || m->batch < 1 ||
	    m->hidden % m->heads || m->param_bytes < 1 ||
	    m->grad_bytes < 1 || m->opt_bytes < 0 ||
	    (m->experts > 1 && (m->topk < 1 || m->topk > m->experts))) {
		snprintf(why, whylen, "incomplete or inconsistent model "
			 "(layers, hidden divisible by heads, ffn, vocab, "
			 "seq, batch, experts >= top-k)");
		return -1;
	}
	return 0;
}

/* Insert p into the k best, kept sorted by step time. */
static void _keep(struct topoml_plan *best, int *n, int k,
		  const struct topoml_plan *p)
{
	int i;

	if (*n == k && best[k - 1].t_step <= p->t_step)
		return;
	i = *n < k ? (*n)++ : k - 1;
	while (i > 0 && best[i - 1].t_step > p->t_step) {
		best[i] = best[i - 1];
		i--;
	}
	best[i] = *p;
}

struct _search {
	struct topoml_plan_ctx *c;
	const struct topoml_plan_model *m;
	const struct topoml_plan_fix *fix;
	struct topoml_plan *out;
	int k, n;
	long count;
	double cap;		/* bytes a GPU holds */
	double tcomp3;		/* compute time without recomputation */
};

/* Every micro-batch and recomputation choice of one shape. */
static void _try_shape(struct _search *s, const struct topoml_parallel *p)
{
	const struct topoml_plan_model *m = s->m;
	int per = m->batch / p->dp;

	for (int mb = 1; mb <= 64 && mb <= per; mb *= 2) {
		int nmb = per / mb;

		if ((s->fix->mb && mb != s->fix->mb) || per % mb)
			continue;
		for (int rc = 0; rc < 2; rc++) {
			struct topoml_plan pl;
			double st, ac, lb;
			char why[128];

			if (s->fix->recompute >= 0 && rc != s->fix->recompute)
				continue;
			/* memory and a lower bound first: no pricing */
			_memory(m, p, mb, rc, nmb, &st, &ac);
			if (st + ac > s->cap)
				continue;
			lb = s->tcomp3 * (rc ? 4.0 / 3 : 1) *
			     (1 + (p->pp - 1.0) / nmb);
			if (s->n == s->k && lb >= s->out[s->k - 1].t_step)
				continue;
			s->count++;
			if (!topoml_plan_eval(s->c, m, p, mb, rc, &pl, why,
					      sizeof(why)))
				_keep(s->out, &s->n, s->k, &pl);
		}
	}
}

int topoml_plan_search(struct topoml_plan_ctx *c,
		       const struct topoml_plan_model *m,
		       const struct topoml_plan_fix *fix,
		       struct topoml_plan *out, int k, long *evaluated,
		       char *why, size_t whylen)
{
	static const struct topoml_plan_fix none = { 0, 0, 0, 0, 0, -1 };
	long gpus = (long)c->nnodes * c->m.gpus_per_node;
	struct _search s = { c, m, fix ? fix : &none, out, k, 0, 0, 0, 0 };
	double peak = c->m.tflops * 1e12 * c->m.efficiency;
	int emax = _moe(m) ? m->experts : 1;

	if (evaluated)
		*evaluated = 0;
	if (_check_model(m, why, whylen))
		return -1;
	if (k < 1)
		return 0;
	fix = s.fix;
	s.cap = c->m.mem_gib * (1 - c->m.reserve) * GIB;
	s.tcomp3 = 3 * _fwd_flops_token(m) * m->batch * m->seq / gpus / peak;
	for (int tp = 1; tp <= 64 && tp <= m->heads && tp <= gpus; tp *= 2) {
		if ((fix->tp && tp != fix->tp) || m->heads % tp ||
		    m->ffn % tp || gpus % tp)
			continue;
		for (int pp = 1; pp <= m->layers; pp++) {
			if ((fix->pp && pp != fix->pp) || m->layers % pp ||
			    gpus % ((long)tp * pp))
				continue;
			for (int cp = 1; cp <= 16; cp *= 2) {
				long dp;

				/* unasked, context parallelism only where
				 * each rank keeps 2048 tokens: shorter
				 * blocks run too far from the peak */
				if ((fix->cp && cp != fix->cp) ||
				    gpus % ((long)tp * pp * cp) ||
				    (cp > 1 && m->seq % (2 * cp)) ||
				    (!fix->cp && cp > 1 &&
				     m->seq / cp < 2048))
					continue;
				dp = gpus / ((long)tp * pp * cp);
				if (m->batch % dp)
					continue;
				for (int ep = 1; ep <= emax; ep++) {
					struct topoml_parallel p = {
						tp, pp, (int)dp, ep, cp };

					if ((fix->ep && ep != fix->ep) ||
					    (emax > 1 && (m->experts % ep ||
							  (dp * cp) % ep)))
						continue;
					_try_shape(&s, &p);
				}
			}
		}
	}
	if (evaluated)
		*evaluated = s.count;
	return s.n;
}
