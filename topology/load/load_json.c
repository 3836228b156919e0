/*
 * JSON site files (topoml.json(5)) for the three families, parsed with
 * json-c.  Syntax errors carry FILE:LINE:COL from the tokenizer's byte
 * offset; semantic errors name the object and the line of its "name".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE	/* memmem, vasprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "topoml.h"
#include "topoml/build.h"
#include "topoml/load.h"
#include "util/util.h"
#include "model/model_int.h"

/* The text being loaded, to turn offsets and names back into lines. */
struct jsrc {
	const char *path;
	const char *buf;
	size_t len;
	size_t cur;		/* search cursor: objects come in file order */
	int cur_line;
	topoml_topo_t *t;
	topoml_errors_t *err;
	int nerr_start;
	struct topoml_hl_budget budget;	/* for all host lists of the file */
	/*
	 * Bytes the line lookups below may still scan: a lookup that misses
	 * (a name written with escapes, an error per array element) scans
	 * the file, so without a bound many of them are quadratic.  When it
	 * runs out, messages lose their line number, nothing else.
	 */
	size_t scan_left;
};

/* Charge n scanned bytes; false when the lookup budget is spent. */
static bool _scan(struct jsrc *js, size_t n)
{
	if (js->scan_left < n) {
		js->scan_left = 0;
		return false;
	}
	js->scan_left -= n;
	return true;
}

static void _line_col(const struct jsrc *js, size_t off, int *line, int *col)
{
	size_t i, bol = 0;

	*line = 1;
	if (off > js->len)
		off = js->len;
	for (i = 0; i < off; i++)
		if (js->buf[i] == '\n') {
			(*line)++;
			bol = i + 1;
		}
	*col = (int)(off - bol) + 1;
	/* an editor does not show a byte order mark as a column */
	if (*line == 1 && off >= 3 && js->len >= 3 &&
	    !memcmp(js->buf, "\xef\xbb\xbf", 3))
		*col -= 3;
}

static bool _ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Is the quoted string at pos the value of key "key"? */
static bool _is_value_of(struct jsrc *js, size_t pos, const char *key)
{
	size_t kl = strlen(key);

	while (pos > 0 && _ws(js->buf[pos - 1]))
		pos--;
	if (pos == 0 || js->buf[--pos] != ':')
		return false;
	while (pos > 0 && _ws(js->buf[pos - 1]))
		pos--;
	if (pos < kl + 2 || js->buf[pos - 1] != '"' ||
	    js->buf[pos - kl - 2] != '"')
		return false;
	return !memcmp(js->buf + pos - kl - 1, key, kl);
}

static size_t _search(struct jsrc *js, size_t from, const char *key,
		      const char *value)
{
	size_t vl = strlen(value);
	char *pat = malloc(vl + 3);
	size_t found = (size_t)-1;
	const char *p;

	if (!pat)
		return found;
	pat[0] = '"';
	memcpy(pat + 1, value, vl);
	pat[vl + 1] = '"';
	pat[vl + 2] = '\0';
	while (from < js->len && js->scan_left &&
	       (p = memmem(js->buf + from, js->len - from, pat, vl + 2))) {
		_scan(js, p - js->buf - from + 1);
		if (_is_value_of(js, p - js->buf, key)) {
			found = p - js->buf;
			break;
		}
		from = p - js->buf + 1;
	}
	if (found == (size_t)-1 && from < js->len)
		_scan(js, js->len - from);	/* the miss read the rest */
	free(pat);
	return found;
}

/*
 * Line of the object whose "key" is "value".  Objects are visited in file
 * order, so searching on from the last hit finds the right one of two
 * objects with the same name and keeps a 100k-object file linear.
 */
static int _line_of(struct jsrc *js, const char *key, const char *value)
{
	size_t pos = _search(js, js->cur, key, value), i;

	if (pos == (size_t)-1) {
		pos = _search(js, 0, key, value);
		if (pos == (size_t)-1)
			return 0;
		js->cur = 0;
		js->cur_line = 1;
	}
	if (!_scan(js, pos - js->cur))
		return 0;
	for (i = js->cur; i < pos; i++)
		if (js->buf[i] == '\n')
			js->cur_line++;
	/* past this hit: a second object of the same name is found next */
	js->cur = pos + 1;
	return js->cur_line;
}

