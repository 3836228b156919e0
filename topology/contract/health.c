/*
 * Node health records: the job's report parser, the comment part, the
 * per-node table and its state file (see topoml/health.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "topoml/health.h"

static void _err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void _err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

bool topoml_health_name_ok(const char *s)
{
	size_t i;

	if (!s || !isalnum((unsigned char)s[0]))
		return false;
	for (i = 0; s[i]; i++) {
		if (i >= TOPOML_HEALTH_NAME_MAX)
			return false;
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' &&
		    s[i] != '_' && s[i] != '-')
			return false;
	}
	return true;
}

bool topoml_health_names_has(const struct topoml_health_names *n,
			     const char *name)
{
	for (int i = 0; i < n->n; i++)
		if (!strcmp(n->name[i], name))
			return true;
	return false;
}

bool topoml_health_names_add(struct topoml_health_names *n,
			     const char *name)
{
	if (n->n >= TOPOML_HEALTH_NAMES_MAX || !topoml_health_name_ok(name) ||
	    topoml_health_names_has(n, name))
		return false;
	strcpy(n->name[n->n++], name);
	return true;
}

/* One line of health.jsonl: 1 a straggler node in *node, 0 another
 * event, -1 not a valid record (why). */
static int _report_line(json_tokener *tok, const char *s, size_t len,
			char *node, const char **why)
{
	json_object *o, *ev, *nd;
	const char *e, *n;
	int rc = -1;

	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, s, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		*why = "not one JSON object";
		goto out;
	}
	if (!json_object_is_type(o, json_type_object)) {
		*why = "not a JSON object";
		goto out;
	}
	if (!json_object_object_get_ex(o, "event", &ev) ||
	    !json_object_is_type(ev, json_type_string)) {
		*why = "no \"event\" string";
		goto out;
	}
	e = json_object_get_string(ev);
	if (strcmp(e, "straggler")) {
		rc = 0;
		goto out;
	}
	if (!json_object_object_get_ex(o, "node", &nd) ||
	    !json_object_is_type(nd, json_type_string)) {
		*why = "no \"node\" string";
		goto out;
	}
	n = json_object_get_string(nd);
	if ((size_t)json_object_get_string_len(nd) != strlen(n) ||
	    !topoml_health_name_ok(n)) {
		*why = "\"node\" is not a node name";
		goto out;
	}
	strcpy(node, n);
	rc = 1;
out:
	if (o)
		json_object_put(o);
	return rc;
}

int topoml_health_report_parse(const char *buf, size_t len,
			       struct topoml_health_names *out, int *bad,
			       char *err, size_t errlen)
{
	json_tokener *tok;
	size_t at = 0;
	int line = 0;

	out->n = 0;
	*bad = 0;
	if (err && errlen)
		err[0] = '\0';
	if (len > TOPOML_HEALTH_REPORT_MAX) {
		_err(err, errlen, "over %d bytes", TOPOML_HEALTH_REPORT_MAX);
		return -1;
	}
	/* Depth 4: a record is flat; deeper input costs nothing more. */
	if (!(tok = json_tokener_new_ex(4))) {
		_err(err, errlen, "out of memory");
		return -1;
	}
	while (at < len) {
		const char *s = buf + at, *nl = memchr(s, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) : len - at;
		char node[TOPOML_HEALTH_NAME_MAX + 1];
		const char *why = NULL;
		size_t k;
		int rc;

		at += n + (nl ? 1 : 0);
		line++;
		for (k = 0; k < n && isspace((unsigned char)s[k]); k++)
			;
		if (k == n)
			continue;
		if (n > TOPOML_HEALTH_LINE_MAX) {
			why = "line too long";
			rc = -1;
		} else if (memchr(s, '\0', n)) {
			why = "a NUL byte";
			rc = -1;
		} else {
			rc = _report_line(tok, s, n, node, &why);
		}
		if (rc < 0) {
			if (!(*bad)++)
				_err(err, errlen, "line %d: %s", line, why);
			continue;
		}
		if (rc > 0)
			topoml_health_names_add(out, node);
	}
	json_tokener_free(tok);
	return out->n;
}

