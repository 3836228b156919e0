/*
 * Slurm's switch table and the helpers of cons_tres 22.05 that read it
 * (src/plugins/select/cons_tres/job_test.c: _topo_add_dist(),
 * _topo_compare_switches(), _topo_choose_best_switch()), for the
 * slurm-tree and slurm-dragonfly baselines, by nodes and by CPUs.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>

#include "slurm_switch.h"
#include "model_int.h"

void topoml__sl_switches_free(struct topoml_sl_switches *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->n; i++) {
		if (st->nodes && st->nodes[i])
			hwloc_bitmap_free(st->nodes[i]);
		if (st->adj)
			free(st->adj[i]);
	}
	free(st->level);
	free(st->parent);
	free(st->nodes);
	free(st->adj);
	free(st->nadj);
	free(st);
}

static int _link(struct topoml_sl_switches *st, int a, int b)
{
	for (int k = 0; k < 2; k++) {
		int x = k ? b : a, y = k ? a : b;

		if (topoml_grow((void **)&st->adj[x], st->nadj[x], sizeof(int)))
			return -1;
		st->adj[x][st->nadj[x]++] = y;
	}
	return 0;
}

struct topoml_sl_switches *topoml__sl_switches(const topoml_topo_t *t)
{
	struct topoml_sl_switches *st = calloc(1, sizeof(*st));
	int ns = t->nswitches, ng = 0;

	if (!st)
		return NULL;
	if (t->family == TOPOML_DRAGONFLY)
		ng = t->ngroups;
	st->n = ns + (ng ? ng + (ng > 1) : 0);
	st->level = calloc(st->n + 1, sizeof(int));
	st->parent = calloc(st->n + 1, sizeof(int));
	st->nodes = calloc(st->n + 1, sizeof(*st->nodes));
	st->adj = calloc(st->n + 1, sizeof(*st->adj));
	st->nadj = calloc(st->n + 1, sizeof(int));
	if (!st->level || !st->parent || !st->nodes || !st->adj || !st->nadj)
		goto fail;
	for (int i = 0; i < ns; i++) {
		st->level[i] = ng ? 0 : t->switches[i].level;
		st->nodes[i] = hwloc_bitmap_dup(t->switches[i].desc);
		if (!st->nodes[i])
			goto fail;
	}
	if (!ng) {
		/* _find_child_switches(): the last parent listed wins */
		for (int i = 0; i < ns; i++)
			for (int c = 0; c < t->switches[i].nchildren; c++) {
				st->parent[t->switches[i].children[c]] = i;
				if (_link(st, i, t->switches[i].children[c]))
					goto fail;
			}
		return st;
	}
	for (int g = 0; g < ng; g++) {
		st->level[ns + g] = 1;
		st->nodes[ns + g] = hwloc_bitmap_dup(t->groups[g].desc);
		if (!st->nodes[ns + g])
			goto fail;
		for (int k = 0; k < t->groups[g].nrouters; k++) {
			st->parent[t->groups[g].routers[k]] = ns + g;
			if (_link(st, ns + g, t->groups[g].routers[k]))
				goto fail;
		}
		if (ng > 1) {
			st->parent[ns + g] = ns + ng;
			if (_link(st, ns + g, ns + ng))
				goto fail;
		}
	}
	if (ng > 1) {
		st->level[ns + ng] = 2;
		st->nodes[ns + ng] = hwloc_bitmap_alloc();
		if (!st->nodes[ns + ng])
			goto fail;
		hwloc_bitmap_set_range(st->nodes[ns + ng], 0, t->nnodes - 1);
	}
	return st;
fail:
	topoml__sl_switches_free(st);
	return NULL;
}

/* switches_dist row of switch i: hop distance in the switch graph,
 * added to dist (_topo_add_dist()). */
void topoml__sl_add_dist(const struct topoml_sl_switches *st,
			 uint32_t *dist, int i, int *queue, uint32_t *d)
{
	int head = 0, tail = 0;

	for (int k = 0; k < st->n; k++)
		d[k] = TOPOML_SL_INFINITE;
	d[i] = 0;
	queue[tail++] = i;
	while (head < tail) {
		int x = queue[head++];

		for (int a = 0; a < st->nadj[x]; a++) {
			int y = st->adj[x][a];

			if (d[y] == TOPOML_SL_INFINITE) {
				d[y] = d[x] + 1;
				queue[tail++] = y;
			}
		}
	}
	for (int k = 0; k < st->n; k++)
		dist[k] = (d[k] == TOPOML_SL_INFINITE ||
			   dist[k] == TOPOML_SL_INFINITE) ?
			  TOPOML_SL_INFINITE : dist[k] + d[k];
}

/* _topo_compare_switches() */
static int _compare_switches(const struct topoml_sl_switches *st, int i,
			     int j, int rem, const int *cnt)
{
	for (int guard = 0; guard < 4 * st->n + 8; guard++) {
		bool i_fit = cnt[i] >= rem, j_fit = cnt[j] >= rem;

		if (i_fit && j_fit) {
			if (cnt[i] != cnt[j])
				return cnt[i] < cnt[j] ? 1 : -1;
			break;
		} else if (i_fit) {
			return 1;
		} else if (j_fit) {
			return -1;
		}
		if ((st->parent[i] != i || st->parent[j] != j) &&
		    st->parent[i] != st->parent[j]) {
			i = st->parent[i];
			j = st->parent[j];
			continue;
		}
		break;
	}
	if (cnt[i] != cnt[j])
		return cnt[i] > cnt[j] ? 1 : -1;
	if (st->level[i] != st->level[j])
		return st->level[i] < st->level[j] ? 1 : -1;
	return 0;
}

void topoml__sl_choose_best(const struct topoml_sl_switches *st,
			    const uint32_t *dist, const int *cnt, int rem,
			    int i, int *best)
{
	int tcs;

	if (*best == -1 || dist[i] == TOPOML_SL_INFINITE || !cnt[i]) {
		if (cnt[i] && dist[i] < TOPOML_SL_INFINITE)
			*best = i;
		return;
	}
	tcs = _compare_switches(st, i, *best, rem, cnt);
	if ((dist[i] < dist[*best] && tcs >= 0) ||
	    (dist[i] == dist[*best] && tcs > 0))
		*best = i;
}
