/*
 * libFuzzer target: Slurm topology.conf (topology/load/load_conf.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "topoml/load.h"
#include "util/util.h"

/* Host lists expand to at most 4096 names here: big expansions are slow,
 * not interesting, and their bound is a unit test (check_loaders). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	topoml__hostlist_max_hosts = 4096;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;
	int mark;
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t;

	path = fuzz_file(data, size);
	mark = fuzz_fd_mark();
	t = topoml_load_conf_ex(path, &err, &warn);
	if (t)
		topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	fuzz_check_fds(mark);
	return 0;
}