static const char *const _pfname[] = { "ecc", "pages", "port" };
#define PF_NCHECKS 3

int topoml_health_pf_checks_write(unsigned checks, char *buf, size_t len)
{
	int off = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < PF_NCHECKS; i++)
		if (checks & (1u << i))
			off += snprintf(buf + (len > (size_t)off ? off : 0),
					len > (size_t)off ? len - off : 0,
					"%s%s", off ? "+" : "", _pfname[i]);
	return off;
}

bool topoml_health_pf_add(struct topoml_health_pf *p, const char *name,
			  unsigned checks)
{
	checks &= TOPOML_HEALTH_PF_ALL;
	if (!checks || !topoml_health_name_ok(name))
		return false;
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], name)) {
			p->checks[i] |= checks;
			return true;
		}
	if (p->n >= TOPOML_HEALTH_NAMES_MAX)
		return false;
	strcpy(p->name[p->n], name);
	p->checks[p->n++] = checks;
	return true;
}

char *topoml_health_part_write_pf(const struct topoml_health_names *n,
				  const struct topoml_health_pf *pf)
{
	int ns = n ? n->n : 0, np = pf ? pf->n : 0;
	size_t cap = strlen(TOPOML_HEALTH_TAG) + 32 +
		     (size_t)(ns + np) * (TOPOML_HEALTH_NAME_MAX + 24);
	char *s;
	size_t len;

	if ((ns <= 0 && np <= 0) || !(s = malloc(cap)))
		return NULL;
	len = snprintf(s, cap, "%s", TOPOML_HEALTH_TAG);
	if (ns > 0) {
		len += snprintf(s + len, cap - len, "straggler=");
		for (int i = 0; i < ns; i++)
			len += snprintf(s + len, cap - len, "%s%s",
					i ? "," : "", n->name[i]);
	}
	if (np > 0) {
		len += snprintf(s + len, cap - len, "%spreflight=",
				ns > 0 ? " " : "");
		for (int i = 0; i < np; i++) {
			char c[32];

			topoml_health_pf_checks_write(pf->checks[i], c,
						      sizeof(c));
			len += snprintf(s + len, cap - len, "%s%s:%s",
					i ? "," : "", pf->name[i], c);
		}
	}
	return s;
}

char *topoml_health_part_write(const struct topoml_health_names *n)
{
	return topoml_health_part_write_pf(n, NULL);
}

#define SEP "; "

/* "NAME" of LEN bytes at S into NAME: false when it is no node name. */
static bool _name(const char *s, size_t len, char *name)
{
	if (!len || len > TOPOML_HEALTH_NAME_MAX)
		return false;
	memcpy(name, s, len);
	name[len] = '\0';
	return topoml_health_name_ok(name);
}

/* "ecc+port" of LEN bytes: the bits, 0 when malformed. */
static unsigned _checks(const char *s, size_t len)
{
	unsigned bits = 0;

	while (len) {
		const char *c = memchr(s, '+', len);
		size_t n = c ? (size_t)(c - s) : len;
		int i;

		for (i = 0; i < PF_NCHECKS; i++)
			if (strlen(_pfname[i]) == n &&
			    !strncmp(s, _pfname[i], n))
				break;
		if (i == PF_NCHECKS || (bits & (1u << i)))
			return 0;
		bits |= 1u << i;
		s += n;
		len -= n;
		if (c) {
			s++;
			if (!--len)
				return 0;
		}
	}
	return bits;
}

/* The comma list of VALUE (LEN bytes): stragglers (PF false) or
 * NODE:CHECKS (PF true); -1 with ERR when malformed. */
