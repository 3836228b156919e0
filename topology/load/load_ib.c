/*
 * ibnetdiscover output -> fat-tree.
 *
 * The file lists every node of the fabric: "Switch N "S-guid" # "desc" ..."
 * and "Ca N "H-guid" # "desc"" blocks, each followed by one line per cabled
 * port: "[port] "peer-id"[peer-port](guid) # "peer desc" lid L 4xEDR".
 * The rules (documented in doc/import-ib.txt):
 *
 * - A CA belongs to a host when its node description is "HOST DEVICE",
 *   DEVICE an HCA name such as HCA-1, mlx5_0 or hfi1_0 (what rdma-ndd and
 *   OFED set).  CAs of the same HOST are its rails.  SHARP aggregation nodes
 *   and CAs whose description names no host (firmware defaults) are no
 *   compute nodes; only when no CA of the fabric names a host, every CA
 *   becomes a node named by its ibnetdiscover id (H-guid), with a warning.
 * - Switches cabled to hosts are leaves.  Leaves that share a host (a
 *   rail-optimised cluster puts each HCA of a host on a different leaf) are
 *   grouped into one unit, a scalable unit as NVIDIA topograph calls it: a
 *   single leaf of the model named suN, holding those hosts.  Other switches
 *   get level = hops to the nearest leaf; a link one level up is a parent
 *   link, links within a level are not part of the tree.
 * - A connected fabric in which no switch reaches every host (leaves cabled
 *   to each other without a spine, or spines that each see only some
 *   leaves) gets a virtual switch fabricN above its top switches, so that
 *   Slurm lets jobs span the parts that the cables do join.
 * - Switches are named by the host part of a managed switch's description
 *   ("MF0;leaf01:MQM8700/U1" -> leaf01), else by a one-word description,
 *   else by their id (S-guid); names that would clash fall back to longer
 *   forms.  LinkSpeed is the fastest link of the switch in Gb/s.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hostlist_compat.h"

#include "topoml.h"
#include "topoml/build.h"
#include "topoml/load.h"
#include "util/util.h"
#include "model/model_int.h"

enum ib_type { IB_SWITCH, IB_CA, IB_ROUTER };

struct ib_link {
	char *peer;
	int line;
	int gbps;
};

struct ib_node {
	char *id;
	char *desc;
	enum ib_type type;
	int line;
	int nlinks;
	struct ib_link *links;
	/* derived */
	int host;		/* CA: host index, -1: no compute node */
	int gbps;		/* switch: fastest link */
	int level;		/* switch: -1 unreached, 0 leaf */
	int unit;		/* leaf: its unit's representative switch */
	int msw;		/* switch: index in the model, -1 */
	char *name;		/* switch: name in the model */
};

struct ib_edge {
	int a, b;		/* node indices, a < b */
};

struct ib_reader {
	const char *path;
	topoml_errors_t *err;
	topoml_errors_t *warn;
	int nerr;
	struct ib_node *nodes;
	int nnodes;
	struct topoml_name_index *ids;	/* GUID -> node */
	char **hosts;		/* host names, first appearance order */
	int nhosts;
	struct topoml_name_index *host_ix;
	struct ib_edge *edges;
	int nedges;
};

/*
 * The model's name maps (model/model_int.h), created on the first name: a NULL
 * map finds nothing.  The map keeps the key pointer: it must outlive it.
 */
static int _map_put(struct topoml_name_index **m, const char *k, int v)
{
	if (!*m && !(*m = topoml__index_new()))
		return -1;
	return topoml__index_put(*m, k, v);
}

