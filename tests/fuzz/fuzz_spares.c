/*
 * libFuzzer target: --ml-spares (topoml_spares_parse,
 * topology/contract/contract.c), which select/topoml reads from a job's
 * SPANK environment inside slurmctld, and the environment entry's name
 * (topoml_spares_job_env).  What it accepts is decimal digits only,
 * 0..TOPOML_SPARES_MAX, and is the number written.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "topoml/contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	const char *v = topoml_spares_job_env(s);
	int k = -1;

	if (v && (v < s || v > s + strlen(s)))
		abort();
	if (!topoml_spares_parse(s, &k)) {
		long long want = 0;

		if (k < 0 || k > TOPOML_SPARES_MAX || !s[0] ||
		    strspn(s, "0123456789") != strlen(s))
			abort();
		for (const char *c = s; *c; c++)
			want = want * 10 + (*c - '0');
		if (want != k)
			abort();
	}
	free(s);
	return 0;
}
