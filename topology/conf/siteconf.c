/*
 * topoml.conf: the site configuration of select/topoml.
 *
 * Slurm-style "Key=Value" words, case-insensitive keys, read by the lexer
 * of topology.conf (util/conf_lex.h: Slurm's quoting, '#' comments, '\'
 * continuation, Include).  A line that starts with PartitionName=
 * describes one partition; every other word sets a global value.  See
 * topoml.conf(5).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "topoml.h"
#include "util/conf_lex.h"
#include "topoml/load.h"
#include "model/model_int.h"
#include "topoml/wait.h"
#include "topoml/health.h"

void topoml_siteconf_init(struct topoml_siteconf *c)
{
	memset(c, 0, sizeof(*c));
	c->topology_format = TOPOML_FMT_AUTO;
	c->default_hint = TOPOML_HINT_ALLREDUCE;
	c->placement = true;
	c->torus_box_wait_span = 1;
	c->box_wait_key = c->hybrid_wait_key = "LocalityWait";
	c->span_key = "LocalityWaitSpan";
	topoml_kind_weights_default(c->hybrid_weights);
	c->health_policy = TOPOML_HEALTH_REPORT;
	c->health_avoid_time = TOPOML_HEALTH_AVOID_TIME_DEFAULT;
}

int topoml_box_wait_span_parse(const char *s, double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (end == s || *end || errno || !(x >= 1) ||
	    x > TOPOML_BOX_WAIT_SPAN_MAX)
		return -1;
	*v = x;
	return 0;
}

int topoml_torus_placement_parse(const char *s, bool *curve)
{
	if (!strcasecmp(s, "curve"))
		*curve = true;
	else if (!strcasecmp(s, "boxes"))
		*curve = false;
	else
		return -1;
	return 0;
}

const char *topoml_torus_placement_name(bool curve)
{
	return curve ? "curve" : "boxes";
}

/* Does a partition line set LocalityWait above 0 where it places? */
static bool _part_waits(const struct topoml_siteconf *c)
{
	for (int i = 0; i < c->nparts; i++)
		if (c->parts[i].locality_wait > 0 &&
		    (c->parts[i].placement > 0 ||
		     (c->parts[i].placement < 0 && c->placement)))
			return true;
	return false;
}

int topoml_siteconf_notes(const struct topoml_siteconf *c,
			  char (*out)[TOPOML_NOTE_LEN], int max)
{
	static const struct {
		unsigned bit;
		const char *old, *now;
	} alias[] = {
		{ TOPOML_WAITKEY_TORUSBOX, "TorusBoxWait", "LocalityWait" },
		{ TOPOML_WAITKEY_HYBRID, "HybridWait", "LocalityWait" },
		{ TOPOML_WAITKEY_TORUSSPAN, "TorusBoxWaitSpan",
		  "LocalityWaitSpan" },
	};
	bool box = c->torus_box_wait > 0, hyb = c->hybrid_wait > 0;
	int n = 0;

#define NOTE(...) do { if (n < max) \
		snprintf(out[n++], TOPOML_NOTE_LEN, __VA_ARGS__); } while (0)
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (c->wait_keys & alias[i].bit)
			NOTE("%s is deprecated: use %s (topoml.conf(5))",
			     alias[i].old, alias[i].now);
	/* a box wait with the curve: no box is ever sought */
	if (box && c->torus_curve) {
		if (hyb && !strcmp(c->box_wait_key, "LocalityWait"))
			NOTE("LocalityWait waits for no torus box with TorusPlacement=curve (only for --ml-parallel locality)");
		else
			NOTE("%s has no effect with TorusPlacement=curve",
			     c->box_wait_key);
	}
	if (c->torus_box_wait_span != 1 && !box && !_part_waits(c))
		NOTE("%s has no effect while %s is 0", c->span_key,
		     strcmp(c->span_key, "LocalityWaitSpan") ? "TorusBoxWait"
							     : "LocalityWait");
	if ((box || hyb) && !c->placement) {
		bool on = false;

		for (int i = 0; i < c->nparts; i++)
			on |= c->parts[i].placement > 0;
		if (!on)
			NOTE("%s has no effect with Placement=off",
			     box ? c->box_wait_key : c->hybrid_wait_key);
	}
	for (int i = 0; i < c->nparts; i++) {
		const struct topoml_part_conf *pc = &c->parts[i];

		if (pc->locality_wait >= 0 &&
		    (pc->placement == 0 ||
		     (pc->placement < 0 && !c->placement)))
			NOTE("PartitionName=%.64s: LocalityWait has no effect with Placement=off",
			     pc->name);
		else if (pc->locality_wait > 0 && c->torus_curve && !hyb &&
			 !strcmp(c->hybrid_wait_key, "HybridWait"))
			NOTE("PartitionName=%.64s: LocalityWait waits for no torus box with TorusPlacement=curve",
			     pc->name);
	}
