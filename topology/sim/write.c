/*
 * Writers: the JSON site file (what topoml_load_json reads back to the
 * same model) and Slurm's topology.conf, with compact host list ranges.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "topoml.h"
#include "sim.h"
#include "model/model_int.h"

#define JSON_FLAGS (JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Names of the children (switch indices) as a host list; caller frees. */
static char *_switch_list(const topoml_topo_t *t, const int *sw, int n)
{
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	char *s;
	int i;

	if (!names)
		return NULL;
	for (i = 0; i < n; i++)
		names[i] = t->switches[sw[i]].name;
	s = topoml__names_format(names, n, false);
	free(names);
	return s;
}

/* Add key: string (taking ownership of s); -1 when s is NULL (no memory). */
static int _add_str(json_object *o, const char *key, char *s)
{
	if (!s)
		return -1;
	json_object_object_add(o, key, json_object_new_string(s));
	free(s);
	return 0;
}

static void _add_speed(json_object *o, double speed)
{
	if (speed <= 0)
		return;
	if (speed == floor(speed) && speed < 1e15)
		json_object_object_add(o, "link_speed",
				       json_object_new_int64((int64_t)speed));
	else
		json_object_object_add(o, "link_speed",
				       json_object_new_double(speed));
}

/* One switch / router as a one-line JSON object. */
static json_object *_switch_obj(const topoml_topo_t *t, int i)
{
	const struct topoml_switch *s = &t->switches[i];
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "name", json_object_new_string(s->name));
	if (s->nnodes &&
	    _add_str(o, "nodes", topoml_nodes_format(t, s->nodes, s->nnodes)))
		goto fail;
	if (s->nchildren &&
	    _add_str(o, "switches",
		     _switch_list(t, s->children, s->nchildren)))
		goto fail;
	_add_speed(o, s->link_speed);
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static int _put(FILE *f, json_object *o, const char *indent, bool last)
{
	if (!o)
		return -1;
	fprintf(f, "%s%s%s\n", indent, json_object_to_json_string_ext(o,
		JSON_FLAGS), last ? "" : ",");
	json_object_put(o);
	return 0;
}

static int _json_fat_tree(const topoml_topo_t *t, FILE *f)
{
	int i;

	fprintf(f, "  \"switches\": [\n");
	for (i = 0; i < t->nswitches; i++)
		if (_put(f, _switch_obj(t, i), "    ", i == t->nswitches - 1))
			return -1;
	fprintf(f, "  ]\n");
	return 0;
}

static int _json_dragonfly(const topoml_topo_t *t, FILE *f)
{
	static const char *arr[] = { NULL, "all-to-all", "absolute",
				     "relative" };
	int g = t->ngroups, i, k;

	if (t->df_arrangement != TOPOML_DF_EXPLICIT) {
		fprintf(f, "  \"global_links\": \"%s\",\n",
			arr[t->df_arrangement]);
	} else {
		int total = 0, done = 0;

		for (i = 0; i < g; i++)
			for (k = i + 1; k < g; k++)
				total += t->global_links &&
					 t->global_links[i * g + k] > 0;
		fprintf(f, "  \"global_links\": [\n");
		for (i = 0; i < g; i++)
			for (k = i + 1; k < g; k++) {
				json_object *l;
				int c = t->global_links ?
					t->global_links[i * g + k] : 0;

				if (c <= 0)
					continue;
				l = json_object_new_array();
				json_object_array_add(l, json_object_new_string(
					t->groups[i].name));
				json_object_array_add(l, json_object_new_string(
					t->groups[k].name));
				json_object_array_add(l, json_object_new_int(c));
				if (_put(f, l, "    ", ++done == total))
					return -1;
			}
		fprintf(f, "  ],\n");
	}
	fprintf(f, "  \"groups\": [\n");
	for (i = 0; i < g; i++) {
		const struct topoml_group *gr = &t->groups[i];
		json_object *name = json_object_new_string(gr->name);

		fprintf(f, "    { \"name\": %s, \"routers\": [\n",
			json_object_to_json_string_ext(name, JSON_FLAGS));
		json_object_put(name);
		for (k = 0; k < gr->nrouters; k++)
			if (_put(f, _switch_obj(t, gr->routers[k]), "      ",
				 k == gr->nrouters - 1))
				return -1;
		fprintf(f, "    ] }%s\n", i == g - 1 ? "" : ",");
	}
	fprintf(f, "  ]\n");
	return 0;
}

