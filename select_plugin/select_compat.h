/*
 * select/topoml: what differs between the Slurm releases it builds for.
 *
 * select_topoml.c reads the same on every release; everything that changed
 * in Slurm's select API lives here and in select_compat.c, guarded by
 * SLURM_VERSION_NUMBER of the configured source tree.  Two families:
 *
 * - 22.05 to 24.11, the full API: every daemon and client loads every
 *   select_*.so in PluginDir, select_g_init is fatal when two share a
 *   plugin_id, so the wrapper has an id of its own (163).  Its changes:
 *   22.05: src/common/select.h, 36 select_p_* symbols, job_test ends with
 *     bitstr_t *exc_core_bitmap, List and ListIterator.
 *   23.02: the header moves to src/interfaces/ (gres.h too); job_signal,
 *     jobinfo_sprint, jobinfo_xstrdup, update_node_config gone (32);
 *     list_t and list_itr_t (ListIterator gone in 24.05, List in 24.11).
 *   23.11: resv_test gone (31); job_test ends with resv_exc_t *.
 *   24.05: slurm_select_ops_t private to select.c (copied here).
 *   24.11: job_test gains will_run_data_t *.
 * - 25.05+: 12 select_p_* symbols (13 from 26.05: job_mem_reduce); only
 *   slurmctld loads a select plugin, only SelectType, and select_g_init is
 *   fatal for a plugin_id other than cons_tres's with CR_CPU/CR_Core/
 *   CR_Socket (GRES code asks running_cons_tres() too), so the wrapper
 *   presents cons_tres's id.
 *
 * Built and tested on real daemons: 22.05.8, 24.11.5, 26.05.3; built only:
 * 23.11.11, 25.11.7.  23.02 and 24.05: compile-guarded, untested (their
 * objects compiled once against 23.02.8 and 24.05.8 trees configured from
 * the release tags, the select_p_* set equal to their node_select_syms;
 * never loaded).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SELECT_COMPAT_H
#define TOPOML_SELECT_COMPAT_H

#include <slurm/slurm_version.h>

#define TOPOML_SLURM_AT_LEAST(a, b) \
	(SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(a, b, 0))

#if !TOPOML_SLURM_AT_LEAST(22, 5)
#error "select/topoml builds for Slurm 22.05 and later"
#endif

/* 25.05+: the reduced API (see above). */
#define TOPOML_SELECT_2505 TOPOML_SLURM_AT_LEAST(25, 5)
/* select_p_job_mem_reduce: new in 26.05 (not in 25.11). */
#define TOPOML_SELECT_MEM_REDUCE TOPOML_SLURM_AT_LEAST(26, 5)
/* 22.05 only: job_signal, jobinfo_sprint/xstrdup, update_node_config. */
#define TOPOML_SELECT_2205_ONLY (!TOPOML_SLURM_AT_LEAST(23, 2))
/* select_p_resv_test: up to 23.02. */
#define TOPOML_SELECT_RESV_TEST (!TOPOML_SLURM_AT_LEAST(23, 11))
/* job_test's reservation argument: resv_exc_t * from 23.11. */
#define TOPOML_JT_RESV_EXC TOPOML_SLURM_AT_LEAST(23, 11)
/* job_test's will_run_data_t *: from 24.11. */
#define TOPOML_JT_WILL_RUN TOPOML_SLURM_AT_LEAST(24, 11)
/* slurm_select_ops_t in the header: up to 23.11. */
#define TOPOML_SELECT_OPS_PUBLIC (!TOPOML_SLURM_AT_LEAST(24, 5))

#include "src/common/bitstring.h"
#include "src/slurmctld/slurmctld.h"

#if TOPOML_SLURM_AT_LEAST(23, 2)
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
#endif

#if TOPOML_SELECT_2205_ONLY
typedef List topoml_list_t;
typedef ListIterator topoml_list_itr_t;
#else
typedef list_t *topoml_list_t;
typedef list_itr_t *topoml_list_itr_t;
#endif

#if TOPOML_SELECT_2505
/* slurmctld's select_g_init and running_cons_tres() want cons_tres's id. */
#define TOPOML_PLUGIN_ID SELECT_PLUGIN_CONS_TRES
#else
/* Slurm's select plugins use 101-110; 163 is free in 22.05 to 24.11. */
#define TOPOML_PLUGIN_ID 163
#endif

