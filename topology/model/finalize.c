/*
 * topoml_finalize(): a model built switch by switch checked (loops,
 * unreachable nodes, a family's own rules) and its query tables derived,
 * per family: fat-tree ancestors and leaf classes, dragonfly group
 * distances, the torus's Hilbert curve (geom.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "model/model_int.h"
#include "model/cache.h"

void topoml__cache_free(topoml_topo_t *t)
{
	struct topoml_cache *c = t->cache;
	int i;

	if (!c)
		return;
	if (c->anc_set)
		for (i = 0; i < t->nswitches; i++)
			hwloc_bitmap_free(c->anc_set[i]);
	free(c->anc_set);
	free(c->anc_off);
	free(c->anc);
	free(c->cls);
	free(c->cls_ok);
	free(c->gdist);
	free(c->curve_node);
	free(c->curve_pos);
	free(c);
	t->cache = NULL;
}

static void _reset_derived(topoml_topo_t *t)
{
	int i;

	topoml__cache_free(t);
	for (i = 0; i < t->nswitches; i++) {
		hwloc_bitmap_free(t->switches[i].desc);
		t->switches[i].desc = NULL;
		t->switches[i].level = 0;
	}
	for (i = 0; i < t->ngroups; i++) {
		hwloc_bitmap_free(t->groups[i].desc);
		t->groups[i].desc = NULL;
	}
	free(t->coord_node);
	t->coord_node = NULL;
	t->nlevels = 0;
}

/* Describe the loop that reaches sw again, from the DFS stack. */
static void _report_loop(topoml_topo_t *t, const int *stack, int depth,
			 int sw, topoml_errors_t *err)
{
	char w[512], *path = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&path, &len);
	int i, from = 0;

	for (i = depth - 1; i >= 0; i--)
		if (stack[i] == sw) {
			from = i;
			break;
		}
	if (f) {
		for (i = from; i < depth; i++)
			fprintf(f, "%s -> ", t->switches[stack[i]].name);
		fprintf(f, "%s", t->switches[sw].name);
		fclose(f);
	}
	topoml_errors_add(err, "%s: switch %s: loop in the switch hierarchy: %s",
			  topoml__where(t, t->switches[sw].line, w, sizeof(w)),
			  t->switches[sw].name, path ? path : "?");
	free(path);
}

/*
 * Depth-first walk down the child links: finds loops and yields a
 * post-order (children before parents) for levels and descendant sets.
 */
static int _walk(topoml_topo_t *t, int *order, topoml_errors_t *err)
{
	int ns = t->nswitches, norder = 0, i, rc = 0;
	char *color = calloc(ns ? ns : 1, 1);
	int *stack = malloc((ns ? ns : 1) * sizeof(int));
	int *next = calloc(ns ? ns : 1, sizeof(int));

	if (!color || !stack || !next) {
		topoml_errors_add(err, "%s: out of memory", t->source);
		rc = -1;
		goto out;
	}
	for (i = 0; i < ns; i++) {
		int depth = 0;

		if (color[i])
			continue;
		stack[depth++] = i;
		color[i] = 1;
		while (depth) {
			int s = stack[depth - 1];
			struct topoml_switch *sw = &t->switches[s];

			if (next[s] < sw->nchildren) {
				int c = sw->children[next[s]++];

				if (color[c] == 1) {
					_report_loop(t, stack, depth, c, err);
					rc = -1;
				} else if (!color[c]) {
					color[c] = 1;
					stack[depth++] = c;
				}
				continue;
			}
			color[s] = 2;
			order[norder++] = s;
			depth--;
		}
	}
out:
	free(color);
	free(stack);
	free(next);
	return rc;
}

static int _find(int *uf, int x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

/* Ancestor lists are short (a handful of levels): insertion sort. */
static void _sort_by_level(const topoml_topo_t *t, int *a, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		int v = a[i], lv = t->switches[v].level;

		for (j = i; j > 0; j--) {
			int u = a[j - 1], lu = t->switches[u].level;

			if (lu < lv || (lu == lv && u < v))
				break;
			a[j] = u;
		}
		a[j] = v;
	}
}

/*
 * The leaf classes of every level (struct topoml_cache): union each leaf
 * with its ancestors of level <= l.  A class is exact when one of its
 * switches has every leaf of the class below it; uf and ndesc are
 * scratch arrays of nswitches.
 */
