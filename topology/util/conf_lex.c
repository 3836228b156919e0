/*
 * The lexer of topology.conf and topoml.conf: Slurm 22.05's
 * s_p_parse_file() line rules (see conf_lex.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE	/* asprintf */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "util/conf_lex.h"
#include "util/util.h"

/* The key=value expression of parse_config.c, verbatim. */
static const char _kv_pattern[] =
	"^[[:space:]]*"
	"([[:alnum:]_.]+)"
	"[[:space:]]*([-*+/]?)=[[:space:]]*"
	"((\"([^\"]*)\")|([^[:space:]]+))"
	"([[:space:]]|$)";

/*
 * Compiled once: regcomp() per load cost more than reading a small file.
 * regexec() on a shared pattern is thread-safe (POSIX).
 */
static regex_t _kv_re;
static bool _kv_ok;
static pthread_once_t _kv_once = PTHREAD_ONCE_INIT;

static void _kv_compile(void)
{
	_kv_ok = regcomp(&_kv_re, _kv_pattern, REG_EXTENDED) == 0;
}

static int _line_put(struct topoml_conf_line *l, char c, int line, int col)
{
	if (l->n + 2 > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		char *s = realloc(l->s, cap);
		struct topoml_conf_pos *p;

		if (!s)
			return -1;
		l->s = s;
		p = realloc(l->pos, cap * sizeof(*p));
		if (!p)
			return -1;
		l->pos = p;
		l->cap = cap;
	}
	l->s[l->n] = c;
	l->pos[l->n].line = line;
	l->pos[l->n].col = col;
	l->n++;
	l->s[l->n] = '\0';
	return 0;
}

struct topoml_conf_pos topoml__conf_at(const struct topoml_conf_line *l,
				      size_t off)
{
	if (off < l->n)
		return l->pos[off];
	return l->end;
}

/* _strip_comments(): cut at the first '#' after an even backslash run. */
static size_t _comment_cut(const char *p, size_t len)
{
	size_t i, bs = 0;

	for (i = 0; i < len; i++) {
		if (p[i] == '#' && bs % 2 == 0)
			return i;
		bs = p[i] == '\\' ? bs + 1 : 0;
	}
	return len;
}

/*
 * _strip_continuation(): an odd run of backslashes at the end, blanks after
 * it allowed, continues the line; the last backslash and what follows it go.
 * Returns the new length, or len when the line does not continue.
 */
static size_t _continuation_cut(const char *p, size_t len)
{
	size_t i = len, bs = 0;

	while (i > 0) {
		char c = p[i - 1];

		if (c == '\\')
			bs++;
		else if (isspace((unsigned char)c) && bs == 0)
			;
		else
			break;
		i--;
	}
	if (bs % 2 == 1)
		return i + bs - 1;
	return len;
}

/*
 * Read the next logical line from buf at *off, as _get_next_line() does.
 * Returns the number of physical lines consumed (0 at the end), -1 out of
 * memory.
 */
static int _next_line(const char *buf, size_t size, size_t *off, int lineno,
		      struct topoml_conf_line *l)
{
	int lines = 0;
	size_t i, j;

	l->n = 0;
	if (l->s)
		l->s[0] = '\0';
	while (*off < size) {
		const char *p = buf + *off;
		const char *nl = memchr(p, '\n', size - *off);
		size_t len = nl ? (size_t)(nl - p) + 1 : size - *off;
		size_t keep, cont;

		*off += len;
		lines++;
		keep = _comment_cut(p, len);
		cont = _continuation_cut(p, keep);
		for (i = 0; i < cont; i++)
			if (_line_put(l, p[i], lineno + lines - 1, i + 1))
				return -1;
		l->end.line = lineno + lines - 1;
		l->end.col = cont + 1;
		if (cont == keep)
			break;
	}
	/* _strip_escapes(): drop each backslash, keep what it escapes. */
	for (i = 0, j = 0; i < l->n; i++, j++) {
		if (l->s[i] == '\\')
			i++;
		if (i >= l->n)
			break;
		l->s[j] = l->s[i];
		l->pos[j] = l->pos[i];
	}
	l->n = j;
	if (l->s)
		l->s[j] = '\0';
	return lines;
}

