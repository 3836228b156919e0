/*
 * Slurm host list strings, through libslurm's own hostlist code so that
 * "n[1-4,7]" means exactly what it means to Slurm (node sets of a model:
 * model/nodeset.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "util/hostlist_compat.h"

#include "topoml.h"
#include "util/util.h"

/*
 * libslurm 22.05's hostlist_create() cannot be given a string from a user
 * as is (src/common/hostlist.c):
 *  - every malformed range leaks a strdup() (_parse_single_range returns
 *    without freeing its copy), in slurmctld on every reconfigure;
 *  - _next_tok() looks for ']' from the token to the end of the string,
 *    for every token holding '[': quadratic in "[,[,[,...";
 *  - _push_range_list() recurses and copies the name once per bracket
 *    group, and expands the product of the groups ("a[0-99]b[0-99]...");
 *  - past 256k ranges in one group it calls fatal(), which exits.
 * So the string is cut into tokens here as _next_tok() cuts it, in one
 * pass; each token is checked against Slurm's own rules and counted, and
 * only tokens Slurm accepts whole are handed to it, one at a time (its
 * tokens are independent: the list is their concatenation).  The verdict
 * is Slurm's except for lists Slurm would take only partly (a bad range in
 * a prefix group is silently dropped there) or could not expand in
 * reasonable time or memory: those are refused.
 */
#define SLURM_MAX_RANGE		(64 * 1024)	/* hostlist.c MAX_RANGE */
#define SLURM_MAX_RANGES	(256 * 1024)	/* hostlist.c MAX_RANGES */
#define SLURM_MAX_PREFIX_CNT	(64 * 1024)	/* hostlist.h */

const char *topoml__hostlist_why(int e)
{
	if (e == E2BIG)
		return " (expands to too many hosts or bracket groups)";
	if (e == EDOM)
		return " (Slurm would silently drop part of it)";
	if (e == ERANGE)
		return " (a number too large for Slurm)";
	if (e == EILSEQ)
		return " (a control character in a host name)";
	return "";
}

long topoml__hostlist_max_hosts = TOPOML_HOSTLIST_MAX_HOSTS;

void topoml__hl_budget_init(struct topoml_hl_budget *b)
{
	b->hosts = topoml__hostlist_max_hosts;
	b->bytes = TOPOML_HOSTLIST_MAX_BYTES;
}

static bool _is_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',';	/* Slurm's "\t, " */
}

/*
 * First c at or after from, or len.  The answer for the last query is
 * kept: queries only move forward, so every byte is scanned once.
 */
struct _find {
	size_t from, at;
	bool valid;
};

static size_t _find(const char *s, size_t len, char c, size_t from,
		    struct _find *f)
{
	const char *p;

	if (f->valid && f->from <= from && from <= f->at)
		return f->at;
	p = from < len ? memchr(s + from, c, len - from) : NULL;
	f->from = from;
	f->at = p ? (size_t)(p - s) : len;
	f->valid = true;
	return f->at;
}

/*
 * Slurm's _parse_single_range() for dims 1, without its leak: 0, -1 when
 * Slurm refuses the range, -2 for a bound of ULONG_MAX (what strtoul()
 * gives past it), on which Slurm loops for ever ("for (j = lo; j <= hi;
 * j++)" in _push_range_list) or loses hosts (hostrange_empty()).
 */
static int _range(char *str, unsigned long *count)
{
	unsigned long lo, hi;
	char *p, *q;

	if (strchr(str, 'x'))
		return -1;
	p = strchr(str, '-');
	if (p) {
		*p++ = '\0';
		if (*p == '-')
			return -1;
	}
	lo = strtoul(str, &q, 10);
	if (q == str)
		return -1;
	hi = p && *p ? strtoul(p, &q, 10) : lo;
	if (q == p || *q != '\0' || lo > hi)
		return -1;
	if (hi == ULONG_MAX)
		return -2;
	/* Slurm computes hi - lo + 1, which wraps for 0-ULONG_MAX. */
	if (hi - lo >= SLURM_MAX_RANGE)
		return -1;
	*count = hi - lo + 1;
	return 0;
}

/*
 * Slurm's _parse_range_list() on str (modified): the number of hosts, or
 * -1 when Slurm would refuse a range or call fatal(), -2 past max_cnt, -3
 * for a bound Slurm cannot handle.
 */