static int _leaf_classes(topoml_topo_t *t, struct topoml_cache *c, int *uf,
			 int *ndesc)
{
	int ns = t->nswitches, L = t->nlevels > 0 ? t->nlevels : 1;
	int *size = calloc(ns ? ns : 1, sizeof(int));

	c->cls = malloc((size_t)L * (ns ? ns : 1) * sizeof(int));
	c->cls_ok = calloc(L, sizeof(bool));
	if (!size || !c->cls || !c->cls_ok) {
		free(size);
		return -1;
	}
	for (int l = 0; l < L; l++) {
		int *cls = c->cls + (size_t)l * ns;

		for (int i = 0; i < ns; i++) {
			uf[i] = i;
			ndesc[i] = 0;
			size[i] = 0;
		}
		for (int a = 0; a < ns; a++) {
			if (!c->anc_set[a])
				continue;
			ndesc[a]++;
			for (int k = c->anc_off[a]; k < c->anc_off[a + 1]; k++) {
				int p = c->anc[k], x, y;

				if (t->switches[p].level > l)
					break;	/* sorted by level */
				ndesc[p]++;
				x = _find(uf, a);
				y = _find(uf, p);
				if (x != y)
					uf[x] = y;
			}
		}
		for (int a = 0; a < ns; a++) {
			cls[a] = _find(uf, a);
			size[cls[a]] += c->anc_set[a] != NULL;
		}
		c->cls_ok[l] = true;
		for (int a = 0; a < ns; a++)
			if (c->anc_set[a] && size[cls[a]] > 0)
				size[cls[a]] = -size[cls[a]];	/* open */
		for (int p = 0; p < ns; p++)
			if ((t->switches[p].level <= l || c->anc_set[p]) &&
			    size[cls[p]] < 0 && ndesc[p] == -size[cls[p]])
				size[cls[p]] = -size[cls[p]];	/* covered */
		for (int a = 0; a < ns; a++)
			if (c->anc_set[a] && size[cls[a]] < 0)
				c->cls_ok[l] = false;
	}
	free(size);
	return 0;
}

/* Per leaf: ancestors sorted by level, and the set of self + ancestors. */
static int _fat_tree_cache(topoml_topo_t *t, struct topoml_cache *c)
{
	int ns = t->nswitches, i, total = 0, cap = 0;
	int *queue = malloc((ns ? ns : 1) * sizeof(int));
	int *uf = malloc((ns ? ns : 1) * sizeof(int));
	int rc = -1;

	c->anc_off = calloc(ns + 1, sizeof(int));
	c->anc_set = calloc(ns ? ns : 1, sizeof(hwloc_bitmap_t));
	if (!queue || !uf || !c->anc_off || !c->anc_set)
		goto out;
	for (i = 0; i < ns; i++)
		uf[i] = i;
	for (i = 0; i < ns; i++) {
		struct topoml_switch *s = &t->switches[i];
		int k, head = 0, tail = 0;

		for (k = 0; k < s->nparents; k++) {
			int a = _find(uf, i), b = _find(uf, s->parents[k]);

			if (a != b)
				uf[a] = b;
		}
		if (!s->nparents)
			c->nroots++;
		c->anc_off[i] = total;
		if (!s->level)
			c->nleaves++;
		if (!s->nnodes)
			continue;
		c->anc_set[i] = hwloc_bitmap_alloc();
		if (!c->anc_set[i])
			goto out;
		hwloc_bitmap_set(c->anc_set[i], i);
		queue[tail++] = i;
		while (head < tail) {
			struct topoml_switch *q = &t->switches[queue[head++]];

			for (k = 0; k < q->nparents; k++) {
				int p = q->parents[k];

				if (hwloc_bitmap_isset(c->anc_set[i], p))
					continue;
				hwloc_bitmap_set(c->anc_set[i], p);
				queue[tail++] = p;
			}
		}
		if (tail == 1)
			continue;	/* a leaf without parents */
		if (total + tail - 1 > cap) {
			int *n;

			cap = (total + tail) * 2;
			n = realloc(c->anc, cap * sizeof(int));
			if (!n)
				goto out;
			c->anc = n;
		}
		memcpy(c->anc + total, queue + 1, (tail - 1) * sizeof(int));
		_sort_by_level(t, c->anc + total, tail - 1);
		total += tail - 1;
	}
	c->anc_off[ns] = total;
	for (i = 0; i < ns; i++)
		if (_find(uf, i) == i)
			c->nparts++;
	rc = _leaf_classes(t, c, uf, queue);
out:
	free(queue);
	free(uf);
	return rc;
}

