/*
 * libFuzzer target: --ml-parallel (topoml_parallel_parse and
 * topoml_parallel_resolve, topology/contract/parallel.c), which
 * select/topoml reads from a job's SPANK environment inside
 * slurmctld.  Input: 4 bytes, the task count (little-endian int32, any
 * sign), then the spec.  What parse accepts has sizes 1..65536 and writes
 * back (topoml_parallel_format) to the same sizes; what resolve accepts
 * has tp x pp x dp x cp = tasks and ep dividing cp x dp, and its rank
 * order is a bijection.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "topoml.h"

static bool _size_ok(int v, int lo)
{
	return v >= lo && v <= 65536;
}

/* Resolve against ntasks; on success check what it promises. */
static void _resolve(const struct topoml_parallel *in, int ntasks)
{
	struct topoml_parallel p = *in;
	char err[256] = "";
	int tp, cp, dp, pp;

	if (topoml_parallel_resolve(&p, ntasks, err, sizeof(err))) {
		if (!err[0])
			abort();	/* a refusal says why */
		return;
	}
	if (ntasks < 1 || (long)p.tp * p.pp * p.dp * p.cp != ntasks ||
	    ((long)p.cp * p.dp) % p.ep || (in->dp && in->dp != p.dp))
		abort();
	/* The first and last ranks, and one between: rank(coords) = rank. */
	for (int r = 0; r < 3; r++) {
		int rank = r == 0 ? 0 : r == 1 ? ntasks - 1 : ntasks / 3;

		topoml_parallel_coords(&p, rank, &tp, &cp, &dp, &pp);
		if (tp < 0 || tp >= p.tp || cp < 0 || cp >= p.cp || dp < 0 ||
		    dp >= p.dp || pp < 0 || pp >= p.pp ||
		    topoml_parallel_rank(&p, tp, cp, dp, pp) != rank)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topoml_parallel p, back;
	char err[256] = "", buf[128], *s;
	const char *spec;
	int32_t ntasks = 0;
	long model;

	if (size < 4)
		return 0;
	memcpy(&ntasks, data, 4);
	s = fuzz_str(data + 4, size - 4);
	/* the environment entry's name: the value lies within the entry */
	spec = topoml_parallel_job_env(s);
	if (spec && (spec < s || spec > s + strlen(s)))
		abort();
	if (topoml_parallel_parse(s, &p, err, sizeof(err))) {
		if (!err[0])
			abort();
		free(s);
		return 0;
	}
	if (!_size_ok(p.tp, 1) || !_size_ok(p.pp, 1) || !_size_ok(p.dp, 0) ||
	    !_size_ok(p.ep, 1) || !_size_ok(p.cp, 1))
		abort();
	/* The formatter's text parses back to the same sizes (dp 0 is
	 * "the rest": written as dp=0, which parse refuses, so skip it). */
	if (p.dp) {
		topoml_parallel_format(&p, buf, sizeof(buf));
		if (topoml_parallel_parse(buf, &back, err, sizeof(err)) ||
		    memcmp(&p, &back, sizeof(p)))
			abort();
	}
	_resolve(&p, ntasks);
	/* And against a count the model divides, to reach the checks after
	 * the division (as select/topoml's nnodes x tasks-per-node). */
	model = (long)p.tp * p.pp * p.cp;	/* at most 2^48 */
	if (model <= INT32_MAX)
		model *= p.dp ? p.dp : 1;
	if (model <= INT32_MAX)
		_resolve(&p, (int)model);
	if (model <= INT32_MAX / 2)
		_resolve(&p, (int)model * 2);
	free(s);
	return 0;
}
