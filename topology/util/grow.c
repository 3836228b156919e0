/*
 * Array growth: every growing array of the engine doubles through here.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>

#include "util/util.h"

int topoml__grow(void **arr, int n, size_t sz)
{
	size_t cap;
	void *p;

	if (n > 0 && (n < 4 || (n & (n - 1))))
		return 0;
	cap = n ? (size_t)n * 2 : 4;
	p = realloc(*arr, cap * sz);
	if (!p)
		return -1;
	*arr = p;
	return 0;
}