static int _finalize_fat_tree(topoml_topo_t *t, topoml_errors_t *err)
{
	int *order = NULL, i, k, rc = 0;
	char w[512];

	for (i = 0; i < t->nnodes; i++) {
		struct topoml_node *n = &t->nodes[i];

		n->group = -1;
		if (n->leaf < 0) {
			topoml_errors_add(err,
				"%s: node %s is not attached to any switch",
				topoml__where(t, n->line, w, sizeof(w)),
				n->name);
			rc = -1;
		}
	}
	for (i = 0; i < t->nswitches; i++) {
		struct topoml_switch *s = &t->switches[i];

		s->group = -1;
		/*
		 * A switch with neither is an empty leaf: Slurm accepts one
		 * whose nodes all sit on other leaves too (it only warns),
		 * so the readers reject a switch without either in the text.
		 */
		if (s->nnodes && s->nchildren) {
			topoml_errors_add(err,
				"%s: switch %s has both nodes and child switches",
				topoml__where(t, s->line, w, sizeof(w)),
				s->name);
			rc = -1;
		}
	}
	order = malloc((t->nswitches ? t->nswitches : 1) * sizeof(int));
	if (!order) {
		topoml_errors_add(err, "%s: out of memory", t->source);
		return -1;
	}
	if (_walk(t, order, err))
		rc = -1;
	if (rc)
		goto out;
	/* Post-order: children are done before their parents. */
	for (i = 0; i < t->nswitches; i++) {
		struct topoml_switch *s = &t->switches[order[i]];

		s->desc = hwloc_bitmap_alloc();
		if (!s->desc)
			goto oom;
		s->level = 0;
		for (k = 0; k < s->nnodes; k++)
			hwloc_bitmap_set(s->desc, s->nodes[k]);
		for (k = 0; k < s->nchildren; k++) {
			struct topoml_switch *c = &t->switches[s->children[k]];

			if (c->level + 1 > s->level)
				s->level = c->level + 1;
			hwloc_bitmap_or(s->desc, s->desc, c->desc);
		}
		if (s->level + 1 > t->nlevels)
			t->nlevels = s->level + 1;
	}
	t->cache = calloc(1, sizeof(*t->cache));
	if (!t->cache || _fat_tree_cache(t, t->cache))
		goto oom;
out:
	free(order);
	return rc;
oom:
	topoml_errors_add(err, "%s: out of memory", t->source);
	free(order);
	return -1;
}

/* The one distance between any two groups (0 if they differ), the mean. */
static void _gdist_summary(struct topoml_cache *c, int g)
{
	double sum = 0;
	int u = -1;

	for (size_t i = 0; i < (size_t)g * g; i++) {
		int d = c->gdist[i];

		if (i / g == i % g)
			continue;
		sum += d > 0 ? d : 0;
		u = u < 0 || u == d ? d : 0;
	}
	c->gdist_uniform = u > 0 ? u : (g < 2 ? 1 : 0);
	c->gdist_mean = g > 1 ? sum / ((double)g * (g - 1)) : 1;
}

/* Hops between groups over global links: BFS from every group. */
static int _group_distances(topoml_topo_t *t, topoml_errors_t *err)
{
	int g = t->ngroups, i, j, rc = 0;
	int *dist, *queue = NULL, *adj_off = NULL, *adj = NULL, nadj = 0;
	char w[512];

	dist = malloc((size_t)g * g * sizeof(int));
	queue = malloc(g * sizeof(int));
	adj_off = calloc(g + 1, sizeof(int));
	if (!dist || !queue || !adj_off)
		goto oom;
	for (i = 0; i < g; i++)
		for (j = 0; j < g; j++)
			if (i != j && t->global_links[i * g + j] > 0)
				nadj++;
	adj = malloc((nadj ? nadj : 1) * sizeof(int));
	if (!adj)
		goto oom;
	nadj = 0;
	for (i = 0; i < g; i++) {
		adj_off[i] = nadj;
		for (j = 0; j < g; j++)
			if (i != j && t->global_links[i * g + j] > 0)
				adj[nadj++] = j;
	}
	adj_off[g] = nadj;
	for (i = 0; i < g; i++) {
		int *d = dist + (size_t)i * g, head = 0, tail = 0;

		/* Linked to every other group (all-to-all): no search, so an
		 * all-to-all dragonfly costs g^2, not g^3. */
		if (adj_off[i + 1] - adj_off[i] == g - 1) {
			for (j = 0; j < g; j++)
				d[j] = j != i;
			continue;
		}
		for (j = 0; j < g; j++)
			d[j] = -1;
		d[i] = 0;
		queue[tail++] = i;
		while (head < tail) {
			int q = queue[head++], k;

			for (k = adj_off[q]; k < adj_off[q + 1]; k++)
				if (d[adj[k]] < 0) {
					d[adj[k]] = d[q] + 1;
					queue[tail++] = adj[k];
				}
		}
	}
	/* Report every group the first group cannot reach. */
	for (j = 1; j < g; j++)
		if (dist[j] < 0) {
			topoml_errors_add(err,
				"%s: group %s is not connected to group %s by global links",
				topoml__where(t, t->groups[j].line, w,
					      sizeof(w)),
				t->groups[j].name, t->groups[0].name);
			rc = -1;
		}
	t->cache->gdist = dist;
	_gdist_summary(t->cache, g);
	free(queue);
	free(adj_off);
	free(adj);
	return rc;
oom:
	free(dist);
	free(queue);
	free(adj_off);
	free(adj);
	topoml_errors_add(err, "%s: out of memory", t->source);
	return -1;
}

