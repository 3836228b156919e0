/*
 * The utilities under every layer of the engine: array growth (grow.c),
 * the name hash and index (hash.c), opening a regular file (file.c), Slurm
 * host lists (hostlist.c); errors and log text are public (topoml.h).
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_UTIL_H
#define TOPOML_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Grow *arr (element size sz) so that index n fits, doubling at powers of
 * two: no capacity field needed.  Returns 0, or -1 when out of memory
 * (*arr unchanged).  The engine's one array-growth helper: *arr starts
 * NULL (or from an earlier call) and n is the count before appending.
 */
int topoml__grow(void **arr, int n, size_t sz);

/* qsort's comparison of ints, ascending (node indexes: no overflow). */
static inline int topoml__int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* ---- opening a file a user names (file.c) ---------------------------- */

/*
 * fopen(path, "r") for a site file, refusing what is not a regular file
 * (errno EINVAL): opening a FIFO blocks until a writer comes, and a
 * character device never ends, which would hang slurmctld.  Never blocks.
 */
FILE *topoml__fopen_regular(const char *path);
/* The same as a descriptor (read-only, close-on-exec), or -1. */
int topoml__open_regular(const char *path);
/* "not a regular file" for EINVAL from the above, else strerror(). */
const char *topoml__open_error(int e);

/* ---- Slurm host lists (hostlist.c) ----------------------------------- */

/* Slurm's hostlist parser refuses ranges of more than 64k hosts. */
#define TOPOML_HOSTLIST_MAX_RANGE 65536

/* Names as a compact Slurm host list, in chunks Slurm can read back;
 * sort = order does not matter (a set).  Caller frees. */
char *topoml__names_format(const char *const *names, int n, bool sort);

/*
 * What the host lists of one file (or one command line) may expand to:
 * "n[1-65536]" is 10 bytes for 64k names, so a bound on the input alone
 * bounds nothing.  Real sites stay far below (100k nodes, short names).
 */
#define TOPOML_HOSTLIST_MAX_HOSTS (1L << 18)
#define TOPOML_HOSTLIST_MAX_BYTES (16L << 20)
/* Bracket groups in one host name ("rack[1-4]-n[1-8]" has 2). */
#define TOPOML_HOSTLIST_MAX_GROUPS 16
struct topoml_hl_budget {
	long hosts;		/* host names left */
	long bytes;		/* bytes of host names left */
};
/* TOPOML_HOSTLIST_MAX_HOSTS; fuzz targets lower it to stay fast. */
extern long topoml__hostlist_max_hosts;
void topoml__hl_budget_init(struct topoml_hl_budget *b);

/* Slurm ranges one host name may expand to (see hostlist.c). */
#define TOPOML_HOSTLIST_MAX_TOKEN_RANGES 16384

/*
 * Call fn for every host of a Slurm host list string, in order, as
 * slurm_hostlist_create() and slurm_hostlist_shift() would give them, but
 * linear in the string, never leaking and never reaching libslurm's
 * fatal(); see hostlist.c.  b (NULL: a fresh budget) is charged.  -1 when
 * the string is refused (nothing called), with errno EINVAL (not a host
 * list Slurm accepts), EDOM (one Slurm would take only partly, dropping
 * hosts without a word), E2BIG (over the budget, TOPOML_HOSTLIST_MAX_GROUPS
 * or TOPOML_HOSTLIST_MAX_TOKEN_RANGES), ERANGE (a number of ULONG_MAX or
 * more, on which Slurm loops), EILSEQ (a line break or other white space
 * but blank and tab in a name: Slurm may merge such a name with the one
 * before) or ENOMEM; else 0 or the first non-zero value fn returned.
 */
int topoml__hostlist_foreach(const char *hostlist, struct topoml_hl_budget *b,
			    int (*fn)(const char *host, void *arg), void *arg);
/* "" or " (why)" for an errno of topoml__hostlist_foreach(), for messages. */
const char *topoml__hostlist_why(int e);

/* ---- name -> index maps (hash.c) ---------------------------------- */

/* FNV-1a of a string: the hash of every name map of the engine. */
uint32_t topoml__hash(const char *s);
/* Open addressing; keys are not copied (they must outlive the map). */
struct topoml_name_index *topoml__index_new(void);
void topoml__index_free(struct topoml_name_index *ix);
/* The value put for name, or -1 (also for a NULL map or name). */
int topoml__index_find(const struct topoml_name_index *ix,
		      const char *name);
/* 0, or -1 when out of memory (the map unchanged). */
int topoml__index_put(struct topoml_name_index *ix, const char *key,
		     int val);

#endif
