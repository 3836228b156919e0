/*
 * libtopoml's public API (topoml.h), tori: Slurm 26.05's topology/torus3d
 * boxes, and the exact-box tests of a torus placement.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_TORUS_H
#define TOPOML_TORUS_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Slurm 26.05's topology/torus3d as the admin writes it in topology.yaml
 * (torus3d: toruses: name, dims, nodes or regions, placements: dims,
 * anchor_seed, anchor_spacing).  One torus.  place/torus/place_torus3d.c.
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
/* Do the n nodes fill their wrap-aware bounding box exactly (model/geom.c)? */
bool topoml_torus_is_box(const topoml_topo_t *t, const int *nodes, int n);
/*
 * LocalityWait's torus test (model/geom.c): should this placement of n nodes
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

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_TORUS_H */
