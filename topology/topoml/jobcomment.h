/*
 * select/topoml's part of a job's SystemComment, in one place: the key
 * names, the writer (select/topoml, in slurmctld), the merge with other
 * plugins' parts, and the parser (topoml.so in slurmstepd, which takes the
 * ring order from it instead of loading a topology of its own), e.g.
 *
 *   topoml: placed=topoml hint=allreduce leaves=2/2 ring=20/20
 *           order=n[1,3,5,7,2,4,6,8]
 *
 * and, for a job with --ml-spares=K, spares=K: the last K of order= are
 * its spares (outside the ring of the workers until one fails; which nodes
 * they are is topoml_spares_last's rule, not the codec's)
 *
 * (one line).  Pure C; host lists through libslurm's slurm_hostlist_*.
 * The options on their way to slurmctld: contract.h.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_JOBCOMMENT_H
#define TOPOML_JOBCOMMENT_H

#include <stddef.h>

/*
 * For callers that still take the option names and parsers, and the
 * spares rule, from here: contract.h and place.h own them.
 */
#include "topoml/contract.h"
#include "topoml/place.h"

#define TOPOML_COMMENT_TAG	"topoml: "
#define TOPOML_COMMENT_SEP	"; "
/*
 * Bounds, the same for writer and reader: a longer order= is not written
 * (the tasks then fall back to topoml.so's own topology), a longer
 * SystemComment or order= is refused by the parser.  slurmdbd keeps
 * SystemComment in a MySQL TEXT column (64 KiB, other plugins' parts
 * included), so order= stays at half of that: the ring of any job whose
 * order compresses to ranges, and ~4000 scattered nodes of 7-character
 * names.
 */
#define TOPOML_COMMENT_MAX	(256 * 1024)
#define TOPOML_COMMENT_ORDER_MAX	(32 * 1024)
/* Most nodes an order= may expand to (Slurm's own range limit is 64k). */
#define TOPOML_COMMENT_NODES_MAX	(1024 * 1024)

/* Span keys by topology family (index = enum topoml_family, 0 = none). */
#define TOPOML_COMMENT_SPAN_KEYS	{ "span", "leaves", "groups", "box" }

struct topoml_comment {
	const char *placed;	/* "topoml" or "cons_tres" (static) */
	const char *hint;	/* hint name (static), NULL: not known */
	int choice;		/* the engine's Nth choice, 0: first */
	int family;		/* index into TOPOML_COMMENT_SPAN_KEYS */
	int span, span_lb;
	double ring, ring_lb;
	int global_hops;	/* -1: not written (not a dragonfly) */
	int spares;		/* --ml-spares: the last K of order= */
	char *order;		/* host list in ring order, NULL: none */
};

/*
 * The "topoml: ..." part for c, as a malloc'd string (NULL: no memory).
 * order= is left out when longer than TOPOML_COMMENT_ORDER_MAX.
 */
char *topoml_comment_write(const struct topoml_comment *c);

/*
 * old (may be NULL) with every part that begins with TOPOML_COMMENT_TAG
 * removed, then ours appended after TOPOML_COMMENT_SEP (ours alone when
 * nothing else is left).  Parts are separated by TOPOML_COMMENT_SEP; the
 * other parts are kept verbatim and in order, so running this again (a
 * requeued job starts again) replaces ours instead of adding to it.
 * Returns a malloc'd string, or NULL when out of memory.
 */
char *topoml_comment_merge(const char *old, const char *ours);

/*
 * Parse the topoml part of a whole SystemComment (other parts are
 * skipped).  1: no topoml part (a job select/topoml did not place); 0: c
 * filled (c->order malloc'd or NULL, free with topoml_comment_clear); -1:
 * not ours to trust (bad token, value, length, two topoml parts), reason
 * in err.  Unknown keys of the form [a-z_]+=VALUE are skipped, so an older
 * reader accepts a newer writer's comment.
 */
int topoml_comment_parse(const char *system_comment, struct topoml_comment *c,
			 char *err, size_t errlen);
void topoml_comment_clear(struct topoml_comment *c);

/*
 * The ring order of a step from the job's order= host list: out[i] = the
 * index in names[0..n-1] (the step's nodes, any order) of ring position i,
 * the job's order restricted to the step's nodes (a subsequence of a ring
 * order is still a ring order, of the same or lower cost on a tree).
 * 0, or -1 with err: order is no host list, repeats a node, or does not
 * hold every one of names.
 */
int topoml_comment_step_order(const char *order, char *const *names, int n,
			      int *out, char *err, size_t errlen);

#endif
