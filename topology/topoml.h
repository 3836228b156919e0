/*
 * libtopoml: the network topology model, site topology files and the
 * placement engine shared by select/topoml, the topoml CLI and the simulator.
 * This is the core the plugins link; building a model switch by switch is
 * in topoml_build.h, the simulator, trace readers, Slurm's baselines,
 * writers and generators (libtopoml_sim, CLI and tests only) in sim.h.
 *
 * Pure C.  No Slurm internal headers: host name ranges go through the public
 * slurm_hostlist_* API of <slurm/slurm.h>.  Node sets are hwloc bitmaps
 * indexed by dense node index (0 .. nnodes-1), one implementation everywhere.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_H
#define TOPOML_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <hwloc.h>

/*
 * The --ml-* options between the plugins, their vocabulary (the hint, the
 * parallel group sizes) and parsers: topoml_contract.h, part of this API.
 */
#include "topoml_contract.h"

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

/* ---- a model's life ----------------------------------------------- */

/* Loaders (topoml_load() ...) make one; building one switch by switch:
 * topoml_build.h. */
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

/* ---- site files ---------------------------------------------------- */

enum topoml_format {
	TOPOML_FMT_AUTO = 0,	/* by content: JSON, ibnetdiscover, conf */
	TOPOML_FMT_CONF,	/* Slurm topology.conf */
	TOPOML_FMT_JSON,
	TOPOML_FMT_IBNET,	/* ibnetdiscover output */
};

/* NULL on failure, with every problem in err. */
topoml_topo_t *topoml_load(const char *path, enum topoml_format fmt,
			   topoml_errors_t *err);
topoml_topo_t *topoml_load_conf(const char *path, topoml_errors_t *err);
topoml_topo_t *topoml_load_json(const char *path, topoml_errors_t *err);
topoml_topo_t *topoml_load_ibnet(const char *path, topoml_errors_t *err);

/* Writers (topoml_write_conf, topoml_write_json) and generators
 * (topoml_gen_*): libtopoml_sim, sim.h. */
const char *topoml_family_name(enum topoml_family f);
/* One line: family, nodes, switches/groups, levels or dimensions. */
void topoml_summary(const topoml_topo_t *t, char *buf, size_t len);

/* ---- placement (issue "Placement engine") -------------------------- */

/*
 * The policies the core places: topoml's engine and two of Slurm's
 * algorithms it shares its code with.  The ids between them (1, 2, 5, 6)
 * are the Slurm baselines of libtopoml_sim (sim.h), which
 * topoml_sim_register_baselines() hands topoml_place(), names included.
 */
enum topoml_policy {
	TOPOML_POLICY_TOPOML = 0,	/* the engine */
	TOPOML_POLICY_SLURM_HILBERT = 3,	/* topology/3d_torus + best fit */
	TOPOML_POLICY_LINEAR = 4,	/* plain linear best fit */
};

struct topoml_place_req {
	int nnodes;
	hwloc_const_bitmap_t avail;	/* nodes the job may use now */
	hwloc_const_bitmap_t required;	/* must be included, or NULL */
	enum topoml_hint hint;
	/* job id using each node (0 = idle), or NULL: for isolate/sharing */
	const uint32_t *owner;
	int max_leaves;			/* --switches=N, 0 = no limit */
	bool df_spread_alltoall;	/* site choice for dragonfly */
	/* site choice for tori (TorusPlacement=curve): every job along
	 * Slurm's Hilbert curve, power-of-two sizes by buddy best fit over
	 * the curve's aligned windows (place_linear.c) */
	bool torus_curve;
	/* topoml_place: 0 = best, 1 = next best, ... (topoml_place_ranked
	 * gives them all in one call and ignores it) */
	int attempt;
	/* the caller reads no score (select/topoml): skip the scoring */
	bool unscored;
	/*
	 * Slurm's scheduling weight per node (Weight= and the penalty of
	 * powered-down nodes), lower used first; only the Slurm baselines
	 * read it.  NULL = all equal.
	 */
	const uint64_t *weight;
	/*
	 * Jobs that share nodes (issue 18).  units > 0: the job needs units
	 * (CPUs, or GPUs) in all on at least nnodes nodes, not whole nodes;
	 * free_units[i] is what node i still offers (0: the node cannot
	 * take the job).  partial: nodes of avail that other jobs already
	 * use in part (NULL = none).  Such a job goes onto partly used
	 * nodes first (best fit), then onto the fewest and most used
	 * leaves, keeping whole idle nodes and leaves for jobs that need
	 * them.  units 0: whole nodes, as before.
	 */
	uint32_t units;
	const uint32_t *free_units;
	hwloc_const_bitmap_t partial;
};

