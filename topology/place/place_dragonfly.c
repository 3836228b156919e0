/*
 * topoml's placement on a dragonfly: fewest groups first (global links are
 * the scarce, slow ones), then fewest routers, then the tightest fit
 * (smallest free group / router that will do, so empty groups stay whole).
 * A job larger than a group takes the fewest routers of its groups
 * together (a ring hop a router), as Kueue's BestFit does per level,
 * where that saves a few routers.
 *
 * With the alltoall hint and the site's DragonflySpread=alltoall
 * (req->df_spread_alltoall), the job is spread evenly over as many groups
 * as it can use instead: with adaptive routing, all-to-all traffic then
 * uses many global links in parallel (Yang et al., SC16).  The isolate hint
 * prefers routers, then groups, that carry no other job.  With job owners
 * known, a job that must span groups prefers, among equally tight groups,
 * those that carry no other multi-group job: both rings would cross the
 * same group's global links.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "topoml.h"
#include "place/common/place_int.h"

/* routers a set-wide choice must save to be taken (see _build) */
#define DF_SET_SAVING 3

struct dcand {
	int level;		/* 0 router, 1 group, 2 machine */
	int id;			/* router / group index, -1 machine */
	int pass;
	bool clean;
	bool spread;
	bool fullest;		/* machine level: the fullest groups */
	int kg, kr;		/* groups, routers */
	int free;
};

struct df {
	const struct place_in *in;
	const topoml_topo_t *t;
	int *rfree, *rreq;	/* per router */
	int *gfree, *greq;	/* per group */
	unsigned char *rok_clean, *gok_clean;
	unsigned char *gshared;	/* carries a node of a multi-group job */
	int maxr, maxg;
	/* scratch */
	int *f, *r, *take;
	unsigned char *ok;
};

static int _dcmp(const void *a, const void *b)
{
	const struct dcand *x = a, *y = b;

	if (x->pass != y->pass)
		return x->pass - y->pass;
	if (x->spread != y->spread)
		return x->spread ? -1 : 1;
	if (x->kg != y->kg)
		return x->kg - y->kg;
	if (x->kr != y->kr)
		return x->kr - y->kr;
	if (x->level != y->level)
		return x->level - y->level;
	if (x->free != y->free)
		return x->free - y->free;
	return x->id - y->id;
}

/* Routers of group g for want nodes (required ones included); fills set
 * when given.  Returns routers used or -1. */
static int _in_group(struct df *d, int g, int want, bool clean,
		     hwloc_bitmap_t set)
{
	const struct topoml_group *gr = &d->t->groups[g];
	int n = gr->nrouters, k;

	for (int i = 0; i < n; i++) {
		int s = gr->routers[i];

		d->f[i] = d->rfree[s];
		d->r[i] = d->rreq[s];
		d->ok[i] = clean ? d->rok_clean[s] : 1;
	}
	k = topoml__choose(d->f, d->r, d->ok, n, want - d->greq[g], d->maxr,
			   set ? d->take : NULL);
	if (k < 0 || !set)
		return k;
	for (int i = 0; i < n; i++)
		topoml__take_switch(d->in, gr->routers[i], d->take[i] - d->r[i],
				    set);
	return k;
}

/*
 * Routers for the quotas of a group set chosen over all its groups at
 * once: as many nodes as the quotas' sum (required ones included), on the
 * fewest routers, the quotas then saying only which groups may give
 * nodes.  No group outside the set: the set came from the fewest groups
 * that hold the job, so each keeps a node (with required nodes, maybe
 * fewer).  Routers used or -1; fills set when given.
 */
static int _in_set(struct df *d, const int *quota, bool clean,
		   hwloc_bitmap_t set)
{
	const topoml_topo_t *t = d->t;
	int n = 0, want = 0, k;

	for (int g = 0; g < t->ngroups; g++) {
		const struct topoml_group *gr = &t->groups[g];

		if (quota[g] <= 0)
			continue;
		want += quota[g] - d->greq[g];
		for (int i = 0; i < gr->nrouters; i++, n++) {
			int s = gr->routers[i];

			d->f[n] = d->rfree[s];
			d->r[n] = d->rreq[s];
			d->ok[n] = clean ? d->rok_clean[s] : 1;
		}
	}
	k = topoml__choose(d->f, d->r, d->ok, n, want, d->maxr,
			   set ? d->take : NULL);
	if (k < 0 || !set)
		return k;
	n = 0;
	for (int g = 0; g < t->ngroups; g++) {
		const struct topoml_group *gr = &t->groups[g];

		if (quota[g] <= 0)
			continue;
		for (int i = 0; i < gr->nrouters; i++, n++)
			topoml__take_switch(d->in, gr->routers[i],
					    d->take[n] - d->r[n], set);
	}
	return k;
}