static int _finalize_dragonfly(topoml_topo_t *t, topoml_errors_t *err)
{
	int i, k, g = t->ngroups, rc = 0;
	char w[512];

	for (i = 0; i < t->nswitches; i++)
		t->switches[i].group = -1;
	if (!g) {
		topoml_errors_add(err, "%s: dragonfly without groups",
				  t->source);
		return -1;
	}
	for (i = 0; i < g; i++) {
		struct topoml_group *gr = &t->groups[i];

		if (!gr->nrouters) {
			topoml_errors_add(err, "%s: group %s has no routers",
				topoml__where(t, gr->line, w, sizeof(w)),
				gr->name);
			rc = -1;
		}
		for (k = 0; k < gr->nrouters; k++) {
			struct topoml_switch *s = &t->switches[gr->routers[k]];

			if (s->group >= 0 && s->group != i) {
				topoml_errors_add(err,
					"%s: router %s is in two groups: %s (line %d) and %s (line %d)",
					topoml__where(t, s->line, w, sizeof(w)),
					s->name, t->groups[s->group].name,
					t->groups[s->group].line, gr->name,
					gr->line);
				rc = -1;
			}
			s->group = i;
		}
	}
	for (i = 0; i < t->nswitches; i++) {
		struct topoml_switch *s = &t->switches[i];

		if (s->group < 0) {
			topoml_errors_add(err, "%s: router %s is in no group",
				topoml__where(t, s->line, w, sizeof(w)),
				s->name);
			rc = -1;
		}
		if (s->nchildren || s->nparents) {
			topoml_errors_add(err,
				"%s: router %s: dragonfly routers have no parent or child switches",
				topoml__where(t, s->line, w, sizeof(w)),
				s->name);
			rc = -1;
		}
	}
	for (i = 0; i < t->nnodes; i++) {
		struct topoml_node *n = &t->nodes[i];

		if (n->leaf < 0) {
			topoml_errors_add(err,
				"%s: node %s is not attached to any router",
				topoml__where(t, n->line, w, sizeof(w)),
				n->name);
			rc = -1;
			continue;
		}
		n->group = t->switches[n->leaf].group;
	}
	if (rc)
		return rc;
	t->nlevels = 1;
	for (i = 0; i < g; i++) {
		t->groups[i].desc = hwloc_bitmap_alloc();
		if (!t->groups[i].desc)
			goto oom;
	}
	for (i = 0; i < t->nswitches; i++) {
		struct topoml_switch *s = &t->switches[i];

		s->level = 0;
		s->desc = hwloc_bitmap_alloc();
		if (!s->desc)
			goto oom;
		for (k = 0; k < s->nnodes; k++)
			hwloc_bitmap_set(s->desc, s->nodes[k]);
		hwloc_bitmap_or(t->groups[s->group].desc,
				t->groups[s->group].desc, s->desc);
	}
	if (!t->global_links) {
		if (t->df_arrangement == TOPOML_DF_EXPLICIT && g > 1) {
			topoml_errors_add(err,
				"%s: dragonfly has no global links between its %d groups",
				t->source, g);
			return -1;
		}
		t->global_links = calloc((size_t)g * g, sizeof(int));
		if (!t->global_links)
			goto oom;
	}
	if (t->df_arrangement != TOPOML_DF_EXPLICIT) {
		/* Every arrangement of the literature links all group pairs. */
		for (i = 0; i < g; i++)
			for (k = 0; k < g; k++)
				if (i != k && t->global_links[i * g + k] < 1)
					t->global_links[i * g + k] = 1;
	}
	for (i = 0; i < g; i++) {
		t->global_links[i * g + i] = 0;
		for (k = i + 1; k < g; k++) {
			int *a = &t->global_links[i * g + k];
			int *b = &t->global_links[k * g + i];

			*a = *b = *a > *b ? *a : *b;
		}
	}
	t->cache = calloc(1, sizeof(*t->cache));
	if (!t->cache)
		goto oom;
	return _group_distances(t, err);
oom:
	topoml_errors_add(err, "%s: out of memory", t->source);
	return -1;
}