/* Line of the first "key": (for objects without a name). */
static int _key_line(struct jsrc *js, const char *key)
{
	size_t kl = strlen(key), from = 0;
	const char *p;
	int line, col;

	while (from < js->len && js->scan_left &&
	       (p = memmem(js->buf + from, js->len - from, key, kl))) {
		size_t pos = p - js->buf, e = pos + kl;

		if (!_scan(js, pos - from + 1))
			return 0;
		if (pos > 0 && js->buf[pos - 1] == '"' && e < js->len &&
		    js->buf[e] == '"') {
			for (e++; e < js->len && _ws(js->buf[e]); e++)
				;
			/* _line_col() reads from the start of the file */
			if (e < js->len && js->buf[e] == ':' && _scan(js, pos)) {
				_line_col(js, pos - 1, &line, &col);
				return line;
			}
		}
		from = pos + 1;
	}
	if (from < js->len)
		_scan(js, js->len - from);	/* the miss read the rest */
	return 0;
}

__attribute__((format(printf, 3, 4)))
static void _err(struct jsrc *js, int line, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return;
	if (line > 0)
		topoml_errors_add(js->err, "%s:%d: %s", js->path, line, msg);
	else
		topoml_errors_add(js->err, "%s: %s", js->path, msg);
	free(msg);
}

static bool _failed(const struct jsrc *js)
{
	return js->err->n > js->nerr_start;
}

/* Reject keys outside allowed: a typo must not silently drop data. */
static void _check_keys(struct jsrc *js, json_object *o,
			const char *const *allowed, const char *what, int line)
{
	json_object_object_foreach(o, key, val) {
		const char *const *a;

		(void)val;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			_err(js, line ? line : _key_line(js, key),
			     "%s: unknown key \"%s\"", what, key);
	}
}

/* A host list given as a string or an array of strings; caller frees. */
static char *_hostlist(struct jsrc *js, json_object *o, const char *key,
		       const char *what, int line)
{
	json_object *v;
	char *out = NULL;
	size_t len = 0;
	int i, n;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	if (json_object_is_type(v, json_type_string))
		return strdup(json_object_get_string(v));
	if (!json_object_is_type(v, json_type_array))
		goto bad;
	n = json_object_array_length(v);
	/* Sized first: growing per element is quadratic in the array. */
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);

		if (!json_object_is_type(e, json_type_string))
			goto bad;
		len += strlen(json_object_get_string(e)) + 1;
	}
	out = malloc(len + 1);
	if (!out)
		return NULL;
	for (len = 0, i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		size_t l = strlen(json_object_get_string(e));

		if (len)
			out[len++] = ',';
		memcpy(out + len, json_object_get_string(e), l);
		len += l;
	}
	out[len] = '\0';
	return out;
bad:
	free(out);
	_err(js, line, "%s: \"%s\" must be a host list string or an array of strings",
	     what, key);
	return NULL;
}