#undef NOTE
	return n;
}

const char *topoml_siteconf_inert(const struct topoml_siteconf *c)
{
	static __thread char note[8][TOPOML_NOTE_LEN];
	int n = topoml_siteconf_notes(c, note, 8);

	/* the first that is no deprecation */
	for (int i = 0; i < n; i++)
		if (!strstr(note[i], " is deprecated: "))
			return note[i];
	return NULL;
}

void topoml_siteconf_clear(struct topoml_siteconf *c)
{
	int i;

	for (i = 0; i < c->nparts; i++)
		free(c->parts[i].name);
	free(c->parts);
	free(c->path);
	free(c->topology_file);
	topoml_siteconf_init(c);
}

int topoml_family_parse(const char *s, int *family)
{
	if (!strcasecmp(s, "auto"))
		*family = 0;
	else if (!strcasecmp(s, "fat-tree") || !strcasecmp(s, "fattree") ||
		 !strcasecmp(s, "fat_tree") || !strcasecmp(s, "tree"))
		*family = TOPOML_FAT_TREE;
	else if (!strcasecmp(s, "dragonfly"))
		*family = TOPOML_DRAGONFLY;
	else if (!strcasecmp(s, "torus") || !strcasecmp(s, "3d-torus") ||
		 !strcasecmp(s, "3d_torus"))
		*family = TOPOML_TORUS;
	else
		return -1;
	return 0;
}

static int _parse_bool(const char *s, bool *b)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") ||
	    !strcasecmp(s, "on") || !strcmp(s, "1"))
		*b = true;
	else if (!strcasecmp(s, "no") || !strcasecmp(s, "false") ||
		 !strcasecmp(s, "off") || !strcmp(s, "0"))
		*b = false;
	else
		return -1;
	return 0;
}

/* Placement=topoml|on|yes -> 1, off|no|cons_tres -> 0. */
static int _parse_placement(const char *s, int *on)
{
	bool b;

	if (!strcasecmp(s, "topoml")) {
		*on = 1;
		return 0;
	}
	if (!strcasecmp(s, "cons_tres")) {
		*on = 0;
		return 0;
	}
	if (_parse_bool(s, &b))
		return -1;
	*on = b;
	return 0;
}

static int _parse_format(const char *s, enum topoml_format *f)
{
	if (!strcasecmp(s, "auto"))
		*f = TOPOML_FMT_AUTO;
	else if (!strcasecmp(s, "conf") || !strcasecmp(s, "topology.conf"))
		*f = TOPOML_FMT_CONF;
	else if (!strcasecmp(s, "json"))
		*f = TOPOML_FMT_JSON;
	else if (!strcasecmp(s, "ibnetdiscover") || !strcasecmp(s, "ibnet"))
		*f = TOPOML_FMT_IBNET;
	else
		return -1;
	return 0;
}

static char *_dir_of(const char *path)
{
	char *tmp = strdup(path), *dir;

	if (!tmp)
		return NULL;
	dir = strdup(dirname(tmp));
	free(tmp);
	return dir;
}

static char *_join(const char *dir, const char *name)
{
	size_t len;
	char *p;

	if (name[0] == '/' || !dir)
		return strdup(name);
	len = strlen(dir) + strlen(name) + 2;
	p = malloc(len);
	if (p)
		snprintf(p, len, "%s/%s", dir, name);
	return p;
}

