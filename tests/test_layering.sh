#!/bin/bash
# The plugins link libtopoml's core only (issue 11 item 6): no symbol that
# libtopoml_sim defines (simulator, trace readers, Slurm's baselines,
# writers, generators) may be in select_topoml.so or topoml.so.  The names
# looked for are libtopoml_sim's own global definitions, read with nm from
# its archive, so a function added there later is covered without a list.
#
# usage: test_layering.sh [PLUGIN.so ...]  (default: the build's plugins)
# SPDX-License-Identifier: GPL-2.0-or-later
set -u
b=${TOP_BUILDDIR:-..}
sim=$b/topology/.libs/libtopoml_sim.a
command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }
[ -f "$sim" ] || { echo "FAIL: $sim not built"; exit 1; }
forbidden=$(nm -g --defined-only "$sim" 2>/dev/null |
	awk 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3 }' | sort -u)
# Without the simulator's names the check would pass on anything.
for s in topoml_sim_run topoml_trace_read topoml_sim_register_baselines \
	 topoml__place_slurm_tree topoml__place_slurm_block \
	 topoml_gen_fat_tree topoml_write_json; do
	grep -qx "$s" <<<"$forbidden" ||
		{ echo "FAIL: $sim does not define $s"; exit 1; }
done
if [ $# -eq 0 ]; then
	set -- "$b/spank/.libs/topoml.so"
	if [ -f "$b/select_plugin/.libs/select_topoml.so" ]; then
		set -- "$@" "$b/select_plugin/.libs/select_topoml.so"
	else
		echo "note: select/topoml not built (no Slurm source)"
	fi
fi
rc=0
for so; do
	if [ ! -f "$so" ]; then
		echo "FAIL: $so not built"
		rc=1
		continue
	fi
	# The whole symbol table: the version scripts hide the engine's
	# symbols from the dynamic table, not from nm.
	have=$(nm "$so" | awk 'NF == 3 { print $3 }' | sort -u)
	# ... and nm must see the engine at all, else nothing is checked.
	if ! grep -qx topoml_errors_clear <<<"$have"; then
		echo "FAIL: $so: no libtopoml symbol seen (stripped?)"
		rc=1
		continue
	fi
	bad=$(comm -12 <(echo "$forbidden") <(echo "$have"))
	if [ -n "$bad" ]; then
		echo "FAIL: $so links libtopoml_sim ($(wc -l <<<"$bad")" \
			"symbols):" $bad
		rc=1
	else
		echo "ok: $so: none of libtopoml_sim's" \
			"$(wc -l <<<"$forbidden") symbols"
	fi
done
exit $rc