/* Name of an array element, or an error naming the element. */
static const char *_name(struct jsrc *js, json_object *o, const char *arr,
			 int idx, int *line)
{
	json_object *v;
	const char *name;

	*line = 0;
	if (!json_object_is_type(o, json_type_object)) {
		_err(js, _key_line(js, arr), "%s[%d]: must be an object", arr,
		     idx);
		return NULL;
	}
	if (!json_object_object_get_ex(o, "name", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		_err(js, _key_line(js, arr),
		     "%s[%d]: missing \"name\" (a string)", arr, idx);
		return NULL;
	}
	name = json_object_get_string(v);
	*line = _line_of(js, "name", name);
	return name;
}

struct attach_ctx {
	struct jsrc *js;
	int sw;
	int line;
};

static int _attach_one(const char *host, void *arg)
{
	struct attach_ctx *c = arg;
	topoml_topo_t *t = c->js->t;
	int n = topoml_node_by_name(t, host);

	if (n < 0)
		n = topoml_add_node(t, host, c->line, c->js->err);
	if (n >= 0)
		topoml_attach_node(t, c->sw, n, c->js->err);
	return 0;
}

static void _attach_nodes(struct jsrc *js, json_object *o, int sw, int line)
{
	struct topoml_switch *s = &js->t->switches[sw];
	const char *what = js->t->family == TOPOML_DRAGONFLY ? "router" :
			   "switch";
	struct attach_ctx c = { .js = js, .sw = sw, .line = line };
	char *hl, label[300];

	snprintf(label, sizeof(label), "%s %s", what, s->name);
	hl = _hostlist(js, o, "nodes", label, line);
	if (!hl)
		return;
	if (topoml__hostlist_foreach(hl, &js->budget, _attach_one, &c) < 0)
		_err(js, line, "%s: invalid host list \"%s\" in \"nodes\"%s",
		     label, hl, topoml__hostlist_why(errno));
	free(hl);
}

static void _link_speed(struct jsrc *js, json_object *o, int sw, int line)
{
	json_object *v;

	if (!json_object_object_get_ex(o, "link_speed", &v))
		return;
	if ((!json_object_is_type(v, json_type_int) &&
	     !json_object_is_type(v, json_type_double)) ||
	    json_object_get_double(v) < 0) {
		_err(js, line, "switch %s: \"link_speed\" must be a number >= 0",
		     js->t->switches[sw].name);
		return;
	}
	js->t->switches[sw].link_speed = json_object_get_double(v);
}

/*
 * NVLink domains (issue 14): "nvlink_domain": NAME on a leaf switch or
 * router puts the nodes attached to it in domain NAME (several leaves may
 * name one domain: a rack cabled to two leaves); a top-level
 * "nvlink_domains": [{"name": ..., "nodes": HOSTLIST}] lists them by node,
 * for any family.  A node in two domains is an error.
 */
static void _nvl_leaf(struct jsrc *js, json_object *o, int sw, int line)
{
	const struct topoml_switch *s = &js->t->switches[sw];
	json_object *v;
	int d;

	if (!json_object_object_get_ex(o, "nvlink_domain", &v))
		return;
	if (!json_object_is_type(v, json_type_string)) {
		_err(js, line, "%s %s: \"nvlink_domain\" must be a string "
		     "(the domain's name)", js->t->family == TOPOML_DRAGONFLY ?
		     "router" : "switch", s->name);
		return;
	}
	if (!s->nnodes) {
		_err(js, line, "switch %s: \"nvlink_domain\" on a switch "
		     "without nodes (it belongs on a leaf)", s->name);
		return;
	}
	d = topoml_add_nvl(js->t, json_object_get_string(v), line, js->err);
	for (int k = 0; d >= 0 && k < s->nnodes; k++)
		topoml_set_nvl(js->t, s->nodes[k], d, line, js->err);
}

struct nvl_ctx {
	struct jsrc *js;
	const char *name;
	int d, line;
};

static int _nvl_one(const char *host, void *arg)
{
	struct nvl_ctx *c = arg;
	int n = topoml_node_by_name(c->js->t, host);

	if (n < 0)
		_err(c->js, c->line, "NVLink domain %s: unknown node %s",
		     c->name, host);
	else
		topoml_set_nvl(c->js->t, n, c->d, c->line, c->js->err);
	return 0;
}

static void _nvl_domains(struct jsrc *js, json_object *root)
{
	static const char *const keys[] = { "name", "nodes", "comment",
					    NULL };
	json_object *arr;
	int n;

	if (!json_object_object_get_ex(root, "nvlink_domains", &arr))
		return;
	if (!json_object_is_type(arr, json_type_array)) {
		_err(js, _key_line(js, "nvlink_domains"),
		     "\"nvlink_domains\" must be an array");
		return;
	}
	n = json_object_array_length(arr);
	for (int i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		struct nvl_ctx c = { .js = js };
		char what[300], *hl;
		int before = js->t->nnvl;

		c.name = _name(js, o, "nvlink_domains", i, &c.line);
		if (!c.name)
			continue;
		snprintf(what, sizeof(what), "NVLink domain %s", c.name);
		_check_keys(js, o, keys, what, c.line);
		c.d = topoml_add_nvl(js->t, c.name, c.line, js->err);
		if (c.d < 0)
			continue;
		if (c.d < before) {
			_err(js, c.line, "%s: duplicate name", what);
			continue;
		}
		hl = _hostlist(js, o, "nodes", what, c.line);
		if (!hl || !*hl)
			_err(js, c.line, "%s: missing \"nodes\" (a host list)",
			     what);
		else if (topoml__hostlist_foreach(hl, &js->budget, _nvl_one,
						 &c) < 0)
			_err(js, c.line, "%s: invalid host list \"%s\" in "
			     "\"nodes\"%s", what, hl,
			     topoml__hostlist_why(errno));
		free(hl);
	}
}

static json_object *_array(struct jsrc *js, json_object *root,
			   const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(root, key, &v)) {
		_err(js, 0, "missing \"%s\" (an array)", key);
		return NULL;
	}
	if (!json_object_is_type(v, json_type_array)) {
		_err(js, _key_line(js, key), "\"%s\" must be an array", key);
		return NULL;
	}
	return v;
}