struct _word {
	char *key;
	char *val;
	int line;
	int col;
};

static void _words_free(struct _word *w, int n)
{
	for (int i = 0; i < n; i++) {
		free(w[i].key);
		free(w[i].val);
	}
}

/*
 * Why the word at s (Slurm's KEY=VALUE expression failed there) is none:
 * "KEY=" with nothing after it, or no KEY= at all.
 */
static void _bad_word(const char *s, struct topoml_conf_pos p,
		      const char *path, topoml_errors_t *err)
{
	size_t k = 0, i;

	while (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.')
		k++;
	i = k;
	while (isspace((unsigned char)s[i]))
		i++;
	if (s[i] && strchr("-*+/", s[i]))
		i++;
	if (k && s[i] == '=' && topoml__conf_blank(s + i + 1))
		topoml_errors_add(err, "%s:%d:%d: %.*s: empty value", path,
				  p.line, p.col, (int)k, s);
	else
		topoml_errors_add(err, "%s:%d:%d: expected Key=Value", path,
				  p.line, p.col);
}

/*
 * Split one logical line into Key=Value words (util/conf_lex.h: Slurm's rules;
 * values may be double-quoted to hold blanks).  Returns the number of
 * words (free them with _words_free), or -1 after reporting a malformed
 * word.
 */
static int _split(const struct topoml_conf_line *l, struct _word *w,
		  int maxw, const char *path, topoml_errors_t *err)
{
	struct topoml_conf_kv kv;
	struct topoml_conf_pos p;
	size_t off = 0, at;
	int n = 0;

	while (!topoml__conf_blank(l->s + off)) {
		at = off + strspn(l->s + off, " \t\r\n\v\f");
		p = topoml__conf_at(l, at);
		if (topoml__conf_match_kv(l->s + off, l->n - off, off, &kv)) {
			_bad_word(l->s + at, p, path, err);
			goto bad;
		}
		if (n == maxw) {
			topoml_errors_add(err, "%s:%d:%d: too many words",
					  path, p.line, p.col);
			free(kv.key);
			free(kv.value);
			goto bad;
		}
		w[n].key = kv.key;
		w[n].val = kv.value;
		w[n].line = p.line;
		w[n].col = p.col;
		n++;
		off = kv.end;
		if (!kv.quoted && kv.value[0] == '"') {
			p = topoml__conf_at(l, kv.value_off);
			topoml_errors_add(err, "%s:%d:%d: unterminated quote",
					  path, p.line, p.col);
			goto bad;
		}
		if (!kv.value[0]) {
			topoml_errors_add(err, "%s:%d:%d: %s: empty value",
					  path, p.line, p.col, kv.key);
			goto bad;
		}
	}
	return n;
bad:
	_words_free(w, n);
	return -1;
}

static void _bad_value(topoml_errors_t *err, const char *path, int line,
		       const struct _word *w, const char *expect)
{
	topoml_errors_add(err, "%s:%d:%d: %s=%s: expected %s", path, line,
			  w->col, w->key, w->val, expect);
}

/* Seconds of a wait: 0 to a year. */
static int _parse_seconds(const char *s, int *v)
{
	char *end;
	long x = strtol(s, &end, 10);

	if (end == s || *end || x < 0 || x > 31536000)
		return -1;
	*v = (int)x;
	return 0;
}

/*
 * LocalityWait= and an old name of the same setting in one file: which
 * wins would be the order of the lines, so neither does (an error).
 */
static int _wait_key_clash(struct topoml_siteconf *c, unsigned bit,
			   const struct _word *w, const char *path, int line,
			   topoml_errors_t *err)
{
	unsigned clash = 0;

	if (bit == TOPOML_WAITKEY_LOCALITY)
		clash = TOPOML_WAITKEY_TORUSBOX | TOPOML_WAITKEY_HYBRID;
	else if (bit & (TOPOML_WAITKEY_TORUSBOX | TOPOML_WAITKEY_HYBRID))
		clash = TOPOML_WAITKEY_LOCALITY;
	else if (bit == TOPOML_WAITKEY_SPAN)
		clash = TOPOML_WAITKEY_TORUSSPAN;
	else if (bit == TOPOML_WAITKEY_TORUSSPAN)
		clash = TOPOML_WAITKEY_SPAN;
	c->wait_keys |= bit;
	if (!(c->wait_keys & clash))
		return 0;
	topoml_errors_add(err,
		"%s:%d:%d: %s= with %s: the old names TorusBoxWait, HybridWait and TorusBoxWaitSpan are LocalityWait and LocalityWaitSpan; set only those",
		path, line, w->col, w->key,
		(clash & TOPOML_WAITKEY_LOCALITY) ? "LocalityWait" :
		(clash & TOPOML_WAITKEY_SPAN) ? "LocalityWaitSpan" :
		(clash & TOPOML_WAITKEY_TORUSSPAN) ? "TorusBoxWaitSpan" :
		"TorusBoxWait or HybridWait");
	return -1;
}

/*
 * Partitions read so far by name (the model's name map, created on the
 * first one), for the duplicate check: a scan per line was quadratic.
 * Keys are the partitions' own name copies.
 */
static int _names_add(struct topoml_name_index **h, const char *name,
		      int idx)
{
	if (!*h && !(*h = topoml__index_new()))
		return -1;
	return topoml__index_put(*h, name, idx);
}

static int _partition_line(struct topoml_siteconf *c,
			   struct topoml_name_index **h,
			   struct _word *w, int n, const char *path, int line,
			   topoml_errors_t *err)
{
	struct topoml_part_conf *pc, *np;
	int i, bad = 0;

	i = topoml__index_find(*h, w[0].val);
	if (i >= 0) {
		topoml_errors_add(err,
			"%s:%d:%d: partition %s already configured at line %d",
			path, line, w[0].col, w[0].val, c->parts[i].line);
		return -1;
	}
	np = c->parts;
	if (topoml__grow((void **)&np, c->nparts, sizeof(*np))) {
		topoml_errors_add(err, "%s:%d: out of memory", path, line);
		return -1;
	}
	c->parts = np;
	pc = &c->parts[c->nparts];
	memset(pc, 0, sizeof(*pc));
	pc->placement = -1;
	pc->locality_wait = -1;
	pc->line = line;
	pc->name = strdup(w[0].val);
	if (!pc->name || _names_add(h, pc->name, c->nparts)) {
		free(pc->name);
		topoml_errors_add(err, "%s:%d: out of memory", path, line);
		return -1;
	}
	c->nparts++;
	for (i = 1; i < n; i++) {
		if (!strcasecmp(w[i].key, "Hint")) {
			if (topoml_hint_parse(w[i].val, &pc->hint)) {
				_bad_value(err, path, line, &w[i],
					   "allreduce, alltoall or isolate");
				bad = -1;
			}
			pc->has_hint = true;
		} else if (!strcasecmp(w[i].key, "Placement")) {
			if (_parse_placement(w[i].val, &pc->placement)) {
				_bad_value(err, path, line, &w[i],
					   "topoml or off");
				bad = -1;
			}
		} else if (!strcasecmp(w[i].key, "LocalityWait")) {
			if (_parse_seconds(w[i].val, &pc->locality_wait)) {
				_bad_value(err, path, line, &w[i],
					   "seconds from 0 to 31536000");
				bad = -1;
			}
		} else {
			topoml_errors_add(err,
				"%s:%d:%d: unknown partition key %s (expected Hint, Placement or LocalityWait)",
				path, line, w[i].col, w[i].key);
			bad = -1;
		}
	}
	if (n == 1) {
		topoml_errors_add(err,
			"%s:%d:%d: PartitionName=%s: give Hint=, Placement= or LocalityWait=",
			path, line, w[0].col, w[0].val);
		bad = -1;
	}
	return bad;
}

static int _global_word(struct topoml_siteconf *c, const char *dir,
			struct _word *w, const char *path, int line,
			topoml_errors_t *err)
{
	int on;

	if (!strcasecmp(w->key, "TopologyFile")) {
		free(c->topology_file);
		c->topology_file = _join(dir, w->val);
	} else if (!strcasecmp(w->key, "TopologyFormat")) {
		if (_parse_format(w->val, &c->topology_format)) {
			_bad_value(err, path, line, w,
				   "auto, conf, json or ibnetdiscover");
			return -1;
		}
	} else if (!strcasecmp(w->key, "Family")) {
		if (topoml_family_parse(w->val, &c->family)) {
			_bad_value(err, path, line, w,
				   "auto, fat-tree, dragonfly or torus");
			return -1;
		}
	} else if (!strcasecmp(w->key, "DefaultHint")) {
		if (topoml_hint_parse(w->val, &c->default_hint)) {
			_bad_value(err, path, line, w,
				   "allreduce, alltoall or isolate");
			return -1;
		}
	} else if (!strcasecmp(w->key, "DragonflySpread")) {
		if (!strcasecmp(w->val, "alltoall")) {
			c->df_spread_alltoall = true;
		} else if (!strcasecmp(w->val, "never")) {
			c->df_spread_alltoall = false;
		} else {
			_bad_value(err, path, line, w, "alltoall or never");
			return -1;
		}
	} else if (!strcasecmp(w->key, "TorusPlacement")) {
		if (topoml_torus_placement_parse(w->val, &c->torus_curve)) {
			_bad_value(err, path, line, w, "boxes or curve");
			return -1;
		}
	} else if (!strcasecmp(w->key, "Placement")) {
		if (_parse_placement(w->val, &on)) {
			_bad_value(err, path, line, w, "topoml or off");
			return -1;
		}
		c->placement = on;
	} else if (!strcasecmp(w->key, "LocalityWait") ||
		   !strcasecmp(w->key, "TorusBoxWait") ||
		   !strcasecmp(w->key, "HybridWait")) {
		/* seconds a job waits for its family's locality (an exact
		 * torus box; whole tensor groups and stages); 0 never.
		 * TorusBoxWait, HybridWait: the old names of each half. */
		unsigned bit = !strcasecmp(w->key, "LocalityWait") ?
			       TOPOML_WAITKEY_LOCALITY :
			       !strcasecmp(w->key, "HybridWait") ?
			       TOPOML_WAITKEY_HYBRID : TOPOML_WAITKEY_TORUSBOX;
		int v;

		if (_parse_seconds(w->val, &v)) {
			_bad_value(err, path, line, w,
				   "seconds from 0 to 31536000");
			return -1;
		}
		if (_wait_key_clash(c, bit, w, path, line, err))
			return -1;
		if (bit != TOPOML_WAITKEY_HYBRID) {
			c->torus_box_wait = v;
			c->box_wait_key = bit == TOPOML_WAITKEY_LOCALITY ?
					  "LocalityWait" : "TorusBoxWait";
		}
		if (bit != TOPOML_WAITKEY_TORUSBOX) {
			c->hybrid_wait = v;
			c->hybrid_wait_key = bit == TOPOML_WAITKEY_LOCALITY ?
					     "LocalityWait" : "HybridWait";
		}
	} else if (!strcasecmp(w->key, "LocalityWaitSpan") ||
		   !strcasecmp(w->key, "TorusBoxWaitSpan")) {
		/* the box wait only for placements spanning more than this
		 * many times the job's nodes */
		unsigned bit = !strcasecmp(w->key, "LocalityWaitSpan") ?
			       TOPOML_WAITKEY_SPAN : TOPOML_WAITKEY_TORUSSPAN;
		char expect[64];

		if (topoml_box_wait_span_parse(w->val,
					       &c->torus_box_wait_span)) {
			snprintf(expect, sizeof(expect),
				 "a number from 1 to %d",
				 TOPOML_BOX_WAIT_SPAN_MAX);
			_bad_value(err, path, line, w, expect);
			return -1;
		}
		if (_wait_key_clash(c, bit, w, path, line, err))
			return -1;
		c->span_key = bit == TOPOML_WAITKEY_SPAN ? "LocalityWaitSpan"
							 : "TorusBoxWaitSpan";
	} else if (!strcasecmp(w->key, "HybridWeights")) {
		/* relative traffic per kind for --ml-parallel jobs */
		double v[TOPOML_KIND_COUNT];
		char why[160], expect[256];

		memcpy(v, c->hybrid_weights, sizeof(v));
		if (topoml_kind_weights_parse(w->val, v, why, sizeof(why))) {
			snprintf(expect, sizeof(expect),
				 "KIND=WEIGHT,... (%s)", why);
			_bad_value(err, path, line, w, expect);
			return -1;
		}
		memcpy(c->hybrid_weights, v, sizeof(v));
	} else if (!strcasecmp(w->key, "HealthPolicy")) {
		enum topoml_health_policy p;

		if (topoml_health_policy_parse(w->val, &p)) {
			_bad_value(err, path, line, w, "report, avoid or drain");
			return -1;
		}
		c->health_policy = p;
	} else if (!strcasecmp(w->key, "HealthAvoidTime")) {
		if (_parse_seconds(w->val, &c->health_avoid_time)) {
			_bad_value(err, path, line, w,
				   "seconds from 0 to 31536000");
			return -1;
		}
	} else if (!strcasecmp(w->key, "Debug")) {
		char *end;
		bool b;
		long v = strtol(w->val, &end, 10);

		if (!*end && v >= 0 && v <= 2) {
			c->debug = (int)v;
		} else if (!_parse_bool(w->val, &b)) {
			c->debug = b;
		} else {
			_bad_value(err, path, line, w, "0, 1, 2, yes or no");
			return -1;
		}
	} else {
		topoml_errors_add(err, "%s:%d:%d: unknown key %s", path, line,
				  w->col, w->key);
		return -1;
	}
	return 0;
}

struct _sc_reader {
	struct topoml_siteconf *c;
	struct topoml_name_index *names;
	topoml_errors_t *err;
	int rc;
};

/* One logical line of topoml.conf or of a file it includes. */
static void _sc_line(void *arg, const struct topoml_conf_line *l,
		     const char *path)
{
	struct _sc_reader *r = arg;
	struct _word w[32];
	char *dir;
	int n, i;

	n = _split(l, w, 32, path, r->err);
	if (n < 0)
		r->rc = -1;
	if (n <= 0)
		return;
	if (!strcasecmp(w[0].key, "PartitionName")) {
		if (_partition_line(r->c, &r->names, w, n, path, w[0].line,
				    r->err))
			r->rc = -1;
		_words_free(w, n);
		return;
	}
	/* a relative TopologyFile= is in the directory of its own file */
	dir = _dir_of(path);
	for (i = 0; i < n; i++) {
		if (!strcasecmp(w[i].key, "PartitionName")) {
			topoml_errors_add(r->err,
				"%s:%d:%d: PartitionName= must start its line",
				path, w[i].line, w[i].col);
			r->rc = -1;
			continue;
		}
		if (_global_word(r->c, dir, &w[i], path, w[i].line, r->err))
			r->rc = -1;
	}
	free(dir);
	_words_free(w, n);
}

static void _sc_lex_error(void *arg, enum topoml_conf_err kind,
			  const char *file, const struct topoml_conf_pos *at,
			  const char *msg)
{
	struct _sc_reader *r = arg;

	(void)kind;
	if (at)
		topoml_errors_add(r->err, "%s:%d:%d: %s", file, at->line,
				  at->col > 0 ? at->col : 1, msg);
	else
		topoml_errors_add(r->err, "%s: %s", file, msg);
	r->rc = -1;
}

int topoml_siteconf_read(const char *path, struct topoml_siteconf *c,
			 topoml_errors_t *err)
{
	struct _sc_reader r = { .c = c, .err = err };
	struct topoml_conf_lexer lx = {
		.line = _sc_line, .error = _sc_lex_error, .arg = &r,
	};

	topoml_siteconf_init(c);
	c->path = strdup(path);
	if (topoml__conf_lex_file(&lx, path))
		r.rc = -1;
	topoml__conf_lex_free(&lx);
	topoml__index_free(r.names);
	return r.rc;
}

static bool _readable(const char *p)
{
	return p && access(p, R_OK) == 0;
}

char *topoml_siteconf_topology_path(const struct topoml_siteconf *c,
				    const char *dir)
{
	static const char *const names[] = { "topoml.json", "topology.conf" };
	char *p;
	size_t i;

	if (c->topology_file)
		return strdup(c->topology_file);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		p = _join(dir, names[i]);
		if (_readable(p))
			return p;
		free(p);
	}
	return NULL;
}