struct topoml_score {
	double ring_cost;		/* sum of hops, ring closed */
	double ring_lower_bound;
	int span;			/* leaves, groups, or box volume */
	int span_lower_bound;
	int global_hops;		/* dragonfly ring global-link hops */
	double mean_pair_hops;		/* mean over all rank pairs */
	int largest_free_after;		/* fragmentation: see cost.c */
	/* The same bounds for the nodes of avail only: what the best
	 * placement possible now reaches (= the above without avail). */
	double ring_lower_bound_free;
	int span_lower_bound_free;
	/* Leaves (routers) that were whole and idle (every node in avail,
	 * none partial) and that the placement uses only in part: they no
	 * longer hold a job of a whole leaf.  Set by topoml_place. */
	int idle_leaves_broken;
	/* NVLink domains (blocks) used, their lower bound for the job's
	 * size, and ring steps that cross from one domain to another (or
	 * to a node of none); 0 without domains. */
	int nvl_span;
	int nvl_span_lower_bound;
	int nvl_crossings;
};

struct topoml_placement {
	int n;
	int *nodes;			/* ring order */
	struct topoml_score score;
};

/* 0 on success; -1 with the reason in why when the job cannot be placed. */
int topoml_place(const topoml_topo_t *t, enum topoml_policy policy,
		 const struct topoml_place_req *req,
		 struct topoml_placement *out, char *why, size_t whylen);
/*
 * Up to k distinct placements, best first (out[0] is topoml_place's
 * choice, out[i] its attempt i), from one pass over the engine's
 * candidates.  Returns how many were filled (out[n..k) zeroed; clear
 * each), or -1 with the reason in why when the job cannot be placed.
 */
int topoml_place_ranked(const topoml_topo_t *t, enum topoml_policy policy,
			const struct topoml_place_req *req, int k,
			struct topoml_placement *out, char *why,
			size_t whylen);
void topoml_placement_clear(struct topoml_placement *p);
/* Idle leaves broken by nodes (see struct topoml_score); partial may be
 * NULL. */
int topoml_idle_leaves_broken(const topoml_topo_t *t,
			      hwloc_const_bitmap_t avail,
			      hwloc_const_bitmap_t partial, const int *nodes,
			      int n);
/* Fill p->score for p->nodes (in their order) against avail. */
void topoml_score(const topoml_topo_t *t, hwloc_const_bitmap_t avail,
		  struct topoml_placement *p);
/* Fragmentation of a free set: the largest job placeable at the best level
 * (one leaf / subtree / group / box) on the nodes of avail. */
int topoml_largest_free(const topoml_topo_t *t, hwloc_const_bitmap_t avail);
/* Reorder nodes into the engine's ring order (used by rank ordering). */
void topoml_ring_order(const topoml_topo_t *t, int *nodes, int n);

const char *topoml_hint_name(enum topoml_hint h);
int topoml_hint_parse(const char *s, enum topoml_hint *h);

/* Names of the core's policies, and of the baselines once registered
 * ("unknown", -1 otherwise). */
const char *topoml_policy_name(enum topoml_policy p);
int topoml_policy_parse(const char *s, enum topoml_policy *p);

/*
 * Slurm 26.05's topology/torus3d as the admin writes it in topology.yaml
 * (torus3d: toruses: name, dims, nodes or regions, placements: dims,
 * anchor_seed, anchor_spacing).  One torus.  place_torus3d.c.
 */