/* Does o have key with a non-empty string or array value? */
static bool _nonempty(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return false;
	if (json_object_is_type(v, json_type_string))
		return *json_object_get_string(v) != '\0';
	if (json_object_is_type(v, json_type_array))
		return json_object_array_length(v) > 0;
	return true;	/* a wrong type is reported on its own */
}

struct child_ctx {
	struct jsrc *js;
	int parent;
	int line;
};

static int _link_child(const char *name, void *arg)
{
	struct child_ctx *c = arg;
	topoml_topo_t *t = c->js->t;
	int child = topoml_switch_by_name(t, name);

	if (child < 0)
		_err(c->js, c->line, "switch %s: unknown switch %s in \"switches\"",
		     t->switches[c->parent].name, name);
	else
		topoml_link_switches(t, c->parent, child);
	return 0;
}

static void _fat_tree(struct jsrc *js, json_object *root)
{
	static const char *const keys[] = { "name", "nodes", "switches",
					    "link_speed", "comment",
					    "nvlink_domain", NULL };
	json_object *arr = _array(js, root, "switches");
	int i, n, *sw, *line;

	if (!arr)
		return;
	n = json_object_array_length(arr);
	sw = malloc((n ? n : 1) * sizeof(int));
	line = malloc((n ? n : 1) * sizeof(int));
	if (!sw || !line) {
		_err(js, 0, "out of memory");
		goto out;
	}
	/* Switches may name children further down: add them all first. */
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		const char *name = _name(js, o, "switches", i, &line[i]);
		char what[300];

		sw[i] = -1;
		if (!name)
			continue;
		snprintf(what, sizeof(what), "switch %s", name);
		_check_keys(js, o, keys, what, line[i]);
		sw[i] = topoml_add_switch(js->t, name, line[i], js->err);
	}
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		struct child_ctx c = { .js = js, .parent = sw[i],
				       .line = line[i] };
		char *hl, what[300];

		if (sw[i] < 0)
			continue;
		_attach_nodes(js, o, sw[i], line[i]);
		_link_speed(js, o, sw[i], line[i]);
		_nvl_leaf(js, o, sw[i], line[i]);
		snprintf(what, sizeof(what), "switch %s",
			 js->t->switches[sw[i]].name);
		hl = _hostlist(js, o, "switches", what, line[i]);
		if (hl && topoml__hostlist_foreach(hl, &js->budget, _link_child,
						  &c) < 0)
			_err(js, line[i],
			     "%s: invalid host list \"%s\" in \"switches\"%s",
			     what, hl, topoml__hostlist_why(errno));
		/* as Slurm's reader: a switch needs nodes or children */
		if ((!hl || !*hl) && !_nonempty(o, "nodes"))
			_err(js, line[i],
			     "%s has no nodes and no child switches", what);
		free(hl);
	}
out:
	free(sw);
	free(line);
}

/* Groups by name for global_links: sorted once, a scan per link is
 * quadratic in the file. */
static int _group_cmp(const void *a, const void *b, void *arg)
{
	const topoml_topo_t *t = arg;

	return strcmp(t->groups[*(const int *)a].name,
		      t->groups[*(const int *)b].name);
}

