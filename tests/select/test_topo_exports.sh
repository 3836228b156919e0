#!/bin/bash
# topology_topoml.so exports exactly what Slurm's plugin loader looks up in
# a topology plugin (the syms[] of src/interfaces/topology.c of the source
# tree it was built against: 14 on 24.11, 23 on 25.11, 26 on 26.05), the
# plugin_* data, init/fini and the slurmctld-only data symbols it defines
# for the other programs; never the engine.  nm only, no cluster.
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
so=${TOP_BUILDDIR:-.}/select_plugin/.libs/topology_topoml.so
[ -f "$so" ] || { echo "SKIP: topology/topoml not built (needs a Slurm 24.11+ source)"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }
src=$(sed -n 's/^SLURM_SRC_CPPFLAGS = -I[^ ]* -I\([^ ]*\) .*/\1/p' \
	"${TOP_BUILDDIR:-.}/select_plugin/Makefile" 2>/dev/null)
[ -f "$src/src/interfaces/topology.c" ] ||
	{ echo "SKIP: no Slurm source tree for the symbol list"; exit 77; }
syms=$(sed -n '/^static const char \*syms\[\] = {/,/};/p' \
	"$src/src/interfaces/topology.c" | grep -o '"[a-z_]*"' | tr -d '"')
[ "$(echo "$syms" | wc -l)" -ge 14 ] ||
	{ echo "FAIL: no syms[] in $src/src/interfaces/topology.c"; exit 1; }
# shellcheck disable=SC2086 # one symbol a word
want=$(printf '%s\n' $syms plugin_name plugin_type plugin_version init \
	fini idle_node_bitmap job_list | sort -u)
have=$(nm -D --defined-only "$so" | awk '{print $3}' | sort -u)
[ -n "$have" ] || { echo "FAIL: nm found no symbol in $so"; exit 1; }
extra=$(comm -13 <(echo "$want") <(echo "$have"))
missing=$(comm -23 <(echo "$want") <(echo "$have"))
rc=0
if [ -n "$extra" ]; then
	echo "FAIL: exported beyond Slurm's plugin symbols: $(echo "$extra" | paste -sd' ')"
	rc=1
fi
if [ -n "$missing" ]; then
	echo "FAIL: not exported: $(echo "$missing" | paste -sd' ')"
	rc=1
fi
[ $rc = 0 ] && echo "ok: $(echo "$have" | wc -l) symbols, all Slurm's" \
	"($(echo "$syms" | wc -l) in $src/src/interfaces/topology.c)"
exit $rc
