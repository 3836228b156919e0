/*
 * topology/topoml: the engine's model as scontrol show topology prints it,
 * and the engine's fragmentation figure (topo_show.h).
 *
 * The listing is records made in slurmctld from the model and packed for
 * the client, which prints them after the wrapped plugin's lines:
 *   unit  a line with its nodes: a fat-tree switch (when the wrapped
 *         plugin lists none), a dragonfly group with its routers, nodes
 *         and global links, an NVLink domain;
 *   box   torus coordinates: a run of x, or a whole z plane, its nodes in
 *         x-fastest order, so that the client finds any node's place;
 *   note  what the size bound (TOPO_SHOW_MAX_BYTES) left out.
 * Narrowing follows Slurm's tree and block plugins: with a node list a
 * unit is printed when it holds every listed node; a box prints the
 * coordinates of each listed node it holds; unit= names a unit (a group
 * or one of its routers, a switch, an NVLink domain).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/pack.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topo_compat.h"
#include "topoml/place.h"
#include "topo_show.h"

#define TOPO_SHOW_VERSION 1
#define TOPO_SHOW_MAX_RECS (1 << 20)	/* unpack: a sane bound */
/* Dragonfly: a group's peers listed one by one up to this many. */
#define TOPO_SHOW_MAX_PEERS 16

enum { TS_UNIT = 1, TS_BOX, TS_NOTE };

struct topo_show_rec {
	uint16_t kind;
	char *name;		/* unit: what unit= matches */
	char *members;		/* unit: more names unit= matches (routers) */
	char *nodes;		/* host list; box: x fastest */
	char *text;		/* unit, note: the line */
	uint32_t lo[3], n[3];	/* box: first coordinate, extent */
};

struct topo_show {
	char *how;		/* "on its fewest leaves", ... */
	uint32_t nodes, idle, largest;
	int64_t frag;		/* -1: none */
	uint32_t nrec, cap;
	struct topo_show_rec *rec;
	size_t bytes;		/* making: text so far */
	uint32_t left_units, left_nodes;	/* making: over the bound */
};

/* ---- making (slurmctld) -------------------------------------------- */

/* A host list of the engine's set, xmalloc'd ("" when empty). */
static char *_set_str(const topoml_topo_t *t, hwloc_const_bitmap_t set)
{
	char *s = topoml_nodeset_format(t, set), *x = xstrdup(s ? s : "");

	free(s);
	return x;
}

static char *_list_str(const topoml_topo_t *t, const int *nodes, int n)
{
	char *s = topoml_nodes_format(t, nodes, n), *x = xstrdup(s ? s : "");

	free(s);
	return x;
}

/* Room for one more record of len bytes; false (and counted) past the
 * bound. */
