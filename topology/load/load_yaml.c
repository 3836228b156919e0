/*
 * Slurm 26.05's topology.yaml (topology.yaml(5) of 26.05): its torus3d
 * section, the box shapes (placements) and their anchors that
 * topology/torus3d allows, read as slurmctld reads them; the torus it
 * describes as a model; and, for a torus without the admin's shapes, a
 * box of every size, each the most cube-like, anchors at every cell
 * (topoml_torus3d_every_size()).  The placement on those shapes:
 * place/torus/place_torus3d.c.
 *
 * The YAML reader knows the subset topology.yaml files use: block mappings
 * and sequences by indentation, flow mappings ({x: 4, y: 4, z: 2}),
 * plain or quoted scalars, '#' comments.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "topoml/build.h"
#include "model/model_int.h"

/* ---- a small YAML subset -------------------------------------------- */

enum ynode_type { Y_SCALAR, Y_MAP, Y_SEQ };

struct ynode {
	enum ynode_type type;
	int line;
	char *str;		/* scalar */
	int n;			/* map pairs or seq items */
	char **keys;		/* map */
	struct ynode **v;	/* map values, seq items */
};

struct yline {
	int no;			/* line number, 1-based */
	int ind;		/* column of the content */
	char *s;		/* content, comments and trailing blanks cut */
};

struct yparse {
	const char *path;
	topoml_errors_t *err;
	struct yline *l;
	int nl;
	int bad;
	int depth;		/* of _yblock calls: bounded, slurmctld's stack */
};

/* topology.yaml nests 8 deep; a deeper file is refused, not recursed into
 * (400 KB of "- " overflowed the stack). */
#define Y_MAX_DEPTH 64

static void _yfree(struct ynode *y)
{
	if (!y)
		return;
	for (int i = 0; i < y->n; i++) {
		if (y->keys)
			free(y->keys[i]);
		_yfree(y->v[i]);
	}
	free(y->keys);
	free(y->v);
	free(y->str);
	free(y);
}

static struct ynode *_ynew(enum ynode_type type, int line)
{
	struct ynode *y = calloc(1, sizeof(*y));

	if (y) {
		y->type = type;
		y->line = line;
	}
	return y;
}

static int _yadd(struct ynode *y, char *key, struct ynode *v)
{
	char **k = NULL;
	struct ynode **nv;

	/* doubling: a long list grown by one was quadratic (52 s for 100k
	 * items under ASan) */
	if (y->type == Y_MAP) {
		if (topoml__grow((void **)&y->keys, y->n, sizeof(*k)))
			return -1;
		k = y->keys;
	}
	if (topoml__grow((void **)&y->v, y->n, sizeof(*nv)))
		return -1;
	nv = y->v;
	if (k)
		k[y->n] = key;
	nv[y->n++] = v;
	return 0;
}

static void _yerr(struct yparse *p, int line, const char *what)
{
	topoml_errors_add(p->err, "%s:%d: %s", p->path, line, what);
	p->bad = 1;
}

/* A scalar: quotes removed. */
static struct ynode *_yscalar(const char *s, size_t len, int line)
{
	struct ynode *y = _ynew(Y_SCALAR, line);

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
		s++;
		len -= 2;
	}
	if (y && !(y->str = strndup(s, len))) {
		free(y);
		return NULL;
	}
	return y;
}

/* Flow mapping "{a: 1, b: 2}" on one line (no nesting: topology.yaml's
 * coordinates). */
static struct ynode *_yflow(struct yparse *p, const char *s, int line)
{
	struct ynode *y = _ynew(Y_MAP, line);
	const char *e = strrchr(s, '}');