struct topoml_t3d_shape {
	int dims[3];
	int seed[3];			/* anchor_seed, default 0 */
	int spacing[3];			/* anchor_spacing, default dims */
	int size;			/* dims[0] * dims[1] * dims[2] */
	int line;			/* in topology.yaml, 0 if generated */
};

struct topoml_torus3d {
	char *source;			/* topology.yaml, or "generated" */
	char *name;
	int dims[3];
	char **cell_name;		/* x-fastest cells: node name or NULL */
	int nshapes;
	struct topoml_t3d_shape *shapes;	/* by size, stable */
};

/* Read the torus3d section of a topology.yaml; NULL with "FILE:LINE: ..."
 * errors in err. */
struct topoml_torus3d *topoml_torus3d_load(const char *path,
					   topoml_errors_t *err);
/* The torus it describes (wrap in every dimension, its node names). */
topoml_topo_t *topoml_torus3d_topology(const struct topoml_torus3d *c,
				       topoml_errors_t *err);
/* Shapes for every size a box of t has: the most cube-like box of each
 * size, every orientation, anchors at every cell (spacing 1). */
struct topoml_torus3d *topoml_torus3d_every_size(const topoml_topo_t *t);
/* Does torus3d list a shape of n nodes (else Slurm refuses the job)? */
bool topoml_torus3d_size_ok(const struct topoml_torus3d *c, int n);
/* Does the torus have a box (a x b x c within its dims) of n nodes? */
bool topoml_torus_box_size(const topoml_topo_t *t, int n);
/*
 * When a box of n nodes is all free at the earliest, each of `nodes'
 * being free from free_at[node] on (0 or less: now; INT64_MAX: never):
 * that time (0: now), with `then' set to the nodes free by it, or -1 (no
 * such time, not a torus, a size no box has, out of memory).
 */
int64_t topoml_torus_box_free_by(const topoml_topo_t *t,
				 hwloc_const_bitmap_t nodes,
				 const int64_t *free_at, int n,
				 hwloc_bitmap_t then);
/* Do the n nodes fill their wrap-aware bounding box exactly (geom.c)? */
bool topoml_torus_is_box(const topoml_topo_t *t, const int *nodes, int n);
/*
 * LocalityWait's torus test (geom.c): should this placement of n nodes
 * wait for an exact box?  Its size has one, and its wrap-aware bounding box
 * holds more than max_span x n nodes (LocalityWaitSpan=; 1 or less: any
 * placement that is no box waits).
 */
bool topoml_torus_wants_box(const topoml_topo_t *t, const int *nodes, int n,
			    double max_span);
void topoml_torus3d_free(struct topoml_torus3d *c);
/*
 * Bind topoml's engine on torus t to c's boxes (t->torus3d = c, not owned;
 * t->torus3d_only), as when slurmctld runs topology/torus3d: same dims and
 * each cell the same node.  0, or -1 with the reason in why.
 */
int topoml_torus3d_bind(topoml_topo_t *t, const struct topoml_torus3d *c,
			char *why, size_t whylen);

/* ---- site configuration (topoml.conf) ---------------------------- */

/*
 * topoml.conf sits beside slurm.conf and tells select/topoml which topology
 * file to load and how to place jobs.  Pure C (no Slurm headers) so the CLI
 * can check a site's file too.  See topoml.conf(5).
 */
struct topoml_part_conf {
	char *name;			/* partition */
	bool has_hint;
	enum topoml_hint hint;
	int placement;			/* -1 = inherit, 0 = off, 1 = on */
	int locality_wait;		/* LocalityWait= seconds, -1 inherit */
	int line;
};