static int _list(const char *v, size_t len, bool pf,
		 struct topoml_health_names *out, struct topoml_health_pf *p,
		 char *err, size_t errlen)
{
	int k = 0;

	if (!len) {
		_err(err, errlen, "no node");
		return -1;
	}
	while (len) {
		const char *c = memchr(v, ',', len);
		size_t n = c ? (size_t)(c - v) : len, nl = n;
		char name[TOPOML_HEALTH_NAME_MAX + 1];
		unsigned bits = 0;

		if (pf) {
			const char *col = memchr(v, ':', n);

			nl = col ? (size_t)(col - v) : n;
			if (!col || !(bits = _checks(col + 1, n - nl - 1))) {
				_err(err, errlen, "want preflight="
				     "NODE:CHECK[+CHECK...][,...]");
				return -1;
			}
		}
		if (!_name(v, nl, name)) {
			_err(err, errlen, "bad node name");
			return -1;
		}
		if (++k > TOPOML_HEALTH_NAMES_MAX) {
			_err(err, errlen, "over %d nodes",
			     TOPOML_HEALTH_NAMES_MAX);
			return -1;
		}
		if (pf && p)
			topoml_health_pf_add(p, name, bits);
		else if (!pf)
			topoml_health_names_add(out, name);
		v += n;
		len -= n;
		if (c) {
			v++;
			if (!--len) {
				_err(err, errlen, "bad node name");
				return -1;
			}
		}
	}
	return 0;
}

int topoml_health_part_parse_pf(const char *comment,
				struct topoml_health_names *out,
				struct topoml_health_pf *pf, char *err,
				size_t errlen)
{
	size_t tag = strlen(TOPOML_HEALTH_TAG);
	size_t ks = strlen("straggler="), kp = strlen("preflight=");
	const char *p = comment, *found = NULL, *sp;
	size_t flen = 0, n;

	out->n = 0;
	if (pf)
		pf->n = 0;
	while (p && *p) {
		const char *end = strstr(p, SEP);

		n = end ? (size_t)(end - p) : strlen(p);
		if (n >= tag && !strncmp(p, TOPOML_HEALTH_TAG, tag)) {
			if (found) {
				_err(err, errlen, "two %.13s parts",
				     TOPOML_HEALTH_TAG);
				return -1;
			}
			found = p + tag;
			flen = n - tag;
		}
		p = end ? end + strlen(SEP) : NULL;
	}
	if (!found)
		return 1;
	/* straggler=LIST, preflight=LIST or both, in that order. */
	if (flen >= ks && !strncmp(found, "straggler=", ks)) {
		sp = memchr(found, ' ', flen);
		n = sp ? (size_t)(sp - found) : flen;
		if (_list(found + ks, n - ks, false, out, NULL, err, errlen))
			return -1;
		found += n;
		flen -= n;
		if (sp) {
			found++;
			if (!--flen) {
				_err(err, errlen, "want preflight= after "
				     "the space");
				return -1;
			}
		}
	} else if (flen < kp || strncmp(found, "preflight=", kp)) {
		_err(err, errlen, "want straggler=NODE[,NODE...]");
		return -1;
	}
	if (flen) {
		if (flen < kp || strncmp(found, "preflight=", kp) ||
		    memchr(found, ' ', flen)) {
			_err(err, errlen, "want preflight="
			     "NODE:CHECK[+CHECK...][,...]");
			return -1;
		}
		if (_list(found + kp, flen - kp, true, out, pf, err, errlen))
			return -1;
	}
	return 0;
}

int topoml_health_part_parse(const char *comment,
			     struct topoml_health_names *out, char *err,
			     size_t errlen)
{
	return topoml_health_part_parse_pf(comment, out, NULL, err, errlen);
}

char *topoml_health_part_drop(const char *old)
{
	return topoml_health_part_merge(old, NULL);
}