static long _range_list(char *str, unsigned long max_cnt, long *nranges)
{
	unsigned long total = 0, n;
	long ranges = 0;
	char *p;

	while (str) {
		if (ranges++ == SLURM_MAX_RANGES)
			return -1;
		p = strchr(str, ',');
		if (p)
			*p++ = '\0';
		switch (_range(str, &n)) {
		case -1:
			return -1;
		case -2:
			return -3;
		}
		total += n;
		if (total > max_cnt)
			return -2;
		str = p;
	}
	*nranges = ranges;
	return (long)total;
}

/*
 * The hosts one token expands to (tok is modified), as Slurm's
 * _hostlist_create_bracketed() and _push_range_list() read it, or -1 with
 * errno: EINVAL Slurm refuses it, EDOM Slurm would drop part of it without
 * a word (a bad third or later group), E2BIG too large.
 */
static long _token_hosts(char *tok)
{
	unsigned long hosts, cnt, ranges;
	char *p, *q, *end;
	long n, nr;
	int groups = 1;

	/*
	 * Slurm joins a host to the previous one when their prefixes
	 * compare equal with strnatcmp(), which skips white space: "\r0,1"
	 * gives "\r0" and "\r1".  Such names are no node's name anyway.
	 */
	if (strpbrk(tok, "\n\v\f\r")) {
		errno = EILSEQ;
		return -1;
	}
	p = strrchr(tok, '[');
	if (!p)
		return 1;
	q = strchr(p, ']');
	if (!q)
		return 1;	/* Slurm takes it as a name with a ']' added */
	if (q[1] != ',' && q[1] != '\0')
		goto inval;
	*q = '\0';
	/* No count limit at this level but fatal()'s and the budget's. */
	n = _range_list(p + 1, topoml__hostlist_max_hosts, &nr);
	if (n == -2)
		goto big;
	if (n == -3)
		goto range;
	if (n < 0)
		goto inval;
	hosts = (unsigned long)n;
	ranges = (unsigned long)nr;
	/* Prefix groups, last first: "[" ... the last "]" after it. */
	end = p;
	for (;;) {
		char *o = NULL, *c = NULL;

		for (char *r = end; r > tok; r--)
			if (r[-1] == '[') {
				o = r - 1;
				break;
			}
		if (!o)
			break;
		for (char *r = end; r > o + 1; r--)
			if (r[-1] == ']') {
				c = r - 1;
				break;
			}
		if (!c)
			break;	/* a literal '[' in the name: Slurm's too */
		if (++groups > TOPOML_HOSTLIST_MAX_GROUPS)
			goto big;
		*c = '\0';
		n = _range_list(o + 1, SLURM_MAX_PREFIX_CNT, &nr);
		if (n == -3)
			goto range;
		if (n < 0) {
			/* Slurm: an error in the 2nd group, ignored after. */
			errno = groups == 2 ? EINVAL : EDOM;
			return -1;
		}
		cnt = (unsigned long)n;
		if (hosts > (unsigned long)topoml__hostlist_max_hosts / cnt)
			goto big;
		hosts *= cnt;
		/* one Slurm range per top range and prefix: see below */
		if (ranges > TOPOML_HOSTLIST_MAX_TOKEN_RANGES / cnt)
			goto big;
		ranges *= cnt;
		end = o;
	}
	/*
	 * Slurm grows a host list 16 ranges at a time (hostlist_expand()):
	 * quadratic in the ranges of one token, hence a bound on them.
	 */
	if (ranges > TOPOML_HOSTLIST_MAX_TOKEN_RANGES)
		goto big;
	return (long)hosts;
inval:
	errno = EINVAL;
	return -1;
big:
	errno = E2BIG;
	return -1;
range:
	errno = ERANGE;
	return -1;
}

/*
 * The next token of list from *pos as Slurm's _next_tok() cuts it (its
 * separators "\t, ", and brackets that hold separators), in one pass over
 * the string for all tokens.  [*start, *pos) is the token; false at the end.
 */
struct _tokens {
	const char *s;
	size_t len, pos;
	struct _find open, close;
};

static bool _next_token(struct _tokens *tk, size_t *start, size_t *end)
{
	const char *list = tk->s;
	size_t len = tk->len, pos = tk->pos, parse, str, o, c = 0;

	while (pos < len && _is_sep(list[pos]))
		pos++;
	if (pos == len)
		return false;
	*start = parse = str = pos;
	for (;;) {
		while (str < len && !_is_sep(list[str]))
			str++;
		for (;;) {
			o = _find(list, len, '[', parse, &tk->open);
			if (o == len || o > str)
				goto cut;
			c = _find(list, len, ']', parse, &tk->close);
			if (c == len || c < o)
				goto cut;
			if (c < str)
				parse = c + 1;
			else
				break;
		}
		str = c;
	}
cut:
	tk->pos = *end = str;
	return true;
}

