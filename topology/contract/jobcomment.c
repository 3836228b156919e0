/*
 * select/topoml's part of a job's SystemComment: writer, merge, parser
 * (see topoml/jobcomment.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/jobcomment.h"
#include "topoml.h"
#include "model/model_int.h"

static const char *const _span_key[] = TOPOML_COMMENT_SPAN_KEYS;
#define SPAN_KEYS ((int)(sizeof(_span_key) / sizeof(_span_key[0])))

/* The values select/topoml writes for placed= (static names, so the
 * parsed struct needs no copies; hints: topoml_hint_name()). */
static const char *const _placed[] = { "topoml", "cons_tres" };

char *topoml_comment_write(const struct topoml_comment *c)
{
	int fam = c->family >= 0 && c->family < SPAN_KEYS ? c->family : 0;
	size_t olen = c->order ? strlen(c->order) : 0, cap = 256 + olen;
	char *out = malloc(cap);
	size_t len;

	if (!out)
		return NULL;
	len = snprintf(out, cap, "%splaced=%s", TOPOML_COMMENT_TAG, c->placed);
	if (c->hint)
		len += snprintf(out + len, cap - len, " hint=%s", c->hint);
	if (c->choice > 0)
		len += snprintf(out + len, cap - len, " choice=%d", c->choice);
	len += snprintf(out + len, cap - len, " %s=%d/%d ring=%.0f/%.0f",
			_span_key[fam], c->span, c->span_lb, c->ring,
			c->ring_lb);
	if (c->global_hops >= 0)
		len += snprintf(out + len, cap - len, " global_hops=%d",
				c->global_hops);
	if (c->spares > 0)
		len += snprintf(out + len, cap - len, " spares=%d", c->spares);
	if (olen && olen <= TOPOML_COMMENT_ORDER_MAX)
		snprintf(out + len, cap - len, " order=%s", c->order);
	return out;
}

char *topoml_comment_merge(const char *old, const char *ours)
{
	size_t tag = strlen(TOPOML_COMMENT_TAG);
	size_t sep = strlen(TOPOML_COMMENT_SEP);
	size_t cap = (old ? strlen(old) : 0) + sep + strlen(ours) + 1, len = 0;
	const char *p = old;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	/* Walk the parts of old; keep those that are not ours. */
	while (p && *p) {
		const char *end = strstr(p, TOPOML_COMMENT_SEP);
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n && strncmp(p, TOPOML_COMMENT_TAG, tag)) {
			if (len) {
				memcpy(out + len, TOPOML_COMMENT_SEP, sep);
				len += sep;
			}
			memcpy(out + len, p, n);
			len += n;
		}
		p = end ? end + sep : NULL;
	}
	if (len) {
		memcpy(out + len, TOPOML_COMMENT_SEP, sep);
		len += sep;
	}
	strcpy(out + len, ours);
	return out;
}

void topoml_comment_clear(struct topoml_comment *c)
{
	free(c->order);
	memset(c, 0, sizeof(*c));
	c->global_hops = -1;
}

static int _fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int _fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A whole decimal number of s[0..n-1], optionally negative: at most 15
 * digits, so that a figure never overflows. */
static int _num(const char *s, size_t n, long long *v)
{
	bool neg = n && s[0] == '-';
	long long x = 0;

	if (neg) {
		s++;
		n--;
	}
	if (!n || n > 15)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (s[i] - '0');
	}
	*v = neg ? -x : x;
	return 0;
}

static int _int(const char *s, size_t n, int *v)
{
	long long x;

	if (_num(s, n, &x) || x < -(1LL << 30) || x > (1LL << 30))
		return -1;
	*v = (int)x;
	return 0;
}

/* "A/B" of two numbers. */
static int _pair(const char *s, size_t n, long long *a, long long *b)
{
	const char *slash = memchr(s, '/', n);

	if (!slash)
		return -1;
	return _num(s, slash - s, a) ||
	       _num(slash + 1, n - (slash + 1 - s), b) ? -1 : 0;
}

static const char *_name(const char *s, size_t n, const char *const *names,
			 int count)
{
	for (int i = 0; i < count; i++)
		if (strlen(names[i]) == n && !memcmp(s, names[i], n))
			return names[i];
	return NULL;
}