/* OURS NULL: the others' parts only. */
char *topoml_health_part_merge(const char *old, const char *ours)
{
	size_t tag = strlen(TOPOML_HEALTH_TAG), sep = strlen(SEP);
	size_t cap = (old ? strlen(old) : 0) + sep +
		     (ours ? strlen(ours) : 0) + 1, len = 0;
	const char *p = old;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	while (p && *p) {
		const char *end = strstr(p, SEP);
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n && (n < tag || strncmp(p, TOPOML_HEALTH_TAG, tag))) {
			if (len) {
				memcpy(out + len, SEP, sep);
				len += sep;
			}
			memcpy(out + len, p, n);
			len += n;
		}
		p = end ? end + sep : NULL;
	}
	if (!ours) {
		out[len] = '\0';
		return out;
	}
	if (len) {
		memcpy(out + len, SEP, sep);
		len += sep;
	}
	strcpy(out + len, ours);
	return out;
}

/* ---- the table ---------------------------------------------------- */

void topoml_health_table_clear(struct topoml_health_table *t)
{
	free(t->node);
	memset(t, 0, sizeof(*t));
}

struct topoml_health_node *topoml_health_find(
	const struct topoml_health_table *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->node[i].name, name))
			return &t->node[i];
	return NULL;
}

static struct topoml_health_node *_add(struct topoml_health_table *t,
				       const char *name)
{
	struct topoml_health_node *n = topoml_health_find(t, name);

	if (n)
		return n;
	if (!topoml_health_name_ok(name) || t->n >= TOPOML_HEALTH_NODES_MAX)
		return NULL;
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		void *p = realloc(t->node, (size_t)cap * sizeof(*t->node));

		if (!p)
			return NULL;
		t->node = p;
		t->cap = cap;
	}
	n = &t->node[t->n++];
	memset(n, 0, sizeof(*n));
	strcpy(n->name, name);
	return n;
}

int topoml_health_uids(const struct topoml_health_node *node, int64_t since)
{
	int k = 0;

	for (int i = 0; i < node->nseen; i++) {
		int j;

		if (node->seen[i].at < since)
			continue;
		for (j = 0; j < i; j++)
			if (node->seen[j].at >= since &&
			    node->seen[j].uid == node->seen[i].uid)
				break;
		if (j == i)
			k++;
	}
	return k;
}

bool topoml_health_avoided(const struct topoml_health_node *node,
			   int64_t now)
{
	return node && node->avoid_until > now;
}

int topoml_health_record(struct topoml_health_table *t, const char *name,
			 uint32_t job, uint32_t uid, int64_t now,
			 enum topoml_health_policy policy, int avoid_time)
{
	struct topoml_health_node *n = _add(t, name);
	struct topoml_health_seen *s = NULL;
	int i, uids;

	if (!n)
		return -1;
	for (i = 0; i < n->nseen; i++)
		if (n->seen[i].job == job)
			s = &n->seen[i];
	if (!s) {
		if (n->nseen == TOPOML_HEALTH_SEEN_MAX) {
			/* the oldest goes */
			int old = 0;

			for (i = 1; i < n->nseen; i++)
				if (n->seen[i].at < n->seen[old].at)
					old = i;
			n->seen[old] = n->seen[--n->nseen];
		}
		s = &n->seen[n->nseen++];
	}
	s->job = job;
	s->uid = uid;
	s->at = now;
	if (avoid_time < 0)
		avoid_time = 0;
	uids = topoml_health_uids(n, now - avoid_time);
	n->action_at = now;
	if (policy == TOPOML_HEALTH_REPORT) {
		n->action = TOPOML_HEALTH_ACT_NONE;
		snprintf(n->why, sizeof(n->why), "policy report");
		return n->action;
	}
	n->avoid_until = now + avoid_time;
	n->action = TOPOML_HEALTH_ACT_AVOID;
	if (policy == TOPOML_HEALTH_DRAIN && uids >= 2) {
		n->action = TOPOML_HEALTH_ACT_DRAIN;
		snprintf(n->why, sizeof(n->why),
			 "reported by %d users within %ds", uids, avoid_time);
	} else if (policy == TOPOML_HEALTH_DRAIN && n->pf_at &&
		   n->pf_at >= now - avoid_time) {
		char c[32];

		topoml_health_pf_checks_write(n->pf_checks, c, sizeof(c));
		n->action = TOPOML_HEALTH_ACT_DRAIN;
		snprintf(n->why, sizeof(n->why), "root-side preflight: %s; "
			 "one user's report", c);
	} else if (policy == TOPOML_HEALTH_DRAIN) {
		snprintf(n->why, sizeof(n->why),
			 "one user's report: avoid until corroborated");
	} else {
		snprintf(n->why, sizeof(n->why), "policy avoid");
	}
	return n->action;
}

