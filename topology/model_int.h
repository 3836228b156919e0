/*
 * Internal helpers shared by the model, generators, JSON loader and writers.
 * Not part of the public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_MODEL_INT_H
#define TOPOML_MODEL_INT_H

#include "topoml.h"

/*
 * Grow *arr (element size sz) so that index n fits, doubling at powers of
 * two: no capacity field needed.  Returns 0, or -1 when out of memory.
 */
int topoml_grow(void **arr, int n, size_t sz);

/* "FILE:LINE" or "FILE" when line is 0, into buf. */
const char *topoml_where(const topoml_topo_t *t, int line, char *buf,
			 size_t len);

/* Slurm's hostlist parser refuses ranges of more than 64k hosts. */
#define TOPOML_HOSTLIST_MAX_RANGE 65536

/* Names as a compact Slurm host list, in chunks Slurm can read back;
 * sort = order does not matter (a set).  Caller frees. */
char *topoml_names_format(const char *const *names, int n, bool sort);

/*
 * Call fn for every host of a Slurm host list string, in order.  -1 when
 * the string is not a valid host list (nothing called), else 0 or the
 * first non-zero value fn returned.
 */
int topoml_hostlist_foreach(const char *hostlist,
			    int (*fn)(const char *host, void *arg), void *arg);

#endif
