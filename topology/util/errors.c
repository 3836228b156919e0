/*
 * Error lists: loaders collect every problem instead of stopping at the
 * first, so an admin fixes a site file in one pass.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE	/* vasprintf */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "util/util.h"

/* Beyond this many messages a broken 100k-node file would flood the screen. */
#define ERRORS_PRINT_MAX 200

void topoml_errors_add(topoml_errors_t *e, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL, **m;

	if (!e)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	/* Doubling: a file with 100k errors must not copy the list 100k times. */
	m = e->msg;
	if (topoml__grow((void **)&m, e->n, sizeof(*m))) {
		free(msg);
		return;
	}
	e->msg = m;
	e->msg[e->n++] = msg;
}

void topoml_errors_print(const topoml_errors_t *e, FILE *f)
{
	int i;

	if (!e)
		return;
	for (i = 0; i < e->n && i < ERRORS_PRINT_MAX; i++)
		fprintf(f, "%s\n", e->msg[i]);
	if (e->n > ERRORS_PRINT_MAX)
		fprintf(f, "... and %d more errors\n", e->n - ERRORS_PRINT_MAX);
}

void topoml_errors_clear(topoml_errors_t *e)
{
	int i;

	if (!e)
		return;
	for (i = 0; i < e->n; i++)
		free(e->msg[i]);
	free(e->msg);
	e->msg = NULL;
	e->n = 0;
}

static bool _log_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

char *topoml_log_escape(const char *s, char *buf, size_t len)
{
	size_t at = 0, total = 0;
	bool cut;

	if (!len)
		return buf;
	for (const char *p = s; p && *p; p++)
		total += _log_plain((unsigned char)*p) ? 1 : 4;
	cut = total >= len;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t need = _log_plain(c) ? 1 : 4;

		/* when cut, room for "..." stays: at <= len - 4 then */
		if (at + need + (cut ? 3 : 0) >= len) {
			if (len >= 4) {
				memcpy(buf + at, "...", 3);
				at += 3;
			}
			break;
		}
		if (need == 1)
			buf[at++] = (char)c;
		else
			at += (size_t)snprintf(buf + at, len - at, "\\x%02x",
					       c);
	}
	buf[at < len ? at : len - 1] = '\0';
	return buf;
}

char *topoml_log_vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	char *raw = NULL;

	/* the whole text first: a cut must never split an escape */
	if (vasprintf(&raw, fmt, ap) < 0)
		raw = NULL;
	topoml_log_escape(raw ? raw : "(no memory for a log line)", buf,
			  len);
	free(raw);
	return buf;
}

char *topoml_log_format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	topoml_log_vformat(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}
