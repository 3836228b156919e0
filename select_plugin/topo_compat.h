/*
 * topology/topoml: what differs between the Slurm releases it builds for,
 * beside select/topoml's select_compat.h (whose version macros and list
 * types it uses).  topology_topoml.c reads the same on each.
 *
 * Slurm's topology-plugin API, read in src/interfaces/topology.c of each
 * release (the ops table is private there, so it is copied here):
 *   24.11: 14 symbols; topology_p_topology_{free,get,pack,print,unpack}.
 *   25.11: one plugin instance per topology_ctx_t (topology.yaml may list
 *     several; without it slurmctld makes one from topology.conf): the ops
 *     take the instance's plugin_ctx or the context; topology_p_topoinfo_*
 *     (print gains a unit), jobinfo_*, add_rm_node, destroy_config,
 *     get_topology_str, and the data symbols plugin_type and
 *     supports_exclusive_topo.
 *   26.05: eval_node, allow_one_node, get_rank.
 * 24.05 and 25.05 were not read: the build stops there.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_TOPO_COMPAT_H
#define TOPOML_TOPO_COMPAT_H

#include "select_compat.h"

#include "src/common/hostlist.h"
#include "src/common/pack.h"
#include "src/interfaces/topology.h"

#if !TOPOML_SLURM_AT_LEAST(24, 11) || \
	(TOPOML_SLURM_AT_LEAST(25, 5) && !TOPOML_SLURM_AT_LEAST(25, 11))
#error "topology/topoml builds for Slurm 24.11 and 25.11 or later"
#endif

/* 25.11+: instances (topology_ctx_t), topoinfo_* names. */
#define TOPOML_TOPO_CTX TOPOML_SLURM_AT_LEAST(25, 11)
/* 26.05+: eval_node, allow_one_node, get_rank. */
#define TOPOML_TOPO_RANK TOPOML_SLURM_AT_LEAST(26, 5)

/* Slurm's topology plugins use 100-104; 163 is select/topoml's too (the
 * two kinds of plugin never share a table). */
#define TOPOML_TOPO_PLUGIN_ID 163

/* The plugin Slurm runs for a network it models itself: what every
 * request topology/topoml does not place falls back to. */
#if TOPOML_TOPO_CTX
#define TOPOML_TOPO_FLAT "topology/flat"
#else
#define TOPOML_TOPO_FLAT "topology/default"
#endif

/* The wrapped plugin's entry points: a copy of slurm_topo_ops_t of
 * src/interfaces/topology.c, in the order of topoml_topo_syms. */
#if TOPOML_TOPO_CTX
typedef struct {
	uint32_t *plugin_id;
	char *plugin_type;
	bool *supports_exclusive_topo;
	int (*add_rm_node)(node_record_t *node_ptr, char *addr,
			   topology_ctx_t *tctx);
#if TOPOML_TOPO_RANK
	bool (*allow_one_node)(void *tctx);
#endif
	int (*build_config)(topology_ctx_t *tctx);
	int (*destroy_config)(topology_ctx_t *tctx);
#if TOPOML_TOPO_RANK
	int (*eval_node)(topology_eval_t *topo_eval, int node_inx);
#endif
	int (*eval_nodes)(topology_eval_t *topo_eval);
	int (*whole_topo)(bitstr_t *node_mask, void *tctx);
	bitstr_t *(*get_bitmap)(char *name, void *tctx);
	bool (*node_ranking)(topology_ctx_t *tctx);
	int (*get_node_addr)(char *node_name, char **addr, char **pattern,
			     void *tctx);
	int (*split_hostlist)(hostlist_t *hl, hostlist_t ***sp_hl,
			      int *count, uint16_t tree_width, void *tctx);
	int (*get)(topology_data_t type, void *data, void *tctx);
	int (*topoinfo_free)(void *topoinfo_ptr);
	int (*topoinfo_pack)(void *topoinfo_ptr, buf_t *buffer,
			     uint16_t protocol_version);
	int (*topoinfo_print)(void *topoinfo_ptr, char *nodes_list,
			      char *unit, char **out);
	int (*topoinfo_unpack)(void **topoinfo_pptr, buf_t *buffer,
			       uint16_t protocol_version);
	void (*jobinfo_free)(void *topo_jobinfo);
	void (*jobinfo_pack)(void *topo_jobinfo, buf_t *buffer,
			     uint16_t protocol_version);
	int (*jobinfo_unpack)(void **topo_jobinfo, buf_t *buffer,
			      uint16_t protocol_version);
	int (*jobinfo_get)(topology_jobinfo_type_t type, void *topo_jobinfo,
			   void *data);
	uint32_t (*get_fragmentation)(bitstr_t *node_mask, void *tctx);
	void (*get_topology_str)(node_record_t *node_ptr,
				 char **topology_str_ptr,
				 topology_ctx_t *tctx);
#if TOPOML_TOPO_RANK
	int (*get_rank)(bitstr_t *node_bitmap, uint32_t **node_rank,
			uint32_t *size, void *tctx);
#endif
} topoml_topo_ops_t;
#else /* 24.11 */
typedef struct {
	uint32_t *plugin_id;
	int (*build_config)(void);
	int (*eval_nodes)(topology_eval_t *topo_eval);
	int (*whole_topo)(bitstr_t *node_mask);
	bitstr_t *(*get_bitmap)(char *name);
	bool (*node_ranking)(void);
	int (*get_node_addr)(char *node_name, char **addr, char **pattern);
	int (*split_hostlist)(hostlist_t *hl, hostlist_t ***sp_hl,
			      int *count, uint16_t tree_width);
	int (*topoinfo_free)(void *topoinfo_ptr);
	int (*get)(topology_data_t type, void *data);
	int (*topoinfo_pack)(void *topoinfo_ptr, buf_t *buffer,
			     uint16_t protocol_version);
	int (*topoinfo_print)(void *topoinfo_ptr, char *nodes_list,
			      char **out);
	int (*topoinfo_unpack)(void **topoinfo_pptr, buf_t *buffer,
			       uint16_t protocol_version);
	uint32_t (*get_fragmentation)(bitstr_t *node_mask);
} topoml_topo_ops_t;
#endif

extern const char *topoml_topo_syms[];
extern const size_t topoml_topo_syms_size;

#endif
