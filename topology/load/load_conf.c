/*
 * Slurm topology.conf reader, faithful to what slurmctld's topology/tree
 * plugin (22.05) and topology/block plugin (26.05; see the block section
 * at the end) accept and reject.
 *
 * Line syntax (util/conf_lex.c, shared with topoml.conf) is Slurm's
 * src/common/parse_config.c (s_p_parse_file): a '#' not
 * preceded by an odd run of backslashes starts a comment; an odd run of
 * backslashes at the end of a line (trailing blanks allowed) joins the next
 * line with nothing in between; every remaining backslash escapes the next
 * character; "Include FILE" (case-insensitive, path relative to the
 * including file) reads another file; keys are case-insensitive and match
 * Slurm's regular expression, so "Nodes= x" means Nodes="x", a value may be
 * quoted, and an operator before '=' ("Nodes+=") is accepted and ignored.
 *
 * Semantics are src/plugins/topology/tree/topology_tree.c (_parse_switches,
 * _validate_switches).  Rejected, as slurmctld fatal()s: unknown keys, a bad
 * LinkSpeed, a switch with both or neither of Nodes/Switches, a duplicate
 * switch name, a child that is not defined or is the switch itself, a host
 * list libslurm cannot parse, a loop (Slurm: "not a tree" after 21 passes),
 * no switch with Nodes= ("switches contain no nodes"), a Switches= that
 * names no switch (slurmctld 22.05 dies on it).
 * Accepted with a warning, as slurmctld only logs them: a name in Nodes=
 * that no node can have (skipped, as Slurm skips every name slurm.conf does
 * not define: "n[1-" is libslurm's host "n]"), a node on several leaf
 * switches (topoml keeps it under the first, Slurm lists it under all), a
 * key given twice on a line (the last value wins), a leaf left with no node
 * (left out).  Parts with no common root are accepted silently (Slurm logs
 * an info line); jobs then stay inside one part.
 * A few files Slurm runs with give topoml no model, and are errors here
 * that topoml_load_conf_judged() tells from Slurm's own: no switches at all
 * (Slurm runs without a topology), a switch name topoml cannot hold, no
 * usable node name at all, a host list Slurm would take only partly or
 * that is too large, more Includes than topoml follows.
 * Every message starts FILE:LINE:COL (but "cannot read" of the file given).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE	/* asprintf */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <slurm/slurm.h>

#include "topoml.h"
#include "topoml/build.h"
#include "util/conf_lex.h"
#include "topoml/load.h"
#include "util/util.h"
#include "model/model_int.h"

/* Slurm gives up ("Switch configuration is not a tree") after 21 passes. */
#define SLURM_LEVEL_PASSES 21

struct _rec {
	char *name;
	char *nodes;		/* NULL when not given */
	char *switches;
	uint32_t link_speed;
	bool has_speed;
	bool stopped;		/* parsing stopped at a reported error */
	const char *file;
	int line;
	struct topoml_conf_pos at;		/* the SwitchName key */
	struct topoml_conf_pos name_at;	/* its value */
	struct topoml_conf_pos nodes_at, switches_at;
	/* Switches= resolved once: record index of each child, -1 unknown */
	int nkids;
	int *kid;
	char **kidname;
};

/* A BlockName= line (block section at the end). */
struct _brec {
	char *name;
	char *nodes;		/* NULL when Nodes= is not given */
	const char *file;
	int line;
	struct topoml_conf_pos at;		/* the BlockName key */
	struct topoml_conf_pos nodes_at;
};

struct _reader {
	struct _rec *recs;
	int nrecs;
	struct topoml_conf_lexer lex;	/* owns the records' file names */
	int nsyntax;		/* syntax errors so far */
	int nfatal;		/* errors on which slurmctld stops too */
	topoml_errors_t *err;
	topoml_errors_t *warn;
	struct topoml_hl_budget budget;	/* for all host lists of the file */
	topoml_topo_t *names;	/* switch name -> record index + 1 (line) */
	/* Block topology (Slurm 24.05+ topology/block), see below. */
	struct _brec *brecs;
	int nbrecs;
	char *bsizes;		/* the last BlockSizes= value, or NULL */
	const char *bsizes_file;
	struct topoml_conf_pos *bsizes_pos;	/* where each character came
						   from */
	const char *sw_file;	/* the first SwitchName= line */
	struct topoml_conf_pos sw_at;
	struct topoml_conf_pos bsizes_at;	/* the BlockSizes key */
};

static void _parse_block_line(struct _reader *r,
			      const struct topoml_conf_line *l,
			      const char *file, struct topoml_conf_kv *kv);
static topoml_topo_t *_build_blocks(struct _reader *r, const char *path);
static void _blocks_free(struct _reader *r);

/*
 * Every message of this reader starts FILE:LINE:COL.  How bad it is:
 * _W a warning (Slurm only logs it too); _FATAL an error on which
 * slurmctld stops too; _MODEL an error in a file Slurm runs with, which
 * topoml cannot turn into a model.  _SYNTAX: found while reading the
 * lines, which stops the build.
 */
enum { _W = 0, _FATAL = 1, _MODEL = 2, _SYNTAX = 4 };

static void _vreport(struct _reader *r, int how, const char *file,
		     struct topoml_conf_pos p, const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	topoml_errors_add(how ? r->err : r->warn, "%s:%d:%d: %s", file,
			  p.line, p.col > 0 ? p.col : 1,
			  msg ? msg : "out of memory");
	free(msg);
	if (how & _FATAL)
		r->nfatal++;
	if (how & _SYNTAX)
		r->nsyntax++;
}

