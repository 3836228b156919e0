/*
 * The topology model: building it switch by switch (loaders, generators).
 * Checking it and deriving its query tables: finalize.c; the queries the
 * placement engine asks millions of times: query.c.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "topoml/build.h"
#include "model/model_int.h"
#include "model/cache.h"

topoml_topo_t *topoml_new(enum topoml_family family, const char *source)
{
	topoml_topo_t *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->family = family;
	t->source = strdup(source ? source : "generated");
	t->node_index = topoml__index_new();
	t->switch_index = topoml__index_new();
	t->df_arrangement = TOPOML_DF_EXPLICIT;
	if (!t->source || !t->node_index || !t->switch_index) {
		topoml_free(t);
		return NULL;
	}
	return t;
}

void topoml_free(topoml_topo_t *t)
{
	int i;

	if (!t)
		return;
	topoml__cache_free(t);
	for (i = 0; i < t->nnodes; i++)
		free(t->nodes[i].name);
	free(t->nodes);
	for (i = 0; i < t->nswitches; i++) {
		struct topoml_switch *s = &t->switches[i];

		free(s->name);
		free(s->parents);
		free(s->children);
		free(s->nodes);
		hwloc_bitmap_free(s->desc);
	}
	free(t->switches);
	for (i = 0; i < t->ngroups; i++) {
		free(t->groups[i].name);
		free(t->groups[i].routers);
		hwloc_bitmap_free(t->groups[i].desc);
	}
	free(t->groups);
	free(t->global_links);
	free(t->coord_node);
	for (i = 0; i < t->nnvl; i++)
		free(t->nvl_names[i]);
	free(t->nvl_names);
	free(t->nvl_lines);
	topoml__index_free(t->node_index);
	topoml__index_free(t->switch_index);
	free(t->source);
	free(t);
}

/* Names end up in host lists and topology.conf: keep them parseable. */
static bool _name_ok(const char *name)
{
	if (!name || !*name)
		return false;
	return !name[strcspn(name, " \t\r\n,[]=#\"\\")];
}

int topoml_add_node(topoml_topo_t *t, const char *name, int line,
		    topoml_errors_t *err)
{
	char w[512];
	struct topoml_node *n;
	int i;

	if (!_name_ok(name)) {
		topoml_errors_add(err, "%s: invalid node name '%s'",
				  topoml__where(t, line, w, sizeof(w)),
				  name ? name : "");
		return -1;
	}
	i = topoml__index_find(t->node_index, name);
	if (i >= 0) {
		if (t->nodes[i].line > 0)
			topoml_errors_add(err,
				"%s: node %s: duplicate name (first at line %d)",
				topoml__where(t, line, w, sizeof(w)), name,
				t->nodes[i].line);
		else
			topoml_errors_add(err, "%s: node %s: duplicate name",
				topoml__where(t, line, w, sizeof(w)), name);
		return -1;
	}
	if (topoml__grow((void **)&t->nodes, t->nnodes, sizeof(*t->nodes)))
		goto oom;
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	if (!n->name)
		goto oom;
	n->leaf = -1;
	n->group = -1;
	n->coord[0] = n->coord[1] = n->coord[2] = -1;
	n->line = line;
	n->nvl = -1;
	if (topoml__index_put(t->node_index, n->name, t->nnodes)) {
		free(n->name);
		goto oom;
	}
	return t->nnodes++;
oom:
	topoml_errors_add(err, "%s: out of memory", t->source);
	return -1;
}

int topoml_add_switch(topoml_topo_t *t, const char *name, int line,
		      topoml_errors_t *err)
{
	const char *what = t->family == TOPOML_DRAGONFLY ? "router" : "switch";
	struct topoml_switch *s;
	char w[512];
	int i;

	if (!_name_ok(name)) {
		topoml_errors_add(err, "%s: invalid %s name '%s'",
				  topoml__where(t, line, w, sizeof(w)), what,
				  name ? name : "");
		return -1;
	}
	i = topoml__index_find(t->switch_index, name);
	if (i >= 0) {
		if (t->switches[i].line > 0)
			topoml_errors_add(err,
				"%s: %s %s: duplicate name (first at line %d)",
				topoml__where(t, line, w, sizeof(w)), what,
				name, t->switches[i].line);
		else
			topoml_errors_add(err, "%s: %s %s: duplicate name",
				topoml__where(t, line, w, sizeof(w)), what,
				name);
		return -1;
	}
	if (topoml__grow((void **)&t->switches, t->nswitches,
			sizeof(*t->switches)))
		goto oom;
	s = &t->switches[t->nswitches];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		goto oom;
	s->group = -1;
	s->line = line;
	if (topoml__index_put(t->switch_index, s->name, t->nswitches)) {
		free(s->name);
		goto oom;
	}
	return t->nswitches++;
oom:
	topoml_errors_add(err, "%s: out of memory", t->source);
	return -1;
}

static int _push_int(int **arr, int *n, int v)
{
	if (topoml__grow((void **)arr, *n, sizeof(int)))
		return -1;
	(*arr)[(*n)++] = v;
	return 0;
}

