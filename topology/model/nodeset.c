/*
 * Node sets of a model <-> Slurm host list strings (util/hostlist.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/hostlist_compat.h"

#include "topoml.h"
#include "model/model_int.h"

/* Unknown names shown in the error; the rest are counted. */
#define UNKNOWN_SHOWN 100

struct _parse_ctx {
	const topoml_topo_t *t;
	hwloc_bitmap_t set;
	bool report;
	topoml_hl_t unknown;
	long nunknown;
};

static int _parse_one(const char *host, void *arg)
{
	struct _parse_ctx *c = arg;
	int i = topoml_node_by_name(c->t, host);

	if (i >= 0) {
		hwloc_bitmap_set(c->set, i);
		return 0;
	}
	if (!c->report)
		return 0;
	if (c->nunknown++ >= UNKNOWN_SHOWN)
		return 0;
	if (!c->unknown)
		c->unknown = slurm_hostlist_create(NULL);
	if (c->unknown)
		slurm_hostlist_push_host(c->unknown, host);
	return 0;
}

hwloc_bitmap_t topoml_nodeset_parse(const topoml_topo_t *t,
				    const char *hostlist,
				    topoml_errors_t *err)
{
	struct _parse_ctx c = { .t = t, .report = err != NULL };

	c.set = hwloc_bitmap_alloc();
	if (!c.set)
		return NULL;
	if (topoml__hostlist_foreach(hostlist, NULL, _parse_one, &c) < 0) {
		topoml_errors_add(err, "invalid host list '%s'%s", hostlist,
				  topoml__hostlist_why(errno));
		hwloc_bitmap_free(c.set);
		return NULL;
	}
	if (c.unknown) {
		char *s = topoml__hostlist_ranged(c.unknown);

		if (c.nunknown > UNKNOWN_SHOWN)
			topoml_errors_add(err, "unknown nodes %s and %ld more",
					  s ? s : "?",
					  c.nunknown - UNKNOWN_SHOWN);
		else
			topoml_errors_add(err, "unknown node%s %s",
					  c.nunknown > 1 ? "s" : "",
					  s ? s : "?");
		free(s);
		slurm_hostlist_destroy(c.unknown);
	}
	return c.set;
}

static char *_format(const topoml_topo_t *t, const int *nodes, int n,
		     bool sort)
{
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	char *s;
	int i;

	if (!names)
		return NULL;
	for (i = 0; i < n; i++)
		names[i] = nodes[i] >= 0 && nodes[i] < t->nnodes ?
			   t->nodes[nodes[i]].name : NULL;
	s = topoml__names_format(names, n, sort);
	free(names);
	return s;
}

char *topoml_nodeset_format(const topoml_topo_t *t, hwloc_const_bitmap_t set)
{
	int n = hwloc_bitmap_weight(set), k = 0, i;
	int *nodes;
	char *s;

	if (n <= 0)
		return strdup("");
	nodes = malloc(n * sizeof(int));
	if (!nodes)
		return NULL;
	hwloc_bitmap_foreach_begin(i, set) {
		if (k < n)
			nodes[k++] = i;
	} hwloc_bitmap_foreach_end();
	s = _format(t, nodes, k, true);
	free(nodes);
	return s;
}

char *topoml_nodes_format(const topoml_topo_t *t, const int *nodes, int n)
{
	return _format(t, nodes, n, false);
}