static void _report(struct _reader *r, int how, const char *file,
		    struct topoml_conf_pos p, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void _report(struct _reader *r, int how, const char *file,
		    struct topoml_conf_pos p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	_vreport(r, how, file, p, fmt, ap);
	va_end(ap);
}

/* A line Slurm's parser refuses: slurmctld fatal()s. */
static void _syntax(struct _reader *r, const char *file,
		    struct topoml_conf_pos p,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void _syntax(struct _reader *r, const char *file,
		    struct topoml_conf_pos p,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	_vreport(r, _FATAL | _SYNTAX, file, p, fmt, ap);
	va_end(ap);
}

/* Where a whole file's problem is reported: its first line. */
static const struct topoml_conf_pos _top = { 1, 1 };

/* Position of byte offset off of the logical line (off may be its end). */
static inline struct topoml_conf_pos _at(const struct topoml_conf_line *l,
					 size_t off)
{
	return topoml__conf_at(l, off);
}

/* The lexer's messages: Include and reading errors. */
static void _lex_error(void *arg, enum topoml_conf_err kind, const char *file,
		       const struct topoml_conf_pos *at, const char *msg)
{
	struct _reader *r = arg;
	int how = kind == TOPOML_CONF_E_SYNTAX ? _FATAL | _SYNTAX :
		  _MODEL | _SYNTAX;

	if (at) {
		_report(r, how, file, *at, "%s", msg);
		return;
	}
	/* the one message without a position: no line was read */
	topoml_errors_add(r->err, "%s: %s", file, msg);
	r->nsyntax++;
	if (how & _FATAL)
		r->nfatal++;
}

/* s_p_handle_uint32(), with its messages. */
static int _parse_uint32(const char *value, uint32_t *out, const char **why)
{
	char *end;
	unsigned long long num;

	errno = 0;
	num = strtoull(value, &end, 0);
	if (*end == 'k' || *end == 'K') {
		num *= 1024;
		end++;
	}
	if ((num == 0 && errno == EINVAL) || *end != '\0') {
		if (!strcasecmp(value, "UNLIMITED") ||
		    !strcasecmp(value, "INFINITE")) {
			*out = 0xffffffff;
			return 0;
		}
		*why = "is not a valid number";
		return -1;
	}
	if (errno == ERANGE) {
		*why = "is out of range";
		return -1;
	}
	if (value[0] == '-') {
		*why = "is less than zero";
		return -1;
	}
	if (num > 0xffffffffULL) {
		*why = "is greater than 4294967295";
		return -1;
	}
	*out = (uint32_t)num;
	return 0;
}

/*
 * The rest of a SwitchName line (_parse_switches() and s_p_parse_line()).
 * Returns 0 when the record is complete, -1 when Slurm's handler fails;
 * *rest is where parsing stopped.
 */
static int _parse_switch_keys(struct _reader *r,
			      const struct topoml_conf_line *l,
			      const char *file, struct _rec *rec,
			      size_t *rest)
{
	struct topoml_conf_kv kv;
	size_t off = *rest;
	bool seen_nodes = false, seen_sw = false, seen_speed = false;

	while (topoml__conf_match_kv(l->s + off, l->n - off, off, &kv) == 0) {
		struct topoml_conf_pos kp = _at(l, kv.key_off);
		bool *seen = NULL;
		const char *why;

		if (!strcasecmp(kv.key, "Nodes")) {
			seen = &seen_nodes;
			free(rec->nodes);
			rec->nodes = kv.value;
			rec->nodes_at = _at(l, kv.value_off);
			kv.value = NULL;
		} else if (!strcasecmp(kv.key, "Switches")) {
			seen = &seen_sw;
			free(rec->switches);
			rec->switches = kv.value;
			rec->switches_at = _at(l, kv.value_off);
			kv.value = NULL;
		} else if (!strcasecmp(kv.key, "LinkSpeed")) {
			seen = &seen_speed;
			if (_parse_uint32(kv.value, &rec->link_speed, &why)) {
				_syntax(r, file, _at(l, kv.value_off),
					"switch %s: LinkSpeed value (%s) %s",
					rec->name, kv.value, why);
				rec->stopped = true;
				free(kv.key);
				free(kv.value);
				break;
			}
			rec->has_speed = true;
		} else {
			_syntax(r, file, kp, "switch %s: unknown key '%s' (a "
				"switch line has Nodes=, Switches= and "
				"LinkSpeed=; one SwitchName per line)",
				rec->name, kv.key);
			rec->stopped = true;
			free(kv.key);
			free(kv.value);
			break;
		}
		if (*seen)
			topoml_errors_add(r->warn, "%s:%d:%d: switch %s: %s "
					  "given more than once, the last "
					  "value is used", file, kp.line,
					  kp.col, rec->name, kv.key);
		*seen = true;
		free(kv.key);
		free(kv.value);
		off = kv.end;
	}
	*rest = off;

	if (rec->nodes && rec->switches) {
		_syntax(r, file, rec->at, "switch %s has both child switches "
			"and nodes", rec->name);
		return -1;
	}
	if (!rec->nodes && !rec->switches) {
		_syntax(r, file, rec->at, "switch %s has neither child "
			"switches nor nodes", rec->name);
		return -1;
	}
	return 0;
}

static void _rec_free(struct _rec *rec)
{
	free(rec->name);
	free(rec->nodes);
	free(rec->switches);
	for (int i = 0; i < rec->nkids; i++)
		free(rec->kidname[i]);
	free(rec->kidname);
	free(rec->kid);
}

static int _add_rec(struct _reader *r, struct _rec *rec)
{
	struct _rec *a;

	/* doubling: 64 more at a time was quadratic in the switches */
	a = r->recs;
	if (topoml__grow((void **)&a, r->nrecs, sizeof(*a)))
		return -1;
	r->recs = a;
	r->recs[r->nrecs++] = *rec;
	return 0;
}

/* One logical line: SwitchName=..., BlockName=..., or blanks. */
static void _parse_line(void *arg, const struct topoml_conf_line *l,
			const char *file)
{
	struct _reader *r = arg;
	struct topoml_conf_kv kv;
	struct _rec rec;
	size_t rest;
	char ex[48];
	int bad;

	if (topoml__conf_match_kv(l->s, l->n, 0, &kv)) {
		if (!topoml__conf_blank(l->s)) {
			size_t off = strspn(l->s, " \t\r\n\v\f");

			topoml__conf_excerpt(l->s, ex, sizeof(ex));
			_syntax(r, file, _at(l, off), "parse error at '%s': "
				"expected KEY=VALUE", ex);
		}
		return;
	}
	if (!strcasecmp(kv.key, "BlockName") ||
	    !strcasecmp(kv.key, "BlockSizes")) {
		_parse_block_line(r, l, file, &kv);
		return;
	}
	if (strcasecmp(kv.key, "SwitchName")) {
		_syntax(r, file, _at(l, kv.key_off), "unknown key '%s': "
			"topology.conf lines start with SwitchName= "
			"(topology/tree), BlockName= or BlockSizes= "
			"(topology/block)", kv.key);
		free(kv.key);
		free(kv.value);
		return;
	}
	memset(&rec, 0, sizeof(rec));
	rec.name = kv.value;
	rec.file = file;
	rec.at = _at(l, kv.key_off);
	rec.name_at = _at(l, kv.value_off);
	rec.line = rec.at.line;
	if (!r->sw_file) {
		r->sw_file = file;
		r->sw_at = rec.at;
	}
	free(kv.key);
	rest = kv.end;
	bad = _parse_switch_keys(r, l, file, &rec, &rest);
	if (!topoml__conf_blank(l->s + rest) && !rec.stopped) {
		size_t off = rest + strspn(l->s + rest, " \t\r\n\v\f");

		topoml__conf_excerpt(l->s + rest, ex, sizeof(ex));
		_syntax(r, file, _at(l, off), "parse error at '%s'", ex);
	}
	if (bad || _add_rec(r, &rec))
		_rec_free(&rec);
}

/* ---- semantics: _validate_switches() ------------------------------ */

/*
 * fn for every host of a host list, as Slurm reads it; -1 (reported) when
 * Slurm refuses it.  The file's budget bounds what all its lists expand to
 * (model/nodeset.c); b NULL: a list already charged.
 */
static int _hostlist(struct _reader *r, const struct _rec *rec,
		     const char *what, const char *list,
		     struct topoml_conf_pos at,
		     struct topoml_hl_budget *b,
		     int (*fn)(const char *host, void *arg), void *arg)
{
	int rc = topoml__hostlist_foreach(list, b, fn, arg);

	/*
	 * EINVAL: libslurm's hostlist_create() fails, slurmctld fatal()s.
	 * Otherwise Slurm takes the list (partly, or in time and memory
	 * topoml does not give it): only topoml cannot build a model.
	 */
	if (rc < 0)
		_report(r, errno == EINVAL ? _FATAL : _MODEL, rec->file, at,
			"switch %s: invalid host list '%s' in %s%s%s",
			rec->name, list, what, topoml__hostlist_why(errno),
			errno == EINVAL ? (*what == 'N' ? " (Slurm: fatal "
			"\"Invalid node name\")" : " (Slurm: fatal "
			"\"Invalid switches\")") : "");
	return rc;
}

/* Report the loop closed by path[depth] -> c. */
static void _report_loop(struct _reader *r, const topoml_topo_t *t,
			 const int *rec_of, const int *path, int depth, int c)
{
	const struct _rec *recs = r->recs;
	char buf[1024];
	size_t len = 0;
	int d = depth;

	while (d > 0 && path[d] != c)
		d--;
	for (; d <= depth && len < sizeof(buf) - 64; d++)
		len += snprintf(buf + len, sizeof(buf) - len,
				"%s (line %d) -> ", t->switches[path[d]].name,
				recs[rec_of[path[d]]].line);
	snprintf(buf + len, sizeof(buf) - len, "%s", t->switches[c].name);
	_report(r, _FATAL, recs[rec_of[c]].file, recs[rec_of[c]].switches_at,
		"switch %s: switch loop %s: Switches= must form a tree "
		"(Slurm: \"Switch configuration is not a tree\")",
		t->switches[c].name, buf);
}

/*
 * Find and report one loop through switch i (colour: 0 new, 1 on path).
 * Depth-first without recursion: a chain of switches as long as the file
 * allows must not overflow the stack (slurmctld's).  next[d] is the next
 * child to visit of path[d].
 */
static bool _find_loop(struct _reader *r, const topoml_topo_t *t,
		       const int *rec_of, int i, char *colour, int *path,
		       int *next)
{
	int depth = 0;

	colour[i] = 1;
	path[0] = i;
	next[0] = 0;
	while (depth >= 0) {
		const struct topoml_switch *sw = &t->switches[path[depth]];
		int c;

		if (next[depth] == sw->nchildren) {
			colour[path[depth--]] = 2;
			continue;
		}
		c = sw->children[next[depth]++];
		if (colour[c] == 1) {
			_report_loop(r, t, rec_of, path, depth, c);
			return true;
		}
		if (colour[c] == 0) {
			colour[c] = 1;
			path[++depth] = c;
			next[depth] = 0;
		}
	}
	return false;
}

/*
 * Slurm resolves levels in passes and gives up after 21: a loop, or (very
 * rarely) a hierarchy whose file order needs more passes.  Returns 0 when
 * Slurm would resolve it.
 */
static int _check_tree(struct _reader *r, const topoml_topo_t *t,
		       const int *rec_of, const bool *is_leaf)
{
	int n = t->nswitches, pass, i, k, rc = 0;
	char *resolved = calloc(n ? n : 1, 1), *colour = NULL;
	int *path = NULL, *next = NULL;
	bool done = false, looped = false;

	if (!resolved)
		return -1;
	for (i = 0; i < n; i++)
		resolved[i] = is_leaf[i];
	for (pass = 1; pass <= SLURM_LEVEL_PASSES && !done; pass++) {
		done = true;
		for (i = 0; i < n; i++) {
			const struct topoml_switch *sw = &t->switches[i];

			if (resolved[i])
				continue;
			for (k = 0; k < sw->nchildren; k++)
				if (!resolved[sw->children[k]])
					break;
			if (k < sw->nchildren)
				done = false;
			else
				resolved[i] = 1;
		}
	}
	if (done)
		goto out;
	rc = -1;
	colour = calloc(n, 1);
	path = calloc(n, sizeof(*path));
	next = calloc(n, sizeof(*next));
	if (!colour || !path || !next)
		goto out;
	for (i = 0; i < n; i++)
		if (!resolved[i] && !colour[i] &&
		    _find_loop(r, t, rec_of, i, colour, path, next))
			looped = true;
	if (!looped) {
		const struct _rec *top;

		/* at the first switch Slurm could not place */
		for (i = 0; i < n - 1 && resolved[i]; i++)
			;
		top = &r->recs[rec_of[i]];
		_report(r, _FATAL, top->file, top->switches_at, "switch %s: "
			"the switch hierarchy needs more than %d passes to "
			"resolve in this line order (Slurm 22.05: \"Switch "
			"configuration is not a tree\"); list parents after "
			"their children", top->name, SLURM_LEVEL_PASSES);
	}
out:
	free(resolved);
	free(colour);
	free(path);
	free(next);
	return rc;
}

/* Names of a Nodes= list no node can have: skipped, as Slurm skips
 * them, with its own words (kind: "switch" or "block"). */
static void _warn_bad_names(struct _reader *r, const char *kind,
			    const char *name, const char *file,
			    struct topoml_conf_pos at, const char *nodes,
			    int nbad, const char *bad)
{
	_report(r, _W, file, at, "%s %s: Nodes=%.60s%s gives %d name%s no "
		"node can have (%s%s); skipped, as Slurm skips names "
		"slurm.conf does not define (\"Invalid hostnames in %s "
		"configuration\")", kind, name, nodes,
		strlen(nodes) > 60 ? "..." : "", nbad, nbad > 1 ? "s" : "",
		bad, nbad > 3 ? ", ..." : "", kind);
}

/*
 * Who owns each node: the first leaf (in file order) that lists it, as
 * Slurm's first leaf holding a node is where a job finds it first.  Later
 * listings are Slurm's "Multiple leaf switches contain nodes" warning; a
 * leaf left with no node of its own is dropped.  Bad host lists are
 * reported here.  Returns the number of errors.
 */
struct _claim {
	struct _reader *r;
	topoml_topo_t *seen;
	int **owner;
	int i, own, listed;
	int nbad;		/* names no node can have, in this list */
	char bad[128];		/* the first of them, for the warning */
};

/*
 * A name no node of topoml (hence no node of slurm.conf, whose names
 * are host names) can have: Slurm skips it as it skips every name
 * slurm.conf does not define, e.g. "n]" that libslurm makes of "n[1-".
 */
static bool _node_name_ok(const char *name)
{
	return *name && !name[strcspn(name, " \t\r\n,[]=#\"\\")];
}

static int _claim_one(const char *name, void *arg)
{
	struct _claim *c = arg;
	const struct _rec *rec = &c->r->recs[c->i];
	int k;

	c->listed++;
	if (!_node_name_ok(name)) {
		size_t len = strlen(c->bad);

		if (c->nbad++ < 3 && len + strlen(name) + 5 < sizeof(c->bad))
			snprintf(c->bad + len, sizeof(c->bad) - len, "%s'%s'",
				 len ? ", " : "", name);
		return 0;
	}
	k = topoml_node_by_name(c->seen, name);
	if (k < 0) {
		k = topoml_add_node(c->seen, name, rec->line, NULL);
		if (k >= 0 && topoml__grow((void **)c->owner, k,
					  sizeof(int)) == 0)
			(*c->owner)[k] = c->i;
		c->own++;
	} else if ((*c->owner)[k] != c->i) {
		const struct _rec *o = &c->r->recs[(*c->owner)[k]];

		_report(c->r, _W, rec->file, rec->nodes_at, "node %s is on "
			"leaf switches %s (line %d) and %s (line %d); Slurm "
			"22.05 only warns (\"Multiple leaf switches contain "
			"nodes\"); topoml keeps it under %s", name, o->name,
			o->line, rec->name, rec->line, o->name);
	}
	return 0;
}

static int _claim_nodes(struct _reader *r, bool *dropped, int *ndropped)
{
	struct _claim c = { .r = r };
	int *owner = NULL, i, nerr = 0;

	c.seen = topoml_new(TOPOML_FAT_TREE, "claims");
	c.owner = &owner;
	if (!c.seen) {
		topoml_errors_add(r->err, "%s: out of memory", r->recs[0].file);
		return 1;
	}
	for (i = 0; i < r->nrecs; i++) {
		struct _rec *rec = &r->recs[i];

		if (!rec->nodes)
			continue;
		c.i = i;
		c.own = c.listed = c.nbad = 0;
		c.bad[0] = '\0';
		if (_hostlist(r, rec, "Nodes", rec->nodes, rec->nodes_at,
			      &r->budget, _claim_one, &c) < 0) {
			nerr++;
			continue;
		}
		if (c.nbad)
			_warn_bad_names(r, "switch", rec->name, rec->file,
					rec->nodes_at, rec->nodes, c.nbad,
					c.bad);
		if (!c.own) {
			dropped[i] = true;
			(*ndropped)++;
			_report(r, _W, rec->file, rec->nodes_at, "switch %s "
				"has %s; left out", rec->name, c.listed ==
				c.nbad ? (c.nbad ? "no valid node name" :
					  "an empty node list") :
				"no node that an earlier leaf does not list");
		}
	}
	free(owner);
	topoml_free(c.seen);
	return nerr;
}

/* Leaves: attach each node to its owner, the first leaf listing it. */
struct _attach {
	struct _reader *r;
	topoml_topo_t *t;
	const struct _rec *rec;
	int sw, rc;
};

static int _attach_one(const char *name, void *arg)
{
	struct _attach *a = arg;
	int n;

	if (!_node_name_ok(name))
		return 0;	/* warned in _claim_nodes() */
	n = topoml_node_by_name(a->t, name);
	if (n < 0) {
		n = topoml_add_node(a->t, name, a->rec->line, a->r->err);
		if (n < 0 || topoml_attach_node(a->t, a->sw, n, a->r->err))
			a->rc = -1;
	}
	return 0;
}

static int _attach_nodes(struct _reader *r, topoml_topo_t *t, int sw,
			 const struct _rec *rec)
{
	struct _attach a = { .r = r, .t = t, .rec = rec, .sw = sw };

	/* Checked and charged to the budget in _claim_nodes(). */
	if (_hostlist(r, rec, "Nodes", rec->nodes, rec->nodes_at, NULL,
		      _attach_one, &a) < 0)
		return -1;
	return a.rc;
}

/*
 * Switches= of every switch not already left out, read once (the file's
 * budget is charged once) into record indices.  Returns the number of bad
 * host lists, each reported.
 */
static int _kid_one(const char *name, void *arg)
{
	struct _reader *r = ((void **)arg)[0];
	struct _rec *rec = ((void **)arg)[1];
	int k = topoml_switch_by_name(r->names, name);
	char *copy = strdup(name);

	if (!copy || topoml__grow((void **)&rec->kid, rec->nkids,
				 sizeof(*rec->kid)) ||
	    topoml__grow((void **)&rec->kidname, rec->nkids,
			sizeof(*rec->kidname))) {
		free(copy);
		errno = ENOMEM;
		return -1;
	}
	/* names holds record index + 1 as its line */
	rec->kid[rec->nkids] = k < 0 ? -1 : r->names->switches[k].line - 1;
	rec->kidname[rec->nkids++] = copy;
	return 0;
}

static int _resolve_kids(struct _reader *r, const bool *dropped)
{
	int i, nbad = 0;

	for (i = 0; i < r->nrecs; i++) {
		struct _rec *rec = &r->recs[i];
		void *arg[2] = { r, rec };
		int rc;

		if (dropped[i] || !rec->switches)
			continue;
		/* an empty list still marks the record as resolved */
		if (topoml__grow((void **)&rec->kid, 0, sizeof(*rec->kid)))
			rc = -1;
		else
			rc = _hostlist(r, rec, "Switches", rec->switches,
				       rec->switches_at, &r->budget, _kid_one,
				       arg);
		if (rc)
			nbad++;
	}
	return nbad;
}

/*
 * Upper switches: link children; unknown or self children are fatal.  A
 * child that is a record but not a switch of the model was left out (an
 * empty leaf, already warned).  linked[c] == sw: c already a child of sw.
 */
static int _link_children(struct _reader *r, topoml_topo_t *t, int sw,
			  const struct _rec *rec, const int *sw_of,
			  int *linked)
{
	int c, k, rc = 0;

	for (k = 0; k < rec->nkids; k++) {
		c = rec->kid[k] < 0 ? -1 : sw_of[rec->kid[k]];
		if (c < 0 && rec->kid[k] >= 0)
			continue;	/* an empty leaf, already warned */
		if (c < 0 || c == sw) {
			_report(r, _FATAL, rec->file, rec->switches_at,
				"switch %s: child switch '%s' %s (Slurm: "
				"\"invalid child\")", rec->name,
				rec->kidname[k], c < 0 ? "is not defined" :
				"is the switch itself");
			rc = -1;
		} else if (linked[c] != sw) {
			linked[c] = sw;
			topoml_link_switches(t, sw, c);
		}
	}
	return rc;
}

/*
 * A switch whose Switches= names no switch at all (Switches="" or ","):
 * slurmctld 22.05 logs "switch X has no nodes" and dies (its parent, if
 * any, would wait for its level until "Switch configuration is not a
 * tree").  Returns the number of such switches, each reported.
 */
static int _childless(struct _reader *r)
{
	int i, nbad = 0;

	for (i = 0; i < r->nrecs; i++) {
		const struct _rec *rec = &r->recs[i];

		if (!rec->switches || rec->nkids)
			continue;
		_report(r, _FATAL, rec->file, rec->switches_at, "switch %s: "
			"Switches= names no switch (slurmctld 22.05 logs "
			"\"switch %s has no nodes\" and dies)", rec->name,
			rec->name);
		nbad++;
	}
	return nbad;
}

/* Order of the drop warnings: by Slurm-like pass, then file order. */
struct _drop {
	int pass, rec;
};

static int _drop_cmp(const void *a, const void *b)
{
	const struct _drop *x = a, *y = b;

	if (x->pass != y->pass)
		return x->pass < y->pass ? -1 : 1;
	return (x->rec > y->rec) - (x->rec < y->rec);
}

/*
 * Switches whose children were all left out (empty leaves) go too; Slurm
 * keeps them, with an empty node set that no job can use.  Each child
 * entry counts once towards its parent's live children; a child left out
 * decrements it, a parent reaching 0 goes: linear in the entries.  The
 * warnings come in the order of the repeated passes over the file this
 * replaces: pass(i) = max over children k of pass(k) (+ 1 when k comes
 * after i), at least 1.
 */
static void _drop_empty_parents(struct _reader *r, bool *dropped)
{
	int n = r->nrecs, i, k, nq = 0, nd = 0, nent = 0;
	int *live = calloc(n, sizeof(int)), *pass = calloc(n, sizeof(int));
	int *first = malloc((n + 1) * sizeof(int)), *queue = NULL;
	int *parent = NULL, *fill = NULL;
	struct _drop *out = NULL;

	if (!live || !pass || !first)
		goto oom;
	/* Parents of each record (CSR): first[k] .. first[k + 1]. */
	memset(first, 0, (n + 1) * sizeof(int));
	for (i = 0; i < n; i++)
		for (k = 0; k < r->recs[i].nkids; k++)
			if (r->recs[i].kid[k] >= 0) {
				first[r->recs[i].kid[k] + 1]++;
				nent++;
			}
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	parent = malloc((nent ? nent : 1) * sizeof(int));
	fill = calloc(n, sizeof(int));
	queue = malloc(n * sizeof(int));
	out = malloc(n * sizeof(*out));
	if (!parent || !fill || !queue || !out)
		goto oom;
	for (i = 0; i < n; i++) {
		const struct _rec *rec = &r->recs[i];

		for (k = 0; k < rec->nkids; k++) {
			int c = rec->kid[k];

			if (c >= 0)
				parent[first[c] + fill[c]++] = i;
			live[i]++;	/* until that child is dequeued */
		}
		if (dropped[i])
			queue[nq++] = i;
	}
	/* Records with an empty (but valid) Switches= go in the first pass. */
	for (i = 0; i < n; i++)
		if (!dropped[i] && r->recs[i].kid && live[i] == 0) {
			dropped[i] = true;
			pass[i] = 1;
			out[nd++] = (struct _drop){ 1, i };
			queue[nq++] = i;
		}
	for (int q = 0; q < nq; q++) {
		int c = queue[q];

		for (k = first[c]; k < first[c + 1]; k++) {
			int p = parent[k], pp;

			if (dropped[p] || !r->recs[p].kid || --live[p] > 0)
				continue;
			/* all children gone: p goes, in this pass */
			pp = 1;
			for (int j = 0; j < r->recs[p].nkids; j++) {
				int kc = r->recs[p].kid[j];
				int kp = pass[kc] + (kc > p);

				pp = kp > pp ? kp : pp;
			}
			pass[p] = pp;
			dropped[p] = true;
			out[nd++] = (struct _drop){ pp, p };
			queue[nq++] = p;
		}
	}
	qsort(out, nd, sizeof(*out), _drop_cmp);
	for (i = 0; i < nd; i++) {
		const struct _rec *rec = &r->recs[out[i].rec];

		_report(r, _W, rec->file, rec->switches_at, "switch %s has no "
			"nodes below it; left out", rec->name);
	}
	goto out;
oom:
	topoml_errors_add(r->err, "%s: out of memory", r->recs[0].file);
out:
	free(live);
	free(pass);
	free(first);
	free(parent);
	free(fill);
	free(queue);
	free(out);
}

/* Duplicate switch names are fatal in Slurm: report every one. */
static int _duplicates(struct _reader *r)
{
	topoml_topo_t *seen = topoml_new(TOPOML_FAT_TREE, "names");
	int i, k, nerr = 0;

	if (!seen) {
		topoml_errors_add(r->err, "%s: out of memory", r->recs[0].file);
		return 1;
	}
	for (i = 0; i < r->nrecs; i++) {
		struct _rec *rec = &r->recs[i], *first;

		k = topoml_switch_by_name(seen, rec->name);
		if (k < 0) {
			/* the line doubles as the record index + 1 */
			topoml_add_switch(seen, rec->name, i + 1, NULL);
			continue;
		}
		first = &r->recs[seen->switches[k].line - 1];
		_report(r, _FATAL, rec->file, rec->name_at, "switch %s: "
			"already defined at %s%sline %d (Slurm: \"Switch (%s) "
			"has already been defined\")", rec->name,
			first->file == rec->file ? "" : first->file,
			first->file == rec->file ? "" : " ", first->line,
			rec->name);
		nerr++;
	}
	r->names = seen;	/* kept: Switches= are resolved with it */
	return nerr;
}

static topoml_topo_t *_build(struct _reader *r, const char *path)
{
	topoml_topo_t *t = NULL;
	int *sw_of = NULL, *rec_of = NULL, *linked = NULL, i, s, nbad = 0;
	int ndropped = 0;
	bool *dropped = NULL, *is_leaf = NULL;

	if (r->nrecs == 0) {
		/* Slurm runs without a topology: nothing to model */
		_report(r, _MODEL, path, _top, "no switches configured: a "
			"topology.conf needs SwitchName= lines (Slurm 22.05 "
			"logs \"No switches configured\" and runs without a "
			"topology)");
		return NULL;
	}
	t = topoml_new(TOPOML_FAT_TREE, path);
	sw_of = malloc(r->nrecs * sizeof(*sw_of));
	rec_of = malloc(r->nrecs * sizeof(*rec_of));
	dropped = calloc(r->nrecs, sizeof(*dropped));
	is_leaf = calloc(r->nrecs, sizeof(*is_leaf));
	linked = malloc(r->nrecs * sizeof(*linked));
	if (!t || !sw_of || !rec_of || !dropped || !is_leaf || !linked) {
		topoml_errors_add(r->err, "%s: out of memory", path);
		goto fail;
	}
	nbad = _duplicates(r);
	if (nbad)
		goto fail;
	for (i = 0; i < r->nrecs && !r->recs[i].nodes; i++)
		;
	if (i == r->nrecs) {
		_report(r, _FATAL, r->recs[0].file, r->recs[0].at, "no "
			"switch has Nodes= (Slurm: fatal \"switches contain "
			"no nodes\")");
		goto fail;
	}
	nbad = _claim_nodes(r, dropped, &ndropped);
	nbad += _resolve_kids(r, dropped);
	if (nbad || _childless(r))
		goto fail;
	_drop_empty_parents(r, dropped);

	/* Switches in file order. */
	for (i = 0; i < r->nrecs; i++) {
		struct _rec *rec = &r->recs[i];

		sw_of[i] = -1;
		if (dropped[i])
			continue;
		if (!_node_name_ok(rec->name)) {
			/* Slurm takes any name; the model's end up in host
			 * lists and files topoml writes */
			_report(r, _MODEL, rec->file, rec->name_at, "switch "
				"name '%s': topoml needs names without blanks, "
				"',', '[', ']', '=', '#', '\"' or '\\'",
				rec->name);
			nbad++;
			continue;
		}
		s = topoml_add_switch(t, rec->name, rec->line, r->err);
		if (s < 0) {
			nbad++;
			continue;
		}
		sw_of[i] = s;
		rec_of[s] = i;
		linked[s] = -1;
		is_leaf[s] = rec->nodes != NULL;
		if (rec->has_speed)
			t->switches[s].link_speed = rec->link_speed;
	}
	if (nbad)
		goto fail;

	for (i = 0; i < r->nrecs; i++) {
		struct _rec *rec = &r->recs[i];
		bool leaf = rec->nodes != NULL;

		if (dropped[i])
			continue;
		if (!leaf) {
			if (_link_children(r, t, sw_of[i], rec, sw_of, linked))
				nbad++;
			continue;
		}
		if (_attach_nodes(r, t, sw_of[i], rec))
			nbad++;
	}
	if (nbad || _check_tree(r, t, rec_of, is_leaf))
		goto fail;
	if (!t->nnodes) {
		_report(r, _MODEL, r->recs[0].file, r->recs[0].at, "no leaf "
			"switch has a node name topoml can use (Slurm runs "
			"with these switches, without nodes)");
		goto fail;
	}
	if (topoml_finalize(t, r->err))
		goto fail;
	goto out;
fail:
	topoml_free(t);
	t = NULL;
out:
	free(sw_of);
	free(rec_of);
	free(dropped);
	free(is_leaf);
	free(linked);
	return t;
}

topoml_topo_t *topoml_load_conf_judged(const char *path, topoml_errors_t *err,
				       topoml_errors_t *warn,
				       bool *slurm_refuses)
{
	struct _reader r;
	topoml_topo_t *t = NULL;
	int i;

	if (slurm_refuses)
		*slurm_refuses = false;
	memset(&r, 0, sizeof(r));
	r.err = err;
	r.warn = warn;
	topoml__hl_budget_init(&r.budget);
	r.lex.line = _parse_line;
	r.lex.error = _lex_error;
	r.lex.arg = &r;
	if (topoml__conf_lex_file(&r.lex, path) == 0 && r.nsyntax == 0) {
		if (r.sw_file && (r.nbrecs || r.bsizes))
			_report(&r, _FATAL, r.sw_file, r.sw_at, "SwitchName= "
				"in a block topology (BlockName= at %s:%d): "
				"topology/tree reads only SwitchName= lines, "
				"topology/block only BlockName= and "
				"BlockSizes= (each is fatal on the other's "
				"key)", r.nbrecs ? r.brecs[0].file :
				r.bsizes_file, r.nbrecs ? r.brecs[0].line :
				r.bsizes_at.line);
		else if (r.nbrecs || r.bsizes)
			t = _build_blocks(&r, path);
		else
			t = _build(&r, path);
	}
	_blocks_free(&r);
	for (i = 0; i < r.nrecs; i++)
		_rec_free(&r.recs[i]);
	free(r.recs);
	topoml__conf_lex_free(&r.lex);
	if (r.names)
		topoml_free(r.names);
	if (slurm_refuses)
		*slurm_refuses = !t && r.nfatal > 0;
	return t;
}

topoml_topo_t *topoml_load_conf_ex(const char *path, topoml_errors_t *err,
				   topoml_errors_t *warn)
{
	return topoml_load_conf_judged(path, err, warn, NULL);
}

topoml_topo_t *topoml_load_conf(const char *path, topoml_errors_t *err)
{
	return topoml_load_conf_ex(path, err, NULL);
}

/* ---- block topology: Slurm 24.05+ topology/block ------------------- */

/*
 * What Slurm 26.05 reads (src/plugins/topology/block/block_record.c,
 * _read_topo_file(), block_record_validate()):
 *   BlockName=NAME [Nodes=HOSTLIST]	one block per line, file order
 *   BlockSizes=S0,S1,...		optional, the last one counts
 * Fatal there, errors here: another key on a block line ("Parse error"),
 * a duplicate block name, a host list it cannot parse, no BlockName
 * line, no node in any block without BlockSizes, a bad BlockSizes value
 * (each size a positive multiple of the first, by a power of two up to
 * 2^15), SwitchName= in the same file.  Slurm reads each size with
 * atoi(): "36abc" is 36, "abc" is 0 (invalid).  The base block size is
 * the first size, else the node count of the first block with nodes.
 * Accepted as Slurm does, with a warning: a block without nodes (it keeps
 * its place in the row, so later blocks keep their alignment), a node in
 * two blocks (Slurm puts it in both; topoml keeps it in the first), a
 * block larger than the base size.
 * Aggregated blocks (Slurm's "levels") are built exactly as
 * block_record_validate() builds them and become the upper switches.
 */
#define BLOCK_MAX_LEVELS 16	/* Slurm's MAX_BLOCK_LEVELS */

static void _blocks_free(struct _reader *r)
{
	for (int i = 0; i < r->nbrecs; i++) {
		free(r->brecs[i].name);
		free(r->brecs[i].nodes);
	}
	free(r->brecs);
	free(r->bsizes);
	free(r->bsizes_pos);
	r->brecs = NULL;
	r->nbrecs = 0;
	r->bsizes = NULL;
	r->bsizes_pos = NULL;
}

/* BlockSizes= (a line of its own) or BlockName= NAME Nodes=...; kv is
 * consumed. */
static void _parse_block_line(struct _reader *r,
			      const struct topoml_conf_line *l,
			      const char *file, struct topoml_conf_kv *kv)
{
	struct _brec b = { 0 };
	struct topoml_conf_pos kp = _at(l, kv->key_off);
	size_t rest = kv->end, voff = kv->value_off, vlen;
	bool stopped = false, seen_nodes = false;
	char ex[48];

	if (!strcasecmp(kv->key, "BlockSizes")) {
		/* parse_config.c: a top-level key takes the whole line */
		if (l->s[voff] == '"')
			voff++;
		vlen = strlen(kv->value);
		if (r->bsizes)
			topoml_errors_add(r->warn, "%s:%d:%d: BlockSizes given "
					  "more than once (first at %s:%d), "
					  "the last value is used", file,
					  kp.line, kp.col, r->bsizes_file,
					  r->bsizes_at.line);
		free(r->bsizes);
		free(r->bsizes_pos);
		r->bsizes = kv->value;
		r->bsizes_file = file;
		r->bsizes_at = kp;
		r->bsizes_pos = malloc((vlen + 1) * sizeof(*r->bsizes_pos));
		for (size_t i = 0; r->bsizes_pos && i <= vlen; i++)
			r->bsizes_pos[i] = _at(l, voff + i);
		kv->value = NULL;
		free(kv->key);
		if (!topoml__conf_blank(l->s + rest)) {
			size_t off = rest + strspn(l->s + rest, " \t\r\n\v\f");

			topoml__conf_excerpt(l->s + rest, ex, sizeof(ex));
			_syntax(r, file, _at(l, off), "parse error at '%s' "
				"(BlockSizes= stands on a line of its own)",
				ex);
		}
		return;
	}
	b.name = kv->value;
	b.file = file;
	b.line = kp.line;
	b.at = kp;
	free(kv->key);
	kv->value = NULL;
	if (!*b.name)
		_syntax(r, file, _at(l, kv->value_off), "BlockName without "
			"a name (Slurm: \"Can't create a block without a "
			"name\")");
	/* _parse_block(): s_p_parse_line() with Nodes= only */
	while (topoml__conf_match_kv(l->s + rest, l->n - rest, rest, kv) == 0) {
		struct topoml_conf_pos p = _at(l, kv->key_off);

		if (strcasecmp(kv->key, "Nodes")) {
			_syntax(r, file, p, "block %s: unknown key '%s' (a "
				"block line has only Nodes=; one BlockName "
				"per line, BlockSizes= on a line of its own)",
				b.name, kv->key);
			free(kv->key);
			free(kv->value);
			stopped = true;
			break;
		}
		if (seen_nodes)
			topoml_errors_add(r->warn, "%s:%d:%d: block %s: Nodes "
					  "given more than once, the last "
					  "value is used", file, p.line, p.col,
					  b.name);
		seen_nodes = true;
		free(b.nodes);
		b.nodes = kv->value;
		b.nodes_at = _at(l, kv->value_off);
		free(kv->key);
		rest = kv->end;
	}
	if (!stopped && !topoml__conf_blank(l->s + rest)) {
		size_t off = rest + strspn(l->s + rest, " \t\r\n\v\f");

		topoml__conf_excerpt(l->s + rest, ex, sizeof(ex));
		_syntax(r, file, _at(l, off), "block %s: parse error at '%s'",
			b.name, ex);
	}
	if (topoml__grow((void **)&r->brecs, r->nbrecs, sizeof(*r->brecs))) {
		topoml_errors_add(r->err, "%s: out of memory", file);
		r->nsyntax++;
		free(b.name);
		free(b.nodes);
		return;
	}
	r->brecs[r->nbrecs++] = b;
}

/*
 * _read_topo_file()'s BlockSizes loop: sets *base (when still 0) and
 * *levels; -1 with the error at the offending size.
 */
static int _block_sizes(struct _reader *r, int *base, unsigned *levels)
{
	const char *s = r->bsizes;
	struct topoml_conf_pos at = r->bsizes_at;
	bool any = false;

	*levels = 0;
	while (*s) {
		size_t tok = strspn(s, ","), len;
		long v;
		char *num;
		const char *why = NULL;

		s += tok;
		if (!*s)
			break;
		len = strcspn(s, ",");
		if (r->bsizes_pos)
			at = r->bsizes_pos[s - r->bsizes];
		num = strndup(s, len);
		if (!num)
			return -1;
		/* atoi(): leading blanks and sign, digits, rest ignored */
		errno = 0;
		v = strtol(num, NULL, 10);
		if (errno == ERANGE || v > INT_MAX)
			v = INT_MAX;
		if (v <= 0)
			why = "is not a positive number";
		else if (!*base && v > 0xffff)
			why = "is larger than 65535 (Slurm 26.05 keeps the "
			      "base block size in 16 bits and would divide "
			      "by its truncated value)";
		else if (!*base)
			*base = v;
		if (!why && v % *base)
			why = "is not a multiple of the base block size (the "
			      "first BlockSizes value)";
		else if (!why && (v / *base & (v / *base - 1)))
			why = "is not the base block size times a power of "
			      "two";
		else if (!why && v / *base > 1 << (BLOCK_MAX_LEVELS - 1))
			why = "is more than 2^15 base blocks";
		if (why) {
			_report(r, _FATAL, r->bsizes_file, at, "BlockSizes "
				"value '%s' %s (Slurm: fatal \"Invalid "
				"BlockSizes value\")", num, why);
			free(num);
			return -1;
		}
		free(num);
		*levels |= 1u << __builtin_ctzl(v / *base);
		any = true;
		s += len;
	}
	if (!any) {
		if (r->bsizes_pos)
			at = r->bsizes_pos[0];
		_report(r, _FATAL, r->bsizes_file, at, "BlockSizes has no "
			"size (Slurm: fatal \"Invalid BlockSizes value\")");
		return -1;
	}
	return 0;
}

struct _battach {
	struct _reader *r;
	topoml_topo_t *t;
	const struct _brec *b;
	int sw, *owner_line, listed, rc;
	int nbad;		/* names no node can have */
	char bad[128];
};

static int _battach_one(const char *name, void *arg)
{
	struct _battach *a = arg;
	int n;

	if (!_node_name_ok(name)) {
		size_t len = strlen(a->bad);

		if (a->nbad++ < 3 && len + strlen(name) + 5 < sizeof(a->bad))
			snprintf(a->bad + len, sizeof(a->bad) - len, "%s'%s'",
				 len ? ", " : "", name);
		return 0;
	}
	n = topoml_node_by_name(a->t, name);
	a->listed++;
	if (n >= 0) {
		int o = a->t->nodes[n].leaf;

		if (o != a->sw)
			_report(a->r, _W, a->b->file, a->b->nodes_at, "node "
				"%s is in blocks %s (line %d) and %s; Slurm "
				"26.05 puts it in both, topoml keeps it in %s",
				name, a->t->switches[o].name,
				a->t->switches[o].line, a->b->name,
				a->t->switches[o].name);
		return 0;
	}
	n = topoml_add_node(a->t, name, a->b->line, a->r->err);
	if (n < 0 || topoml_attach_node(a->t, a->sw, n, a->r->err) ||
	    topoml_set_nvl(a->t, n, a->sw, a->b->line, a->r->err))
		a->rc = -1;
	return 0;
}

/* An aggregated block: blocks first .. last - 1, at Slurm level j. */
static int _aggregate(struct _reader *r, topoml_topo_t *t, int first,
		      int last, int *top)
{
	char *name = NULL;
	int sw, prev = -1;

	if (asprintf(&name, "%s..%s", t->switches[first].name,
		     t->switches[last - 1].name) < 0)
		return -1;
	sw = topoml_add_switch(t, name, 0, r->err);
	free(name);
	if (sw < 0)
		return -1;
	/* children: the highest aggregates so far, each once */
	for (int i = first; i < last; i++) {
		if (top[i] != prev)
			topoml_link_switches(t, sw, top[i]);
		prev = top[i];
		top[i] = sw;
	}
	return 0;
}

static topoml_topo_t *_build_blocks(struct _reader *r, const char *path)
{
	topoml_topo_t *t = NULL, *names = NULL;
	int nb = r->nbrecs, base = 0, nsizes = 0, *top = NULL, nbad = 0;
	unsigned levels = 0x1f;	/* no BlockSizes: 1, 2, 4, 8, 16 blocks */
	int sizes[BLOCK_MAX_LEVELS];

	if (!nb) {
		_report(r, _FATAL, r->bsizes_file, r->bsizes_at, "no blocks "
			"configured: a block topology.conf needs BlockName= "
			"lines (Slurm 26.05: fatal \"No blocks configured\")");
		return NULL;
	}
	if (r->bsizes && _block_sizes(r, &base, &levels))
		return NULL;
	names = topoml_new(TOPOML_FAT_TREE, "names");
	t = topoml_new(TOPOML_FAT_TREE, path);
	top = malloc(nb * sizeof(*top));
	if (!names || !t || !top) {
		topoml_errors_add(r->err, "%s: out of memory", path);
		goto fail;
	}
	/* Blocks in file order: switch i is block i, NVLink domain i. */
	for (int i = 0; i < nb; i++) {
		struct _brec *b = &r->brecs[i];
		int k = topoml_switch_by_name(names, b->name);

		if (k >= 0) {
			_report(r, _FATAL, b->file, b->at, "block %s: already "
				"defined at %s:%d (Slurm: \"Block (%s) has "
				"already been defined\")", b->name,
				r->brecs[k].file, r->brecs[k].line, b->name);
			nbad++;
			continue;
		}
		topoml_add_switch(names, b->name, 0, NULL);
		if (b->name[strcspn(b->name, " \t\r\n,[]=#\"\\")]) {
			_report(r, _MODEL, b->file, b->at, "block name '%s': "
				"topoml needs names without blanks, ',', "
				"'[', ']', '=', '#', '\"' or '\\'", b->name);
			nbad++;
			continue;
		}
		if (topoml_add_switch(t, b->name, b->line, r->err) != i ||
		    topoml_add_nvl(t, b->name, b->line, r->err) != i)
			nbad++;
	}
	if (nbad)
		goto fail;
	for (int i = 0; i < nb; i++) {
		struct _brec *b = &r->brecs[i];
		struct _battach a = { .r = r, .t = t, .b = b, .sw = i };

		top[i] = i;
		if (!b->nodes || !*b->nodes) {
			_report(r, _W, b->file, b->at, "block %s has no "
				"nodes; kept in the row (later blocks keep "
				"their alignment), as Slurm does", b->name);
			continue;
		}
		if (topoml__hostlist_foreach(b->nodes, &r->budget,
					    _battach_one, &a) < 0) {
			_report(r, errno == EINVAL ? _FATAL : _MODEL, b->file,
				b->nodes_at, "block %s: invalid host list "
				"'%s' in Nodes%s%s", b->name, b->nodes,
				topoml__hostlist_why(errno), errno == EINVAL ?
				" (Slurm: fatal \"Invalid node name\")" : "");
			nbad++;
			continue;
		}
		if (a.nbad)
			_warn_bad_names(r, "block", b->name, b->file,
					b->nodes_at, b->nodes, a.nbad, a.bad);
		if (a.rc)
			nbad++;
		if (!base)
			base = a.listed;
	}
	if (nbad)
		goto fail;
	if (!base) {
		_report(r, _FATAL, r->brecs[0].file, r->brecs[0].at, "blocks "
			"do not contain any nodes and BlockSizes is not set "
			"(Slurm 26.05: fatal)");
		goto fail;
	}
	if (base > 0xffff) {
		_report(r, _MODEL, r->brecs[0].file, r->brecs[0].at, "block "
			"%s: %d nodes, more than 65535 (Slurm keeps the base "
			"block size in 16 bits)", r->brecs[0].name, base);
		goto fail;
	}
	for (int i = 0; i < nb; i++)
		if (t->switches[i].nnodes > base)
			_report(r, _W, r->brecs[i].file, r->brecs[i].at,
				"block %s has %d nodes, more than the base "
				"block size %d; Slurm sizes levels by the base "
				"size", r->brecs[i].name,
				t->switches[i].nnodes, base);
	/* block_sizes[]: the levels in order, up to the first that holds
	 * every block. */
	for (int k = 0; k < BLOCK_MAX_LEVELS; k++) {
		if (!(levels & (1u << k)))
			continue;
		sizes[nsizes++] = 1 << k;
		if (1 << k >= nb)
			break;
	}
	/* Aggregates level by level; Slurm skips a short one at the end of
	 * the row when the level below already covers what remains. */
	for (int j = 1; j < nsizes; j++)
		for (int i = 0; i < nb; i += sizes[j]) {
			int remaining = nb - i;

			if (sizes[j] > remaining && sizes[j - 1] >= remaining)
				continue;
			if (_aggregate(r, t, i, i + (sizes[j] < remaining ?
						     sizes[j] : remaining),
				       top))
				goto fail;
		}
	t->nblocks = nb;
	t->block_base = base;
	t->block_levels = levels;
	if (topoml_finalize(t, r->err))
		goto fail;
	goto out;
fail:
	topoml_free(t);
	t = NULL;
out:
	topoml_free(names);
	free(top);
	return t;
}