int topoml_health_record_pf(struct topoml_health_table *t, const char *name,
			    uint32_t job, unsigned checks, int64_t now,
			    enum topoml_health_policy policy, int avoid_time)
{
	struct topoml_health_node *n;
	char c[32];

	checks &= TOPOML_HEALTH_PF_ALL;
	if (!checks || !(n = _add(t, name)))
		return -1;
	n->pf_job = job;
	n->pf_at = now;
	n->pf_checks = checks;
	n->action_at = now;
	if (avoid_time < 0)
		avoid_time = 0;
	topoml_health_pf_checks_write(checks, c, sizeof(c));
	if (policy == TOPOML_HEALTH_REPORT) {
		n->action = TOPOML_HEALTH_ACT_NONE;
		snprintf(n->why, sizeof(n->why), "root-side preflight: %s "
			 "(policy report)", c);
		return n->action;
	}
	n->avoid_until = now + avoid_time;
	n->action = policy == TOPOML_HEALTH_DRAIN ? TOPOML_HEALTH_ACT_DRAIN :
		TOPOML_HEALTH_ACT_AVOID;
	snprintf(n->why, sizeof(n->why), "root-side preflight: %s", c);
	return n->action;
}

static const char *const _act[] = { "none", "avoid", "drain" };
static const char *const _pol[] = { "report", "avoid", "drain" };

const char *topoml_health_action_name(int action)
{
	return action >= 0 && action < 3 ? _act[action] : "?";
}

int topoml_health_policy_parse(const char *s, enum topoml_health_policy *p)
{
	for (int i = 0; i < 3; i++)
		if (!strcasecmp(s, _pol[i])) {
			*p = (enum topoml_health_policy)i;
			return 0;
		}
	return -1;
}

const char *topoml_health_policy_name(enum topoml_health_policy p)
{
	return (int)p >= 0 && (int)p < 3 ? _pol[p] : "?";
}

/* ---- the state file ----------------------------------------------- */

#define STATE_MAGIC "topoml-health 1\n"

/*
 * node=NAME action=A at=T until=T seen=JOB/UID/T,... [pf=JOB/T/CHECKS]
 * why=TEXT (seen= may be empty; pf= is the last root-side preflight
 * finding; why= runs to the end of the line, printable).
 */