static int _group_by_name(const topoml_topo_t *t, const int *sorted,
			  const char *name)
{
	int lo = 0, hi = t->ngroups - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(name, t->groups[sorted[mid]].name);

		if (!c)
			return sorted[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

static void _global_links(struct jsrc *js, json_object *root)
{
	topoml_topo_t *t = js->t;
	int g = t->ngroups, i, n, line = _key_line(js, "global_links");
	int *sorted = NULL;
	json_object *v;

	if (!json_object_object_get_ex(root, "global_links", &v)) {
		t->df_arrangement = TOPOML_DF_ALL_TO_ALL;
		return;
	}
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);

		if (!strcmp(s, "all-to-all"))
			t->df_arrangement = TOPOML_DF_ALL_TO_ALL;
		else if (!strcmp(s, "absolute"))
			t->df_arrangement = TOPOML_DF_ABSOLUTE;
		else if (!strcmp(s, "relative"))
			t->df_arrangement = TOPOML_DF_RELATIVE;
		else
			_err(js, line,
			     "\"global_links\": unknown arrangement \"%s\" (all-to-all, absolute, relative, or a list of links)",
			     s);
		return;
	}
	if (!json_object_is_type(v, json_type_array)) {
		_err(js, line,
		     "\"global_links\" must be an arrangement name or an array of [group, group, count] links");
		return;
	}
	t->df_arrangement = TOPOML_DF_EXPLICIT;
	t->global_links = calloc((size_t)(g ? g : 1) * (g ? g : 1),
				 sizeof(int));
	sorted = malloc((g ? g : 1) * sizeof(int));
	if (!t->global_links || !sorted) {
		free(sorted);
		_err(js, 0, "out of memory");
		return;
	}
	for (i = 0; i < g; i++)
		sorted[i] = i;
	/* group names are unique (topoml_add_group) */
	qsort_r(sorted, g, sizeof(int), _group_cmp, t);
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i), *c;
		int len = json_object_is_type(e, json_type_array) ?
			  (int)json_object_array_length(e) : 0;
		int a, b, count = 1;

		if (len < 2 || len > 3 ||
		    !json_object_is_type(json_object_array_get_idx(e, 0),
					 json_type_string) ||
		    !json_object_is_type(json_object_array_get_idx(e, 1),
					 json_type_string)) {
			_err(js, line,
			     "global_links[%d]: must be [\"group\", \"group\"] or [\"group\", \"group\", count]",
			     i);
			continue;
		}
		a = _group_by_name(t, sorted, json_object_get_string(
					json_object_array_get_idx(e, 0)));
		b = _group_by_name(t, sorted, json_object_get_string(
					json_object_array_get_idx(e, 1)));
		if (len == 3) {
			c = json_object_array_get_idx(e, 2);
			count = json_object_is_type(c, json_type_int) ?
				json_object_get_int(c) : 0;
		}
		if (a < 0 || b < 0) {
			_err(js, line, "global_links[%d]: unknown group %s", i,
			     json_object_get_string(json_object_array_get_idx(
						e, a < 0 ? 0 : 1)));
			continue;
		}
		if (a == b || count < 1) {
			_err(js, line,
			     "global_links[%d]: %s", i, a == b ?
			     "a link joins two different groups" :
			     "the link count must be an integer >= 1");
			continue;
		}
		t->global_links[a * g + b] += count;
		t->global_links[b * g + a] += count;
	}
	free(sorted);
}

