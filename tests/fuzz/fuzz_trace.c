/*
 * libFuzzer target: job traces (topology/sim/trace.c).  The first byte
 * picks the format (auto, SWF, CSV, MTech) and the scaling options, the
 * rest is the file (gzip included: topology/sim/trace.c reads through zlib).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;
	int mark;
	struct topoml_trace_opts o = { 0 };
	topoml_errors_t err = { 0 };
	struct topoml_trace *tr;

	if (size < 1)
		return 0;
	o.format = (enum topoml_trace_format)(data[0] & 3);
	o.cores_per_node = (data[0] >> 2) & 1 ? 8 : 0;
	o.scale_fit = (data[0] >> 3) & 1;
	o.machine_nodes = (data[0] >> 4) & 1 ? 64 : 0;
	o.trace_nodes = (data[0] >> 5) & 1 ? 128 : 0;
	o.max_jobs = (data[0] >> 6) & 1 ? 3 : 0;
	path = fuzz_file(data + 1, size - 1);
	mark = fuzz_fd_mark();
	tr = topoml_trace_read(path, &o, &err);
	if (tr)
		topoml_trace_free(tr);
	topoml_errors_clear(&err);
	fuzz_check_fds(mark);
	return 0;
}
