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

struct _ctx {
	const topoml_topo_t *t;
	const int *nodes;
	int tpn;
	struct topoml_kind_cost *c;
};

/* One transfer between ranks a and b. */
static void _pair(const struct _ctx *x, int a, int b)
{
	const topoml_topo_t *t = x->t;
	int na = x->nodes[a / x->tpn], nb = x->nodes[b / x->tpn];
	const struct topoml_node *A = &t->nodes[na], *B = &t->nodes[nb];
	struct topoml_kind_cost *c = x->c;

	c->steps++;
	if (na == nb)
		return;
	c->off_node++;
	c->hops += topoml_hops(t, na, nb);
	if (A->leaf != B->leaf || A->leaf < 0)
		c->cross_leaf++;
	if (t->family == TOPOML_DRAGONFLY) {
		if (A->group != B->group)
			c->cross_top++;
	} else if (t->family != TOPOML_TORUS && t->nlevels > 1 &&
		   topoml_common_level(t, na, nb) >= t->nlevels - 1) {
		c->cross_top++;
	}
	if (t->nnvl > 0 && (A->nvl < 0 || A->nvl != B->nvl))
		c->cross_nvl++;
}

/* A ring all-reduce over ranks[0..m): m transfers, closed. */
static void _ring(const struct _ctx *x, const int *ranks, int m)
{
	if (m < 2)
		return;
	for (int i = 0; i < m; i++)
		_pair(x, ranks[i], ranks[(i + 1) % m]);
}

int topoml_hybrid_cost(const topoml_topo_t *t, const int *nodes, int n,
		       int tasks_per_node, const struct topoml_parallel *p,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_hybrid_cost *out)
{
	int T = p->tp, C = p->cp, D = p->dp, P = p->pp, E = p->ep;
	int world = n * tasks_per_node, big;
	struct _ctx x = { t, nodes, tasks_per_node, NULL };
	int *r;

	memset(out, 0, sizeof(*out));
	if (n < 1 || tasks_per_node < 1 || D < 1 ||
	    (long)T * C * D * P != world || (C * D) % E)
		return -1;
	big = T > C ? T : C;
	big = big > D ? big : D;
	big = big > E ? big : E;
	if (!(r = malloc(sizeof(int) * (size_t)big)))
		return -1;
	/* TP rings: T consecutive ranks. */
	x.c = &out->kind[TOPOML_KIND_TP];
	for (int g = 0; g < world / T; g++) {
		for (int i = 0; i < T; i++)
			r[i] = g * T + i;
		_ring(&x, r, T);
	}
	for (int pp = 0; pp < P; pp++)
		for (int tp = 0; tp < T; tp++) {
			/* CP rings, for each dp. */
			x.c = &out->kind[TOPOML_KIND_CP];
			for (int dp = 0; dp < D; dp++) {
				for (int i = 0; i < C; i++)
					r[i] = topoml_parallel_rank(p, tp, i,
								    dp, pp);
				_ring(&x, r, C);
			}
			/* DP rings, for each cp. */
			x.c = &out->kind[TOPOML_KIND_DP];
			for (int cp = 0; cp < C; cp++) {
				for (int i = 0; i < D; i++)
					r[i] = topoml_parallel_rank(p, tp, cp,
								    i, pp);
				_ring(&x, r, D);
			}
			/* EP all-to-all: E consecutive (cp, dp) slots. */
			x.c = &out->kind[TOPOML_KIND_EP];
			for (int g = 0; E > 1 && g < C * D / E; g++)
				for (int i = 0; i < E; i++)
					for (int j = i + 1; j < E; j++) {
						int a = g * E + i, b = g * E + j;

						_pair(&x, tp + T * a +
						      T * C * D * pp,
						      tp + T * b +
						      T * C * D * pp);
					}
		}
	/* PP: stage s to s + 1, for each (tp, cp, dp). */
	x.c = &out->kind[TOPOML_KIND_PP];
	for (int pp = 0; pp + 1 < P; pp++)
		for (int m = 0; m < T * C * D; m++)
			_pair(&x, m + T * C * D * pp, m + T * C * D * (pp + 1));
	free(r);
	for (int k = 0; k < TOPOML_KIND_COUNT; k++)
		out->weighted += w[k] * (double)out->kind[k].hops;
	return 0;
}
