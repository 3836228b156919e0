/*
 * libtopoml's public API (topoml.h), errors: what loaders and parsers
 * found wrong, and the one escape of every log line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_ERRORS_H
#define TOPOML_ERRORS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors -------------------------------------------------------- */

/*
 * Loaders collect every problem they find.  Each message is complete:
 * "FILE:LINE:COL: what is wrong" for syntax, "FILE:LINE: switch X: ..." for
 * semantics.
 */
typedef struct topoml_errors {
	int n;
	char **msg;
} topoml_errors_t;

void topoml_errors_add(topoml_errors_t *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void topoml_errors_print(const topoml_errors_t *e, FILE *f);
void topoml_errors_clear(topoml_errors_t *e);
/*
 * s as one log line: control characters, quotes' backslash and bytes
 * outside printable ASCII as \xNN, cut at len - 1 bytes ("..." at the
 * end when cut).  For values a job brings (its environment, options)
 * that reach a daemon's log, which a newline would let forge lines.
 * Returns buf.
 */
char *topoml_log_escape(const char *s, char *buf, size_t len);
/*
 * A whole log line: fmt with its arguments, then escaped as above.  What
 * every log line and job message of the plugins and the CLI goes
 * through, so that no piece of it (a value, a path, a name the user
 * chose) can start a line of its own or reach a terminal as a control
 * sequence.  Fixed text stays as it is (plain ASCII).  Returns buf.
 */
char *topoml_log_vformat(char *buf, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
char *topoml_log_format(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_ERRORS_H */