static struct topo_show_rec *_add(struct topo_show *s, size_t len,
				  uint32_t nodes)
{
	struct topo_show_rec *r;

	if (s->bytes + len > TOPO_SHOW_MAX_BYTES) {
		s->left_units++;
		s->left_nodes += nodes;
		return NULL;
	}
	if (s->nrec == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		xrecalloc(s->rec, s->cap, sizeof(*s->rec));
	}
	s->bytes += len + 32;
	r = &s->rec[s->nrec++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* A unit record; takes name, members, nodes and text (xmalloc'd). */
static void _unit(struct topo_show *s, char *name, char *members,
		  char *nodes, char *text, uint32_t nnodes)
{
	struct topo_show_rec *r = _add(s, strlen(text) + strlen(nodes) +
				       (name ? strlen(name) : 0) +
				       (members ? strlen(members) : 0),
				       nnodes);

	if (!r) {
		xfree(name);
		xfree(members);
		xfree(nodes);
		xfree(text);
		return;
	}
	r->kind = TS_UNIT;
	r->name = name;
	r->members = members;
	r->nodes = nodes;
	r->text = text;
}

/* Fat-tree switches as Slurm's tree plugin prints its own. */
static void _switches(struct topo_show *s, const topoml_topo_t *t)
{
	for (int i = 0; i < t->nswitches; i++) {
		const struct topoml_switch *sw = &t->switches[i];
		char *nodes = _set_str(t, sw->desc), *text = NULL;

		xstrfmtcat(text, "SwitchName=%s Level=%d", sw->name,
			   sw->level);
		if (sw->link_speed > 0)
			xstrfmtcat(text, " LinkSpeed=%.0f", sw->link_speed);
		if (nodes[0])
			xstrfmtcat(text, " Nodes=%s", nodes);
		if (sw->nchildren) {
			hostlist_t *hl = hostlist_create(NULL);
			char *kids;

			for (int k = 0; k < sw->nchildren; k++)
				hostlist_push_host(
					hl, t->switches[sw->children[k]].name);
			kids = hostlist_ranged_string_xmalloc(hl);
			hostlist_destroy(hl);
			xstrfmtcat(text, " Switches=%s", kids);
			xfree(kids);
		}
		_unit(s, xstrdup(sw->name), NULL, nodes, text,
		      hwloc_bitmap_weight(sw->desc));
	}
}

/* Dragonfly: a line per group, its routers, nodes and global links. */
static void _groups(struct topo_show *s, const topoml_topo_t *t)
{
	int g = t->ngroups;

	for (int i = 0; i < g; i++) {
		const struct topoml_group *gr = &t->groups[i];
		hostlist_t *hl = hostlist_create(NULL);
		char *routers, *nodes = _set_str(t, gr->desc), *text = NULL;
		char *peers = NULL;
		int links = 0, npeers = 0;

		for (int k = 0; k < gr->nrouters; k++)
			hostlist_push_host(hl,
					   t->switches[gr->routers[k]].name);
		routers = hostlist_ranged_string_xmalloc(hl);
		hostlist_destroy(hl);
		for (int k = 0; k < g; k++) {
			int c = t->global_links ? t->global_links[i * g + k] :
						  0;

			if (k == i || c <= 0)
				continue;
			links += c;
			if (++npeers <= TOPO_SHOW_MAX_PEERS)
				xstrfmtcat(peers, "%s%s:%d", peers ? "," : "",
					   t->groups[k].name, c);
		}
		xstrfmtcat(text, "GroupName=%s Routers=%s Nodes=%s GlobalLinks=%d",
			   gr->name, routers, nodes, links);
		if (npeers > TOPO_SHOW_MAX_PEERS)
			xstrfmtcat(text, " Peers=%d", npeers);
		else if (peers)
			xstrfmtcat(text, " Peers=%s", peers);
		xfree(peers);
		_unit(s, xstrdup(gr->name), routers, nodes, text,
		      hwloc_bitmap_weight(gr->desc));
	}
}

/* A box of the torus: x0..x0+nx-1, y0.., z0.., every cell a node. */
static void _box(struct topo_show *s, const topoml_topo_t *t, int x0,
		 int nx, int y0, int ny, int z)
{
	int *nodes = xcalloc(nx * ny, sizeof(int)), n = 0;
	struct topo_show_rec *r;
	char *list;

	for (int y = y0; y < y0 + ny; y++)
		for (int x = x0; x < x0 + nx; x++)
			nodes[n++] = t->coord_node[x + t->dims[0] *
						   (y + t->dims[1] * z)];
	list = _list_str(t, nodes, n);
	xfree(nodes);
	if (!(r = _add(s, strlen(list) + 24, n))) {
		xfree(list);
		return;
	}
	r->kind = TS_BOX;
	r->nodes = list;
	r->lo[0] = x0;
	r->lo[1] = y0;
	r->lo[2] = z;
	r->n[0] = nx;
	r->n[1] = ny;
	r->n[2] = 1;
}

/*
 * Torus: a z plane whose cells are all nodes is one box, else each run
 * of x of nodes in a row: a 100k-node torus is a line per plane, its
 * nodes a host list (a range when the names follow the coordinates).
 */
static void _torus(struct topo_show *s, const topoml_topo_t *t)
{
	int X = t->dims[0], Y = t->dims[1], Z = t->dims[2];

	for (int z = 0; z < Z; z++) {
		bool full = true;

		for (int k = 0; k < X * Y && full; k++)
			full = t->coord_node[k + X * Y * z] >= 0;
		if (full) {
			_box(s, t, 0, X, 0, Y, z);
			continue;
		}
		for (int y = 0; y < Y; y++)
			for (int x = 0; x < X;) {
				int x1 = x;

				while (x1 < X &&
				       t->coord_node[x1 + X * (y + Y * z)] >= 0)
					x1++;
				if (x1 > x)
					_box(s, t, x, x1 - x, y, 1, z);
				x = x1 + 1;
			}
	}
}

/* NVLink domains (a block file's are its blocks, which the wrapped
 * plugin lists). */
static void _nvlink(struct topo_show *s, const topoml_topo_t *t)
{
	hwloc_bitmap_t *dom;

	if (t->nnvl <= 0 || t->nblocks > 0)
		return;
	dom = xcalloc(t->nnvl, sizeof(*dom));
	for (int d = 0; d < t->nnvl; d++)
		dom[d] = hwloc_bitmap_alloc();
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].nvl >= 0 && t->nodes[i].nvl < t->nnvl &&
		    dom[t->nodes[i].nvl])
			hwloc_bitmap_set(dom[t->nodes[i].nvl], i);
	for (int d = 0; d < t->nnvl; d++) {
		char *nodes, *text = NULL;

		if (!dom[d])
			continue;
		nodes = _set_str(t, dom[d]);
		xstrfmtcat(text, "NVLinkDomain=%s Nodes=%s", t->nvl_names[d],
			   nodes);
		_unit(s, xstrdup(t->nvl_names[d]), NULL, nodes, text,
		      hwloc_bitmap_weight(dom[d]));
		hwloc_bitmap_free(dom[d]);
	}
	xfree(dom);
}

/* The engine's set of Slurm's bitmap (NULL: every node) and of nodes
 * up, not draining (idle). */
static hwloc_bitmap_t _engine_set(const topoml_topo_t *t, const int *map,
				  int map_count, bitstr_t *mask, bool idle)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	node_record_t *node_ptr;

	if (!set)
		return NULL;
	for (int i = 0; (node_ptr = next_node_bitmap(mask, &i)); i++) {
		if (i >= map_count || map[i] < 0 || map[i] >= t->nnodes)
			continue;
		if (idle && (IS_NODE_DOWN(node_ptr) ||
			     IS_NODE_DRAIN(node_ptr) ||
			     IS_NODE_FAIL(node_ptr)))
			continue;
		hwloc_bitmap_set(set, map[i]);
	}
	return set;
}