/*
 * Nodes named <prefix><first + i> (optionally zero-padded) at the i-th
 * coordinate, x fastest, fill the torus: write the pattern, not 100k lines.
 */
static bool _torus_pattern(const topoml_topo_t *t, char *prefix, size_t plen,
			   long *first, int *digits)
{
	const char *n0 = t->nodes[0].name;
	size_t len = strlen(n0), p = len;
	long vol = (long)t->dims[0] * t->dims[1] * t->dims[2], i;
	char buf[320];

	while (p > 0 && isdigit((unsigned char)n0[p - 1]))
		p--;
	if (p == len || p == 0 || p >= plen || len - p > 18 ||
	    t->nnodes != vol)
		return false;
	memcpy(prefix, n0, p);
	prefix[p] = '\0';
	*first = strtol(n0 + p, NULL, 10);
	*digits = (n0[p] == '0' && len - p > 1) ? (int)(len - p) : 0;
	for (i = 0; i < t->nnodes; i++) {
		const struct topoml_node *n = &t->nodes[i];
		long r = i;

		if (n->coord[0] != r % t->dims[0])
			return false;
		r /= t->dims[0];
		if (n->coord[1] != r % t->dims[1] ||
		    n->coord[2] != r / t->dims[1])
			return false;
		snprintf(buf, sizeof(buf), "%s%0*ld", prefix, *digits,
			 *first + i);
		if (strcmp(buf, n->name))
			return false;
	}
	return true;
}

static int _json_torus(const topoml_topo_t *t, FILE *f)
{
	char prefix[256];
	long first;
	int digits, i;

	fprintf(f, "  \"dims\": [%d, %d, %d],\n", t->dims[0], t->dims[1],
		t->dims[2]);
	fprintf(f, "  \"wrap\": [%s, %s, %s],\n",
		t->wrap[0] ? "true" : "false", t->wrap[1] ? "true" : "false",
		t->wrap[2] ? "true" : "false");
	if (_torus_pattern(t, prefix, sizeof(prefix), &first, &digits)) {
		json_object *p = json_object_new_object();

		json_object_object_add(p, "prefix",
				       json_object_new_string(prefix));
		json_object_object_add(p, "first",
				       json_object_new_int64(first));
		if (digits)
			json_object_object_add(p, "digits",
					       json_object_new_int(digits));
		json_object_object_add(p, "order",
				       json_object_new_string("xyz"));
		fprintf(f, "  \"node_pattern\": ");
		return _put(f, p, "", true);
	}
	fprintf(f, "  \"nodes\": [\n");
	for (i = 0; i < t->nnodes; i++) {
		const struct topoml_node *n = &t->nodes[i];
		json_object *o = json_object_new_object();
		json_object *c = json_object_new_array();

		json_object_object_add(o, "name",
				       json_object_new_string(n->name));
		json_object_array_add(c, json_object_new_int(n->coord[0]));
		json_object_array_add(c, json_object_new_int(n->coord[1]));
		json_object_array_add(c, json_object_new_int(n->coord[2]));
		json_object_object_add(o, "coord", c);
		if (_put(f, o, "    ", i == t->nnodes - 1))
			return -1;
	}
	fprintf(f, "  ]\n");
	return 0;
}

int topoml_write_json(const topoml_topo_t *t, FILE *f)
{
	int rc;

	if (!t || !f)
		return -1;
	fprintf(f, "{\n  \"family\": \"%s\",\n", topoml_family_name(t->family));
	switch (t->family) {
	case TOPOML_FAT_TREE:
		rc = _json_fat_tree(t, f);
		break;
	case TOPOML_DRAGONFLY:
		rc = _json_dragonfly(t, f);
		break;
	case TOPOML_TORUS:
		rc = _json_torus(t, f);
		break;
	default:
		rc = -1;
	}
	fprintf(f, "}\n");
	if (fflush(f) || ferror(f))
		rc = -1;
	return rc;
}