static void _dragonfly(struct jsrc *js, json_object *root)
{
	static const char *const gkeys[] = { "name", "routers", "comment",
					     NULL };
	static const char *const rkeys[] = { "name", "nodes", "link_speed",
					     "comment", "nvlink_domain",
					     NULL };
	json_object *arr = _array(js, root, "groups");
	int i, k, n;

	if (!arr)
		return;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *routers;
		int line, g, nr;
		const char *name = _name(js, o, "groups", i, &line);
		char what[300];

		if (!name)
			continue;
		snprintf(what, sizeof(what), "group %s", name);
		_check_keys(js, o, gkeys, what, line);
		g = topoml_add_group(js->t, name, line, js->err);
		if (g < 0)
			continue;
		if (!json_object_object_get_ex(o, "routers", &routers) ||
		    !json_object_is_type(routers, json_type_array)) {
			_err(js, line, "group %s: missing \"routers\" (an array)",
			     name);
			continue;
		}
		nr = json_object_array_length(routers);
		for (k = 0; k < nr; k++) {
			json_object *r = json_object_array_get_idx(routers, k);
			int rline, sw;
			const char *rname = _name(js, r, "routers", k, &rline);

			if (!rname)
				continue;
			snprintf(what, sizeof(what), "router %s", rname);
			_check_keys(js, r, rkeys, what, rline);
			sw = topoml_add_switch(js->t, rname, rline, js->err);
			if (sw < 0)
				continue;
			topoml_group_add_router(js->t, g, sw);
			_attach_nodes(js, r, sw, rline);
			_link_speed(js, r, sw, rline);
			_nvl_leaf(js, r, sw, rline);
		}
	}
	if (!_failed(js))
		_global_links(js, root);
}

/* An array of exactly 3 integers (or booleans when want_bool). */
static bool _triple(json_object *v, int out[3], bool want_bool)
{
	json_type ty = want_bool ? json_type_boolean : json_type_int;
	int d;

	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) != 3)
		return false;
	for (d = 0; d < 3; d++) {
		json_object *e = json_object_array_get_idx(v, d);

		if (!json_object_is_type(e, ty))
			return false;
		out[d] = want_bool ? json_object_get_boolean(e) :
				     json_object_get_int(e);
	}
	return true;
}

/* Coordinate of the i-th node when dimension order[0] varies fastest. */
static void _unrank(const topoml_topo_t *t, const int order[3], long i,
		    int c[3])
{
	int d;

	for (d = 0; d < 3; d++) {
		c[order[d]] = i % t->dims[order[d]];
		i /= t->dims[order[d]];
	}
}

static void _node_pattern(struct jsrc *js, json_object *p)
{
	static const char *const keys[] = { "prefix", "first", "digits",
					    "order", "count", "comment", NULL };
	topoml_topo_t *t = js->t;
	int line = _key_line(js, "node_pattern"), first = 1, digits = 0;
	int order[3] = { 0, 1, 2 }, d;
	long count = (long)t->dims[0] * t->dims[1] * t->dims[2], i;
	const char *prefix = NULL;
	json_object *v;
	char name[300];

	if (!json_object_is_type(p, json_type_object)) {
		_err(js, line, "\"node_pattern\" must be an object");
		return;
	}
	_check_keys(js, p, keys, "node_pattern", line);
	if (json_object_object_get_ex(p, "prefix", &v) &&
	    json_object_is_type(v, json_type_string))
		prefix = json_object_get_string(v);
	if (!prefix || !*prefix || strlen(prefix) > 200) {
		_err(js, line, "node_pattern: \"prefix\" must be a non-empty string");
		return;
	}
	if (json_object_object_get_ex(p, "first", &v))
		first = json_object_is_type(v, json_type_int) ?
			json_object_get_int(v) : -1;
	if (json_object_object_get_ex(p, "digits", &v))
		digits = json_object_is_type(v, json_type_int) ?
			 json_object_get_int(v) : -1;
	if (json_object_object_get_ex(p, "count", &v)) {
		long max = count;

		count = json_object_is_type(v, json_type_int) ?
			json_object_get_int64(v) : -1;
		if (count < 1 || count > max) {
			_err(js, line, "node_pattern: \"count\" must be 1 .. %ld",
			     max);
			return;
		}
	}
	if (first < 0 || digits < 0 || digits > 20) {
		_err(js, line,
		     "node_pattern: \"first\" and \"digits\" must be integers >= 0 (digits <= 20)");
		return;
	}
	if (json_object_object_get_ex(p, "order", &v)) {
		const char *s = json_object_is_type(v, json_type_string) ?
				json_object_get_string(v) : "";

		if (strlen(s) != 3 || !strchr(s, 'x') || !strchr(s, 'y') ||
		    !strchr(s, 'z')) {
			_err(js, line,
			     "node_pattern: \"order\" must be a permutation of \"xyz\" (fastest first)");
			return;
		}
		for (d = 0; d < 3; d++)
			order[d] = s[d] - 'x';
	}
	for (i = 0; i < count; i++) {
		int n;

		snprintf(name, sizeof(name), "%s%0*ld", prefix, digits,
			 first + i);
		n = topoml_add_node(t, name, line, js->err);
		if (n < 0)
			return;
		_unrank(t, order, i, t->nodes[n].coord);
	}
}

