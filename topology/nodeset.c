/*
 * Node sets <-> Slurm host list strings, through libslurm's own hostlist
 * code so that "n[1-4,7]" means exactly what it means to Slurm.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <slurm/slurm.h>

#include "topoml.h"
#include "model_int.h"

hwloc_bitmap_t topoml_nodeset_parse(const topoml_topo_t *t,
				    const char *hostlist,
				    topoml_errors_t *err)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	hostlist_t hl = NULL, unknown = NULL;
	char *host;

	if (!set)
		return NULL;
	if (!hostlist || !*hostlist)
		return set;
	hl = slurm_hostlist_create(hostlist);
	if (!hl) {
		topoml_errors_add(err, "invalid host list '%s'", hostlist);
		hwloc_bitmap_free(set);
		return NULL;
	}
	while ((host = slurm_hostlist_shift(hl))) {
		int i = topoml_node_by_name(t, host);

		if (i >= 0) {
			hwloc_bitmap_set(set, i);
		} else if (err) {
			if (!unknown)
				unknown = slurm_hostlist_create(NULL);
			if (unknown)
				slurm_hostlist_push_host(unknown, host);
		}
		free(host);
	}
	if (unknown) {
		char *s = slurm_hostlist_ranged_string_malloc(unknown);

		topoml_errors_add(err, "unknown node%s %s",
				  slurm_hostlist_count(unknown) > 1 ? "s" : "",
				  s ? s : "?");
		free(s);
		slurm_hostlist_destroy(unknown);
	}
	slurm_hostlist_destroy(hl);
	return set;
}

/* Append s to the growing string *out (with a comma between parts). */
static int _append(char **out, size_t *len, const char *s)
{
	size_t l = strlen(s);
	char *n = realloc(*out, *len + l + 2);

	if (!n)
		return -1;
	if (*len)
		n[(*len)++] = ',';
	memcpy(n + *len, s, l + 1);
	*len += l;
	*out = n;
	return 0;
}

/*
 * Slurm refuses to parse ranges of more than 64k hosts, so never write
 * one: format in chunks of at most that many hosts.
 */
char *topoml_names_format(const char *const *names, int n, bool sort)
{
	char *out = NULL;
	size_t len = 0;
	int i = 0;

	out = strdup("");
	if (!out)
		return NULL;
	while (i < n) {
		hostlist_t hl = slurm_hostlist_create(NULL);
		int end = i + TOPOML_HOSTLIST_MAX_RANGE;
		char *s;

		if (!hl)
			goto fail;
		if (end > n)
			end = n;
		for (; i < end; i++)
			if (names[i])
				slurm_hostlist_push_host(hl, names[i]);
		if (sort)
			slurm_hostlist_uniq(hl);
		s = slurm_hostlist_ranged_string_malloc(hl);
		slurm_hostlist_destroy(hl);
		if (!s)
			goto fail;
		if (*s && _append(&out, &len, s)) {
			free(s);
			goto fail;
		}
		free(s);
	}
	return out;
fail:
	free(out);
	return NULL;
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
	s = topoml_names_format(names, n, sort);
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

int topoml_hostlist_foreach(const char *hostlist,
			    int (*fn)(const char *host, void *arg), void *arg)
{
	hostlist_t hl;
	char *host;
	int rc = 0;

	if (!hostlist || !*hostlist)
		return 0;
	hl = slurm_hostlist_create(hostlist);
	if (!hl)
		return -1;
	while (!rc && (host = slurm_hostlist_shift(hl))) {
		rc = fn(host, arg);
		free(host);
	}
	slurm_hostlist_destroy(hl);
	return rc;
}