struct topoml_siteconf {
	char *path;			/* the topoml.conf read, or NULL */
	char *topology_file;		/* absolute path, or NULL = auto */
	enum topoml_format topology_format;
	int family;			/* enum topoml_family, 0 = auto */
	enum topoml_hint default_hint;
	bool placement;			/* false: plain cons_tres everywhere */
	bool df_spread_alltoall;	/* DragonflySpread=alltoall */
	int debug;			/* 0 quiet, 1 placements, 2 verbose */
	bool torus_curve;		/* TorusPlacement=curve */
	/*
	 * LocalityWait= seconds for each family's locality criterion (an
	 * exact torus box, --ml-parallel locality), 0 = never; set apart by
	 * the deprecated TorusBoxWait= and HybridWait=.  LocalityWaitSpan=
	 * (TorusBoxWaitSpan=), default 1.  *_key: the key that set each,
	 * for the logs.
	 */
	int torus_box_wait;
	double torus_box_wait_span;
	int hybrid_wait;
	const char *box_wait_key, *hybrid_wait_key, *span_key;
	unsigned wait_keys;		/* TOPOML_WAITKEY_* seen */
	/* HybridWeights=: per traffic kind (enum topoml_kind, below), the
	 * defaults of topoml_kind_weights_default where not set */
	double hybrid_weights[5];
	int nparts;
	struct topoml_part_conf *parts;
};

/* The wait keys a topoml.conf set (siteconf.wait_keys). */
#define TOPOML_WAITKEY_LOCALITY		0x01	/* LocalityWait= */
#define TOPOML_WAITKEY_SPAN		0x02	/* LocalityWaitSpan= */
#define TOPOML_WAITKEY_TORUSBOX		0x04	/* TorusBoxWait= (old) */
#define TOPOML_WAITKEY_HYBRID		0x08	/* HybridWait= (old) */
#define TOPOML_WAITKEY_TORUSSPAN	0x10	/* TorusBoxWaitSpan= (old) */

/* Defaults: auto topology file and family, allreduce, placement on. */
void topoml_siteconf_init(struct topoml_siteconf *c);
/* TorusBoxWaitSpan's range, and its parser (siteconf.c): 0, or -1 (not a
 * number from 1 to TOPOML_BOX_WAIT_SPAN_MAX) */
#define TOPOML_BOX_WAIT_SPAN_MAX 64
int topoml_box_wait_span_parse(const char *s, double *v);
/* TorusPlacement=boxes|curve (siteconf.c; the CLI's --torus-placement
 * too): 0 with *curve set, or -1 (neither word); and the word for it. */
int topoml_torus_placement_parse(const char *s, bool *curve);
const char *topoml_torus_placement_name(bool curve);
/* A setting that does nothing as set (LocalityWaitSpan while LocalityWait
 * is 0, a box wait with TorusPlacement=curve, ...), said for the admin;
 * NULL when there is none (topoml_siteconf_notes' first such). */
const char *topoml_siteconf_inert(const struct topoml_siteconf *c);
/*
 * Every note for the admin on c, up to max lines written to out (the
 * count is returned): the deprecated names it uses, with the new one,
 * then each setting that does nothing as set (topoml_siteconf_inert's
 * first).
 */
#define TOPOML_NOTE_LEN 192
int topoml_siteconf_notes(const struct topoml_siteconf *c,
			  char (*out)[TOPOML_NOTE_LEN], int max);
/*
 * Read path into c (initialised here).  Relative TopologyFile paths are
 * taken from the file's directory.  0 on success, -1 with every problem in
 * err as "FILE:LINE:COL: what is wrong".
 */
int topoml_siteconf_read(const char *path, struct topoml_siteconf *c,
			 topoml_errors_t *err);
void topoml_siteconf_clear(struct topoml_siteconf *c);
/*
 * The topology file to use: TopologyFile, else topoml.json, then
 * topology.conf in dir (the directory of slurm.conf).  Malloc'd, NULL if none.
 */
char *topoml_siteconf_topology_path(const struct topoml_siteconf *c,
				    const char *dir);
/* Load the topology file and check Family=; NULL with errors in err. */
topoml_topo_t *topoml_siteconf_load_topology(const struct topoml_siteconf *c,
					     const char *dir,
					     topoml_errors_t *err);
/* Hint and placement switch for a job in partition part (may be NULL). */
enum topoml_hint topoml_siteconf_hint(const struct topoml_siteconf *c,
				      const char *part);
