/*
 * topology/topoml: what Slurm's tools show of the engine's model
 * (scontrol show topology) and the engine's fragmentation figure
 * (topology_p_get_fragmentation), topo_show.c.
 *
 * slurmctld makes the listing when a client asks for the topology
 * (topology_p_get, node read lock held) and packs it after the wrapped
 * plugin's record; the client unpacks and prints it, narrowed by the
 * node list and unit it was given.  Include after Slurm's headers and
 * topo_compat.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_TOPO_SHOW_H
#define TOPOML_TOPO_SHOW_H

#include <stdbool.h>
#include <stdint.h>
#include <hwloc.h>

#include "topoml/model.h"

/* Most bytes of text the listing packs; past it, a line says how many
 * units or nodes were left out. */
#define TOPO_SHOW_MAX_BYTES (256 * 1024)

struct topo_show;

/*
 * The listing of model t: per family, fat-tree switches (unless the
 * wrapped plugin lists them: inner_lists), dragonfly groups, torus
 * coordinates, NVLink domains (but of a block file); and the
 * fragmentation of the idle nodes now.  map (Slurm node index -> engine
 * node, map_count entries) finds the idle ones.  NULL when out of memory.
 */
struct topo_show *topo_show_make(const topoml_topo_t *t, bool inner_lists,
				 const int *map, int map_count);
void topo_show_free(struct topo_show *s);
void topo_show_pack(const struct topo_show *s, buf_t *buffer);
/* SLURM_SUCCESS or SLURM_ERROR (*s NULL then). */
int topo_show_unpack(struct topo_show **s, buf_t *buffer);
/*
 * Appends to *out the lines for nodes_list and unit (NULL or "": all;
 * as Slurm's tree and block plugins: a unit's line when it holds every
 * listed node, a torus node's coordinates when it is listed).
 */
void topo_show_print(const struct topo_show *s, const char *nodes_list,
		     const char *unit, char **out);

/*
 * The engine's fragmentation of the nodes of mask (Slurm's node bitmap,
 * the nodes a scheduler may use): the model's nodes that the largest job
 * placed at the best level (its fewest leaves, blocks or groups, one
 * box) on them cannot have, 0 when all are free.  -1: no figure (out of
 * memory).
 */
int64_t topo_show_fragmentation(const topoml_topo_t *t, const int *map,
				int map_count, bitstr_t *mask,
				uint32_t *largest);

#endif