/* What select_p_job_test takes after preemptee_job_list, and passes on. */
#if TOPOML_JT_WILL_RUN
#define TOPOML_JT_PARAMS \
	resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr
#define TOPOML_JT_ARGS resv_exc_ptr, will_run_ptr
#elif TOPOML_JT_RESV_EXC
#define TOPOML_JT_PARAMS resv_exc_t *resv_exc_ptr
#define TOPOML_JT_ARGS resv_exc_ptr
#else
#define TOPOML_JT_PARAMS bitstr_t *exc_core_bitmap
#define TOPOML_JT_ARGS exc_core_bitmap
#endif

#if TOPOML_SELECT_OPS_PUBLIC

typedef slurm_select_ops_t topoml_select_ops_t;

#elif TOPOML_SELECT_2505

/* A copy of slurm_select_ops_t of src/interfaces/select.c (private there):
 * the order of topoml_wrapped_syms. */
typedef struct {
	uint32_t *plugin_id;
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap,
			uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode,
			topoml_list_t preemptee_candidates,
			topoml_list_t *preemptee_job_list,
			TOPOML_JT_PARAMS);
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr,
			  job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
#if TOPOML_SELECT_MEM_REDUCE
	void (*job_mem_reduce)(job_record_t *job_ptr);
#endif
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
	int (*reconfigure)(void);
} topoml_select_ops_t;

#else /* 24.05, 24.11 */

/* A copy of slurm_select_ops_t of src/interfaces/select.c (private there
 * from 24.05): the order of topoml_wrapped_syms. */
typedef struct {
	uint32_t *plugin_id;
	int (*state_save)(char *dir_name);
	int (*state_restore)(char *dir_name);
	int (*job_init)(topoml_list_t job_list);
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap,
			uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode,
			topoml_list_t preemptee_candidates,
			topoml_list_t *preemptee_job_list,
			TOPOML_JT_PARAMS);
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr,
			  job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
	bitstr_t *(*step_pick_nodes)(job_record_t *job_ptr,
				     select_jobinfo_t *step_jobinfo,
				     uint32_t node_count,
				     bitstr_t **avail_nodes);
	int (*step_start)(step_record_t *step_ptr);
	int (*step_finish)(step_record_t *step_ptr, bool killing_step);
	int (*nodeinfo_pack)(select_nodeinfo_t *nodeinfo, buf_t *buffer,
			     uint16_t protocol_version);
	int (*nodeinfo_unpack)(select_nodeinfo_t **nodeinfo, buf_t *buffer,
			       uint16_t protocol_version);
	select_nodeinfo_t *(*nodeinfo_alloc)(void);
	int (*nodeinfo_free)(select_nodeinfo_t *nodeinfo);
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
	int (*nodeinfo_get)(select_nodeinfo_t *nodeinfo,
			    enum select_nodedata_type dinfo,
			    enum node_states state, void *data);
	select_jobinfo_t *(*jobinfo_alloc)(void);
	int (*jobinfo_free)(select_jobinfo_t *jobinfo);
	int (*jobinfo_set)(select_jobinfo_t *jobinfo,
			   enum select_jobdata_type data_type, void *data);
	int (*jobinfo_get)(select_jobinfo_t *jobinfo,
			   enum select_jobdata_type data_type, void *data);
	select_jobinfo_t *(*jobinfo_copy)(select_jobinfo_t *jobinfo);
	int (*jobinfo_pack)(select_jobinfo_t *jobinfo, buf_t *buffer,
			    uint16_t protocol_version);
	int (*jobinfo_unpack)(select_jobinfo_t **jobinfo_pptr, buf_t *buffer,
			      uint16_t protocol_version);
	int (*get_info_from_plugin)(enum select_plugindata_info dinfo,
				    job_record_t *job_ptr, void *data);
	int (*reconfigure)(void);
} topoml_select_ops_t;

#endif

/*
 * cons_tres's entry points (select_compat.c), and the symbols that fill
 * them, in the order of the ops table.  Not node_select_syms: libslurmfull
 * exports a symbol of that name.
 */
extern topoml_select_ops_t topoml_ops;
extern const char *topoml_wrapped_syms[];
extern const size_t topoml_wrapped_syms_size;

#endif