bool topoml_siteconf_placement(const struct topoml_siteconf *c,
			       const char *part);
int topoml_family_parse(const char *s, int *family);

/* ---- hybrid parallelism (issue 14 items 1, 2: parallel.c) ---------- */

/* Syntax only: sizes 1..65536, each key once.  0, or -1 with err. */
int topoml_parallel_parse(const char *s, struct topoml_parallel *p,
			  char *err, size_t errlen);
/* Against the task count: the product divides it, dp is the rest (an
 * explicit dp must match), ep divides cp * dp.  0, or -1 with err. */
int topoml_parallel_resolve(struct topoml_parallel *p, int ntasks,
			    char *err, size_t errlen);
/* "tp=8,pp=2,dp=4,ep=1,cp=1" */
void topoml_parallel_format(const struct topoml_parallel *p, char *buf,
			    size_t len);
/* Coordinates of a rank (any pointer may be NULL). */
void topoml_parallel_coords(const struct topoml_parallel *p, int rank,
			    int *tp, int *cp, int *dp, int *pp);
/* The rank of coordinates: the inverse of topoml_parallel_coords. */
int topoml_parallel_rank(const struct topoml_parallel *p, int tp, int cp,
			 int dp, int pp);

/*
 * Cost of one training step by traffic kind (cost_hybrid.c): TP and CP
 * ring all-reduce within their groups, EP all-to-all, DP ring all-reduce,
 * PP point-to-point between neighbouring stages.  Ranks sit on nodes in
 * ring order, tasks_per_node each (rank r on nodes[r / tasks_per_node]).
 */
enum topoml_kind {
	TOPOML_KIND_TP = 0, TOPOML_KIND_CP, TOPOML_KIND_EP, TOPOML_KIND_DP,
	TOPOML_KIND_PP, TOPOML_KIND_COUNT
};

struct topoml_kind_cost {
	long steps;		/* transfers between two ranks, per step */
	long off_node;		/* of those: between nodes */
	long cross_leaf;	/* between leaves / routers */
	long cross_top;		/* through the top level (fat tree) or
				 * between dragonfly groups */
	long cross_nvl;		/* between NVLink domains (or to none) */
	long hops;		/* links crossed, summed */
};

struct topoml_hybrid_cost {
	struct topoml_kind_cost kind[TOPOML_KIND_COUNT];
	double weighted;	/* sum of weight[kind] * hops[kind] */
};

_Static_assert(sizeof(((struct topoml_siteconf *)0)->hybrid_weights) ==
	       TOPOML_KIND_COUNT * sizeof(double), "one weight per kind");

/* Relative traffic per kind; the defaults (tp=16,cp=4,ep=4,dp=1,pp=2). */
void topoml_kind_weights_default(double w[TOPOML_KIND_COUNT]);
/* "tp=16,cp=4,ep=4,dp=1,pp=2": every kind, as the parser reads it back. */
void topoml_kind_weights_format(const double w[TOPOML_KIND_COUNT], char *buf,
				size_t len);
/* "tp=16,dp=1": the named weights (>= 0) replace those in w. */
int topoml_kind_weights_parse(const char *s, double w[TOPOML_KIND_COUNT],
			      char *err, size_t errlen);
const char *topoml_kind_name(enum topoml_kind k);
/* Tensor groups whose ranks are not all in one NVLink domain (0 without
 * domains). */
long topoml_hybrid_tp_split(const topoml_topo_t *t, const int *nodes, int n,
			    int tasks_per_node,
			    const struct topoml_parallel *p);
/*
 * The engine's placement of a hybrid job (place_hybrid.c; p resolved for
 * req->nnodes * tasks_per_node): of the engine's best candidates
 * (topoml_place_ranked), each with the job's count in every NVLink domain
 * evened out to whole tensor groups where free nodes allow, and one
 * built for the pipeline stages, the first by topoml_hybrid_rank; nodes
 * in the order its ranks take (topoml_hybrid_order), scored; its cost in
 * *cost (may be NULL).
 */