	if (!y)
		return NULL;
	if (!e || e[1]) {
		_yerr(p, line, "flow mapping without its closing '}'");
		return y;
	}
	s++;
	while (s < e) {
		const char *comma = memchr(s, ',', e - s), *colon;
		const char *end = comma ? comma : e;
		char *key;

		colon = memchr(s, ':', end - s);
		if (!colon) {
			if (strspn(s, " \t") < (size_t)(end - s))
				_yerr(p, line, "flow mapping entry without ':'");
			break;
		}
		while (isspace((unsigned char)*s))
			s++;
		key = strndup(s, colon - s);
		if (!key)
			break;
		while (*key && isspace((unsigned char)key[strlen(key) - 1]))
			key[strlen(key) - 1] = '\0';
		if (_yadd(y, key, _yscalar(colon + 1, end - colon - 1, line))) {
			free(key);
			break;
		}
		s = comma ? comma + 1 : e;
	}
	return y;
}

static struct ynode *_yblock(struct yparse *p, int *i, int ind);

/* The value after "key:" (rest may be empty: a block below, or null). */
static struct ynode *_yvalue(struct yparse *p, int *i, const char *rest,
			     int line, int ind)
{
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (*rest == '{')
		return _yflow(p, rest, line);
	if (*rest == '[' || *rest == '&' || *rest == '*' || *rest == '|' ||
	    *rest == '>') {
		_yerr(p, line, "flow sequences, anchors and block scalars "
		      "are not supported here");
		return _ynew(Y_SCALAR, line);
	}
	if (*rest)
		return _yscalar(rest, strlen(rest), line);
	/* a block below: deeper, or a sequence at the key's own indent */
	if (*i < p->nl && (p->l[*i].ind > ind ||
			   (p->l[*i].ind == ind && p->l[*i].s[0] == '-' &&
			    (!p->l[*i].s[1] || p->l[*i].s[1] == ' '))))
		return _yblock(p, i, p->l[*i].ind);
	return _yscalar("", 0, line);
}

static bool _yis_item(const char *s)
{
	return s[0] == '-' && (!s[1] || s[1] == ' ');
}

/* "key:" at the start of s: the colon's offset, else -1. */
static int _ykey(const char *s)
{
	bool q = false;
	char qc = 0;

	for (int k = 0; s[k]; k++) {
		if (q) {
			q = s[k] != qc;
			continue;
		}
		if (s[k] == '"' || s[k] == '\'') {
			q = true;
			qc = s[k];
		} else if (s[k] == ':' && (!s[k + 1] || s[k + 1] == ' ')) {
			return k;
		}
	}
	return -1;
}

struct ykey {
	const char *k;
	int line;
	int idx;
};

static int _ykey_cmp(const void *a, const void *b)
{
	const struct ykey *x = a, *y = b;
	int c = strcmp(x->k, y->k);

	return c ? c : x->idx - y->idx;
}

/* Duplicate keys of a map, by sorting (comparing each key with all before
 * it was quadratic: 32 s for 30k keys). */
static void _ydups(struct yparse *p, const struct ynode *y, const int *kline)
{
	struct ykey *s;

	if (y->n < 2)
		return;
	s = malloc((unsigned)y->n * sizeof(*s));
	if (!s) {
		_yerr(p, y->line, "out of memory");
		return;
	}
	for (int k = 0; k < y->n; k++)
		s[k] = (struct ykey){ y->keys[k], kline[k], k };
	qsort(s, y->n, sizeof(*s), _ykey_cmp);
	for (int k = 1; k < y->n; k++)
		if (!strcmp(s[k].k, s[k - 1].k)) {
			char m[160];

			snprintf(m, sizeof(m), "duplicate key '%.100s'",
				 s[k].k);
			_yerr(p, s[k].line, m);
		}
	free(s);
}

static struct ynode *_yblock_in(struct yparse *p, int *i, int ind);

static struct ynode *_yblock(struct yparse *p, int *i, int ind)
{
	struct ynode *y;

	if (p->depth >= Y_MAX_DEPTH) {
		char m[64];

		snprintf(m, sizeof(m), "nested deeper than %d levels",
			 Y_MAX_DEPTH);
		_yerr(p, p->l[*i].no, m);
		return NULL;
	}
	p->depth++;
	y = _yblock_in(p, i, ind);
	p->depth--;
	return y;
}

