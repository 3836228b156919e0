/*
 * The one lexer of topoml's Slurm-style configuration files, topology.conf
 * (load/load_conf.c) and topoml.conf (conf/siteconf.c): Slurm 22.05's
 * line rules (src/common/parse_config.c, s_p_parse_file).
 *
 *  - a '#' not preceded by an odd run of backslashes starts a comment;
 *  - an odd run of backslashes at the end of a line (trailing blanks
 *    allowed) joins the next line with nothing in between;
 *  - every remaining backslash escapes the next character;
 *  - "Include FILE" (case-insensitive, FILE relative to the including
 *    file's directory) reads another file in its place, at most
 *    TOPOML_CONF_INCLUDE_DEPTH deep and TOPOML_CONF_INCLUDES_MAX in all
 *    (Slurm has no bound: a self-include overflows its stack);
 *  - words are KEY[op]=VALUE by Slurm's regular expression: keys
 *    [[:alnum:]_.]+, blanks allowed around '=' ("Nodes= x" is Nodes="x"),
 *    a value may be double-quoted to hold blanks.
 *
 * Every character of a logical line keeps its FILE:LINE:COL, so messages
 * point where the text was written.  The readers keep their own meaning
 * of the words and their own messages.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CONF_LEX_H
#define TOPOML_CONF_LEX_H

#include <stdbool.h>
#include <stddef.h>

#define TOPOML_CONF_INCLUDE_DEPTH 16
/* Two Includes of itself per level would read a file 2^16 times. */
#define TOPOML_CONF_INCLUDES_MAX 64

struct topoml_conf_pos {
	int line;
	int col;
};

/* A logical line after comments, continuations and escapes are resolved. */
struct topoml_conf_line {
	char *s;
	struct topoml_conf_pos *pos;	/* where each character came from */
	size_t n, cap;
	struct topoml_conf_pos end;	/* just past the last character */
};

/* One KEY=VALUE word; offsets into the logical line. */
struct topoml_conf_kv {
	char *key;		/* malloc'd */
	char *value;		/* malloc'd, quotes removed */
	size_t key_off;
	size_t value_off;	/* the value as written (its quote) */
	size_t end;		/* where the rest of the line starts */
	bool quoted;
};

/* What a lexer error is, for the readers that weigh them. */
enum topoml_conf_err {
	TOPOML_CONF_E_SYNTAX,	/* Slurm refuses it too (fatal) */
	TOPOML_CONF_E_LIMIT,	/* Slurm reads it, topoml gives up */
};

/*
 * Reads path and the files it includes, calling line() for every logical
 * line that holds something other than an Include (Include lines are
 * followed here).  file: the name the line's messages start with, valid
 * until topoml__conf_lex_free().  error(): a message without the
 * "FILE:LINE:COL: " prefix; at NULL for the one message without a
 * position (the file given cannot be read).
 */
struct topoml_conf_lexer {
	void (*line)(void *arg, const struct topoml_conf_line *l,
		     const char *file);
	void (*error)(void *arg, enum topoml_conf_err kind, const char *file,
		      const struct topoml_conf_pos *at, const char *msg);
	void *arg;
	/* the lexer's own */
	char **files;
	int nfiles;
	int nincludes;
};

/* 0, or -1 when path (or a file it includes) could not be read (reported). */
int topoml__conf_lex_file(struct topoml_conf_lexer *lx, const char *path);
void topoml__conf_lex_free(struct topoml_conf_lexer *lx);

/* Position of byte offset off of the logical line (off may be its end). */
struct topoml_conf_pos topoml__conf_at(const struct topoml_conf_line *l,
				      size_t off);

/*
 * One KEY=VALUE at the start of s (offset base into the line), s being
 * len bytes.  0 (kv filled, free key and value), or -1: no such word.
 */
int topoml__conf_match_kv(const char *s, size_t len, size_t base,
			 struct topoml_conf_kv *kv);

/* s is NULL, empty or blanks only. */
bool topoml__conf_blank(const char *s);
/* Trimmed copy of leftover text for messages, at most 40 characters. */
void topoml__conf_excerpt(const char *s, char *buf, size_t len);

#endif