topoml_topo_t *topoml_siteconf_load_topology(const struct topoml_siteconf *c,
					     const char *dir,
					     topoml_errors_t *err)
{
	const char *where = c->path ? c->path : "topoml.conf";
	topoml_topo_t *t = NULL;
	char *path;

	path = topoml_siteconf_topology_path(c, dir);
	if (!path) {
		topoml_errors_add(err,
			"%s: no TopologyFile= and neither topoml.json nor topology.conf in %s",
			where, dir ? dir : ".");
		return NULL;
	}
	t = topoml_load(path, c->topology_format, err);
	if (t && c->family && (int)t->family != c->family) {
		topoml_errors_add(err,
			"%s: Family=%s but %s describes a %s", where,
			topoml_family_name(c->family), path,
			topoml_family_name(t->family));
		topoml_free(t);
		t = NULL;
	}
	free(path);
	return t;
}

static const struct topoml_part_conf *
_part(const struct topoml_siteconf *c, const char *part)
{
	int i;

	if (!part)
		return NULL;
	for (i = 0; i < c->nparts; i++)
		if (!strcmp(c->parts[i].name, part))
			return &c->parts[i];
	return NULL;
}

enum topoml_hint topoml_siteconf_hint(const struct topoml_siteconf *c,
				      const char *part)
{
	const struct topoml_part_conf *pc = _part(c, part);

	if (pc && pc->has_hint)
		return pc->hint;
	return c->default_hint;
}