static struct ynode *_yblock_in(struct yparse *p, int *i, int ind)
{
	struct yline *l = &p->l[*i];
	struct ynode *y;

	if (_yis_item(l->s)) {
		y = _ynew(Y_SEQ, l->no);
		while (y && *i < p->nl && p->l[*i].ind == ind &&
		       _yis_item(p->l[*i].s)) {
			struct yline *it = &p->l[*i];
			int off = 1;
			struct ynode *v;

			while (it->s[off] == ' ')
				off++;
			if (!it->s[off]) {
				(*i)++;
				if (*i < p->nl && p->l[*i].ind > ind) {
					v = _yblock(p, i, p->l[*i].ind);
				} else {
					v = _yscalar("", 0, it->no);
				}
			} else {
				/* the rest of the line is a node of its own
				 * at the column where it starts */
				it->s += off;
				it->ind += off;
				v = _yblock(p, i, it->ind);
			}
			if (!v || _yadd(y, NULL, v)) {
				_yfree(v);
				break;
			}
		}
		if (*i < p->nl && p->l[*i].ind > ind && !p->bad)
			_yerr(p, p->l[*i].no, "bad indentation");
		return y;
	}
	if (_ykey(l->s) >= 0) {
		int *kline = NULL;

		y = _ynew(Y_MAP, l->no);
		while (y && *i < p->nl && p->l[*i].ind == ind &&
		       !_yis_item(p->l[*i].s)) {
			struct yline *kl = &p->l[*i];
			int c = _ykey(kl->s);
			struct ynode *key, *v;

			if (c < 0) {
				_yerr(p, kl->no, "expected 'key: value'");
				(*i)++;
				continue;
			}
			key = _yscalar(kl->s, c, kl->no);
			(*i)++;
			v = _yvalue(p, i, kl->s + c + 1, kl->no, ind);
			if (!key || !v ||
			    topoml__grow((void **)&kline, y->n, sizeof(int)) ||
			    _yadd(y, key->str, v)) {
				if (key)
					free(key->str);
				free(key);
				_yfree(v);
				break;
			}
			kline[y->n - 1] = kl->no;
			free(key);
		}
		if (y && kline)
			_ydups(p, y, kline);
		free(kline);
		if (*i < p->nl && p->l[*i].ind > ind && !p->bad)
			_yerr(p, p->l[*i].no, "bad indentation");
		return y;
	}
	if (l->s[0] == '{') {
		(*i)++;
		return _yflow(p, l->s, l->no);
	}
	y = _yscalar(l->s, strlen(l->s), l->no);
	(*i)++;
	return y;
}

/* Cut a line's comment: '#' at the start or after a blank, outside
 * quotes. */
static void _ycut_comment(char *s)
{
	bool q = false;
	char qc = 0;

	for (int k = 0; s[k]; k++) {
		if (q) {
			q = s[k] != qc;
			continue;
		}
		if (s[k] == '"' || s[k] == '\'') {
			q = true;
			qc = s[k];
		} else if (s[k] == '#' && (!k || isspace((unsigned char)s[k - 1]))) {
			s[k] = '\0';
			return;
		}
	}
}