void topoml_link_switches(topoml_topo_t *t, int parent, int child)
{
	struct topoml_switch *p, *c;
	int i;

	if (parent < 0 || child < 0 || parent >= t->nswitches ||
	    child >= t->nswitches)
		return;
	p = &t->switches[parent];
	c = &t->switches[child];
	/*
	 * Listed twice: one link.  Scan the shorter list (a child has one or
	 * two parents, a spine thousands of children): linear in the links.
	 */
	if (c->nparents < p->nchildren) {
		for (i = 0; i < c->nparents; i++)
			if (c->parents[i] == parent)
				return;
	} else {
		for (i = 0; i < p->nchildren; i++)
			if (p->children[i] == child)
				return;
	}
	if (_push_int(&p->children, &p->nchildren, child))
		return;
	if (_push_int(&c->parents, &c->nparents, parent))
		p->nchildren--;
}

int topoml_attach_node(topoml_topo_t *t, int sw, int node,
		       topoml_errors_t *err)
{
	struct topoml_node *n;
	struct topoml_switch *s, *o;
	char w[512];

	if (sw < 0 || sw >= t->nswitches || node < 0 || node >= t->nnodes)
		return -1;
	n = &t->nodes[node];
	s = &t->switches[sw];
	if (n->leaf == sw)
		return 0;	/* listed twice on the same switch */
	if (n->leaf >= 0) {
		o = &t->switches[n->leaf];
		topoml_errors_add(err,
			"%s: node %s is on two %s: %s (line %d) and %s (line %d)",
			topoml__where(t, s->line, w, sizeof(w)), n->name,
			t->family == TOPOML_DRAGONFLY ? "routers" :
			"leaf switches", o->name, o->line, s->name, s->line);
		return -1;
	}
	if (_push_int(&s->nodes, &s->nnodes, node)) {
		topoml_errors_add(err, "%s: out of memory", t->source);
		return -1;
	}
	n->leaf = sw;
	return 0;
}

int topoml_add_group(topoml_topo_t *t, const char *name, int line,
		     topoml_errors_t *err)
{
	struct topoml_group *g;
	char w[512];
	int i;

	if (!_name_ok(name)) {
		topoml_errors_add(err, "%s: invalid group name '%s'",
				  topoml__where(t, line, w, sizeof(w)),
				  name ? name : "");
		return -1;
	}
	/*
	 * The group matrices are ngroups^2: a bound keeps a hostile file from
	 * asking for gigabytes (the largest dragonflies have a few hundred
	 * groups), and makes the duplicate scan below cheap enough.
	 */
	if (t->ngroups >= TOPOML_MAX_GROUPS) {
		topoml_errors_add(err, "%s: group %s: more than %d dragonfly "
				  "groups",
				  topoml__where(t, line, w, sizeof(w)),
				  name, TOPOML_MAX_GROUPS);
		return -1;
	}
	for (i = 0; i < t->ngroups; i++) {
		if (strcmp(t->groups[i].name, name))
			continue;
		topoml_errors_add(err,
			"%s: group %s: duplicate name (first at line %d)",
			topoml__where(t, line, w, sizeof(w)), name,
			t->groups[i].line);
		return -1;
	}
	if (topoml__grow((void **)&t->groups, t->ngroups, sizeof(*t->groups)))
		goto oom;
	g = &t->groups[t->ngroups];
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	if (!g->name)
		goto oom;
	g->line = line;
	return t->ngroups++;
oom:
	topoml_errors_add(err, "%s: out of memory", t->source);
	return -1;
}

void topoml_group_add_router(topoml_topo_t *t, int group, int sw)
{
	struct topoml_group *g;
	int i;

	if (group < 0 || group >= t->ngroups || sw < 0 || sw >= t->nswitches)
		return;
	g = &t->groups[group];
	for (i = 0; i < g->nrouters; i++)
		if (g->routers[i] == sw)
			return;
	_push_int(&g->routers, &g->nrouters, sw);
}

/*
 * NVLink domains are few (one per rack of 18 nodes): a scan by name, the
 * last one first (per-leaf fields name the same domain in a row).
 */
int topoml_add_nvl(topoml_topo_t *t, const char *name, int line,
		   topoml_errors_t *err)
{
	char w[512];
	int i;

	if (!_name_ok(name)) {
		topoml_errors_add(err, "%s: invalid NVLink domain name '%s'",
				  topoml__where(t, line, w, sizeof(w)),
				  name ? name : "");
		return -1;
	}
	for (i = t->nnvl - 1; i >= 0; i--)
		if (!strcmp(t->nvl_names[i], name))
			return i;
	if (topoml__grow((void **)&t->nvl_names, t->nnvl,
			sizeof(*t->nvl_names)) ||
	    topoml__grow((void **)&t->nvl_lines, t->nnvl,
			sizeof(*t->nvl_lines)))
		goto oom;
	t->nvl_names[t->nnvl] = strdup(name);
	if (!t->nvl_names[t->nnvl])
		goto oom;
	t->nvl_lines[t->nnvl] = line;
	return t->nnvl++;
oom:
	topoml_errors_add(err, "%s: out of memory", t->source);
	return -1;
}

int topoml_set_nvl(topoml_topo_t *t, int node, int nvl, int line,
		   topoml_errors_t *err)
{
	struct topoml_node *n;
	char w[512];

	if (node < 0 || node >= t->nnodes || nvl < 0 || nvl >= t->nnvl)
		return -1;
	n = &t->nodes[node];
	if (n->nvl == nvl)
		return 0;
	if (n->nvl >= 0) {
		topoml_errors_add(err, "%s: node %s is in two NVLink domains: "
				  "%s (line %d) and %s",
				  topoml__where(t, line, w, sizeof(w)), n->name,
				  t->nvl_names[n->nvl], t->nvl_lines[n->nvl],
				  t->nvl_names[nvl]);
		return -1;
	}
	n->nvl = nvl;
	return 0;
}