int64_t topo_show_fragmentation(const topoml_topo_t *t, const int *map,
				int map_count, bitstr_t *mask,
				uint32_t *largest)
{
	hwloc_bitmap_t set;
	int l;

	if (!t || !map || !mask || t->nnodes <= 0)
		return -1;
	if (!(set = _engine_set(t, map, map_count, mask, false)))
		return -1;
	l = topoml_largest_free(t, set);
	hwloc_bitmap_free(set);
	if (l < 0)
		l = 0;
	if (l > t->nnodes)
		l = t->nnodes;
	if (largest)
		*largest = l;
	return t->nnodes - l;
}

static const char *_how(const topoml_topo_t *t)
{
	if (t->nblocks > 0)
		return "on its fewest blocks";
	switch (t->family) {
	case TOPOML_DRAGONFLY:
		return "in its fewest groups";
	case TOPOML_TORUS:
		return "in one box";
	default:
		return "on its fewest leaves";
	}
}

struct topo_show *topo_show_make(const topoml_topo_t *t, bool inner_lists,
				 const int *map, int map_count)
{
	struct topo_show *s = xmalloc(sizeof(*s));
	hwloc_bitmap_t idle;

	s->how = xstrdup(_how(t));
	s->nodes = t->nnodes;
	s->frag = -1;
	/* slurmctld: the nodes with no job now (node read lock held) */
	if (idle_node_bitmap &&
	    (idle = _engine_set(t, map, map_count, idle_node_bitmap, true))) {
		s->idle = hwloc_bitmap_weight(idle);
		s->largest = topoml_largest_free(t, idle);
		if (s->largest > s->nodes)
			s->largest = s->nodes;
		s->frag = s->nodes - s->largest;
		hwloc_bitmap_free(idle);
	}
	switch (t->family) {
	case TOPOML_FAT_TREE:
		if (!inner_lists && t->nblocks <= 0)
			_switches(s, t);
		break;
	case TOPOML_DRAGONFLY:
		_groups(s, t);
		break;
	case TOPOML_TORUS:
		_torus(s, t);
		break;
	}
	_nvlink(s, t);
	if (s->left_units) {
		struct topo_show_rec *r;

		s->bytes = 0;	/* the note always fits */
		r = _add(s, 0, 0);
		r->kind = TS_NOTE;
		xstrfmtcat(r->text, "topoml: %u more line%s (%u nodes) not listed: the listing stops at %d KiB",
			   s->left_units, s->left_units == 1 ? "" : "s",
			   s->left_nodes, TOPO_SHOW_MAX_BYTES / 1024);
	}
	return s;
}

