/*
 * The model description file of topoml plan and --ml-parallel=auto
 * (topoml/plan.h): "key = value" lines with topoml plan's option names.  The
 * SPANK plugin parses a user's file in slurmstepd: every mistake is a
 * message with the file and line, never more than the text given.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/plan.h"

#define LINE_MAX_LEN 512

void topoml_plan_spec_init(struct topoml_plan_spec *s)
{
	memset(s, 0, sizeof(*s));
	topoml_plan_model_init(&s->model);
	s->model.vocab = 51200;
	s->model.experts = 0;
	s->model.topk = 0;
	s->fix = (struct topoml_plan_fix){ 0, 0, 0, 0, 0, -1 };
}

static int _int(const char *key, const char *v, long lo, long hi, int *out,
		char *why, size_t whylen)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		snprintf(why, whylen, "%s: '%.64s' is not a number from %ld "
			 "to %ld", key, v, lo, hi);
		return -1;
	}
	*out = (int)x;
	return 0;
}

static int _dbl(const char *key, const char *v, double lo, double hi,
		double *out, char *why, size_t whylen)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || !(x >= lo) || x > hi) {
		snprintf(why, whylen, "%s: '%.64s' is not a number from %g "
			 "to %g", key, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

static int _bool(const char *key, const char *v, bool *out, char *why,
		 size_t whylen)
{
	if (!strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "true") ||
	    !strcmp(v, "1")) {
		*out = true;
	} else if (!strcmp(v, "no") || !strcmp(v, "off") ||
		   !strcmp(v, "false") || !strcmp(v, "0")) {
		*out = false;
	} else {
		snprintf(why, whylen, "%s: '%.64s' is not yes or no", key, v);
		return -1;
	}
	return 0;
}

static int _str(const char *key, const char *v, char *out, size_t len,
		char *why, size_t whylen)
{
	if (strlen(v) >= len) {
		snprintf(why, whylen, "%s: longer than %zu characters", key,
			 len - 1);
		return -1;
	}
	snprintf(out, len, "%s", v);
	return 0;
}

int topoml_plan_spec_set(struct topoml_plan_spec *s, const char *key,
			 const char *v, char *why, size_t whylen)
{
	struct topoml_plan_model *m = &s->model;
	const struct {
		const char *key;
		int *slot;
		long hi;
	} ints[] = {
		{ "layers", &m->layers, 100000 },
		{ "hidden", &m->hidden, 1L << 24 },
		{ "heads", &m->heads, 65536 },
		{ "ffn", &m->ffn, 1L << 24 },
		{ "vocab", &m->vocab, 1L << 24 },
		{ "seq", &m->seq, 1L << 24 },
		{ "batch", &m->batch, 1L << 24 },
		{ "experts", &m->experts, 65536 },
		{ "top-k", &m->topk, 65536 },
		{ "gpus-per-node", &s->gpus_per_node, 1024 },
		{ "tp", &s->fix.tp, 65536 },
		{ "pp", &s->fix.pp, 65536 },
		{ "cp", &s->fix.cp, 65536 },
		{ "ep", &s->fix.ep, 65536 },
		{ "micro-batch", &s->fix.mb, 65536 },
	};

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (!strcmp(key, ints[i].key))
			return _int(key, v, 1, ints[i].hi, ints[i].slot, why,
				    whylen);
	if (!strcmp(key, "zero1"))
		return _bool(key, v, &m->zero1, why, whylen);
	if (!strcmp(key, "seq-parallel"))
		return _bool(key, v, &m->seq_parallel, why, whylen);
	if (!strcmp(key, "flash"))
		return _bool(key, v, &m->flash, why, whylen);
	if (!strcmp(key, "recompute")) {
		bool on;

		if (_bool(key, v, &on, why, whylen))
			return -1;
		s->fix.recompute = on;
		return 0;
	}
	if (!strcmp(key, "gpu-mem"))
		return _dbl(key, v, 0.001, 1e6, &s->gpu_mem, why, whylen);
	if (!strcmp(key, "gpu-tflops"))
		return _dbl(key, v, 0.001, 1e7, &s->gpu_tflops, why, whylen);
	if (!strcmp(key, "efficiency"))
		return _dbl(key, v, 0.01, 1, &s->efficiency, why, whylen);
	if (!strcmp(key, "node-model"))
		return _str(key, v, s->node_model, sizeof(s->node_model), why,
			    whylen);
	if (!strcmp(key, "gpu"))
		return _str(key, v, s->gpu, sizeof(s->gpu), why, whylen);
	if (!strcmp(key, "bw")) {
		double bw[TOPOML_PLAN_LEVELS] = { 0 };

		if (topoml_plan_bw_parse(v, bw, why, whylen))
			return -1;
		return _str(key, v, s->bw, sizeof(s->bw), why, whylen);
	}
	if (!strcmp(key, "precision")) {
		if (strcmp(v, "bf16") && strcmp(v, "fp16") && strcmp(v, "fp32")) {
			snprintf(why, whylen, "precision: '%.64s' is not bf16, "
				 "fp16 or fp32", v);
			return -1;
		}
		return _str(key, v, s->precision, sizeof(s->precision), why,
			    whylen);
	}
	if (!strcmp(key, "optimizer")) {
		if (strcmp(v, "adam") && strcmp(v, "sgd")) {
			snprintf(why, whylen, "optimizer: '%.64s' is not adam "
				 "or sgd", v);
			return -1;
		}
		return _str(key, v, s->optimizer, sizeof(s->optimizer), why,
			    whylen);
	}
	snprintf(why, whylen, "unknown key '%.64s'", key);
	return -1;
}

/* The text of a line, trimmed, into buf: 0, or -1 with why. */
static int _line(const char *p, size_t n, char *buf, char *why,
		 size_t whylen)
{
	size_t a = 0, b = n;

	if (n >= LINE_MAX_LEN) {
		snprintf(why, whylen, "line longer than %d characters",
			 LINE_MAX_LEN - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (p[i] == '#') {
			b = i;
			break;
		} else if (!isprint((unsigned char)p[i]) && p[i] != '\t') {
			snprintf(why, whylen, "a control or non-ASCII "
				 "character");
			return -1;
		}
	while (a < b && isspace((unsigned char)p[a]))
		a++;
	while (b > a && isspace((unsigned char)p[b - 1]))
		b--;
	memcpy(buf, p + a, b - a);
	buf[b - a] = '\0';
	return 0;
}

int topoml_plan_spec_parse(struct topoml_plan_spec *s, const char *text,
			   size_t len, const char *name, char *why,
			   size_t whylen)
{
	char seen[64][24];
	int nseen = 0, line = 0;
	const char *p = text, *end = text + len;
	char msg[256];

	if (len > TOPOML_PLAN_FILE_MAX) {
		snprintf(why, whylen, "%s: larger than %d bytes", name,
			 TOPOML_PLAN_FILE_MAX);
		return -1;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char buf[LINE_MAX_LEN], *eq, *k, *v;

		line++;
		if (memchr(p, '\0', n)) {
			snprintf(why, whylen, "%s:%d: a NUL byte", name, line);
			return -1;
		}
		if (_line(p, n, buf, msg, sizeof(msg)))
			goto bad;
		p += n + (nl ? 1 : 0);
		if (!buf[0])
			continue;
		if (!(eq = strchr(buf, '='))) {
			snprintf(msg, sizeof(msg), "'%.64s': expected key = "
				 "value", buf);
			goto bad;
		}
		*eq = '\0';
		k = buf;
		v = eq + 1;
		for (char *e = eq; e > k && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		while (isspace((unsigned char)*v))
			v++;
		if (!*k || !*v) {
			snprintf(msg, sizeof(msg), "expected key = value");
			goto bad;
		}
		for (int i = 0; i < nseen; i++)
			if (!strcmp(seen[i], k)) {
				snprintf(msg, sizeof(msg), "%.64s given twice",
					 k);
				goto bad;
			}
		if (topoml_plan_spec_set(s, k, v, msg, sizeof(msg)))
			goto bad;
		/* a key set is a known one: short */
		if (nseen < 64 && strlen(k) < sizeof(seen[0]))
			memcpy(seen[nseen++], k, strlen(k) + 1);
		continue;
bad:
		snprintf(why, whylen, "%s:%d: %s", name, line, msg);
		return -1;
	}
	return 0;
}

int topoml_plan_spec_finish(struct topoml_plan_spec *s,
			    struct topoml_plan_machine *mc,
			    char *why, size_t whylen)
{
	struct topoml_plan_model *m = &s->model;
	const char *prec = s->precision[0] ? s->precision : "bf16";
	const char *optim = s->optimizer[0] ? s->optimizer : "adam";
	const char *node = s->node_model[0] ? s->node_model : "dgx-h100";

	if (!m->layers || !m->hidden || !m->heads || !m->seq || !m->batch) {
		snprintf(why, whylen, "layers, hidden, heads, seq and batch "
			 "are required");
		return -1;
	}
	if (!m->ffn)
		m->ffn = 4 * m->hidden;
	if ((m->experts > 1) != (m->topk > 0) || m->topk > m->experts) {
		snprintf(why, whylen, "experts (2 or more) and top-k (1 to "
			 "experts) go together");
		return -1;
	}
	if (m->experts <= 1) {
		m->experts = 1;
		m->topk = 1;
	}
	if (m->hidden % m->heads) {
		snprintf(why, whylen, "hidden %d is not a multiple of heads "
			 "%d", m->hidden, m->heads);
		return -1;
	}
	m->param_bytes = strcmp(prec, "fp32") ? 2 : 4;
	/* Adam: fp32 master copy (mixed precision), two moments */
	if (!strcmp(optim, "adam"))
		m->opt_bytes = m->param_bytes == 4 ? 8 : 12;
	else
		m->opt_bytes = m->param_bytes == 4 ? 4 : 8;
	if (topoml_plan_machine_init(mc, node)) {
		snprintf(why, whylen, "node-model: unknown '%.64s'", node);
		return -1;
	}
	if (s->gpu[0]) {
		const struct topoml_plan_gpu_info *g = topoml_plan_gpu(s->gpu);

		if (!g) {
			snprintf(why, whylen, "gpu: unknown '%.64s'", s->gpu);
			return -1;
		}
		mc->gpu = g->name;
		mc->mem_gib = g->mem_gib;
		mc->tflops = g->tflops;
	}
	if (s->gpu_mem)
		mc->mem_gib = s->gpu_mem;
	if (s->gpu_tflops)
		mc->tflops = s->gpu_tflops;
	if (s->efficiency)
		mc->efficiency = s->efficiency;
	if (s->gpus_per_node)
		mc->gpus_per_node = s->gpus_per_node;
	if (s->bw[0] && topoml_plan_bw_parse(s->bw, mc->bw, why, whylen))
		return -1;
	return 0;
}