/*
 * The same choice over the k candidates of topoml_place_ranked: cand[0]
 * becomes the best, the rest follow by split tensor groups, data-parallel
 * transfers through the top level, weighted cost, then the engine's rank.
 * Each candidate comes back evened out (its nodes may differ) and in the
 * order its ranks should take: the ring, or pipeline stages kept inside
 * top-level parts (topoml_hybrid_order).  cand[k - 1] may come back as a
 * different placement, built for the stages, its old nodes freed; the
 * caller owns and clears cand[0..k) as before.  Deterministic.  0, or -1
 * out of memory (cand unchanged).
 */
int topoml_hybrid_rank(const topoml_topo_t *t,
		       const struct topoml_place_req *req,
		       const struct topoml_parallel *p, int tasks_per_node,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_placement *cand, int k);
int topoml_place_hybrid(const topoml_topo_t *t,
			const struct topoml_place_req *req,
			const struct topoml_parallel *p, int tasks_per_node,
			const double w[TOPOML_KIND_COUNT],
			struct topoml_placement *out,
			struct topoml_hybrid_cost *cost, char *why,
			size_t whylen);
/*
 * A placed job's nodes in the order topoml_hybrid_rank gives a candidate
 * of exactly these nodes (select/topoml's order=, the simulator's
 * --hybrid figures); the set is unchanged.  0, or -1 (shape not fitting
 * n * tasks_per_node; nodes ring-ordered then).
 */
int topoml_hybrid_order(const topoml_topo_t *t, int *nodes, int n,
			int tasks_per_node, const struct topoml_parallel *p,
			const double w[TOPOML_KIND_COUNT]);
/*
 * The most ranks (nodes x tasks per node) of a job the engine prices by
 * traffic kind on t: 8 per node of the machine (a GPU each), at least
 * 65536 (1024 nodes of 64).  Each pricing pass is linear in the ranks
 * and a placement prices a few candidates, so this bounds what a user's
 * --ntasks-per-node (a 16-bit count) can make slurmctld spend; a larger
 * job keeps the engine's ring (topoml_hybrid_rank leaves it,
 * select/topoml treats it as no hybrid job).
 */
long topoml_hybrid_max_ranks(const topoml_topo_t *t);
/* -1 when nodes * tasks_per_node is not the job's rank count. */
int topoml_hybrid_cost(const topoml_topo_t *t, const int *nodes, int n,
		       int tasks_per_node, const struct topoml_parallel *p,
		       const double w[TOPOML_KIND_COUNT],
		       struct topoml_hybrid_cost *out);

/*
 * What a site's bounded wait for a better hybrid placement (LocalityWait=
 * in topoml.conf, topoml sim --hybrid-wait) looks at: tensor groups split
 * over NVLink domains, and data-parallel transfers per step through the
 * top level (fat-tree core, between dragonfly groups).
 */
struct topoml_hybrid_locality {
	long tp_split;
	long dp_top;
};

/* Of nodes[0..n) in rank order.  0, or -1 (shape not fitting). */
int topoml_hybrid_locality(const topoml_topo_t *t, const int *nodes, int n,
			   int tasks_per_node, const struct topoml_parallel *p,
			   const double w[TOPOML_KIND_COUNT],
			   struct topoml_hybrid_locality *out);
/*
 * Of topoml_place_hybrid's placement of n nodes of this shape on `all`
 * (e.g. a partition's nodes, busy or not): the best the job can wait
 * for.  0, or -1 (no placement there).
 */
int topoml_hybrid_best_locality(const topoml_topo_t *t,
				hwloc_const_bitmap_t all, int n,
				const struct topoml_parallel *p,
				int tasks_per_node,
				const double w[TOPOML_KIND_COUNT],
				struct topoml_hybrid_locality *out);
/* Whether `now' splits more tensor groups or sends more DP traffic
 * through the top than `best': worth waiting for. */
bool topoml_hybrid_falls_short(const struct topoml_hybrid_locality *now,
			       const struct topoml_hybrid_locality *best);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_H */