void topo_show_free(struct topo_show *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nrec; i++) {
		xfree(s->rec[i].name);
		xfree(s->rec[i].members);
		xfree(s->rec[i].nodes);
		xfree(s->rec[i].text);
	}
	xfree(s->rec);
	xfree(s->how);
	xfree(s);
}

/* ---- carried to the client ----------------------------------------- */

void topo_show_pack(const struct topo_show *s, buf_t *buffer)
{
	char *how = s ? s->how : NULL;	/* packstr() casts its argument */

	pack16(TOPO_SHOW_VERSION, buffer);
	pack8(s && s->frag >= 0, buffer);
	pack32(s ? s->nodes : 0, buffer);
	pack32(s ? s->idle : 0, buffer);
	pack32(s ? s->largest : 0, buffer);
	packstr(how, buffer);
	pack32(s ? s->nrec : 0, buffer);
	for (uint32_t i = 0; s && i < s->nrec; i++) {
		const struct topo_show_rec *r = &s->rec[i];

		pack16(r->kind, buffer);
		packstr(r->name, buffer);
		packstr(r->members, buffer);
		packstr(r->nodes, buffer);
		packstr(r->text, buffer);
		for (int d = 0; d < 3; d++) {
			pack32(r->lo[d], buffer);
			pack32(r->n[d], buffer);
		}
	}
}

int topo_show_unpack(struct topo_show **sp, buf_t *buffer)
{
	struct topo_show *s = xmalloc(sizeof(*s));
	uint16_t version;
	uint8_t has_frag;
	uint32_t n;

	*sp = NULL;
	safe_unpack16(&version, buffer);
	if (version != TOPO_SHOW_VERSION) {	/* another topoml's: not shown */
		topo_show_free(s);
		return SLURM_SUCCESS;
	}
	safe_unpack8(&has_frag, buffer);
	safe_unpack32(&s->nodes, buffer);
	safe_unpack32(&s->idle, buffer);
	safe_unpack32(&s->largest, buffer);
	s->frag = has_frag ? (int64_t)s->nodes - s->largest : -1;
	safe_unpackstr(&s->how, buffer);
	safe_unpack32(&n, buffer);
	if (n > TOPO_SHOW_MAX_RECS)
		goto unpack_error;
	s->rec = xcalloc(n ? n : 1, sizeof(*s->rec));
	s->cap = n;
	for (uint32_t i = 0; i < n; i++) {
		struct topo_show_rec *r = &s->rec[i];

		s->nrec = i + 1;
		safe_unpack16(&r->kind, buffer);
		safe_unpackstr(&r->name, buffer);
		safe_unpackstr(&r->members, buffer);
		safe_unpackstr(&r->nodes, buffer);
		safe_unpackstr(&r->text, buffer);
		for (int d = 0; d < 3; d++) {
			safe_unpack32(&r->lo[d], buffer);
			safe_unpack32(&r->n[d], buffer);
		}
	}
	*sp = s;
	return SLURM_SUCCESS;

unpack_error:
	topo_show_free(s);
	return SLURM_ERROR;
}