static int _finalize_torus(topoml_topo_t *t, topoml_errors_t *err)
{
	size_t vol = 1;
	int i, d, rc = 0;
	char w[512];

	for (d = 0; d < 3; d++) {
		if (t->dims[d] < 1) {
			topoml_errors_add(err,
				"%s: torus dimension %c is %d, must be at least 1",
				t->source, "xyz"[d], t->dims[d]);
			return -1;
		}
		vol *= (size_t)t->dims[d];
	}
	if (vol > (size_t)INT_MAX / 2) {
		topoml_errors_add(err, "%s: torus %dx%dx%d is too large",
				  t->source, t->dims[0], t->dims[1],
				  t->dims[2]);
		return -1;
	}
	t->coord_node = malloc(vol * sizeof(int));
	if (!t->coord_node) {
		topoml_errors_add(err, "%s: out of memory", t->source);
		return -1;
	}
	for (i = 0; i < (int)vol; i++)
		t->coord_node[i] = -1;
	for (i = 0; i < t->nnodes; i++) {
		struct topoml_node *n = &t->nodes[i];
		const int *c = n->coord;
		int pos;

		n->leaf = -1;
		n->group = -1;
		if (c[0] < 0 && c[1] < 0 && c[2] < 0) {
			topoml_errors_add(err, "%s: node %s has no coordinate",
				topoml__where(t, n->line, w, sizeof(w)),
				n->name);
			rc = -1;
			continue;
		}
		if (c[0] < 0 || c[0] >= t->dims[0] || c[1] < 0 ||
		    c[1] >= t->dims[1] || c[2] < 0 || c[2] >= t->dims[2]) {
			topoml_errors_add(err,
				"%s: node %s: coordinate (%d,%d,%d) outside the torus dimensions %dx%dx%d",
				topoml__where(t, n->line, w, sizeof(w)),
				n->name, c[0], c[1], c[2], t->dims[0],
				t->dims[1], t->dims[2]);
			rc = -1;
			continue;
		}
		pos = topoml__torus_pos(t, c);
		if (t->coord_node[pos] >= 0) {
			struct topoml_node *o = &t->nodes[t->coord_node[pos]];

			topoml_errors_add(err,
				"%s: node %s: coordinate (%d,%d,%d) already taken by node %s (line %d)",
				topoml__where(t, n->line, w, sizeof(w)),
				n->name, c[0], c[1], c[2], o->name, o->line);
			rc = -1;
			continue;
		}
		t->coord_node[pos] = i;
	}
	if (t->nswitches) {
		topoml_errors_add(err, "%s: a torus has no switches (%s)",
				  t->source, t->switches[0].name);
		rc = -1;
	}
	if (rc)
		return rc;
	t->cache = calloc(1, sizeof(*t->cache));
	if (t->cache) {
		t->cache->curve_node = malloc((t->nnodes ? t->nnodes : 1) *
					      sizeof(int));
		t->cache->curve_pos = malloc((t->nnodes ? t->nnodes : 1) *
					     sizeof(uint64_t));
	}
	if (!t->cache || !t->cache->curve_node || !t->cache->curve_pos ||
	    topoml__hilbert_curve(t, t->cache->curve_pos,
				  t->cache->curve_node)) {
		topoml_errors_add(err, "%s: out of memory", t->source);
		return -1;
	}
	return 0;
}

int topoml_finalize(topoml_topo_t *t, topoml_errors_t *err)
{
	int rc;

	if (!t)
		return -1;
	_reset_derived(t);
	switch (t->family) {
	case TOPOML_FAT_TREE:
		rc = _finalize_fat_tree(t, err);
		break;
	case TOPOML_DRAGONFLY:
		rc = _finalize_dragonfly(t, err);
		break;
	case TOPOML_TORUS:
		rc = _finalize_torus(t, err);
		break;
	default:
		topoml_errors_add(err, "%s: unknown topology family %d",
				  t->source, (int)t->family);
		rc = -1;
	}
	if (!t->nnodes) {
		topoml_errors_add(err, "%s: the topology has no nodes",
				  t->source);
		rc = -1;
	}
	if (rc)
		_reset_derived(t);
	return rc;
}