bool topoml__conf_blank(const char *s)
{
	for (; s && *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

void topoml__conf_excerpt(const char *s, char *buf, size_t len)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strcspn(s, "\r\n");
	if (n > 40)
		n = 40;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/*
 * _keyvalue_regex().  REG_STARTEND: regexec() would take strlen() of the
 * rest of the line for every pair, quadratic in a long line.
 */
int topoml__conf_match_kv(const char *s, size_t len, size_t base,
			 struct topoml_conf_kv *kv)
{
	regmatch_t m[8];
	int vi;

	pthread_once(&_kv_once, _kv_compile);
	if (!_kv_ok)
		return -1;
	m[0].rm_so = 0;
	m[0].rm_eo = len;
	if (regexec(&_kv_re, s, 8, m, REG_STARTEND) == REG_NOMATCH)
		return -1;
	kv->key = strndup(s + m[1].rm_so, m[1].rm_eo - m[1].rm_so);
	vi = m[5].rm_so != -1 ? 5 : 6;
	kv->quoted = vi == 5;
	kv->value = strndup(s + m[vi].rm_so, m[vi].rm_eo - m[vi].rm_so);
	kv->key_off = base + m[1].rm_so;
	kv->value_off = base + m[3].rm_so;
	kv->end = base + m[3].rm_eo;
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		return -1;
	}
	return 0;
}

static void _err(struct topoml_conf_lexer *lx, enum topoml_conf_err kind,
		 const char *file, const struct topoml_conf_pos *at,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void _err(struct topoml_conf_lexer *lx, enum topoml_conf_err kind,
		 const char *file, const struct topoml_conf_pos *at,
		 const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	lx->error(lx->arg, kind, file, at, msg ? msg : "out of memory");
	free(msg);
}

/* The file names lines point to, kept until topoml__conf_lex_free(). */
static const char *_keep_file(struct topoml_conf_lexer *lx, const char *path)
{
	char **f = realloc(lx->files, (lx->nfiles + 1) * sizeof(*f));

	if (!f)
		return path;
	lx->files = f;
	f[lx->nfiles] = strdup(path);
	return f[lx->nfiles] ? f[lx->nfiles++] : path;
}

static int _lex_file(struct topoml_conf_lexer *lx, const char *path,
		     int depth, const char *from,
		     const struct topoml_conf_pos *from_at);

/*
 * _parse_include_directive(): "include" + blank + file name.  Returns 0
 * when the line is no include, 1 when handled (errors reported).
 */
static int _include(struct topoml_conf_lexer *lx,
		    const struct topoml_conf_line *l, const char *file,
		    int depth)
{
	const char *s = l->s, *p, *fn;
	char *name = NULL, *full = NULL, rest[48];
	struct topoml_conf_pos at;
	size_t n;

	if (strncasecmp(s, "include", 7) || !isspace((unsigned char)s[7]))
		return 0;
	for (p = s + 7; isspace((unsigned char)*p); p++)
		;
	fn = p;
	at = topoml__conf_at(l, fn - s);
	while (*p && !isspace((unsigned char)*p))
		p++;
	n = p - fn;
	if (n == 0) {
		_err(lx, TOPOML_CONF_E_SYNTAX, file, &at,
		     "Include without a file name");
		return 1;
	}
	name = strndup(fn, n);
	if (!name)
		goto out;
	if (strstr(name, "%c")) {
		/* Neither file has a ClusterName for %c to expand. */
		_err(lx, TOPOML_CONF_E_SYNTAX, file, &at, "Include %s: %%c "
		     "needs ClusterName, which this file does not have",
		     name);
		goto out;
	}
	if (name[0] == '/') {
		full = strdup(name);
	} else {
		const char *slash = strrchr(file, '/');
		int dl = slash ? (int)(slash - file) : 1;

		if (asprintf(&full, "%.*s/%s", dl, slash ? file : ".",
			     name) < 0)
			full = NULL;
	}
	if (!full)
		goto out;
	if (lx->nincludes++ >= TOPOML_CONF_INCLUDES_MAX) {
		/* Slurm reads them all: topoml only gives up. */
		_err(lx, TOPOML_CONF_E_LIMIT, file, &at, "Include %s: more "
		     "than %d Include lines in all", name,
		     TOPOML_CONF_INCLUDES_MAX);
		goto out;
	}
	if (depth >= TOPOML_CONF_INCLUDE_DEPTH) {
		_err(lx, TOPOML_CONF_E_LIMIT, file, &at, "Include %s: nested "
		     "more than %d deep (an include loop?)", name,
		     TOPOML_CONF_INCLUDE_DEPTH);
		goto out;
	}
	if (_lex_file(lx, full, depth + 1, file, &at) < 0)
		goto out;	/* reported at the Include */
	if (!topoml__conf_blank(p)) {
		p += strspn(p, " \t\r\n\v\f");
		topoml__conf_excerpt(p, rest, sizeof(rest));
		at = topoml__conf_at(l, p - s);
		_err(lx, TOPOML_CONF_E_SYNTAX, file, &at, "parse error at "
		     "'%s' after the Include file name", rest);
	}
out:
	free(name);
	free(full);
	return 1;
}

/*
 * s_p_parse_file(): -1 when the file cannot be read, reported at the
 * Include line (from, from_at) that names it, if any.
 */
static int _lex_file(struct topoml_conf_lexer *lx, const char *path,
		     int depth, const char *from,
		     const struct topoml_conf_pos *from_at)
{
	FILE *f = NULL;
	struct stat st;
	char *buf = NULL;
	size_t size, off = 0;
	struct topoml_conf_line l = { 0 };
	int lineno = 1, n, rc = -1;
	const char *file = path, *why;

	/* Include of a FIFO or device must not hang slurmctld. */
	if (!(f = topoml__fopen_regular(path)) || fstat(fileno(f), &st) < 0) {
		why = topoml__open_error(errno);
		goto unread;
	}
	file = _keep_file(lx, path);
	size = st.st_size;
	buf = malloc(size + 1);
	if (!buf || fread(buf, 1, size, f) != size) {
		why = buf ? "short read" : "out of memory";
		goto unread;
	}
	buf[size] = '\0';
	while ((n = _next_line(buf, size, &off, lineno, &l)) > 0) {
		if (l.n > 0 && !_include(lx, &l, file, depth))
			lx->line(lx->arg, &l, file);
		lineno += n;
	}
	rc = n < 0 ? -1 : 0;
	if (n < 0)
		_err(lx, TOPOML_CONF_E_LIMIT, path, NULL, "out of memory");
	goto out;
unread:
	/* Slurm fatal()s too ("something wrong with opening/reading") */
	if (from)
		_err(lx, TOPOML_CONF_E_SYNTAX, from, from_at,
		     "Include: cannot read %s: %s", path, why);
	else
		_err(lx, TOPOML_CONF_E_SYNTAX, path, NULL, "cannot read: %s",
		     why);
out:
	if (f)
		fclose(f);
	free(buf);
	free(l.s);
	free(l.pos);
	return rc;
}

int topoml__conf_lex_file(struct topoml_conf_lexer *lx, const char *path)
{
	lx->nincludes = 0;
	return _lex_file(lx, path, 0, NULL, NULL);
}

void topoml__conf_lex_free(struct topoml_conf_lexer *lx)
{
	for (int i = 0; i < lx->nfiles; i++)
		free(lx->files[i]);
	free(lx->files);
	lx->files = NULL;
	lx->nfiles = 0;
}
