/*
 * libFuzzer target: a job's SystemComment as topoml.so reads it in
 * slurmstepd (topology/contract/jobcomment.c): the parser, a step's order from
 * order= for a whole 8-node job and for a 3-node step, the writer's round
 * trip, and the merge with the input as another plugin's text.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include "topoml/jobcomment.h"

static char *const all[] = { "n1", "n2", "n3", "n4", "n5", "n6", "n7",
			     "n8" };
static char *const part[] = { "n7", "n2", "n5" };

static void _step(const char *order, char *const *names, int n)
{
	int out[8], seen = 0;
	char err[256];

	if (topoml_comment_step_order(order, names, n, out, err, sizeof(err)))
		return;
	/* Every step node exactly once. */
	for (int i = 0; i < n; i++) {
		if (out[i] < 0 || out[i] >= n || (seen & (1 << out[i])))
			abort();
		seen |= 1 << out[i];
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topoml_comment c, back;
	char err[256], *s = fuzz_str(data, size), *w, *m;
	int rc = topoml_comment_parse(s, &c, err, sizeof(err));

	if (rc == 0) {
		if (c.order) {
			_step(c.order, all, 8);
			_step(c.order, part, 3);
		}
		/* What the writer writes from it, the parser reads back. */
		w = topoml_comment_write(&c);
		if (!w || topoml_comment_parse(w, &back, err, sizeof(err)))
			abort();
		if ((!c.order) != (!back.order) ||
		    (c.order && strcmp(c.order, back.order)) ||
		    strcmp(c.placed, back.placed))
			abort();
		topoml_comment_clear(&back);
		free(w);
	} else if (rc != 1 && rc != -1) {
		abort();
	}
	topoml_comment_clear(&c);
	m = topoml_comment_merge(s, "topoml: placed=topoml order=n[1-8]");
	free(m);
	free(s);
	return 0;
}
