/*
 * libFuzzer target: topoml.so's plugstack.conf arguments (ml_conf_parse in
 * spank/node/conf.c).  Slurm splits the line at white space; so does this.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "ml.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ml_conf c;
	char *av[MAX_ARGS], err[512], *s, *save = NULL;
	int ac = 0;

	s = fuzz_str(data, size);
	for (char *a = strtok_r(s, " \t\n", &save); a && ac < MAX_ARGS;
	     a = strtok_r(NULL, " \t\n", &save))
		av[ac++] = a;
	ml_conf_init(&c);
	if (ml_conf_parse(&c, ac, av, err, sizeof(err)) == 0) {
		/* Site limits then apply to every option value. */
		int v;

		for (int o = 0; o < ML_OPT_COUNT; o++)
			if (o != ML_OPT_CKPT)
				(void)ml_opt_parse(&c, o, "auto", &v, err,
						   sizeof(err));
	}
	free(s);
	return 0;
}
