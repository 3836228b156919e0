/*
 * libFuzzer target: ibnetdiscover output (topology/load/load_ib.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "topoml/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;
	int mark;
	topoml_errors_t err = { 0 }, warn = { 0 };
	topoml_topo_t *t;

	path = fuzz_file(data, size);
	mark = fuzz_fd_mark();
	t = topoml_load_ibnet_ex(path, &err, &warn);
	if (t)
		topoml_free(t);
	topoml_errors_clear(&err);
	topoml_errors_clear(&warn);
	fuzz_check_fds(mark);
	return 0;
}
