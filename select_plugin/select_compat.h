/*
 * select/topoml: what differs between the Slurm releases it builds for.
 *
 * select_topoml.c reads the same on every release; everything that changed
 * in Slurm's select API lives here and in select_compat.c, guarded by
 * SLURM_VERSION_NUMBER of the configured source tree:
 *
 * - 22.05: src/common/select.h, slurm_select_ops_t public, 36 select_p_*
 *   symbols, List/ListIterator, job_test ends with an exc_core_bitmap;
 *   every daemon and client loads every select plugin, so the wrapper has
 *   a plugin_id of its own.
 * - 25.05+: src/interfaces/select.h, the ops table private to select.c,
 *   12 select_p_* symbols (13 from 26.05: job_mem_reduce), list_t and
 *   list_itr_t, job_test ends with resv_exc_t * and will_run_data_t *.
 *   Only slurmctld loads a select plugin, only SelectType, and
 *   select_g_init is fatal for a plugin_id other than cons_tres's with
 *   CR_CPU/CR_Core/CR_Socket (GRES code asks running_cons_tres() too), so
 *   the wrapper presents cons_tres's id.
 *
 * 23.02 to 24.11 sit between the two (see the Slurm-versions issue); they
 * are refused at compile time until they are added here.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SELECT_COMPAT_H
#define TOPOML_SELECT_COMPAT_H

#include <slurm/slurm_version.h>

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
#define TOPOML_SELECT_2505 1
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(22, 5, 0) && \
	SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
#define TOPOML_SELECT_2505 0
#else
#error "select/topoml builds for Slurm 22.05 and 25.05+ (23.02-24.11: not yet)"
#endif
/* select_p_job_mem_reduce: new in 26.05 (not in 25.11). */
#define TOPOML_SELECT_MEM_REDUCE \
	(SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0))

#include "src/common/bitstring.h"
#include "src/slurmctld/slurmctld.h"

#if TOPOML_SELECT_2505

#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"

typedef list_t *topoml_list_t;
typedef list_itr_t *topoml_list_itr_t;

/* slurmctld's select_g_init and running_cons_tres() want cons_tres's id. */
#define TOPOML_PLUGIN_ID SELECT_PLUGIN_CONS_TRES

/* What select_p_job_test takes after preemptee_job_list, and passes on. */
#define TOPOML_JT_PARAMS \
	resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr
#define TOPOML_JT_ARGS resv_exc_ptr, will_run_ptr

/* A copy of slurm_select_ops_t of src/interfaces/select.c (private there):
 * the order of topoml_wrapped_syms. */
typedef struct {
	uint32_t *plugin_id;
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap,
			uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode,
			list_t *preemptee_candidates,
			list_t **preemptee_job_list,
			resv_exc_t *resv_exc_ptr,
			will_run_data_t *will_run_ptr);
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

#else /* 22.05 */

#include "src/common/gres.h"
#include "src/common/select.h"

typedef List topoml_list_t;
typedef ListIterator topoml_list_itr_t;

/* Slurm's select plugins use 101-110; 163 is free in 22.05. */
#define TOPOML_PLUGIN_ID 163

#define TOPOML_JT_PARAMS bitstr_t *exc_core_bitmap
#define TOPOML_JT_ARGS exc_core_bitmap

typedef slurm_select_ops_t topoml_select_ops_t;

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