/* ---- printed by the client ----------------------------------------- */

static void _range(char **out, uint32_t lo, uint32_t n)
{
	if (n > 1)
		xstrfmtcat(*out, "%u-%u", lo, lo + n - 1);
	else
		xstrfmtcat(*out, "%u", lo);
}

/* Does unit name the record (its name, or one of its members)? */
static bool _unit_match(const struct topo_show_rec *r, const char *unit)
{
	hostset_t *hs;
	bool in;

	if (!xstrcmp(r->name, unit))
		return true;
	if (!r->members || !r->members[0] || !(hs = hostset_create(r->members)))
		return false;
	in = hostset_within(hs, unit);
	hostset_destroy(hs);
	return in;
}

/* Does the record hold every node of nodes_list? */
static bool _holds(const struct topo_show_rec *r, const char *nodes_list)
{
	hostset_t *hs;
	bool in;

	if (!r->nodes || !r->nodes[0] || !(hs = hostset_create(r->nodes)))
		return false;
	in = hostset_within(hs, nodes_list);
	hostset_destroy(hs);
	return in;
}

/* The box's listed nodes, one line each with its coordinates. */
static int _box_nodes(const struct topo_show_rec *r, hostset_t *want,
		      char **out)
{
	hostlist_t *hl = r->nodes ? hostlist_create(r->nodes) : NULL;
	uint32_t k = 0, nx = r->n[0] ? r->n[0] : 1, ny = r->n[1] ? r->n[1] : 1;
	int found = 0;
	char *h;

	while (hl && (h = hostlist_shift(hl))) {
		if (hostset_within(want, h)) {
			xstrfmtcat(*out, "NodeName=%s Coords=%u,%u,%u\n", h,
				   r->lo[0] + k % nx,
				   r->lo[1] + (k / nx) % ny,
				   r->lo[2] + k / (nx * ny));
			found++;
		}
		free(h);
		k++;
	}
	if (hl)
		hostlist_destroy(hl);
	return found;
}

void topo_show_print(const struct topo_show *s, const char *nodes_list,
		     const char *unit, char **out)
{
	bool by_nodes = nodes_list && nodes_list[0];
	bool by_unit = unit && unit[0];
	hostset_t *want = by_nodes ? hostset_create(nodes_list) : NULL;

	if (!s)
		return;
	for (uint32_t i = 0; i < s->nrec; i++) {
		const struct topo_show_rec *r = &s->rec[i];

		switch (r->kind) {
		case TS_UNIT:
			if (by_unit && !_unit_match(r, unit))
				continue;
			if (by_nodes && !_holds(r, nodes_list))
				continue;
			xstrfmtcat(*out, "%s\n", r->text);
			break;
		case TS_BOX:
			if (by_unit)
				continue;
			if (by_nodes) {
				if (want)
					_box_nodes(r, want, out);
				continue;
			}
			xstrfmtcat(*out, "Coords=");
			for (int d = 0; d < 3; d++) {
				if (d)
					xstrcat(*out, ",");
				_range(out, r->lo[d], r->n[d]);
			}
			xstrfmtcat(*out, " Nodes=%s\n", r->nodes);
			break;
		case TS_NOTE:
			xstrfmtcat(*out, "%s\n", r->text);
			break;
		}
	}
	if (!by_nodes && !by_unit && s->frag >= 0)
		xstrfmtcat(*out, "topoml fragmentation: %"PRId64" (%u nodes, %u idle, the largest job %s: %u)\n",
			   s->frag, s->nodes, s->idle, s->how, s->largest);
	if (want)
		hostset_destroy(want);
}