/* Groups by most free nodes (not those marked in skip) until need is
 * met, the last partly; quota filled when given.  Groups used or -1. */
static int _fullest(const int *f, const unsigned char *skip, int ng,
		    int need, int *quota)
{
	unsigned char *used = calloc(ng + 1, 1);
	int k = 0;

	if (!used)
		return -1;
	for (int left = need; left > 0; k++) {
		int b = -1;

		for (int g = 0; g < ng; g++)
			if (!used[g] && f[g] > 0 && !(skip && skip[g]) &&
			    (b < 0 || f[g] > f[b]))
				b = g;
		if (b < 0) {
			k = -1;
			break;
		}
		used[b] = 1;
		if (quota)
			quota[b] = f[b] < left ? f[b] : left;
		left -= f[b];
	}
	free(used);
	return k;
}

/* Group quotas for the machine-level candidate; returns groups used. */
static int _machine_quota(struct df *d, bool clean, bool spread,
			  bool fullest, int *quota)
{
	const topoml_topo_t *t = d->t;
	int ng = t->ngroups, need = d->in->n - d->in->nreq, k;
	int *f = calloc(ng + 1, sizeof(int)), *r = calloc(ng + 1, sizeof(int));
	unsigned char *ok = calloc(ng + 1, 1);

	if (!f || !r || !ok) {
		k = -1;
		goto out;
	}
	for (int g = 0; g < ng; g++) {
		f[g] = d->gfree[g];
		r[g] = d->greq[g];
		ok[g] = clean ? d->gok_clean[g] : 1;
	}
	if (fullest) {
		/* the groups with most free nodes, the last one partly:
		 * fewer routers than the tightest groups' fragments; as
		 * many groups without another multi-group job's first */
		int k0 = _fullest(f, NULL, ng, need, NULL);

		k = _fullest(f, d->gshared, ng, need, NULL);
		if (k < 0 || k > k0)
			k = _fullest(f, NULL, ng, need, quota);
		else
			_fullest(f, d->gshared, ng, need, quota);
		goto out;
	}
	if (!spread) {
		k = topoml__choose(f, r, ok, ng, need, d->maxg, quota);
		if (k < 1 || clean)
			goto out;
		/* as few groups without another multi-group job's */
		for (int g = 0; g < ng; g++)
			ok[g] = !d->gshared[g];
		if (topoml__choose(f, r, ok, ng, need, d->maxg, NULL) == k)
			topoml__choose(f, r, ok, ng, need, d->maxg, quota);
		goto out;
	}
	/* Spread: water-fill the job over every group with free nodes. */
	k = 0;
	for (int g = 0; g < ng; g++)
		quota[g] = r[g];
	for (int left = need; left > 0;) {
		int moved = 0;

		for (int g = 0; g < ng && left > 0; g++) {
			if (!ok[g] || quota[g] >= f[g])
				continue;
			quota[g]++;
			left--;
			moved = 1;
		}
		if (!moved) {
			k = -1;
			goto out;
		}
	}
	for (int g = 0; g < ng; g++)
		k += quota[g] > 0;
out:
	free(f);
	free(r);
	free(ok);
	return k;
}

/*
 * mark[g] |= bit where group g holds a busy node (owner set and, given
 * avail, not in it) of a job that other groups hold too.  One pass over
 * the nodes; 0, or -1 out of memory.
 */
int topoml__df_shared_groups(const topoml_topo_t *t, const uint32_t *owner,
			     hwloc_const_bitmap_t avail, unsigned char *mark,
			     unsigned char bit)
{
	struct topoml_job_unit *p;
	int np = 0, rc;

	if (!owner)
		return 0;
	p = malloc((t->nnodes + 1) * sizeof(*p));
	if (!p)
		return -1;
	for (int v = 0; v < t->nnodes; v++) {
		int g = t->nodes[v].group;

		if (!owner[v] || g < 0 ||
		    (avail && hwloc_bitmap_isset(avail, v)))
			continue;
		/* a job's nodes come in runs: one pair a run and group */
		if (np && p[np - 1].job == owner[v] && p[np - 1].unit == g)
			continue;
		p[np].job = owner[v];
		p[np++].unit = g;
	}
	rc = topoml__mark_multi_unit(p, np, mark, bit);
	free(p);
	return rc;
}

/* gshared[g]: group g holds a node of a job that other groups hold too
 * (owners known). */
