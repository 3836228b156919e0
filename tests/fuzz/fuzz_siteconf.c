/*
 * libFuzzer target: topoml.conf (topology/conf/siteconf.c), then the lookups
 * select/topoml makes with what was read.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "topoml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;
	int mark;
	struct topoml_siteconf c;
	topoml_errors_t err = { 0 };

	path = fuzz_file(data, size);
	mark = fuzz_fd_mark();
	if (topoml_siteconf_read(path, &c, &err) == 0) {
		/* No directory: no file is looked up on the fuzzing host. */
		(void)topoml_siteconf_hint(&c, "gpu");
		(void)topoml_siteconf_placement(&c, NULL);
		for (int i = 0; i < c.nparts; i++)
			(void)topoml_siteconf_hint(&c, c.parts[i].name);
	}
	topoml_siteconf_clear(&c);
	topoml_errors_clear(&err);
	fuzz_check_fds(mark);
	return 0;
}
