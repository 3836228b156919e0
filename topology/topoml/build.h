/*
 * Building a topology model node by node and switch by switch: the
 * loaders (load_*.c), topology.yaml's torus3d reader and the generators
 * (libtopoml_sim) use this; users of the engine load a site file
 * (topoml.h) instead.  Part of the core library, not of its public API.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_BUILD_H
#define TOPOML_BUILD_H

#include "topoml/model.h"

#ifdef __cplusplus
extern "C" {
#endif

topoml_topo_t *topoml_new(enum topoml_family family, const char *source);
/* Return the new index, or -1 (and an error) for a duplicate name. */
int topoml_add_node(topoml_topo_t *t, const char *name, int line,
		    topoml_errors_t *err);
int topoml_add_switch(topoml_topo_t *t, const char *name, int line,
		      topoml_errors_t *err);
void topoml_link_switches(topoml_topo_t *t, int parent, int child);
/* Attach node to leaf/router sw; a node on two leaves is an error. */
int topoml_attach_node(topoml_topo_t *t, int sw, int node,
		       topoml_errors_t *err);
int topoml_add_group(topoml_topo_t *t, const char *name, int line,
		     topoml_errors_t *err);
void topoml_group_add_router(topoml_topo_t *t, int group, int sw);
/* NVLink domain named name: its index (an existing one when the name is
 * known), or -1 with an error. */
int topoml_add_nvl(topoml_topo_t *t, const char *name, int line,
		   topoml_errors_t *err);
/* Put node into domain nvl; a node in two domains is an error. */
int topoml_set_nvl(topoml_topo_t *t, int node, int nvl, int line,
		   topoml_errors_t *err);
/*
 * Compute levels, descendant sets, group membership, torus lookups; check
 * loops, disconnected parts, switches without nodes.  0 on success.
 */
int topoml_finalize(topoml_topo_t *t, topoml_errors_t *err);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_BUILD_H */
