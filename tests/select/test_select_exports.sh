#!/bin/bash
# select_topoml.so exports only what Slurm's plugin loader looks up (the
# plugin_* data, init/fini and every select_p_* of node_select_syms in
# src/common/select.c) and the slurmctld-only data symbols it defines for
# the clients.  Anything else (libtopoml's engine, the simulator, zlib)
# would land in slurmctld's namespace and could interpose its symbols.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
so=${TOP_BUILDDIR:-.}/select_plugin/.libs/select_topoml.so
[ -f "$so" ] || { echo "SKIP: select/topoml not built (no Slurm source)"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }

# node_select_syms of Slurm 22.05 (src/common/select.c), plugin_id first.
want="plugin_id plugin_name plugin_type plugin_version init fini
idle_node_bitmap job_list
select_p_state_save select_p_state_restore select_p_job_init
select_p_node_init select_p_job_test select_p_job_begin select_p_job_ready
select_p_job_expand select_p_job_resized select_p_job_signal
select_p_job_fini select_p_job_suspend select_p_job_resume
select_p_step_pick_nodes select_p_step_start select_p_step_finish
select_p_select_nodeinfo_pack select_p_select_nodeinfo_unpack
select_p_select_nodeinfo_alloc select_p_select_nodeinfo_free
select_p_select_nodeinfo_set_all select_p_select_nodeinfo_set
select_p_select_nodeinfo_get select_p_select_jobinfo_alloc
select_p_select_jobinfo_free select_p_select_jobinfo_set
select_p_select_jobinfo_get select_p_select_jobinfo_copy
select_p_select_jobinfo_pack select_p_select_jobinfo_unpack
select_p_select_jobinfo_sprint select_p_select_jobinfo_xstrdup
select_p_get_info_from_plugin select_p_update_node_config
select_p_reconfigure select_p_resv_test"
# Another release: node_select_syms of the source tree the plugin was built
# against (src/interfaces/select.c since 23.02).
src=$(sed -n 's/^SLURM_SRC_CPPFLAGS = -I[^ ]* -I\([^ ]*\) .*/\1/p' \
	"${TOP_BUILDDIR:-.}/select_plugin/Makefile" 2>/dev/null)
if [ -n "$src" ] && [ -f "$src/src/interfaces/select.c" ]; then
	want="plugin_id plugin_name plugin_type plugin_version init fini
idle_node_bitmap job_list
$(sed -n '/node_select_syms\[\] = {/,/};/p' "$src/src/interfaces/select.c" |
	grep -o '"select_p_[a-z_]*"' | tr -d '"')"
fi

have=$(nm -D --defined-only "$so" | awk '{print $3}' | sort -u)
[ -n "$have" ] || { echo "FAIL: nm found no symbol in $so"; exit 1; }
want=$(echo $want | tr ' ' '\n' | sort -u)
extra=$(comm -13 <(echo "$want") <(echo "$have"))
missing=$(comm -23 <(echo "$want") <(echo "$have"))
rc=0
if [ -n "$extra" ]; then
	echo "FAIL: exported beyond Slurm's plugin symbols:" $extra
	rc=1
fi
if [ -n "$missing" ]; then
	echo "FAIL: not exported:" $missing
	rc=1
fi
[ $rc = 0 ] && echo "ok: $(echo "$have" | wc -l) symbols, all Slurm's"
exit $rc