int topoml__hostlist_foreach(const char *hostlist, struct topoml_hl_budget *b,
			    int (*fn)(const char *host, void *arg), void *arg)
{
	struct topoml_hl_budget own;
	struct _tokens tk = { .s = hostlist };
	size_t start, end;
	char *tok, *host;
	int rc = 0, e;

	if (!hostlist || !*hostlist)
		return 0;
	if (!b) {
		topoml__hl_budget_init(&own);
		b = &own;
	}
	tk.len = strlen(hostlist);
	tok = malloc(tk.len + 1);
	if (!tok) {
		errno = ENOMEM;
		return -1;
	}
	/* Pass 1: every token valid and within the budget, or nothing. */
	while (_next_token(&tk, &start, &end)) {
		long n;

		memcpy(tok, hostlist + start, end - start);
		tok[end - start] = '\0';
		n = _token_hosts(tok);
		if (n < 0)
			goto fail;
		if (n > b->hosts ||
		    (unsigned long)n > (unsigned long)b->bytes /
				       (end - start + 1)) {
			errno = E2BIG;
			goto fail;
		}
		b->hosts -= n;
		b->bytes -= n * (long)(end - start + 1);
	}
	/*
	 * Pass 2: each token through Slurm alone (the list is the
	 * concatenation of its tokens), never merged: merging many ranges
	 * into one Slurm list is quadratic too.
	 */
	memset(&tk, 0, sizeof(tk));
	tk.s = hostlist;
	tk.len = strlen(hostlist);
	while (!rc && _next_token(&tk, &start, &end)) {
		topoml_hl_t hl;

		memcpy(tok, hostlist + start, end - start);
		tok[end - start] = '\0';
		hl = slurm_hostlist_create(tok);
		if (!hl) {
			errno = ENOMEM;	/* checked above: Slurm takes it */
			rc = -1;
			break;
		}
		while (!rc && (host = slurm_hostlist_shift(hl))) {
			rc = fn(host, arg);
			free(host);
		}
		slurm_hostlist_destroy(hl);
	}
	free(tok);
	return rc;
fail:
	e = errno;	/* for the caller, past free() */
	free(tok);
	errno = e;
	return -1;
}

/*
 * The bracketed string of HL in malloc()ed memory.  Not
 * slurm_hostlist_ranged_string_malloc(): gone in Slurm 23.11, and the
 * plugins that link this file load into every release's daemons; the
 * fixed-buffer call exists in all of them.
 */
char *topoml__hostlist_ranged(topoml_hl_t hl)
{
	size_t n = 256;
	char *buf = NULL, *nb;

	for (;;) {
		if (!(nb = realloc(buf, n))) {
			free(buf);
			return NULL;
		}
		buf = nb;
		if (slurm_hostlist_ranged_string(hl, n, buf) >= 0)
			return buf;
		if (n > ((size_t)1 << 30)) {
			free(buf);
			return NULL;
		}
		n *= 2;
	}
}

/* Append s to the growing string *out (with a comma between parts). */
static int _append(char **out, size_t *len, const char *s)
{
	size_t l = strlen(s);
	char *n = realloc(*out, *len + l + 2);

	if (!n)
		return -1;
	if (*len)
		n[(*len)++] = ',';
	memcpy(n + *len, s, l + 1);
	*len += l;
	*out = n;
	return 0;
}

/*
 * Slurm refuses to parse ranges of more than 64k hosts, so never write
 * one: format in chunks of at most that many hosts.
 */
char *topoml__names_format(const char *const *names, int n, bool sort)
{
	char *out = NULL;
	size_t len = 0;
	int i = 0;

	out = strdup("");
	if (!out)
		return NULL;
	while (i < n) {
		topoml_hl_t hl = slurm_hostlist_create(NULL);
		int end = i + TOPOML_HOSTLIST_MAX_RANGE;
		char *s;

		if (!hl)
			goto fail;
		if (end > n)
			end = n;
		for (; i < end; i++)
			if (names[i])
				slurm_hostlist_push_host(hl, names[i]);
		if (sort)
			slurm_hostlist_uniq(hl);
		s = topoml__hostlist_ranged(hl);
		slurm_hostlist_destroy(hl);
		if (!s)
			goto fail;
		if (*s && _append(&out, &len, s)) {
			free(s);
			goto fail;
		}
		free(s);
	}
	return out;
fail:
	free(out);
	return NULL;
}