/* Host-list characters: what Slurm node names and ranges are made of. */
static bool _hostlist_chars(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		      ch == '.' || ch == ',' || ch == '[' || ch == ']'))
			return false;
	}
	return true;
}

/* One "key=value" token of our part (k: key, v: value, vn: its length). */
static int _token(struct topoml_comment *c, const char *k, size_t kn,
		  const char *v, size_t vn, char *err, size_t errlen)
{
	long long a, b;
	int fam;

	if (kn == 6 && !memcmp(k, "placed", 6)) {
		if (!(c->placed = _name(v, vn, _placed, 2)))
			return _fail(err, errlen, "placed=%.*s: unknown",
				     (int)(vn > 32 ? 32 : vn), v);
	} else if (kn == 4 && !memcmp(k, "hint", 4)) {
		char h[32];
		enum topoml_hint hint;

		if (vn >= sizeof(h))
			return _fail(err, errlen, "hint=: too long");
		memcpy(h, v, vn);
		h[vn] = '\0';
		/* The names of the engine (topoml.h), no second list. */
		if (topoml_hint_parse(h, &hint))
			return _fail(err, errlen, "hint=%s: unknown", h);
		c->hint = topoml_hint_name(hint);
	} else if (kn == 6 && !memcmp(k, "choice", 6)) {
		if (_int(v, vn, &c->choice))
			return _fail(err, errlen, "choice: not a number");
	} else if (kn == 4 && !memcmp(k, "ring", 4)) {
		if (_pair(v, vn, &a, &b))
			return _fail(err, errlen, "ring: not A/B");
		c->ring = (double)a;
		c->ring_lb = (double)b;
	} else if (kn == 11 && !memcmp(k, "global_hops", 11)) {
		if (_int(v, vn, &c->global_hops))
			return _fail(err, errlen, "global_hops: not a number");
	} else if (kn == 6 && !memcmp(k, "spares", 6)) {
		if (_int(v, vn, &c->spares) || c->spares < 0 ||
		    c->spares > TOPOML_SPARES_MAX)
			return _fail(err, errlen, "spares: not 0-%d",
				     TOPOML_SPARES_MAX);
	} else if (kn == 5 && !memcmp(k, "order", 5)) {
		if (c->order)
			return _fail(err, errlen, "order= twice");
		if (!vn || vn > TOPOML_COMMENT_ORDER_MAX ||
		    !_hostlist_chars(v, vn))
			return _fail(err, errlen, "order=: not a host list "
				     "of at most %d characters",
				     TOPOML_COMMENT_ORDER_MAX);
		if (!(c->order = strndup(v, vn)))
			return _fail(err, errlen, "out of memory");
	} else {
		for (fam = 0; fam < SPAN_KEYS; fam++)
			if (strlen(_span_key[fam]) == kn &&
			    !memcmp(k, _span_key[fam], kn))
				break;
		if (fam == SPAN_KEYS)
			return 0;	/* a newer writer's key */
		if (_pair(v, vn, &a, &b))
			return _fail(err, errlen, "%s: not A/B", _span_key[fam]);
		if (a < -(1LL << 30) || a > (1LL << 30) ||
		    b < -(1LL << 30) || b > (1LL << 30))
			return _fail(err, errlen, "%s: out of range",
				     _span_key[fam]);
		c->family = fam;
		c->span = (int)a;
		c->span_lb = (int)b;
	}
	return 0;
}

