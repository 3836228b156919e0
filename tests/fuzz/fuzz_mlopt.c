/*
 * libFuzzer target: the values of --ml-gpu-bind, --ml-nccl,
 * --ml-rank-order and --ml-comm and their TOPOML_* twins (ml_opt_parse in
 * spank/node/conf.c, what spank/options.c calls).  The first byte picks
 * the option and whether the site limits every value (allowed_*=).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "ml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ml_conf c;
	char err[512], *s;
	int opt, v;

	if (size < 1)
		return 0;
	opt = data[0] % ML_OPT_CKPT;
	ml_conf_init(&c);
	if (data[0] & 0x80)
		c.allow[opt] = 1u;	/* only the first value allowed */
	s = fuzz_str(data + 1, size - 1);
	if (ml_opt_parse(&c, opt, s, &v, err, sizeof(err)) == 0) {
		/* An accepted value has a name and passes the site limit. */
		if (!strcmp(ml_opt_value_name(opt, v), "?") ||
		    !(c.allow[opt] & (1u << v)))
			abort();
	}
	free(s);
	return 0;
}
