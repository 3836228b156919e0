/*
 * libFuzzer target: topoml__hostlist_foreach() (topology/util/hostlist.c)
 * against libslurm's own parser.  Where topoml accepts a list Slurm must
 * give the same hosts in the same order; where topoml calls it invalid
 * (EINVAL) Slurm must refuse it too.  Slurm leaks on the lists it refuses
 * (what topoml avoids), so run.sh runs this target with -detect_leaks=0;
 * fuzz_nodeset checks topoml's side for leaks.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"	/* first: _GNU_SOURCE */

#include <errno.h>
#include <slurm/slurm.h>

#include "topoml.h"
#include "util/util.h"

struct names {
	char **v;
	int n;
};

static int _collect(const char *host, void *arg)
{
	struct names *a = arg;

	if (topoml__grow((void **)&a->v, a->n, sizeof(*a->v)))
		abort();
	a->v[a->n++] = strdup(host);
	return 0;
}

static void _differential(const char *s)
{
	struct names mine = { 0 };
	hostlist_t theirs;
	int rc = topoml__hostlist_foreach(s, NULL, _collect, &mine), e = errno;
	char *b;

	if (rc < 0 && e != EINVAL)
		return;	/* refused on purpose (EDOM, E2BIG, ERANGE) */
	theirs = slurm_hostlist_create(s);
	if (rc < 0) {
		if (theirs) {
			fprintf(stderr, "topoml refuses '%s', Slurm takes "
				"it\n", s);
			abort();
		}
		return;
	}
	if (!theirs && *s) {
		fprintf(stderr, "topoml takes '%s', Slurm refuses it\n", s);
		abort();
	}
	for (int i = 0; i < mine.n; i++) {
		b = slurm_hostlist_shift(theirs);
		if (!b || strcmp(mine.v[i], b)) {
			fprintf(stderr, "'%s': topoml host '%s', Slurm '%s'\n",
				s, mine.v[i], b ? b : "(none)");
			abort();
		}
		free(b);
		free(mine.v[i]);
	}
	free(mine.v);
	if (theirs && (b = slurm_hostlist_shift(theirs))) {
		fprintf(stderr, "'%s': Slurm has more hosts ('%s')\n", s, b);
		abort();
	}
	if (theirs)
		slurm_hostlist_destroy(theirs);
}

/* Lists of at most 4096 names: Slurm's parser is slow on big ones. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	topoml__hostlist_max_hosts = 4096;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);

	_differential(s);
	free(s);
	return 0;
}