static void _torus(struct jsrc *js, json_object *root)
{
	static const char *const nkeys[] = { "name", "coord", "comment",
					     NULL };
	topoml_topo_t *t = js->t;
	json_object *v, *nodes, *pattern;
	int wrap[3] = { 1, 1, 1 }, i, n;
	bool has_nodes, has_pattern;

	if (!json_object_object_get_ex(root, "dims", &v)) {
		_err(js, 0, "missing \"dims\" ([X, Y, Z])");
		return;
	}
	if (!_triple(v, t->dims, false) || t->dims[0] < 1 || t->dims[1] < 1 ||
	    t->dims[2] < 1) {
		_err(js, _key_line(js, "dims"),
		     "\"dims\" must be [X, Y, Z], integers >= 1");
		return;
	}
	if ((long)t->dims[0] * t->dims[1] * t->dims[2] > 1L << 26) {
		_err(js, _key_line(js, "dims"), "\"dims\": torus too large");
		return;
	}
	if (json_object_object_get_ex(root, "wrap", &v)) {
		if (json_object_is_type(v, json_type_boolean))
			wrap[0] = wrap[1] = wrap[2] = json_object_get_boolean(v);
		else if (!_triple(v, wrap, true))
			_err(js, _key_line(js, "wrap"),
			     "\"wrap\" must be true, false or [bool, bool, bool]");
	}
	for (i = 0; i < 3; i++)
		t->wrap[i] = wrap[i];
	has_nodes = json_object_object_get_ex(root, "nodes", &nodes);
	has_pattern = json_object_object_get_ex(root, "node_pattern", &pattern);
	if (has_nodes == has_pattern) {
		_err(js, 0, "a torus needs exactly one of \"nodes\" and \"node_pattern\"");
		return;
	}
	if (has_pattern) {
		_node_pattern(js, pattern);
		return;
	}
	if (!(nodes = _array(js, root, "nodes")))
		return;
	n = json_object_array_length(nodes);
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(nodes, i);
		int line, idx, c[3];
		const char *name = _name(js, o, "nodes", i, &line);
		char what[300];

		if (!name)
			continue;
		snprintf(what, sizeof(what), "node %s", name);
		_check_keys(js, o, nkeys, what, line);
		if (!json_object_object_get_ex(o, "coord", &v) ||
		    !_triple(v, c, false)) {
			_err(js, line, "node %s: \"coord\" must be [x, y, z]",
			     name);
			continue;
		}
		idx = topoml_add_node(t, name, line, js->err);
		if (idx >= 0)
			memcpy(t->nodes[idx].coord, c, sizeof(c));
	}
}