static int _classify(struct df *d)
{
	return topoml__df_shared_groups(d->t, d->in->req->owner,
					d->in->avail, d->gshared, 1);
}

/* Routers the quotas take group by group (each group's fewest). */
static int _by_group(struct df *d, const int *quota, bool clean,
		     hwloc_bitmap_t set)
{
	int kr = 0;

	for (int g = 0; g < d->t->ngroups; g++) {
		int k;

		if (quota[g] <= 0)
			continue;
		k = _in_group(d, g, quota[g], clean, set);
		if (k < 0 && clean)
			k = _in_group(d, g, quota[g], false, set);
		if (k < 0)
			return -1;
		kr += k;
	}
	return kr;
}

static int _build(struct df *d, const struct dcand *c, hwloc_bitmap_t set,
		  int *kr_out)
{
	const topoml_topo_t *t = d->t;
	int *quota = NULL, kr = 0, rc = -1, kj;

	hwloc_bitmap_copy(set, d->in->required);
	if (c->level == 0) {
		topoml__take_switch(d->in, c->id, d->in->n - d->in->nreq, set);
		kr = 1;
		rc = 0;
		goto out;
	}
	if (c->level == 1) {
		kr = _in_group(d, c->id, d->in->n, c->clean, set);
		rc = kr < 0 ? -1 : 0;
		goto out;
	}
	quota = calloc(t->ngroups, sizeof(int));
	if (!quota || _machine_quota(d, c->clean, c->spread, c->fullest,
				     quota) < 0)
		goto out;
	/*
	 * A job larger than a group: its routers over the group set at
	 * once where that takes DF_SET_SAVING or more fewer than group by
	 * group (whole groups' router fragments left for routers of the
	 * group taken in part: each router fewer is a hop fewer on the
	 * ring).  A fragment left is scattered free nodes that can draw a
	 * later job across more groups: on Theta's trace one or two
	 * routers fewer cost that more than they saved.  A job one group
	 * could hold, spread for want of room, keeps the group by group
	 * shares, so the group it takes whole keeps no scattered free
	 * nodes.  A spread job keeps its even shares.
	 */
	kr = _by_group(d, quota, c->clean, NULL);
	kj = kr < 0 || c->spread || d->in->n <= d->maxg ? -1 :
	     _in_set(d, quota, c->clean, NULL);
	if (kj >= 0 && kj <= kr - DF_SET_SAVING) {
		kr = _in_set(d, quota, c->clean, set);
		rc = kr < 0 ? -1 : 0;
		goto out;
	}
	kr = _by_group(d, quota, c->clean, set);
	if (kr < 0)
		goto out;
	rc = 0;
out:
	if (kr_out)
		*kr_out = kr;
	free(quota);
	return rc;
}

static void _push(struct dcand **cv, int *nc, struct dcand c)
{
	if (topoml__grow((void **)cv, *nc, sizeof(**cv)))
		return;
	(*cv)[(*nc)++] = c;
}

