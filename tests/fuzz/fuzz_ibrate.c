/*
 * libFuzzer target: an HCA port's rate as sysfs gives it
 * (hw_ib_rate_parse, spank/node/hw_ib.c), which --ml-preflight reads as
 * root in slurmstepd.  What it accepts is "N[.F] Gb/sec" with nothing or
 * " (...)" after it, and is that number in Mb/s.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), *end;
	long v = -1;

	if (!hw_ib_rate_parse(s, &v)) {
		double d = strtod(s, &end);

		if (v < 0 || v >= 10000000L * 1000 || s[0] < '0' ||
		    s[0] > '9' || strncmp(end, " Gb/sec", 7) ||
		    (end[7] && strncmp(end + 7, " (", 2)) ||
		    d * 1000 < v - 1 || d * 1000 > v + 1)
			abort();
	}
	free(s);
	return 0;
}