bool topoml_siteconf_placement(const struct topoml_siteconf *c,
			       const char *part)
{
	const struct topoml_part_conf *pc = _part(c, part);

	if (pc && pc->placement >= 0)
		return pc->placement;
	return c->placement;
}

void topoml_siteconf_wait(const struct topoml_siteconf *c, const char *part,
			  struct topoml_wait_policy *p)
{
	const struct topoml_part_conf *pc = _part(c, part);

	memset(p, 0, sizeof(*p));
	p->box_wait = c->torus_box_wait;
	p->hybrid_wait = c->hybrid_wait;
	/* a partition's LocalityWait= is both halves */
	if (pc && pc->locality_wait >= 0)
		p->box_wait = p->hybrid_wait = pc->locality_wait;
	p->box_span = c->torus_box_wait_span;
	p->torus_curve = c->torus_curve;
	p->weights = c->hybrid_weights;
	p->box_key = c->box_wait_key;
	p->hybrid_key = c->hybrid_wait_key;
	if (pc && pc->locality_wait >= 0)
		p->box_key = p->hybrid_key = "LocalityWait";
}

bool topoml_siteconf_wait_inert_on(const struct topoml_siteconf *c,
				   const topoml_topo_t *t, char *buf,
				   size_t len)
{
	/* only the old name sets the box half alone */
	if (!t || t->family == TOPOML_TORUS || c->torus_box_wait <= 0 ||
	    c->hybrid_wait > 0 || strcmp(c->box_wait_key, "TorusBoxWait"))
		return false;
	snprintf(buf, len, "TorusBoxWait has no effect on a %s (no torus boxes)",
		 topoml_family_name(t->family));
	return true;
}

const char *topoml_slurm_topology_kind(const char *path)
{
	const char *kind = NULL;
	char line[1024];
	FILE *f = path ? fopen(path, "re") : NULL;

	while (f && fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");

		/* a block network has no SwitchName= lines that matter */
		if (!strncasecmp(p, "BlockName=", 10)) {
			kind = "block";
			break;
		}
		if (!strncasecmp(p, "SwitchName=", 11))
			kind = "tree";
	}
	if (f)
		fclose(f);
	return kind;
}
