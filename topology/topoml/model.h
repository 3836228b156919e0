/*
 * libtopoml's public API (topoml.h), the model: a fat-tree, dragonfly,
 * torus or block topology, its queries and node sets.  Node sets are
 * hwloc bitmaps indexed by dense node index (0 .. nnodes-1); host name
 * ranges go through the public slurm_hostlist_* API.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_MODEL_H
#define TOPOML_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <hwloc.h>

#include "topoml/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

enum topoml_family {
	TOPOML_FAT_TREE = 1,
	TOPOML_DRAGONFLY,
	TOPOML_TORUS,
};

/* How dragonfly groups are wired to each other when not listed. */
enum topoml_df_arrangement {
	TOPOML_DF_EXPLICIT = 0,	/* global links listed one by one */
	TOPOML_DF_ALL_TO_ALL,	/* every group pair has >= 1 direct link */
	TOPOML_DF_ABSOLUTE,
	TOPOML_DF_RELATIVE,
};

/*
 * A switch of a fat-tree, or a router of a dragonfly.  Level 0 switches
 * carry nodes (leaves / routers); parents sit one or more levels higher.
 */
struct topoml_switch {
	char *name;
	int level;		/* 0 = leaf; root(s) highest */
	int nparents;
	int *parents;		/* switch indices */
	int nchildren;
	int *children;		/* switch indices */
	int nnodes;
	int *nodes;		/* node indices attached directly */
	hwloc_bitmap_t desc;	/* every node below this switch */
	double link_speed;	/* as given in the file, 0 = unknown */
	int group;		/* dragonfly group, -1 otherwise */
	int line;		/* line in the site file, 0 if generated */
};

struct topoml_node {
	char *name;
	int leaf;		/* leaf switch / router index, -1 on a torus */
	int group;		/* dragonfly group, -1 otherwise */
	int coord[3];		/* torus coordinate, -1 otherwise */
	int line;		/* line in the site file, 0 if generated */
	int nvl;		/* NVLink domain (block), -1 none */
};

struct topoml_group {
	char *name;
	int nrouters;
	int *routers;		/* switch indices */
	hwloc_bitmap_t desc;	/* every node of the group */
	int line;
};

struct topoml_name_index;	/* name -> index hash, private */
struct topoml_cache;		/* query tables, private */

typedef struct topoml_topo {
	enum topoml_family family;
	char *source;		/* file it came from, or "generated" */

	int nnodes;
	struct topoml_node *nodes;
	int nswitches;
	struct topoml_switch *switches;
	int nlevels;		/* fat-tree: highest level + 1 */

	/* dragonfly */
	int ngroups;
	struct topoml_group *groups;
	enum topoml_df_arrangement df_arrangement;
	int *global_links;	/* ngroups x ngroups link counts */

	/* torus / mesh */
	int dims[3];
	bool wrap[3];
	int *coord_node;	/* dims[0]*dims[1]*dims[2], node or -1 */

	/*
	 * NVLink domains (issue 14): nodes on one multi-node NVLink fabric,
	 * e.g. a GB200 NVL72 rack.  A block topology.conf (Slurm 24.05+
	 * topology/block) makes each block one; JSON may add them to a
	 * fat-tree or dragonfly.  nnvl 0: none.
	 */
	int nnvl;
	char **nvl_names;
	int *nvl_lines;
	/*
	 * Block topology ("block" family, modelled as a tree): switches
	 * 0 .. nblocks-1 are Slurm's base blocks (leaves, in file order,
	 * empty ones included), the upper switches its aggregated blocks.
	 * block_base: base block size in nodes; bit k of block_levels: a
	 * BlockSizes level of 2^k base blocks.  nblocks 0: not a block file.
	 */
	int nblocks;
	int block_base;
	unsigned block_levels;

	struct topoml_name_index *node_index;
	struct topoml_name_index *switch_index;
	struct topoml_cache *cache;	/* private: derived by finalize */
	/* Slurm 26.05 torus3d shapes for --policy slurm-torus3d, or NULL;
	 * not owned (topoml_torus3d_free). */
	const struct topoml_torus3d *torus3d;
	/* topoml proposes only torus3d's boxes (slurmctld runs
	 * topology/torus3d, which refuses any other) */
	bool torus3d_only;
} topoml_topo_t;

/* ---- a model's life ----------------------------------------------- */

/* Loaders (topoml_load() ...) make one; building one switch by switch:
 * topoml/build.h. */
void topoml_free(topoml_topo_t *t);
/* "block" for a block topology, else the family's name. */
const char *topoml_topo_kind(const topoml_topo_t *t);

/* ---- queries ------------------------------------------------------- */

int topoml_node_by_name(const topoml_topo_t *t, const char *name);
int topoml_switch_by_name(const topoml_topo_t *t, const char *name);
/*
 * Level of the lowest switch common to both nodes: fat-tree 0 = same leaf;
 * dragonfly 0 = same router, 1 = same group, 2 = different groups;
 * -1 for the same node; on a torus the hop distance.  Fat-tree nodes in
 * parts with no common switch (Slurm accepts such files) get nlevels, as if
 * a virtual root joined the roots.
 */
int topoml_common_level(const topoml_topo_t *t, int a, int b);
/*
 * Links crossed from node a to node b: fat-tree 2 * (common level + 1);
 * dragonfly 2 same router, 3 same group, 5 across groups (one global hop);
 * torus Manhattan distance with wrap-around; 0 for a == b.
 */
int topoml_hops(const topoml_topo_t *t, int a, int b);
/* Global (inter-group) links crossed: dragonfly only, else 0. */
int topoml_global_hops(const topoml_topo_t *t, int a, int b);
int topoml_torus_distance(const topoml_topo_t *t, const int a[3],
			  const int b[3]);

/* Node set <-> Slurm host list string ("n[1-4,7]"); uses slurm_hostlist_*.
 * Unknown names are reported in err (may be NULL) and skipped; a malformed
 * host list gives NULL.  The formatters return malloc'd strings. */
hwloc_bitmap_t topoml_nodeset_parse(const topoml_topo_t *t,
				    const char *hostlist,
				    topoml_errors_t *err);
char *topoml_nodeset_format(const topoml_topo_t *t, hwloc_const_bitmap_t set);
char *topoml_nodes_format(const topoml_topo_t *t, const int *nodes, int n);

const char *topoml_family_name(enum topoml_family f);
/* One line: family, nodes, switches/groups, levels or dimensions. */
void topoml_summary(const topoml_topo_t *t, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_MODEL_H */