static struct ynode *_yload(const char *path, char **buf,
			    topoml_errors_t *err)
{
	struct yparse p = { .path = path, .err = err };
	FILE *f = fopen(path, "r");
	size_t cap = 0, len = 0;
	struct ynode *root = NULL;
	char *s;
	int no = 0, i = 0;

	if (!f) {
		topoml_errors_add(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	*buf = NULL;
	for (;;) {
		if (len + 4096 > cap) {
			char *nb = realloc(*buf, cap = 2 * cap + 65536);

			if (!nb)
				goto oom;
			*buf = nb;
		}
		size_t r = fread(*buf + len, 1, cap - len - 1, f);

		if (!r)
			break;
		len += r;
	}
	fclose(f);
	f = NULL;
	(*buf)[len] = '\0';
	for (s = *buf; s && *s;) {
		char *nl = strchr(s, '\n'), *c = s;
		size_t e;

		if (nl)
			*nl = '\0';
		no++;
		if (strchr(s, '\t') && strspn(s, " \t") > strspn(s, " ")) {
			topoml_errors_add(err, "%s:%d: a tab in the indentation",
					  path, no);
			p.bad = 1;
		}
		_ycut_comment(s);
		e = strlen(s);
		while (e && isspace((unsigned char)s[e - 1]))
			s[--e] = '\0';
		while (*c == ' ' || *c == '\t')
			c++;
		if (*c && strcmp(c, "---") && strcmp(c, "...")) {
			if (topoml__grow((void **)&p.l, p.nl, sizeof(*p.l)))
				goto oom;
			p.l[p.nl++] = (struct yline){ no, (int)(c - s), c };
		}
		s = nl ? nl + 1 : NULL;
	}
	if (p.bad)
		goto out;
	if (!p.nl) {
		topoml_errors_add(err, "%s: empty file", path);
		goto out;
	}
	root = _yblock(&p, &i, p.l[0].ind);
	if (i < p.nl && !p.bad)
		_yerr(&p, p.l[i].no, "unexpected content (bad indentation?)");
	if (p.bad) {
		_yfree(root);
		root = NULL;
	}
	goto out;
oom:
	topoml_errors_add(err, "%s: out of memory", path);
out:
	if (f)
		fclose(f);
	free(p.l);
	return root;
}

static struct ynode *_yget(const struct ynode *m, const char *key)
{
	for (int i = 0; m && m->type == Y_MAP && i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return m->v[i];
	return NULL;
}

/* ---- the torus3d section --------------------------------------------- */

struct t3d_reader {
	const char *path;
	topoml_errors_t *err;
	int bad;
};

static void _rerr(struct t3d_reader *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void _rerr(struct t3d_reader *r, int line, const char *fmt, ...)
{
	char m[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	topoml_errors_add(r->err, "%s:%d: %s", r->path, line, m);
	r->bad = 1;
}

/* Only the keys listed; others are an error (a typo would otherwise be
 * silently a default). */
static void _rkeys(struct t3d_reader *r, const struct ynode *m,
		   const char *what, const char *const *ok)
{
	for (int i = 0; i < m->n; i++) {
		bool known = false;

		for (int k = 0; ok[k] && !known; k++)
			known = !strcmp(m->keys[i], ok[k]);
		if (!known)
			_rerr(r, m->v[i]->line, "%s: unknown key '%s'", what,
			      m->keys[i]);
	}
}

static int _rint(struct t3d_reader *r, const struct ynode *y,
		 const char *what, int lo, int hi, int *out)
{
	char *end;
	long v;

	if (!y || y->type != Y_SCALAR || !y->str[0]) {
		_rerr(r, y ? y->line : 0, "%s: a number is needed", what);
		return -1;
	}
	errno = 0;
	v = strtol(y->str, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		_rerr(r, y->line, "%s: '%s' is not a number in %d..%d", what,
		      y->str, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* {x, y, z} of a key of m (absent: def, or an error when def is NULL). */
static int _rxyz(struct t3d_reader *r, const struct ynode *m,
		 const char *key, int lo, int hi, const int *def, int out[3],
		 int *line)
{
	static const char *const xyz[] = { "x", "y", "z", NULL };
	const struct ynode *y = _yget(m, key);
	char what[64];
	int rc = 0;

	*line = m->line;
	if (!y) {
		if (!def) {
			_rerr(r, m->line, "'%s' is missing", key);
			return -1;
		}
		memcpy(out, def, 3 * sizeof(int));
		return 0;
	}
	*line = y->line;
	if (y->type != Y_MAP) {
		_rerr(r, y->line, "%s: x, y and z are needed", key);
		return -1;
	}
	_rkeys(r, y, key, xyz);
	for (int d = 0; d < 3; d++) {
		snprintf(what, sizeof(what), "%s.%s", key, xyz[d]);
		rc |= _rint(r, _yget(y, xyz[d]), what, lo, hi, &out[d]);
	}
	return rc;
}

struct cell_fill {
	struct topoml_torus3d *c;
	struct t3d_reader *r;
	int line;
	int lo[3], ext[3];	/* region: anchor and dims */
	long k, want;
};

static int _fill_one(const char *host, void *arg)
{
	struct cell_fill *f = arg;
	struct topoml_torus3d *c = f->c;
	long k = f->k++;
	int x, y, z, pos;

	if (k >= f->want)
		return 0;	/* counted and reported by the caller */
	x = f->lo[0] + (int)(k % f->ext[0]);
	y = f->lo[1] + (int)(k / f->ext[0] % f->ext[1]);
	z = f->lo[2] + (int)(k / ((long)f->ext[0] * f->ext[1]));
	pos = topoml__grid_pos(c->dims, x, y, z);
	if (c->cell_name[pos]) {
		_rerr(f->r, f->line, "node %s: cell (%d,%d,%d) already holds %s",
		      host, x, y, z, c->cell_name[pos]);
		return 0;
	}
	if (!(c->cell_name[pos] = strdup(host)))
		return -1;
	return 0;
}

static void _rnodes(struct t3d_reader *r, struct topoml_torus3d *c,
		    const struct ynode *nodes, const int lo[3],
		    const int ext[3])
{
	struct cell_fill f = { .c = c, .r = r, .line = nodes->line };

	memcpy(f.lo, lo, sizeof(f.lo));
	memcpy(f.ext, ext, sizeof(f.ext));
	f.want = (long)ext[0] * ext[1] * ext[2];
	if (nodes->type != Y_SCALAR || !nodes->str[0]) {
		_rerr(r, nodes->line, "nodes: a host list is needed");
		return;
	}
	if (topoml__hostlist_foreach(nodes->str, NULL, _fill_one, &f) < 0) {
		_rerr(r, nodes->line, "nodes: invalid host list '%s'%s",
		      nodes->str, topoml__hostlist_why(errno));
		return;
	}
	if (f.k != f.want)
		_rerr(r, nodes->line,
		      "nodes: %ld nodes for %dx%dx%d = %ld cells", f.k, ext[0],
		      ext[1], ext[2], f.want);
}

static int _shape_size_cmp(const void *a, const void *b)
{
	const struct topoml_t3d_shape *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->line - y->line;	/* stable: listed order */
}

static void _rtorus(struct t3d_reader *r, const struct ynode *tm,
		    struct topoml_torus3d *c)
{
	static const char *const keys[] = { "name", "dims", "nodes", "regions",
					    "placements", NULL };
	static const char *const rkeys[] = { "anchor", "dims", "nodes", NULL };
	static const char *const pkeys[] = { "dims", "anchor_seed",
					     "anchor_spacing", NULL };
	const struct ynode *name = _yget(tm, "name");
	const struct ynode *nodes = _yget(tm, "nodes");
	const struct ynode *regions = _yget(tm, "regions");
	const struct ynode *pl = _yget(tm, "placements");
	int line, zero[3] = { 0, 0, 0 };
	long vol;

	_rkeys(r, tm, "torus", keys);
	if (!name || name->type != Y_SCALAR || !name->str[0])
		_rerr(r, tm->line, "torus: 'name' is missing");
	else if (!(c->name = strdup(name->str)))
		r->bad = 1;
	if (_rxyz(r, tm, "dims", 1, 65535, NULL, c->dims, &line))
		return;
	vol = (long)c->dims[0] * c->dims[1] * c->dims[2];
	if (vol > 1L << 24) {
		_rerr(r, line, "dims: %ld cells, at most %ld", vol, 1L << 24);
		return;
	}
	c->cell_name = calloc(vol, sizeof(char *));
	if (!c->cell_name) {
		r->bad = 1;
		return;
	}
	if (nodes && regions)
		_rerr(r, regions->line, "'nodes' and 'regions' exclude "
		      "each other");
	else if (nodes)
		_rnodes(r, c, nodes, zero, c->dims);
	else if (regions && regions->type != Y_SEQ)
		_rerr(r, regions->line, "regions: a list is needed");
	else if (regions)
		for (int i = 0; i < regions->n; i++) {
			const struct ynode *rg = regions->v[i];
			const struct ynode *rn = _yget(rg, "nodes");
			int lo[3], ext[3], l1, l2;

			if (rg->type != Y_MAP) {
				_rerr(r, rg->line, "region: a mapping is needed");
				continue;
			}
			_rkeys(r, rg, "region", rkeys);
			if (_rxyz(r, rg, "anchor", 0, 65535, NULL, lo, &l1) ||
			    _rxyz(r, rg, "dims", 1, 65535, NULL, ext, &l2))
				continue;
			for (int d = 0; d < 3; d++)
				if (lo[d] + ext[d] > c->dims[d]) {
					_rerr(r, l2, "region dims exceed the "
					      "torus dimensions (no wrap)");
					break;
				}
			if (!rn)
				_rerr(r, rg->line, "region: 'nodes' is missing");
			else if (!r->bad)
				_rnodes(r, c, rn, lo, ext);
		}
	else
		_rerr(r, tm->line, "torus: 'nodes' or 'regions' is needed");
	if (!pl)
		return;	/* Slurm accepts it; every job is then refused */
	if (pl->type != Y_SEQ) {
		_rerr(r, pl->line, "placements: a list is needed");
		return;
	}
	c->shapes = calloc(pl->n ? pl->n : 1, sizeof(*c->shapes));
	if (!c->shapes) {
		r->bad = 1;
		return;
	}
	for (int i = 0; i < pl->n; i++) {
		const struct ynode *p = pl->v[i];
		struct topoml_t3d_shape *s = &c->shapes[c->nshapes];
		int l1, l2, l3;

		if (p->type != Y_MAP) {
			_rerr(r, p->line, "placement: a mapping is needed");
			continue;
		}
		_rkeys(r, p, "placement", pkeys);
		if (_rxyz(r, p, "dims", 1, 65535, NULL, s->dims, &l1) ||
		    _rxyz(r, p, "anchor_seed", 0, 65535, zero, s->seed, &l2) ||
		    _rxyz(r, p, "anchor_spacing", 0, 65535, s->dims,
			  s->spacing, &l3))
			continue;
		s->line = p->line;
		for (int d = 0; d < 3; d++) {
			/* spacing 0 means the dims, as Slurm reads it */
			if (!s->spacing[d])
				s->spacing[d] = s->dims[d];
			if (s->dims[d] > c->dims[d]) {
				_rerr(r, l1, "placement dims exceed the torus "
				      "dimensions");
				break;
			}
			if (s->spacing[d] > c->dims[d]) {
				_rerr(r, l3, "anchor_spacing exceeds the torus "
				      "dimensions");
				break;
			}
			if (s->seed[d] >= c->dims[d]) {
				_rerr(r, l2, "anchor_seed outside the torus");
				break;
			}
		}
		/* after the checks: dims of 65535^3 overflow an int, those
		 * within the torus (2^24 cells at most) do not */
		if (!r->bad)
			s->size = s->dims[0] * s->dims[1] * s->dims[2];
		c->nshapes++;
	}
	/* Slurm sorts with qsort() by size; listed order kept on ties. */
	if (c->nshapes)
		qsort(c->shapes, c->nshapes, sizeof(*c->shapes),
		      _shape_size_cmp);
}

void topoml_torus3d_free(struct topoml_torus3d *c)
{
	if (!c)
		return;
	if (c->cell_name) {
		long vol = (long)c->dims[0] * c->dims[1] * c->dims[2];

		for (long i = 0; i < vol; i++)
			free(c->cell_name[i]);
	}
	free(c->cell_name);
	free(c->shapes);
	free(c->name);
	free(c->source);
	free(c);
}

struct topoml_torus3d *topoml_torus3d_load(const char *path,
					   topoml_errors_t *err)
{
	struct t3d_reader r = { .path = path, .err = err };
	struct topoml_torus3d *c = calloc(1, sizeof(*c));
	const struct ynode *t3d = NULL, *tor;
	char *buf = NULL;
	struct ynode *root = _yload(path, &buf, err);
	int at = 0;

	if (!c || !root)
		goto fail;
	c->source = strdup(path);
	/* topology.yaml: a list of topologies; the one with torus3d */
	if (root->type == Y_SEQ) {
		for (int i = 0; i < root->n; i++) {
			const struct ynode *x = _yget(root->v[i], "torus3d");

			if (x && t3d) {
				_rerr(&r, root->v[i]->line, "a second torus3d "
				      "topology (topoml reads one)");
				break;
			}
			if (x) {
				t3d = x;
				at = root->v[i]->line;
			}
		}
	} else if (root->type == Y_MAP) {
		t3d = _yget(root, "torus3d");
	}
	if (!t3d) {
		topoml_errors_add(err, "%s: no torus3d topology", path);
		goto fail;
	}
	tor = _yget(t3d, "toruses");
	if (!tor || tor->type != Y_SEQ || !tor->n) {
		_rerr(&r, tor ? tor->line : t3d->line ? t3d->line : at,
		      "torus3d: 'toruses' needs a list of toruses");
		goto fail;
	}
	if (tor->n > 1)
		_rerr(&r, tor->v[1]->line, "a second torus (topoml reads one)");
	else if (tor->v[0]->type != Y_MAP)
		_rerr(&r, tor->v[0]->line, "torus: a mapping is needed");
	else
		_rtorus(&r, tor->v[0], c);
	if (r.bad || !c->source)
		goto fail;
	_yfree(root);
	free(buf);
	return c;
fail:
	_yfree(root);
	free(buf);
	topoml_torus3d_free(c);
	return NULL;
}

topoml_topo_t *topoml_torus3d_topology(const struct topoml_torus3d *c,
				       topoml_errors_t *err)
{
	topoml_topo_t *t = topoml_new(TOPOML_TORUS, c->source);
	long vol = (long)c->dims[0] * c->dims[1] * c->dims[2];

	if (!t)
		return NULL;
	for (int d = 0; d < 3; d++) {
		t->dims[d] = c->dims[d];
		t->wrap[d] = true;
	}
	for (long p = 0; p < vol; p++) {
		int n;

		if (!c->cell_name[p])
			continue;
		n = topoml_add_node(t, c->cell_name[p], 0, err);
		if (n < 0)
			goto fail;
		topoml__grid_coord(c->dims, p, t->nodes[n].coord);
	}
	if (topoml_finalize(t, err))
		goto fail;
	t->torus3d = c;
	return t;
fail:
	topoml_free(t);
	return NULL;
}

int topoml_torus3d_bind(topoml_topo_t *t, const struct topoml_torus3d *c,
			char *why, size_t whylen)
{
	long vol;

	if (!t || !c || t->family != TOPOML_TORUS) {
		snprintf(why, whylen, "the topology is not a 3D torus");
		return -1;
	}
	for (int d = 0; d < 3; d++)
		if (c->dims[d] != t->dims[d]) {
			snprintf(why, whylen, "%s: torus3d dims %dx%dx%d, the "
				 "topology's %dx%dx%d", c->source, c->dims[0],
				 c->dims[1], c->dims[2], t->dims[0],
				 t->dims[1], t->dims[2]);
			return -1;
		}
	vol = (long)c->dims[0] * c->dims[1] * c->dims[2];
	/* same node in each cell, else the engine's box is not torus3d's */
	for (long p = 0; p < vol; p++) {
		int v = c->cell_name[p] ?
			topoml_node_by_name(t, c->cell_name[p]) : -1;

		if (v != t->coord_node[p]) {
			snprintf(why, whylen, "%s: cell (%ld,%ld,%ld) is %s in "
				 "torus3d, %s in the topology", c->source,
				 p % c->dims[0], p / c->dims[0] % c->dims[1],
				 p / c->dims[0] / c->dims[1],
				 c->cell_name[p] ? c->cell_name[p] : "empty",
				 t->coord_node[p] >= 0 ?
				 t->nodes[t->coord_node[p]].name : "empty");
			return -1;
		}
	}
	t->torus3d = c;
	t->torus3d_only = true;
	return 0;
}

bool topoml_torus3d_size_ok(const struct topoml_torus3d *c, int n)
{
	for (int i = 0; c && i < c->nshapes; i++)
		if (c->shapes[i].size == n)
			return true;
	return false;
}

struct ebox {
	int s[3];
	int size;
};

static int _ebox_cmp(const void *a, const void *b)
{
	const struct ebox *x = a, *y = b;

	if (x->size != y->size)
		return x->size - y->size;
	if (x->s[0] != y->s[0])
		return y->s[0] - x->s[0];	/* x-longest first */
	return y->s[1] - x->s[1];
}

struct topoml_torus3d *topoml_torus3d_every_size(const topoml_topo_t *t)
{
	struct topoml_torus3d *c = calloc(1, sizeof(*c));
	long vol = (long)t->dims[0] * t->dims[1] * t->dims[2];
	/* per size: the least a+b+c, then the least spread (max - min) */
	int *per = malloc((vol + 1) * sizeof(int));
	int *spr = malloc((vol + 1) * sizeof(int));
	struct ebox *v = NULL;
	int nv = 0;

	if (!c || !per || !spr || !(c->source = strdup("generated")))
		goto fail;
	memcpy(c->dims, t->dims, sizeof(c->dims));
	for (long n = 0; n <= vol; n++)
		per[n] = spr[n] = INT_MAX;
	/* every box a x b x cc of the torus once: O(volume) */
	for (int pass = 0; pass < 2; pass++)
		for (int a = 1; a <= t->dims[0]; a++)
			for (int b = 1; b <= t->dims[1]; b++)
				for (int cc = 1; cc <= t->dims[2]; cc++) {
					long n = (long)a * b * cc;
					int mx = a > b ? a : b, mn = a < b ? a : b;
					int p = a + b + cc;

					mx = mx > cc ? mx : cc;
					mn = mn < cc ? mn : cc;
					if (!pass) {
						if (p < per[n] || (p == per[n] &&
						    mx - mn < spr[n])) {
							per[n] = p;
							spr[n] = mx - mn;
						}
						continue;
					}
					if (p != per[n] || mx - mn != spr[n])
						continue;
					if (topoml__grow((void **)&v, nv,
							sizeof(*v)))
						goto fail;
					v[nv++] = (struct ebox){ { a, b, cc },
								 (int)n };
				}
	if (nv)
		qsort(v, nv, sizeof(*v), _ebox_cmp);
	c->shapes = calloc(nv ? nv : 1, sizeof(*c->shapes));
	if (!c->shapes)
		goto fail;
	for (int i = 0; i < nv; i++)
		c->shapes[c->nshapes++] = (struct topoml_t3d_shape){
			.dims = { v[i].s[0], v[i].s[1], v[i].s[2] },
			.spacing = { 1, 1, 1 },
			.size = v[i].size,
		};
	free(v);
	free(per);
	free(spr);
	return c;
fail:
	free(v);
	free(per);
	free(spr);
	topoml_torus3d_free(c);
	return NULL;
}