int topoml_health_save(FILE *f, const struct topoml_health_table *t)
{
	fputs(STATE_MAGIC, f);
	for (int i = 0; i < t->n; i++) {
		const struct topoml_health_node *n = &t->node[i];

		fprintf(f, "node=%s action=%s at=%" PRId64 " until=%" PRId64
			" seen=", n->name, topoml_health_action_name(n->action),
			n->action_at, n->avoid_until);
		for (int j = 0; j < n->nseen; j++)
			fprintf(f, "%s%" PRIu32 "/%" PRIu32 "/%" PRId64,
				j ? "," : "", n->seen[j].job, n->seen[j].uid,
				n->seen[j].at);
		if (n->pf_at) {
			char c[32];

			topoml_health_pf_checks_write(n->pf_checks, c,
						      sizeof(c));
			fprintf(f, " pf=%" PRIu32 "/%" PRId64 "/%s",
				n->pf_job, n->pf_at, c);
		}
		fputs(" why=", f);
		for (const char *w = n->why; *w; w++)
			fputc(isprint((unsigned char)*w) ? *w : '?', f);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* "KEY=" at *p: advance past it. */
static bool _key(const char **p, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(*p, key, n))
		return false;
	*p += n;
	return true;
}

static bool _i64(const char **p, int64_t *v)
{
	char *end;
	long long x;

	if (!isdigit((unsigned char)**p))
		return false;
	errno = 0;
	x = strtoll(*p, &end, 10);
	if (errno || x < 0)
		return false;
	*v = x;
	*p = end;
	return true;
}

static bool _u32(const char **p, uint32_t *v)
{
	int64_t x;

	if (!_i64(p, &x) || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

static int _state_line(const char *s, struct topoml_health_table *t)
{
	struct topoml_health_node tmp, *n;
	const char *p = s, *e;
	size_t len;
	int a;

	memset(&tmp, 0, sizeof(tmp));
	if (!_key(&p, "node="))
		return -1;
	e = strchr(p, ' ');
	len = e ? (size_t)(e - p) : 0;
	if (!len || len > TOPOML_HEALTH_NAME_MAX)
		return -1;
	memcpy(tmp.name, p, len);
	if (!topoml_health_name_ok(tmp.name) || topoml_health_find(t, tmp.name))
		return -1;
	p = e + 1;
	if (!_key(&p, "action="))
		return -1;
	for (a = 0; a < 3; a++)
		if (!strncmp(p, _act[a], strlen(_act[a])) &&
		    p[strlen(_act[a])] == ' ')
			break;
	if (a == 3)
		return -1;
	tmp.action = a;
	p += strlen(_act[a]) + 1;
	if (!_key(&p, "at=") || !_i64(&p, &tmp.action_at) ||
	    !_key(&p, " until=") || !_i64(&p, &tmp.avoid_until) ||
	    !_key(&p, " seen="))
		return -1;
	while (*p != ' ') {
		struct topoml_health_seen *x;

		if (tmp.nseen == TOPOML_HEALTH_SEEN_MAX)
			return -1;
		x = &tmp.seen[tmp.nseen++];
		if (!_u32(&p, &x->job) || !_key(&p, "/") ||
		    !_u32(&p, &x->uid) || !_key(&p, "/") || !_i64(&p, &x->at))
			return -1;
		if (*p == ',' && p[1] != ' ')
			p++;
		else if (*p != ' ')
			return -1;
	}
	/* pf=JOB/T/CHECKS: the last root-side finding (optional). */
	if (_key(&p, " pf=")) {
		const char *sp;

		if (!_u32(&p, &tmp.pf_job) || !_key(&p, "/") ||
		    !_i64(&p, &tmp.pf_at) || !tmp.pf_at || !_key(&p, "/") ||
		    !(sp = strchr(p, ' ')) ||
		    !(tmp.pf_checks = _checks(p, (size_t)(sp - p))))
			return -1;
		p = sp;
	}
	if (!_key(&p, " why="))
		return -1;
	len = strlen(p);
	if (len >= sizeof(tmp.why))
		return -1;
	for (size_t i = 0; i < len; i++)
		if (!isprint((unsigned char)p[i]))
			return -1;
	memcpy(tmp.why, p, len);
	if (!(n = _add(t, tmp.name)))
		return -1;
	*n = tmp;
	return 0;
}

int topoml_health_load(const char *text, size_t len,
		       struct topoml_health_table *t, char *err,
		       size_t errlen)
{
	size_t m = strlen(STATE_MAGIC), at;
	int line = 1;

	topoml_health_table_clear(t);
	if (len < m || memcmp(text, STATE_MAGIC, m)) {
		_err(err, errlen, "line 1: not a topoml health state file");
		return -1;
	}
	for (at = m; at < len;) {
		const char *s = text + at, *nl = memchr(s, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) : len - at;
		char buf[1024];

		line++;
		at += n + (nl ? 1 : 0);
		if (!nl || n >= sizeof(buf) || memchr(s, '\0', n)) {
			_err(err, errlen, "line %d: %s", line, !nl ?
			     "no newline at the end" : "bad line");
			return -1;
		}
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (_state_line(buf, t)) {
			_err(err, errlen, "line %d: bad record", line);
			return -1;
		}
	}
	return 0;
}
