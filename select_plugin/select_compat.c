/*
 * select/topoml: the release-specific half of the cons_tres wrapper.
 *
 * The table of cons_tres symbols the wrapper loads, and the select_p_*
 * entry points that exist on some releases only: they do nothing but forward
 * to cons_tres.  The entry points every release has, and everything
 * topoml adds, are in select_topoml.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include "src/common/slurm_xlator.h"

#include "select_compat.h"

topoml_select_ops_t topoml_ops;

#if TOPOML_SELECT_2505

/* In the order of topoml_select_ops_t (node_select_syms of select.c). */
const char *topoml_wrapped_syms[] = {
	"plugin_id",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
#if TOPOML_SELECT_MEM_REDUCE
	"select_p_job_mem_reduce",
#endif
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_reconfigure",
};

#if TOPOML_SELECT_MEM_REDUCE
extern void select_p_job_mem_reduce(job_record_t *job_ptr)
{
	(*(topoml_ops.job_mem_reduce))(job_ptr);
}
#endif

#else /* 22.05 to 24.11 */

/* In the order of slurm_select_ops_t (node_select_syms of select.c). */
const char *topoml_wrapped_syms[] = {
	"plugin_id",
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
#if TOPOML_SELECT_2205_ONLY
	"select_p_job_signal",
#endif
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
#if TOPOML_SELECT_2205_ONLY
	"select_p_select_jobinfo_sprint",
	"select_p_select_jobinfo_xstrdup",
#endif
	"select_p_get_info_from_plugin",
#if TOPOML_SELECT_2205_ONLY
	"select_p_update_node_config",
#endif
	"select_p_reconfigure",
#if TOPOML_SELECT_RESV_TEST
	"select_p_resv_test",
#endif
};

extern int select_p_state_save(char *dir_name)
{
	return (*(topoml_ops.state_save))(dir_name);
}

extern int select_p_state_restore(char *dir_name)
{
	return (*(topoml_ops.state_restore))(dir_name);
}

extern int select_p_job_init(topoml_list_t jobs)
{
	return (*(topoml_ops.job_init))(jobs);
}

#if TOPOML_SELECT_2205_ONLY
extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return (*(topoml_ops.job_signal))(job_ptr, signal);
}
#endif

extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr,
					  select_jobinfo_t *jobinfo,
					  uint32_t node_count,
					  bitstr_t **avail_nodes)
{
	return (*(topoml_ops.step_pick_nodes))(job_ptr, jobinfo, node_count,
					       avail_nodes);
}

extern int select_p_step_start(step_record_t *step_ptr)
{
	return (*(topoml_ops.step_start))(step_ptr);
}

extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return (*(topoml_ops.step_finish))(step_ptr, killing_step);
}

extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo,
					 buf_t *buffer,
					 uint16_t protocol_version)
{
	return (*(topoml_ops.nodeinfo_pack))(nodeinfo, buffer, protocol_version);
}

extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo,
					   buf_t *buffer,
					   uint16_t protocol_version)
{
	return (*(topoml_ops.nodeinfo_unpack))(nodeinfo, buffer, protocol_version);
}

extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
	return (*(topoml_ops.nodeinfo_alloc))();
}

extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
	return (*(topoml_ops.nodeinfo_free))(nodeinfo);
}

extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo,
					enum select_nodedata_type dinfo,
					enum node_states state, void *data)
{
	return (*(topoml_ops.nodeinfo_get))(nodeinfo, dinfo, state, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
	return (*(topoml_ops.jobinfo_alloc))();
}

extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
	return (*(topoml_ops.jobinfo_free))(jobinfo);
}

extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data)
{
	return (*(topoml_ops.jobinfo_set))(jobinfo, data_type, data);
}

extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data)
{
	return (*(topoml_ops.jobinfo_get))(jobinfo, data_type, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo)
{
	return (*(topoml_ops.jobinfo_copy))(jobinfo);
}

extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo,
					buf_t *buffer,
					uint16_t protocol_version)
{
	return (*(topoml_ops.jobinfo_pack))(jobinfo, buffer, protocol_version);
}

extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo,
					  buf_t *buffer,
					  uint16_t protocol_version)
{
	return (*(topoml_ops.jobinfo_unpack))(jobinfo, buffer, protocol_version);
}

#if TOPOML_SELECT_2205_ONLY
extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo,
					    char *buf, size_t size, int mode)
{
	return (*(topoml_ops.jobinfo_sprint))(jobinfo, buf, size, mode);
}

extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo,
					     int mode)
{
	return (*(topoml_ops.jobinfo_xstrdup))(jobinfo, mode);
}
#endif

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo,
					 job_record_t *job_ptr, void *data)
{
	return (*(topoml_ops.get_info_from_plugin))(dinfo, job_ptr, data);
}

#if TOPOML_SELECT_2205_ONLY
extern int select_p_update_node_config(int index)
{
	return (*(topoml_ops.update_node_config))(index);
}
#endif

#if TOPOML_SELECT_RESV_TEST
extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr,
				    uint32_t node_cnt, bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap)
{
	return (*(topoml_ops.resv_test))(resv_desc_ptr, node_cnt,
					 avail_bitmap, core_bitmap);
}
#endif

#endif

const size_t topoml_wrapped_syms_size = sizeof(topoml_wrapped_syms);

/* One name per entry point: a release guard that drops a symbol from one
 * list but not the other is caught here, not by fatal() in slurmctld. */
_Static_assert(sizeof(topoml_wrapped_syms) == sizeof(topoml_select_ops_t),
	       "topoml_wrapped_syms does not match topoml_select_ops_t");