static void _error(struct ib_reader *r, int line, int col, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

static void _error(struct ib_reader *r, int line, int col, const char *fmt,
		   ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (col > 0)
		topoml_errors_add(r->err, "%s:%d:%d: %s", r->path, line, col,
				  msg);
	else
		topoml_errors_add(r->err, "%s:%d: %s", r->path, line, msg);
	r->nerr++;
}

/* ---- parsing ------------------------------------------------------- */

static const char *_skip_blank(const char *s)
{
	while (isblank((unsigned char)*s))
		s++;
	return s;
}

/* A quoted string at *s: returns a copy and moves *s past it, or NULL. */
static char *_quoted(const char **s)
{
	const char *p = *s, *e;

	if (*p != '"')
		return NULL;
	e = strchr(p + 1, '"');
	if (!e)
		return NULL;
	*s = e + 1;
	return strndup(p + 1, e - p - 1);
}

/* Skip "[...]" and "(...)" groups (port guids, extended port numbers). */
static const char *_skip_groups(const char *s)
{
	for (;;) {
		const char *e;

		if (*s == '[')
			e = strchr(s, ']');
		else if (*s == '(')
			e = strchr(s, ')');
		else
			return s;
		if (!e)
			return s;
		s = e + 1;
	}
}

/* "4xEDR" -> 100 (Gb/s); 0 when absent or unknown. */
static int _rate(const char *s)
{
	static const struct {
		const char *name;
		double lane;
	} speeds[] = {
		{ "SDR", 2.5 }, { "DDR", 5 }, { "QDR", 10 }, { "FDR10", 10 },
		{ "FDR", 14 }, { "EDR", 25 }, { "HDR", 50 }, { "NDR", 100 },
		{ "XDR", 200 }, { NULL, 0 },
	};
	const char *p, *q;
	int i, rate = 0;

	/*
	 * The last WIDTHxSPEED of the line: descriptions come before it.
	 * By hand, not sscanf("%dx..."): that overflowed int on a long
	 * width (then width * lane did too) and took strlen() of the rest
	 * of the line at every number, quadratic in a long line.
	 */
	for (p = s; *p; p++) {
		char sp[8];
		long width = 0;
		size_t n;

		if (!isdigit((unsigned char)*p) ||
		    (p > s && isalnum((unsigned char)p[-1])))
			continue;
		for (q = p; isdigit((unsigned char)*q); q++)
			if (width <= 1000)
				width = width * 10 + (*q - '0');
		p = q - 1;	/* the next start is after this number */
		/* IB links are 1x to 12x wide; anything else is no rate */
		if (width < 1 || width > 64 || *q != 'x')
			continue;
		for (n = 0, q++; n < sizeof(sp) - 1 &&
		     (isupper((unsigned char)q[n]) ||
		      isdigit((unsigned char)q[n])); n++)
			sp[n] = q[n];
		sp[n] = '\0';
		for (i = 0; speeds[i].name; i++)
			if (!strcmp(sp, speeds[i].name))
				rate = (int)(width * speeds[i].lane);
	}
	return rate;
}

static struct ib_node *_new_node(struct ib_reader *r)
{
	struct ib_node *n;

	/* doubling: a fixed step is quadratic in the fabric's size */
	n = r->nodes;
	if (topoml__grow((void **)&n, r->nnodes, sizeof(*n)))
		return NULL;
	r->nodes = n;
	n = &r->nodes[r->nnodes];
	memset(n, 0, sizeof(*n));
	n->host = -1;
	n->level = -1;
	n->unit = -1;
	n->msw = -1;
	return n;
}

/* "Switch 36 "S-..." # "desc" ...", "Ca 2 "H-..." # "desc"", "Rt ...". */
static int _parse_header(struct ib_reader *r, const char *line, int lineno,
			 enum ib_type type, size_t wlen)
{
	const char *p = _skip_blank(line + wlen), *q;
	struct ib_node *n;
	char *id, *desc = NULL;

	while (isdigit((unsigned char)*p))
		p++;
	p = _skip_blank(p);
	q = p;
	id = _quoted(&p);
	if (!id) {
		_error(r, lineno, (int)(q - line) + 1, "expected the quoted "
		       "node id (\"S-...\" or \"H-...\") after '%.*s'",
		       (int)wlen, line);
		return -1;
	}
	p = _skip_blank(p);
	if (*p == '#') {
		const char *s = strchr(p, '"'), *e = strrchr(p, '"');

		/* The description runs to the last quote of the line. */
		if (s && e > s)
			desc = strndup(s + 1, e - s - 1);
	}
	if (topoml__index_find(r->ids, id) >= 0) {
		_error(r, lineno, (int)(q - line) + 1, "node %s is described "
		       "twice (first at line %d)", id,
		       r->nodes[topoml__index_find(r->ids, id)].line);
		free(id);
		free(desc);
		return -1;
	}
	n = _new_node(r);
	if (!n || _map_put(&r->ids, id, r->nnodes)) {
		free(id);
		free(desc);
		_error(r, lineno, 0, "out of memory");
		return -1;
	}
	n->id = id;
	n->desc = desc ? desc : strdup("");
	n->type = type;
	n->line = lineno;
	r->nnodes++;
	return 0;
}

/* "[3]  "S-..."[1](guid)  # ..." on a switch, "[1](guid)  "S-..."[6] ..."
 * on a CA: our port, the peer's id and port. */
static int _parse_link(struct ib_reader *r, struct ib_node *n,
		       const char *line, int lineno)
{
	const char *p = line, *q;
	struct ib_link *l;
	char *peer;

	p = _skip_groups(p);
	p = _skip_blank(p);
	q = p;
	peer = _quoted(&p);
	if (!peer || *p != '[') {
		free(peer);
		_error(r, lineno, (int)(q - line) + 1, "expected "
		       "\"PEER-ID\"[PORT] after the port number");
		return -1;
	}
	l = n->links;
	if (topoml__grow((void **)&l, n->nlinks, sizeof(*l))) {
		free(peer);
		return -1;
	}
	n->links = l;
	l = &n->links[n->nlinks++];
	l->peer = peer;
	l->line = lineno;
	l->gbps = _rate(p);
	return 0;
}

static bool _prefix(const char *s, const char *w)
{
	return !strncmp(s, w, strlen(w));
}

/* A node header: the word, blanks, the port count. */
static bool _header(const char *s, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(s, w, n) && isblank((unsigned char)s[n]);
}

static int _parse(struct ib_reader *r)
{
	FILE *f = topoml__fopen_regular(r->path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, nunknown = 0, first_unknown = 0;
	struct ib_node *cur = NULL;
	bool bad_block = false;

	if (!f) {
		topoml_errors_add(r->err, "%s: cannot read: %s", r->path,
				  topoml__open_error(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *s;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' ||
				   line[len - 1] == '\r'))
			line[--len] = '\0';
		s = _skip_blank(line);
		if (!*s) {
			cur = NULL;	/* a blank line ends a block */
			bad_block = false;
			continue;
		}
		if (*s == '#')
			continue;
		if (*s == '[') {
			if (bad_block)
				continue;	/* its header was reported */
			if (!cur)
				_error(r, lineno, (int)(s - line) + 1, "port "
				       "line outside a Switch or Ca block");
			else if (cur->type != IB_ROUTER)
				_parse_link(r, cur, s, lineno);
			continue;
		}
		if (_header(s, "Switch") || _header(s, "Ca") ||
		    _header(s, "Rt")) {
			enum ib_type type = s[0] == 'S' ? IB_SWITCH :
					    s[0] == 'C' ? IB_CA : IB_ROUTER;
			size_t wl = type == IB_SWITCH ? 6 : 2;

			cur = NULL;
			bad_block = _parse_header(r, s, lineno, type, wl) != 0;
			if (!bad_block)
				cur = &r->nodes[r->nnodes - 1];
			continue;
		}
		/* Block attributes and chassis headers carry nothing we use. */
		if (_prefix(s, "vendid=") || _prefix(s, "devid=") ||
		    _prefix(s, "sysimgguid=") || _prefix(s, "switchguid=") ||
		    _prefix(s, "caguid=") || _prefix(s, "rtguid=") ||
		    _prefix(s, "Chassis") || _prefix(s, "Non-Chassis"))
			continue;
		/* libibmad diagnostics end up in captured output. */
		if (!nunknown++)
			first_unknown = lineno;
	}
	free(line);
	fclose(f);
	if (nunknown)
		topoml_errors_add(r->warn, "%s:%d: ignored %d line%s that %s "
				  "not ibnetdiscover output (first here)",
				  r->path, first_unknown, nunknown,
				  nunknown > 1 ? "s" : "",
				  nunknown > 1 ? "are" : "is");
	return r->nerr ? -1 : 0;
}

/* ---- fabric analysis ------------------------------------------------ */

static int _cmp_edge(const void *a, const void *b)
{
	const struct ib_edge *x = a, *y = b;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

/* Both ends list a cable: keep each once; ids not described are warned. */
static int _edges(struct ib_reader *r)
{
	int i, k, n = 0, cap = 0, nmissing = 0;
	const char *missing = NULL;
	int missing_line = 0;

	for (i = 0; i < r->nnodes; i++) {
		struct ib_node *a = &r->nodes[i];

		for (k = 0; k < a->nlinks; k++) {
			int j = topoml__index_find(r->ids, a->links[k].peer);
			struct ib_edge *e;

			if (a->links[k].gbps > a->gbps)
				a->gbps = a->links[k].gbps;
			if (j < 0) {
				if (!nmissing++) {
					missing = a->links[k].peer;
					missing_line = a->links[k].line;
				}
				continue;
			}
			if (j == i)
				continue;	/* loopback cable */
			if (r->nodes[j].type == IB_ROUTER)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				e = realloc(r->edges, cap * sizeof(*e));
				if (!e)
					return -1;
				r->edges = e;
			}
			r->edges[n].a = i < j ? i : j;
			r->edges[n].b = i < j ? j : i;
			n++;
		}
	}
	if (n)
		qsort(r->edges, n, sizeof(*r->edges), _cmp_edge);
	for (i = 0, k = 0; i < n; i++)
		if (!k || _cmp_edge(&r->edges[i], &r->edges[k - 1]))
			r->edges[k++] = r->edges[i];
	r->nedges = k;
	if (nmissing)
		topoml_errors_add(r->warn, "%s:%d: %d cable%s lead%s to nodes "
				  "the file does not describe (first: %s); "
				  "incomplete discovery?", r->path,
				  missing_line, nmissing,
				  nmissing > 1 ? "s" : "",
				  nmissing > 1 ? "" : "s", missing);
	return 0;
}

/* An RDMA device name: HCA-1, mlx5_0, mlx5_bond_0, hfi1_0, qib0, ... */
static bool _device_word(const char *w, size_t n)
{
	size_t i;

	if (n > 4 && !strncmp(w, "HCA-", 4)) {
		for (i = 4; i < n; i++)
			if (!isdigit((unsigned char)w[i]))
				return false;
		return true;
	}
	if (n < 2 || !islower((unsigned char)w[0]) ||
	    !isdigit((unsigned char)w[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)w[i]) &&
		    !isdigit((unsigned char)w[i]) && w[i] != '_')
			return false;
	return true;
}

/* Host names become Slurm node names: no separators or brackets. */
static bool _name_chars_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return false;
	return n > 0;
}

/* "HOST DEVICE" -> HOST, else NULL. */
static char *_host_of(const char *desc)
{
	const char *h = _skip_blank(desc), *he, *d, *de;

	he = h + strcspn(h, " \t");
	d = _skip_blank(he);
	de = d + strcspn(d, " \t");
	if (*_skip_blank(de) || !_device_word(d, de - d) ||
	    !_name_chars_ok(h, he - h))
		return NULL;
	return strndup(h, he - h);
}

static bool _is_sharp(const char *desc)
{
	return strstr(desc, "Aggregation Node") != NULL;
}

static int _add_host(struct ib_reader *r, char *name)
{
	int h = topoml__index_find(r->host_ix, name);
	char **a;

	if (h >= 0) {
		free(name);
		return h;
	}
	a = r->hosts;
	if (topoml__grow((void **)&a, r->nhosts, sizeof(*a)))
		goto oom;
	r->hosts = a;
	r->hosts[r->nhosts] = name;
	if (_map_put(&r->host_ix, name, r->nhosts))
		goto oom;
	return r->nhosts++;
oom:
	free(name);
	return -1;
}

/* Which CAs are compute nodes, and of which host. */
static int _hosts(struct ib_reader *r, const char *cabled)
{
	int i, nsharp = 0, nunnamed = 0, first_unnamed = -1, nloose = 0;
	int first_loose = -1;

	for (i = 0; i < r->nnodes; i++) {
		struct ib_node *n = &r->nodes[i];
		char *h;

		if (n->type != IB_CA)
			continue;
		if (_is_sharp(n->desc)) {
			nsharp++;
			continue;
		}
		if (!cabled[i]) {
			if (!nloose++)
				first_loose = i;
			continue;
		}
		h = _host_of(n->desc);
		if (!h) {
			if (!nunnamed++)
				first_unnamed = i;
			continue;
		}
		n->host = _add_host(r, h);
		if (n->host < 0)
			return -1;
	}
	if (!r->nhosts && nunnamed) {
		/* Nothing names a host: keep the wiring, name CAs by id. */
		for (i = 0; i < r->nnodes; i++) {
			struct ib_node *n = &r->nodes[i];

			if (n->type != IB_CA || _is_sharp(n->desc) ||
			    !cabled[i])
				continue;
			n->host = _add_host(r, strdup(n->id));
			if (n->host < 0)
				return -1;
		}
		topoml_errors_add(r->warn, "%s:%d: no CA names its host (e.g. "
				  "%s \"%s\"; expected \"HOSTNAME HCA-1\" or "
				  "\"HOSTNAME mlx5_0\", set by rdma-ndd): "
				  "the %d CAs become nodes named by their id",
				  r->path, r->nodes[first_unnamed].line,
				  r->nodes[first_unnamed].id,
				  r->nodes[first_unnamed].desc, nunnamed);
	} else if (nunnamed) {
		topoml_errors_add(r->warn, "%s:%d: %d CA%s name%s no host and "
				  "%s (first: %s \"%s\")",
				  r->path, r->nodes[first_unnamed].line,
				  nunnamed, nunnamed > 1 ? "s" : "",
				  nunnamed > 1 ? "" : "s",
				  nunnamed > 1 ? "are not compute nodes" :
				  "is not a compute node",
				  r->nodes[first_unnamed].id,
				  r->nodes[first_unnamed].desc);
	}
	if (nsharp)
		topoml_errors_add(r->warn, "%s: %d SHARP aggregation node%s "
				  "left out", r->path, nsharp,
				  nsharp > 1 ? "s" : "");
	if (nloose && r->nhosts)
		topoml_errors_add(r->warn, "%s:%d: %d CA%s cabled to no switch "
				  "left out (first: %s \"%s\")", r->path,
				  r->nodes[first_loose].line, nloose,
				  nloose > 1 ? "s" : "",
				  r->nodes[first_loose].id,
				  r->nodes[first_loose].desc);
	return 0;
}

static int _uf_find(int *uf, int x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

static void _uf_union(int *uf, int a, int b)
{
	a = _uf_find(uf, a);
	b = _uf_find(uf, b);
	if (a != b)
		uf[a > b ? a : b] = a < b ? a : b;	/* keep the first */
}

static bool _sw(const struct ib_reader *r, int i)
{
	return r->nodes[i].type == IB_SWITCH;
}

/* Sanitised name candidate: [A-Za-z0-9._-], others become '-'. */
static char *_clean(const char *s, size_t n)
{
	char *c = strndup(s, n);
	size_t i;

	for (i = 0; c && c[i]; i++)
		if (!isalnum((unsigned char)c[i]) && !strchr("-_.", c[i]))
			c[i] = '-';
	return c;
}

/* Name candidates in order of preference; "" when a form does not apply. */
static char *_switch_name(const struct ib_node *n, int attempt)
{
	const char *d = n->desc, *semi = strchr(d, ';'), *colon;
	bool managed = semi && !strpbrk(d, " \t");

	switch (attempt) {
	case 0:
		/* "MF0;leaf01:MQM8700/U1": the switch's host name */
		if (managed) {
			colon = strchr(semi + 1, ':');
			if (colon && colon > semi + 1)
				return _clean(semi + 1, colon - semi - 1);
		}
		if (!semi && *d && !strpbrk(d, " \t") &&
		    _name_chars_ok(d, strlen(d)))
			return strdup(d);
		return strdup("");
	case 1:
		/* a director's cards share the host name: add the rest */
		return managed ? _clean(semi + 1, strlen(semi + 1)) :
				 strdup("");
	default:
		return _clean(n->id, strlen(n->id));
	}
}

/*
 * Names of the switches that make it into the model: the first form that
 * no other switch also wants, the ibnetdiscover id as the last resort.
 */
static int _name_switches(struct ib_reader *r, const char *keep)
{
	int i, attempt, n = r->nnodes, rc = -1;
	char **cand = calloc(n ? n : 1, sizeof(*cand));
	int *count = calloc(n ? n : 1, sizeof(*count));
	struct topoml_name_index *seen = NULL, *taken = NULL;

	if (!cand || !count)
		goto out;
	for (attempt = 0; attempt < 3; attempt++) {
		topoml__index_free(seen);
		seen = NULL;
		for (i = 0; i < n; i++) {
			int j;

			free(cand[i]);
			cand[i] = NULL;
			if (!keep[i] || r->nodes[i].name)
				continue;
			cand[i] = _switch_name(&r->nodes[i], attempt);
			if (!cand[i])
				goto out;
			if (!*cand[i])
				continue;
			j = topoml__index_find(seen, cand[i]);
			if (j >= 0) {
				count[j]++;
				count[i] = -1;
			} else {
				if (_map_put(&seen, cand[i], i))
					goto out;
				count[i] = 1;
			}
		}
		for (i = 0; i < n; i++) {
			int j;

			if (!cand[i] || !*cand[i])
				continue;
			j = topoml__index_find(seen, cand[i]);
			if (attempt < 2 && count[j] > 1)
				continue;
			if (topoml__index_find(taken, cand[i]) >= 0 ||
			    topoml__index_find(r->host_ix, cand[i]) >= 0)
				continue;	/* taken already */
			r->nodes[i].name = cand[i];
			cand[i] = NULL;
			if (_map_put(&taken, r->nodes[i].name, i))
				goto out;
		}
	}
	for (i = 0; i < n; i++)
		if (keep[i] && !r->nodes[i].name) {
			/* an id equal to a host name: make it distinct */
			if (asprintf(&r->nodes[i].name, "%s-sw", r->nodes[i].id)
			    < 0) {
				r->nodes[i].name = NULL;
				goto out;
			}
		}
	rc = 0;
out:
	if (cand)
		for (i = 0; i < n; i++)
			free(cand[i]);
	free(cand);
	free(count);
	topoml__index_free(seen);
	topoml__index_free(taken);
	return rc;
}

/* A name not used by any switch or host: base1, base2, ... */
static char *_fresh_name(const struct ib_reader *r, const topoml_topo_t *t,
			 const char *base, int *counter)
{
	char *s = NULL;

	for (;;) {
		free(s);
		if (asprintf(&s, "%s%d", base, ++*counter) < 0)
			return NULL;
		if (topoml_switch_by_name(t, s) < 0 &&
		    topoml__index_find(r->host_ix, s) < 0) {
			int i;

			for (i = 0; i < r->nnodes; i++)
				if (r->nodes[i].name &&
				    !strcmp(r->nodes[i].name, s))
					break;
			if (i == r->nnodes)
				return s;
		}
	}
}

struct ib_build {
	int *host_unit;		/* host -> its unit (node index) */
	int *queue;
	int *comp;		/* switch union-find over all switch cables */
	char *keep;		/* switch kept in the model */
	char *cabled;		/* CA cabled to a switch */
	char *need;		/* part needs a virtual root */
};

/* Switch-to-switch neighbours in CSR form. */
static int _adjacency(const struct ib_reader *r, int **off, int **adj)
{
	int e, i, n = r->nnodes;
	int *o = calloc(n + 1, sizeof(int)), *a, *fill;

	*off = o;
	*adj = NULL;
	if (!o)
		return -1;
	for (e = 0; e < r->nedges; e++)
		if (_sw(r, r->edges[e].a) && _sw(r, r->edges[e].b)) {
			o[r->edges[e].a + 1]++;
			o[r->edges[e].b + 1]++;
		}
	for (i = 0; i < n; i++)
		o[i + 1] += o[i];
	a = malloc((o[n] ? o[n] : 1) * sizeof(int));
	fill = malloc((n ? n : 1) * sizeof(int));
	if (!a || !fill) {
		free(a);
		free(fill);
		return -1;
	}
	memcpy(fill, o, n * sizeof(int));
	for (e = 0; e < r->nedges; e++)
		if (_sw(r, r->edges[e].a) && _sw(r, r->edges[e].b)) {
			a[fill[r->edges[e].a]++] = r->edges[e].b;
			a[fill[r->edges[e].b]++] = r->edges[e].a;
		}
	free(fill);
	*adj = a;
	return 0;
}

/* Leaves, units (union over shared hosts) and BFS levels. */
static int _levels(struct ib_reader *r, struct ib_build *b)
{
	int i, e, k, head = 0, tail = 0, *uf = b->comp, *off, *adj;

	if (_adjacency(r, &off, &adj)) {
		free(off);
		return -1;
	}
	for (i = 0; i < r->nnodes; i++)
		uf[i] = i;
	for (i = 0; i < r->nhosts; i++)
		b->host_unit[i] = -1;
	/* Leaves and units: a host's leaves join into one unit. */
	for (e = 0; e < r->nedges; e++) {
		int a = r->edges[e].a, c = r->edges[e].b, sw, ca, h;

		if (_sw(r, a) == _sw(r, c))
			continue;
		sw = _sw(r, a) ? a : c;
		ca = sw == a ? c : a;
		h = r->nodes[ca].host;
		if (h < 0)
			continue;
		r->nodes[sw].level = 0;
		if (b->host_unit[h] < 0)
			b->host_unit[h] = sw;
		else
			_uf_union(uf, b->host_unit[h], sw);
	}
	for (i = 0; i < r->nnodes; i++)
		if (r->nodes[i].level == 0) {
			r->nodes[i].unit = _uf_find(uf, i);
			b->queue[tail++] = i;
		}
	for (i = 0; i < r->nhosts; i++)
		if (b->host_unit[i] >= 0)
			b->host_unit[i] = _uf_find(uf, b->host_unit[i]);
	/* Breadth first from the leaves over switch-to-switch cables. */
	while (head < tail) {
		int s = b->queue[head++];

		for (k = off[s]; k < off[s + 1]; k++) {
			int o = adj[k];

			if (r->nodes[o].level >= 0)
				continue;
			r->nodes[o].level = r->nodes[s].level + 1;
			b->queue[tail++] = o;
		}
	}
	/* Connected parts, over every switch cable (units joined too). */
	for (i = 0; i < r->nnodes; i++)
		for (k = off[i]; k < off[i + 1]; k++)
			_uf_union(uf, i, adj[k]);
	free(off);
	free(adj);
	return 0;
}

/* Which switches make it into the model, and their names. */
static int _prepare_switches(struct ib_reader *r, struct ib_build *b)
{
	int i, su = 0, ndropped = 0, first_dropped = -1;

	for (i = 0; i < r->nnodes; i++) {
		struct ib_node *n = &r->nodes[i];

		b->keep[i] = 0;
		if (n->type != IB_SWITCH)
			continue;
		if (n->level < 0) {
			if (!ndropped++)
				first_dropped = i;
			continue;
		}
		b->keep[i] = n->level > 0 || n->unit == i;
	}
	if (ndropped)
		topoml_errors_add(r->warn, "%s:%d: %d switch%s with no host "
				  "below left out (first: %s \"%s\")",
				  r->path, r->nodes[first_dropped].line,
				  ndropped, ndropped > 1 ? "es" : "",
				  r->nodes[first_dropped].id,
				  r->nodes[first_dropped].desc);
	if (_name_switches(r, b->keep))
		return -1;
	/* Units of several leaves get a name of their own. */
	for (i = 0; i < r->nnodes; i++)
		b->queue[i] = 0;
	for (i = 0; i < r->nnodes; i++)
		if (r->nodes[i].level == 0)
			b->queue[r->nodes[i].unit]++;
	for (i = 0; i < r->nnodes; i++) {
		struct ib_node *n = &r->nodes[i];
		char *name;

		if (!b->keep[i] || n->level != 0 || b->queue[i] < 2)
			continue;
		name = _fresh_name(r, NULL, "su", &su);
		if (!name)
			return -1;
		/* Hosts on several leaves: rails, which NCCL must be told
		 * about (topoml.so's rails=yes, topoml-spank(8)). */
		topoml_errors_add(r->warn, "%s: scalable unit %s: %d leaf "
				  "switches share hosts (first %s, line %d): "
				  "a rail-optimised fabric, set rails=yes "
				  "for topoml.so in plugstack.conf",
				  r->path, name, b->queue[i], n->name,
				  n->line);
		free(n->name);
		n->name = name;
	}
	return 0;
}

static int _add_switches(struct ib_reader *r, struct ib_build *b,
			 topoml_topo_t *t, topoml_errors_t *err)
{
	int i;

	for (i = 0; i < r->nnodes; i++) {
		struct ib_node *n = &r->nodes[i];

		if (!b->keep[i])
			continue;
		n->msw = topoml_add_switch(t, n->name, n->line, err);
		if (n->msw < 0)
			return -1;
	}
	/* Unit members: their speed counts for the unit. */
	for (i = 0; i < r->nnodes; i++) {
		struct ib_node *n = &r->nodes[i];
		struct ib_node *u;

		if (n->type != IB_SWITCH || n->level < 0)
			continue;
		u = n->level == 0 ? &r->nodes[n->unit] : n;
		if (n->gbps > t->switches[u->msw].link_speed)
			t->switches[u->msw].link_speed = n->gbps;
	}
	return 0;
}

/* The model switch a fabric switch maps to (a leaf: its unit). */
static int _msw(const struct ib_reader *r, int i)
{
	const struct ib_node *n = &r->nodes[i];

	return n->level == 0 ? r->nodes[n->unit].msw : n->msw;
}

static int _cmp_unit(const void *a, const void *b, void *arg)
{
	const int *unit = arg, x = *(const int *)a, y = *(const int *)b;

	if (unit[x] != unit[y])
		return unit[x] < unit[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Hosts unit by unit, each unit's hosts in hostlist order (n1, n2, n10). */
static int _add_hosts(struct ib_reader *r, struct ib_build *b,
		      topoml_topo_t *t, topoml_errors_t *err)
{
	int *order = malloc((r->nhosts ? r->nhosts : 1) * sizeof(int));
	int i = 0, j, node, rc = -1;
	topoml_hl_t hl = NULL;
	char *name;

	if (!order)
		goto out;
	for (j = 0; j < r->nhosts; j++)
		order[j] = j;
	qsort_r(order, r->nhosts, sizeof(int), _cmp_unit, b->host_unit);
	while (i < r->nhosts) {
		int u = b->host_unit[order[i]];

		hl = slurm_hostlist_create(NULL);
		if (!hl)
			goto out;
		for (j = i; j < r->nhosts && b->host_unit[order[j]] == u; j++)
			slurm_hostlist_push_host(hl, r->hosts[order[j]]);
		i = j;
		if (u < 0) {
			slurm_hostlist_destroy(hl);
			hl = NULL;
			continue;
		}
		slurm_hostlist_uniq(hl);	/* sorts */
		while ((name = slurm_hostlist_shift(hl))) {
			node = topoml_add_node(t, name, 0, err);
			free(name);
			if (node < 0 ||
			    topoml_attach_node(t, r->nodes[u].msw, node, err))
				goto out;
		}
		slurm_hostlist_destroy(hl);
		hl = NULL;
	}
	rc = 0;
out:
	if (hl)
		slurm_hostlist_destroy(hl);
	free(order);
	return rc;
}

static void _link_tree(struct ib_reader *r, topoml_topo_t *t)
{
	int e;

	for (e = 0; e < r->nedges; e++) {
		int a = r->edges[e].a, c = r->edges[e].b;
		int la, lc;

		if (!_sw(r, a) || !_sw(r, c))
			continue;
		la = r->nodes[a].level;
		lc = r->nodes[c].level;
		if (la < 0 || lc < 0 || la == lc)
			continue;	/* not a tree link */
		if (la < lc)
			topoml_link_switches(t, _msw(r, c), _msw(r, a));
		else
			topoml_link_switches(t, _msw(r, a), _msw(r, c));
	}
}

/*
 * Parts of the fabric in which no switch reaches every host of the part:
 * need[p] = 1 for the part's representative p.  Returns how many.
 */
static int _uncovered_parts(struct ib_reader *r, struct ib_build *b,
			    const topoml_topo_t *t, char *need)
{
	int i, k, n = 0;
	int *part_of = malloc((t->nswitches ? t->nswitches : 1) *
			      sizeof(int));
	hwloc_bitmap_t hosts = hwloc_bitmap_alloc();

	if (!part_of || !hosts) {
		n = -1;
		goto out;
	}
	for (i = 0; i < r->nnodes; i++)
		if (b->keep[i])
			part_of[r->nodes[i].msw] = _uf_find(b->comp, i);
	for (i = 0; i < r->nnodes; i++) {
		bool covered = false;

		need[i] = 0;
		if (!b->keep[i] || _uf_find(b->comp, i) != i)
			continue;
		hwloc_bitmap_zero(hosts);
		for (k = 0; k < t->nswitches; k++)
			if (part_of[k] == i)
				hwloc_bitmap_or(hosts, hosts,
						t->switches[k].desc);
		for (k = 0; k < t->nswitches && !covered; k++)
			covered = part_of[k] == i &&
				hwloc_bitmap_isequal(t->switches[k].desc,
						     hosts);
		if (!covered) {
			need[i] = 1;
			n++;
		}
	}
out:
	free(part_of);
	hwloc_bitmap_free(hosts);
	return n;
}

/* A virtual switch above the top switches of each part in need. */
static int _virtual_roots(struct ib_reader *r, struct ib_build *b,
			  topoml_topo_t *t, const char *need,
			  topoml_errors_t *err)
{
	int i, top, v, nsw = t->nswitches, counter = 0;

	for (i = 0; i < r->nnodes; i++) {
		char *name;

		if (!need[i])
			continue;
		name = _fresh_name(r, t, "fabric", &counter);
		v = name ? topoml_add_switch(t, name, 0, err) : -1;
		if (v < 0) {
			free(name);
			return -1;
		}
		for (top = 0; top < r->nnodes; top++) {
			int m = r->nodes[top].msw;

			if (b->keep[top] && m < nsw &&
			    _uf_find(b->comp, top) == i &&
			    !t->switches[m].nparents)
				topoml_link_switches(t, v, m);
		}
		topoml_errors_add(r->warn, "%s: no switch reaches every host "
				  "of the fabric part around %s; added "
				  "virtual switch %s above its top switches",
				  r->path, r->nodes[i].name, name);
		free(name);
	}
	return 0;
}

/* The model from the analysed fabric (need: virtual roots, or NULL). */
static topoml_topo_t *_model(struct ib_reader *r, struct ib_build *b,
			     const char *need)
{
	topoml_topo_t *t = topoml_new(TOPOML_FAT_TREE, r->path);

	if (!t) {
		topoml_errors_add(r->err, "%s: out of memory", r->path);
		return NULL;
	}
	if (_add_switches(r, b, t, r->err) || _add_hosts(r, b, t, r->err))
		goto fail;
	_link_tree(r, t);
	if (need && _virtual_roots(r, b, t, need, r->err))
		goto fail;
	if (topoml_finalize(t, r->err))
		goto fail;
	return t;
fail:
	topoml_free(t);
	return NULL;
}

static topoml_topo_t *_build(struct ib_reader *r)
{
	struct ib_build b = { 0 };
	topoml_topo_t *t = NULL;
	int i, e, nsw = 0, nca = 0, roots;

	for (i = 0; i < r->nnodes; i++) {
		nsw += r->nodes[i].type == IB_SWITCH;
		nca += r->nodes[i].type == IB_CA;
	}
	if (!nsw) {
		const struct ib_node *c = NULL;

		for (i = 0; i < r->nnodes && !c; i++)
			if (r->nodes[i].type == IB_CA)
				c = &r->nodes[i];
		if (c)
			topoml_errors_add(r->err, "%s:%d: no switch in the "
					  "fabric: only %d CA%s (first %s "
					  "\"%s\"); ibnetdiscover saw no "
					  "switched network (port down or not "
					  "cabled?)", r->path, c->line, nca,
					  nca > 1 ? "s" : "", c->id, c->desc);
		else
			topoml_errors_add(r->err, "%s: no Switch or Ca blocks: "
					  "not ibnetdiscover output (the "
					  "one-line-per-port forms of -p, -l, "
					  "-H and -S are not read: run plain "
					  "ibnetdiscover)", r->path);
		return NULL;
	}
	b.host_unit = malloc((r->nnodes + 1) * sizeof(int));
	b.queue = malloc((r->nnodes + 1) * sizeof(int));
	b.comp = malloc((r->nnodes + 1) * sizeof(int));
	b.keep = calloc(r->nnodes + 1, 1);
	b.cabled = calloc(r->nnodes + 1, 1);
	b.need = calloc(r->nnodes + 1, 1);
	if (!b.host_unit || !b.queue || !b.comp || !b.keep || !b.cabled ||
	    !b.need)
		goto oom;
	for (e = 0; e < r->nedges; e++) {
		int a = r->edges[e].a, c = r->edges[e].b;

		if (_sw(r, a) != _sw(r, c))
			b.cabled[_sw(r, a) ? c : a] = 1;
	}
	if (_hosts(r, b.cabled))
		goto oom;
	if (!r->nhosts) {
		if (nca)
			topoml_errors_add(r->err, "%s: no compute hosts: none "
					  "of the %d CAs is a host adapter "
					  "cabled to a switch",
					  r->path, nca);
		else
			topoml_errors_add(r->err, "%s: no compute hosts: the "
					  "fabric has switches but no CA",
					  r->path);
		goto out;
	}
	/* host_unit is sized by nodes; hosts never outnumber CAs. */
	if (_levels(r, &b))
		goto oom;
	if (_prepare_switches(r, &b))
		goto oom;
	t = _model(r, &b, NULL);
	if (!t)
		goto out;
	/* Rebuild with virtual roots where the cables join what no switch
	 * reaches alone. */
	roots = _uncovered_parts(r, &b, t, b.need);
	if (roots < 0)
		goto oom;
	if (roots > 0) {
		topoml_free(t);
		t = _model(r, &b, b.need);
	}
	goto out;
oom:
	topoml_errors_add(r->err, "%s: out of memory", r->path);
	topoml_free(t);
	t = NULL;
out:
	free(b.host_unit);
	free(b.queue);
	free(b.comp);
	free(b.keep);
	free(b.cabled);
	free(b.need);
	return t;
}

topoml_topo_t *topoml_load_ibnet_ex(const char *path, topoml_errors_t *err,
				    topoml_errors_t *warn)
{
	struct ib_reader r;
	topoml_topo_t *t = NULL;
	int i, k;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.err = err;
	r.warn = warn;
	if (_parse(&r) == 0 && _edges(&r) == 0)
		t = _build(&r);
	for (i = 0; i < r.nnodes; i++) {
		for (k = 0; k < r.nodes[i].nlinks; k++)
			free(r.nodes[i].links[k].peer);
		free(r.nodes[i].links);
		free(r.nodes[i].id);
		free(r.nodes[i].desc);
		free(r.nodes[i].name);
	}
	free(r.nodes);
	for (i = 0; i < r.nhosts; i++)
		free(r.hosts[i]);
	free(r.hosts);
	free(r.edges);
	topoml__index_free(r.ids);
	topoml__index_free(r.host_ix);
	return t;
}

topoml_topo_t *topoml_load_ibnet(const char *path, topoml_errors_t *err)
{
	return topoml_load_ibnet_ex(path, err, NULL);
}