int topoml__place_dragonfly(const struct place_in *in,
			    struct topoml_placement *out, char *why,
			    size_t whylen)
{
	const topoml_topo_t *t = in->t;
	const struct topoml_place_req *req = in->req;
	struct df d = { .in = in, .t = t };
	struct place_seen seen = { 0 };
	struct dcand *cv = NULL;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int ng = t->ngroups, ns = t->nswitches, nc = 0, rc = -1;
	int found = 0, v, npass, k = in->k > 1 ? in->k : 1;
	bool isolate = req->hint == TOPOML_HINT_ISOLATE;
	bool spread = req->hint == TOPOML_HINT_ALLTOALL &&
		      req->df_spread_alltoall;

	d.rfree = topoml__leaf_free(t, in->avail);
	d.rreq = calloc(ns + 1, sizeof(int));
	d.gfree = calloc(ng + 1, sizeof(int));
	d.greq = calloc(ng + 1, sizeof(int));
	d.rok_clean = calloc(ns + 1, 1);
	d.gok_clean = calloc(ng + 1, 1);
	d.gshared = calloc(ng + 1, 1);
	if (!set || !d.rfree || !d.rreq || !d.gfree || !d.greq ||
	    !d.rok_clean || !d.gok_clean || !d.gshared || _classify(&d))
		goto oom;
	hwloc_bitmap_foreach_begin(v, in->required)
		d.rreq[t->nodes[v].leaf]++;
		d.greq[t->nodes[v].group]++;
	hwloc_bitmap_foreach_end();
	for (int g = 0; g < ng; g++) {
		const struct topoml_group *gr = &t->groups[g];
		int tot = 0;

		for (int i = 0; i < gr->nrouters; i++) {
			int s = gr->routers[i];

			d.gfree[g] += d.rfree[s];
			tot += t->switches[s].nnodes;
			d.rok_clean[s] = d.rfree[s] == t->switches[s].nnodes;
			if (t->switches[s].nnodes > d.maxr)
				d.maxr = t->switches[s].nnodes;
		}
		d.gok_clean[g] = d.gfree[g] == tot;
		if (tot > d.maxg)
			d.maxg = tot;
	}
	/* scratch for one group's routers or a group set's */
	d.f = malloc((ns + 1) * sizeof(int));
	d.r = malloc((ns + 1) * sizeof(int));
	d.take = malloc((ns + 1) * sizeof(int));
	d.ok = malloc(ns + 1);
	if (!d.f || !d.r || !d.take || !d.ok)
		goto oom;

	npass = isolate ? 2 : 1;
	for (int p = 0; p < npass; p++) {
		bool clean = isolate && p == 0;
		struct dcand c = { .pass = p, .clean = clean };
		int before = nc;

		for (int s = 0; s < ns; s++) {
			if (d.rfree[s] < in->n || d.rreq[s] < in->nreq ||
			    (clean && !d.rok_clean[s]))
				continue;
			c.level = 0;
			c.id = s;
			c.kg = c.kr = 1;
			c.free = d.rfree[s];
			_push(&cv, &nc, c);
		}
		/* A router that holds the job beats any group, a group any
		 * set of groups: only a ranked list of more than one needs
		 * more. */
		int nr = nc - before, ngc;

		for (int g = 0; g < ng && !(nr && k == 1); g++) {
			int k;

			if (d.gfree[g] < in->n || d.greq[g] < in->nreq)
				continue;
			k = _in_group(&d, g, in->n, clean, NULL);
			if (k < 0)
				continue;
			c.level = 1;
			c.id = g;
			c.kg = 1;
			c.kr = k;
			c.free = d.gfree[g];
			_push(&cv, &nc, c);
		}
		ngc = nc - before;
		c.level = 2;
		c.id = -1;
		c.free = 0;
		for (int v = spread ? 2 : 1; v >= -1; v--) {
			int *quota, kg, kr = 0;
			bool sp = v == 2, full = v < 0;

			if ((v == 1 && ngc && k == 1) || (full &&
			    (clean || in->nreq || (ngc && k == 1))))
				break;
			if (!v)
				continue;
			quota = calloc(ng + 1, sizeof(int));
			if (!quota)
				goto oom;
			kg = _machine_quota(&d, clean, sp, full, quota);
			if (kg >= 0) {
				c.spread = sp;
				c.fullest = full;
				c.kg = kg;
				for (int g = 0; g < ng; g++)
					if (quota[g] > 0)
						kr += _in_group(&d, g, quota[g],
								false, NULL);
				c.kr = kr;
				_push(&cv, &nc, c);
			}
			free(quota);
		}
		c.spread = false;
		c.fullest = false;
	}
	if (!nc) {
		snprintf(why, whylen,
			 "no group set holds %d free nodes with the required ones",
			 in->n);
		goto out;
	}
	/* Best first by repeated selection: few placements, many routers. */
	for (int left = nc; left > 0 && found < k; left--) {
		struct dcand cur;
		int kr, b = -1;

		for (int i = 0; i < nc; i++)
			if (cv[i].level >= 0 &&
			    (b < 0 || _dcmp(&cv[i], &cv[b]) < 0))
				b = i;
		cur = cv[b];
		cv[b].level = -1;
		if (_build(&d, &cur, set, &kr))
			continue;
		if (req->max_leaves > 0 && kr > req->max_leaves)
			continue;
		if (k > 1 && !topoml__seen_add(&seen, set))
			continue;
		if (topoml__placement_from_set(t, set, &out[found]))
			goto oom;
		found++;
	}
	if (found) {
		rc = found;
		goto out;
	}
	snprintf(why, whylen, "no candidate placement left (0 distinct%s)",
		 req->max_leaves > 0 ? ", within --switches" : "");
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
	rc = -1;
out:
	topoml__seen_clear(&seen);
	hwloc_bitmap_free(set);
	free(cv);
	free(d.rfree);
	free(d.rreq);
	free(d.gfree);
	free(d.greq);
	free(d.rok_clean);
	free(d.gok_clean);
	free(d.gshared);
	free(d.f);
	free(d.r);
	free(d.take);
	free(d.ok);
	return rc;
}
