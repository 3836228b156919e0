/*
 * libFuzzer target: host lists given to the CLI (topology/util/hostlist.c,
 * model/nodeset.c) on a 64-node fat-tree "n[1-64]", with a round trip
 * through the formatter. fuzz_hostlist checks the parser against
 * libslurm's own.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "topoml.h"
#include "sim.h"
#include "util/util.h"

static topoml_topo_t *topo;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	topoml__hostlist_max_hosts = 4096;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topoml_errors_t err = { 0 };
	hwloc_bitmap_t set;
	char *s;
	int mark;

	if (!topo) {
		topo = topoml_gen_fat_tree("n", 64, 8, 16, 2);
		if (!topo)
			abort();
	}
	s = fuzz_str(data, size);
	mark = fuzz_fd_mark();
	set = topoml_nodeset_parse(topo, s, &err);
	if (set) {
		char *back = topoml_nodeset_format(topo, set);

		free(back);
		hwloc_bitmap_free(set);
	}
	topoml_errors_clear(&err);
	fuzz_check_fds(mark);
	free(s);
	return 0;
}