int topoml_comment_parse(const char *sc, struct topoml_comment *c, char *err,
			 size_t errlen)
{
	size_t tag = strlen(TOPOML_COMMENT_TAG), sep = strlen(TOPOML_COMMENT_SEP);
	const char *p = sc, *ours = NULL, *end = NULL;
	size_t len;

	memset(c, 0, sizeof(*c));
	c->global_hops = -1;
	if (!sc || !*sc)
		return 1;
	len = strnlen(sc, TOPOML_COMMENT_MAX + 1);
	if (len > TOPOML_COMMENT_MAX)
		return _fail(err, errlen, "SystemComment longer than %d bytes",
			     TOPOML_COMMENT_MAX);
	/* Parts as topoml_comment_merge() writes them. */
	while (p && *p) {
		const char *e = strstr(p, TOPOML_COMMENT_SEP);

		if (!strncmp(p, TOPOML_COMMENT_TAG, tag)) {
			if (ours)
				return _fail(err, errlen, "two topoml parts");
			ours = p + tag;
			end = e ? e : sc + len;
		}
		p = e ? e + sep : NULL;
	}
	if (!ours)
		return 1;
	for (p = ours; p < end;) {
		const char *sp = memchr(p, ' ', end - p), *eq;
		size_t n = sp ? (size_t)(sp - p) : (size_t)(end - p), kn;

		eq = memchr(p, '=', n);
		kn = eq ? (size_t)(eq - p) : 0;
		for (size_t i = 0; i < kn; i++)
			if (!((p[i] >= 'a' && p[i] <= 'z') || p[i] == '_'))
				kn = 0;
		if (!kn) {
			topoml_comment_clear(c);
			return _fail(err, errlen, "'%.*s' at byte %zu is not "
				     "key=value", (int)(n > 32 ? 32 : n), p,
				     (size_t)(p - sc));
		}
		if (_token(c, p, kn, eq + 1, n - kn - 1, err, errlen)) {
			topoml_comment_clear(c);
			return -1;
		}
		p += n + (sp ? 1 : 0);
	}
	if (!c->placed) {
		topoml_comment_clear(c);
		return _fail(err, errlen, "no placed=");
	}
	return 0;
}

struct _slot {
	const char *name;
	int idx;
};

static int _slot_cmp(const void *a, const void *b)
{
	return strcmp(((const struct _slot *)a)->name,
		      ((const struct _slot *)b)->name);
}

struct _walk {
	struct _slot *slot;
	bool *used;
	int n, k, *out;
	bool dup;
	char *err;
	size_t errlen;
};

/* One host of order=: the next ring position if it is a step node. */
static int _walk_host(const char *host, void *arg)
{
	struct _walk *w = arg;
	struct _slot key = { .name = host }, *hit;

	hit = bsearch(&key, w->slot, w->n, sizeof(*w->slot), _slot_cmp);
	if (!hit)
		return 0;
	if (w->used[hit->idx]) {
		w->dup = true;
		return _fail(w->err, w->errlen, "node %s twice in the order",
			     host);
	}
	w->used[hit->idx] = true;
	w->out[w->k++] = hit->idx;
	return 0;
}

int topoml_comment_step_order(const char *order, char *const *names, int n,
			      int *out, char *err, size_t errlen)
{
	struct _walk w = { .n = n, .out = out, .err = err, .errlen = errlen };
	struct topoml_hl_budget b;
	size_t len = order ? strlen(order) : 0;
	int rc = -1;

	if (!len || n <= 0)
		return _fail(err, errlen, "no order");
	if (len > TOPOML_COMMENT_ORDER_MAX || !_hostlist_chars(order, len))
		return _fail(err, errlen, "order is not a host list");
	w.slot = malloc(sizeof(*w.slot) * n);
	w.used = calloc(n, sizeof(*w.used));
	if (!w.slot || !w.used) {
		_fail(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		w.slot[i].name = names[i];
		w.slot[i].idx = i;
	}
	qsort(w.slot, n, sizeof(*w.slot), _slot_cmp);
	for (int i = 1; i < n; i++)
		if (!strcmp(w.slot[i - 1].name, w.slot[i].name)) {
			_fail(err, errlen, "node %s twice in the step",
			      w.slot[i].name);
			goto out;
		}
	/*
	 * libslurm's own parser leaks on, and may exit (fatal) on, some
	 * strings: model/nodeset.c's walk checks them first, in linear
	 * time, and bounds the hosts.
	 */
	topoml__hl_budget_init(&b);
	if (b.hosts > TOPOML_COMMENT_NODES_MAX)
		b.hosts = TOPOML_COMMENT_NODES_MAX;
	if (topoml__hostlist_foreach(order, &b, _walk_host, &w)) {
		if (!w.dup)
			_fail(err, errlen, "order is not a host list%s",
			      topoml__hostlist_why(errno));
		goto out;
	}
	if (w.k != n) {
		_fail(err, errlen, "order holds %d of the step's %d nodes",
		      w.k, n);
		goto out;
	}
	rc = 0;
out:
	free(w.slot);
	free(w.used);
	return rc;
}