static char *_read_file(const char *path, size_t *len, topoml_errors_t *err)
{
	FILE *f = topoml__fopen_regular(path);
	char *buf = NULL, *grown;
	size_t cap = 0, n;

	*len = 0;
	if (!f) {
		topoml_errors_add(err, "%s: %s", path,
				  topoml__open_error(errno));
		return NULL;
	}
	for (;;) {
		if (*len + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			grown = realloc(buf, cap);
			if (!grown) {
				topoml_errors_add(err, "%s: out of memory",
						  path);
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
		}
		n = fread(buf + *len, 1, cap - *len - 1, f);
		*len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		topoml_errors_add(err, "%s: %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

static json_object *_parse(struct jsrc *js)
{
	struct json_tokener *tok = json_tokener_new();
	enum json_tokener_error jerr;
	json_object *root;
	size_t end, bom = 0;
	int line, col;

	if (!tok) {
		topoml_errors_add(js->err, "%s: out of memory", js->path);
		return NULL;
	}
	/* a UTF-8 byte order mark, as some editors write, is not JSON */
	if (js->len >= 3 && !memcmp(js->buf, "\xef\xbb\xbf", 3))
		bom = 3;
	root = json_tokener_parse_ex(tok, js->buf + bom, (int)(js->len - bom));
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok) + bom;
	if (jerr == json_tokener_success) {
		while (end < js->len && (_ws(js->buf[end]) || !js->buf[end]))
			end++;
		if (end < js->len) {
			_line_col(js, end, &line, &col);
			topoml_errors_add(js->err,
				"%s:%d:%d: unexpected text after the JSON document",
				js->path, line, col);
			json_object_put(root);
			root = NULL;
		}
	} else if (jerr == json_tokener_continue) {
		_line_col(js, js->len, &line, &col);
		topoml_errors_add(js->err,
			"%s:%d:%d: unexpected end of file (unclosed object, array or string)",
			js->path, line, col);
	} else {
		/* json-c stops at the character it could not use */
		_line_col(js, end, &line, &col);
		topoml_errors_add(js->err, "%s:%d:%d: %s", js->path, line,
				  col, json_tokener_error_desc(jerr));
	}
	json_tokener_free(tok);
	return root;
}

topoml_topo_t *topoml_load_json(const char *path, topoml_errors_t *err)
{
	static const char *const ft[] = { "family", "name", "comment",
					  "switches", "nvlink_domains", NULL };
	static const char *const df[] = { "family", "name", "comment",
					  "groups", "global_links",
					  "nvlink_domains", NULL };
	static const char *const to[] = { "family", "name", "comment", "dims",
					  "wrap", "nodes", "node_pattern",
					  "nvlink_domains", NULL };
	struct jsrc js = { .path = path, .cur_line = 1 };
	topoml_errors_t local = { 0 };
	json_object *root = NULL, *fam;
	topoml_topo_t *t = NULL;
	const char *family;

	js.err = err ? err : &local;
	topoml__hl_budget_init(&js.budget);
	js.nerr_start = js.err->n;
	js.buf = _read_file(path, &js.len, js.err);
	js.scan_left = 16 * js.len + (1 << 20);
	if (!js.buf)
		goto out;
	root = _parse(&js);
	if (!root)
		goto out;
	if (!json_object_is_type(root, json_type_object)) {
		topoml_errors_add(js.err,
			"%s:1:1: the top level must be a JSON object", path);
		goto out;
	}
	if (!json_object_object_get_ex(root, "family", &fam) ||
	    !json_object_is_type(fam, json_type_string)) {
		_err(&js, 0,
		     "missing \"family\" (\"fat-tree\", \"dragonfly\" or \"torus\")");
		goto out;
	}
	family = json_object_get_string(fam);
	if (!strcmp(family, "fat-tree")) {
		t = topoml_new(TOPOML_FAT_TREE, path);
		js.t = t;
		if (t) {
			_check_keys(&js, root, ft, "top level", 0);
			_fat_tree(&js, root);
		}
	} else if (!strcmp(family, "dragonfly")) {
		t = topoml_new(TOPOML_DRAGONFLY, path);
		js.t = t;
		if (t) {
			_check_keys(&js, root, df, "top level", 0);
			_dragonfly(&js, root);
		}
	} else if (!strcmp(family, "torus")) {
		t = topoml_new(TOPOML_TORUS, path);
		js.t = t;
		if (t) {
			_check_keys(&js, root, to, "top level", 0);
			_torus(&js, root);
		}
	} else {
		_err(&js, _key_line(&js, "family"),
		     "unknown family \"%s\" (fat-tree, dragonfly or torus)",
		     family);
		goto out;
	}
	if (!t) {
		topoml_errors_add(js.err, "%s: out of memory", path);
		goto out;
	}
	if (!_failed(&js))
		_nvl_domains(&js, root);
	if (!_failed(&js))
		topoml_finalize(t, js.err);
	if (_failed(&js)) {
		topoml_free(t);
		t = NULL;
	}
out:
	json_object_put(root);
	free((char *)js.buf);
	topoml_errors_clear(&local);
	return t;
}