static int _conf_switch(const topoml_topo_t *t, int i, FILE *f)
{
	const struct topoml_switch *s = &t->switches[i];
	char *list;

	fprintf(f, "SwitchName=%s", s->name);
	if (s->nnodes) {
		list = topoml_nodes_format(t, s->nodes, s->nnodes);
		if (!list)
			return -1;
		fprintf(f, " Nodes=%s", list);
		free(list);
	}
	if (s->nchildren) {
		list = _switch_list(t, s->children, s->nchildren);
		if (!list)
			return -1;
		fprintf(f, " Switches=%s", list);
		free(list);
	}
	if (s->link_speed > 0)
		fprintf(f, " LinkSpeed=%.0f", s->link_speed);
	fprintf(f, "\n");
	return 0;
}

/* A name for an extra switch that no router or group already uses. */
static void _free_name(const topoml_topo_t *t, const char *base, char *buf,
		       size_t len)
{
	int i, k;

	for (k = 0;; k++) {
		bool used = false;

		if (k)
			snprintf(buf, len, "%s%d", base, k);
		else
			snprintf(buf, len, "%s", base);
		used = topoml_switch_by_name(t, buf) >= 0;
		for (i = 0; !used && i < t->ngroups; i++)
			used = !strcmp(t->groups[i].name, buf);
		if (!used)
			return;
	}
}

/*
 * Slurm's topology/tree (with TopologyParam=dragonfly) sees a dragonfly as
 * routers = leaf switches, one switch per group over its routers, and a
 * top switch over the groups so that jobs may span groups.
 */
/* The group's name, unless a router has it: then "<name>-group[N]". */
static const char *_group_switch(const topoml_topo_t *t, int g, char *buf,
				 size_t len)
{
	int k;

	snprintf(buf, len, "%s", t->groups[g].name);
	for (k = 0; topoml_switch_by_name(t, buf) >= 0; k++)
		snprintf(buf, len, "%s-group%.0d", t->groups[g].name, k);
	return buf;
}

static int _conf_dragonfly(const topoml_topo_t *t, FILE *f)
{
	char top[300], name[300], *list;
	char **names;
	int i, k;

	for (i = 0; i < t->ngroups; i++) {
		const struct topoml_group *g = &t->groups[i];

		fprintf(f, "# group %s\n", g->name);
		for (k = 0; k < g->nrouters; k++)
			if (_conf_switch(t, g->routers[k], f))
				return -1;
		if (t->ngroups == 1)
			continue;
		list = _switch_list(t, g->routers, g->nrouters);
		if (!list)
			return -1;
		fprintf(f, "SwitchName=%s Switches=%s\n",
			_group_switch(t, i, name, sizeof(name)), list);
		free(list);
	}
	if (t->ngroups == 1)
		return 0;
	names = calloc(t->ngroups, sizeof(*names));
	if (!names)
		return -1;
	for (i = 0; i < t->ngroups; i++)
		names[i] = strdup(_group_switch(t, i, name, sizeof(name)));
	list = topoml__names_format((const char *const *)names, t->ngroups,
				   false);
	for (i = 0; i < t->ngroups; i++)
		free(names[i]);
	free(names);
	if (!list)
		return -1;
	_free_name(t, "top", top, sizeof(top));
	fprintf(f, "SwitchName=%s Switches=%s\n", top, list);
	free(list);
	return 0;
}

int topoml_write_conf(const topoml_topo_t *t, FILE *f)
{
	int i, rc = 0;

	if (!t || !f)
		return -1;
	if (t->family == TOPOML_TORUS) {
		/* topology.conf has no coordinates: use JSON */
		errno = EINVAL;
		return -1;
	}
	fprintf(f, "# topology.conf for Slurm's topology/tree, written by "
		"topoml from %s\n# %s: %d nodes, %d %s\n",
		t->source ? t->source : "a model",
		topoml_family_name(t->family), t->nnodes, t->nswitches,
		t->family == TOPOML_DRAGONFLY ? "routers" : "switches");
	if (t->family == TOPOML_DRAGONFLY)
		rc = _conf_dragonfly(t, f);
	else
		for (i = 0; !rc && i < t->nswitches; i++)
			rc = _conf_switch(t, i, f);
	if (fflush(f) || ferror(f))
		rc = -1;
	return rc;
}
