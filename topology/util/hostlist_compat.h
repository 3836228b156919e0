/*
 * libslurm's host-list handle across releases: Slurm 23.02 made hostlist_t
 * the struct itself (functions take hostlist_t *); before, hostlist_t was
 * the pointer.  The ABI is the same pointer, so one libtopoml binary works
 * with every release's libslurm; this keeps the source building against
 * any release's headers.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_HOSTLIST_COMPAT_H
#define TOPOML_HOSTLIST_COMPAT_H

#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
typedef hostlist_t *topoml_hl_t;
#else
typedef hostlist_t topoml_hl_t;
#endif

/* The bracketed string of a host list in malloc()ed memory, or NULL
 * (util/hostlist.c). */
char *topoml__hostlist_ranged(topoml_hl_t hl);

#endif
