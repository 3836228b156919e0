/*
 * select/topoml's plans: what the engine proposes for one job_test call,
 * run-now and will-run apart, each returning the candidates to try with
 * cons_tres or a verdict (the job waits for locality: topoml/wait.h); the
 * driver tries them.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topoml/place.h"
#include "select_int.h"

/* LocalityWait's clock per job; g_lock held */
static struct topoml_box_waits g_box_waits;

void sel_plan_clear(void)
{
	topoml_box_waits_clear(&g_box_waits);
}

/*
 * --ml-parallel with --ntasks-per-node: the engine's choices reordered by
 * the job's cost per traffic kind, whole tensor groups in NVLink domains
 * first (topoml_hybrid_rank); else left as they are.  With --ml-spares
 * the sizes are those of the workers, and each choice is priced on the
 * workers sel_publish will keep of it (topoml_hybrid_rank_spares).
 */
static void _hybrid_rank(const struct sel_job *j,
			 const struct topoml_place_req *req,
			 struct topoml_placement *choice, int n)
{
	struct topoml_parallel p;
	int tpn, spares;

	if (n < 1 || req->units ||
	    !topoml_job_view_workers(&j->view, g_topo, req->nnodes, &spares,
				     &p, &tpn))
		return;
	(void)topoml_hybrid_rank_spares(g_topo, req, &p, tpn,
					g_conf.hybrid_weights, choice, n,
					spares);
}

/*
 * One of the engine's placements as a Slurm node bitmap within cand, or
 * NULL with why (a node the engine chose that is not a candidate is an
 * engine bug, not a busy machine).
 */
static bitstr_t *_engine_choice(const struct topoml_placement *pl,
				bitstr_t *cand, char *why, size_t whylen)
{
	bitstr_t *narrow;
	int i, nbits = bit_size(cand);

	narrow = bit_alloc(nbits);
	for (i = 0; i < pl->n; i++) {
		int s = g_rmap[pl->nodes[i]];

		if (s < 0 || s >= nbits || !bit_test(cand, s)) {
			sel_error_once("engine chose node %d, which is not a candidate Slurm node",
				    pl->nodes[i]);
			snprintf(why, whylen, "engine node %d is not a Slurm node",
				 pl->nodes[i]);
			FREE_NULL_BITMAP(narrow);
			return NULL;
		}
		bit_set(narrow, s);
	}
	return narrow;
}

/*
 * The identity of a job's universe for the verdicts kept while it waits
 * (topoml/wait.h): its partition, slurmctld's last partition change and
 * the topology and node map in use, so that they are computed once while
 * the job waits, and again when any of these changes.  0 (not kept):
 * partitions changed this second, so that a second change now might
 * leave last_part_update as it is; or no last_part_update (not
 * slurmctld).
 */
static uint64_t _wait_salt(job_record_t *job_ptr)
{
	uint64_t v[3];
	time_t part_update;

	if (!&last_part_update)
		return 0;
	part_update = last_part_update;
	if (part_update >= time(NULL))
		return 0;
	v[0] = (uintptr_t)job_ptr->part_ptr;
	v[1] = (uint64_t)part_update;
	v[2] = g_map_gen;
	return topoml_wait_key(v, 3);
}

/* The job found what it waited for: forget its clock. */
static void _wait_found(job_record_t *job_ptr, const char *what)
{
	int64_t since = topoml_box_wait_forget(&g_box_waits, job_ptr->job_id);

	if (since >= 0)
		info("%s: %pJ: found %s after waiting %lld s",
		     sel_who, job_ptr, what, (long long)(time(NULL) - since));
}

/*
 * The job may wait for `what' up to `wait' s (topoml.conf `key'): true
 * while it still does (why says so), false once the time is up.
 */
static bool _wait_more(job_record_t *job_ptr, const char *key, int wait,
		       const char *what, char *why, size_t whylen)
{
	int64_t left = topoml_box_wait_left(&g_box_waits, job_ptr->job_id,
					    time(NULL), wait);

	if (!left) {
		info("%s: %pJ: no %s after %s=%d s, placed without",
		     sel_who, job_ptr, what, key, wait);
		return false;
	}
	if (left == wait)
		info("%s: %pJ waits up to %d s for %s (none free, enough nodes)",
		     sel_who, job_ptr, wait, what);
	snprintf(why, whylen, "waiting %lld s more for %s (%s=%d)",
		 (long long)left, what, key, wait);
	return true;
}

/* The locality wait's view of a job (topoml/wait.h). */
struct _wait {
	struct topoml_wait_policy pol;
	struct topoml_wait_job job;
	struct topoml_parallel par;
	struct topoml_wait_verdict_info v;
};

/*
 * LocalityWait (topoml.conf(5), topoml/wait.h) on the engine's best
 * choice pl (ranked by _hybrid_rank, workers first in rank order): a job
 * whose placement misses its family's locality criterion where its
 * partition's nodes, busy or not, offer it, waits up to the site's
 * seconds from the first time it could have started here.  True: decline
 * now (why says so; w->v what it waits for).  plan (backfill's will-run):
 * whether it would wait, its clock only read.
 */
static bool _locality_wait(const struct sel_job *j,
			   const struct topoml_place_req *req,
			   const struct topoml_placement *pl, bool plan,
			   struct _wait *w, char *why, size_t whylen)
{
	job_record_t *job_ptr = j->job_ptr;
	struct topoml_wait_memo memo;
	hwloc_bitmap_t all = NULL;
	uint64_t salt;
	bool waits;

	topoml_siteconf_wait(&g_conf, job_ptr->partition, &w->pol);
	if (!(w->pol.box_wait > 0) && !(w->pol.hybrid_wait > 0))
		return false;
	w->job = (struct topoml_wait_job){
		.nnodes = req->nnodes,
		.pinned = req->required || req->units,
		.owner = req->owner,
	};
	if (!req->units &&
	    topoml_job_view_workers(&j->view, g_topo, req->nnodes,
				    &w->job.spares, &w->par, &w->job.tpn))
		w->job.par = &w->par;
	else
		w->job.spares = 0;
	salt = _wait_salt(job_ptr);
	topoml_wait_memo_load(&g_box_waits, job_ptr->job_id, salt, &w->job,
			      &memo);
	/* the partition's nodes: only for a verdict not kept */
	if (memo.box < 0 || !memo.hyb_known)
		all = sel_part_nodes(job_ptr);
	topoml_wait_criterion(g_topo, &w->pol, &w->job, pl, all, &memo,
			      &w->v);
	if (all)
		hwloc_bitmap_free(all);
	if (w->v.met && !plan)
		_wait_found(job_ptr, w->v.met_what);
	if (!w->v.kind)
		return false;
	if (plan)
		waits = topoml_box_wait_peek(&g_box_waits, job_ptr->job_id,
					     time(NULL),
					     (int64_t)w->v.bound) > 0;
	else
		waits = _wait_more(job_ptr, w->v.key, (int)w->v.bound,
				   w->v.what, why, whylen);
	/* after _wait_more: kept from the job's first wait on */
	topoml_wait_memo_save(&g_box_waits, job_ptr->job_id, salt, &w->job,
			      &memo);
	return waits;
}

/*
 * Will-run: plan on r->avail_then, the nodes free by the planned start;
 * the jobs on them will have ended by then, so they neither share nor
 * spoil a leaf (no owners).
 */
static void _plan_then(struct sel_req *r, struct topoml_place_req *req)
{
	int v;

	hwloc_bitmap_foreach_begin(v, r->avail_then)
		r->owner[v] = 0;
	hwloc_bitmap_foreach_end();
	req->avail = r->avail_then;
}

/*
 * Backfill's will-run for a job that run-now holds for a better placement
 * (_locality_wait): the nodes free when what it waits for is, by the
 * running jobs' limits (topoml_wait_plan), not the placement it declines
 * now.  Backfill then reserves them, and jobs that would outlast that time
 * keep off them, so that they do free; planned where it declines to
 * start, the job would hold those nodes in the plan while other jobs fill
 * them.  1 (a box), 2 (--ml-parallel locality): req->avail is those
 * nodes (_plan_then); 0: plan on pl (it would not wait, or takes pl when
 * its wait ends); -1: no plan of ours.
 */
static int _wait_plan(const struct sel_job *j, struct sel_req *r,
		      struct topoml_place_req *req,
		      const struct topoml_placement *pl, char *why,
		      size_t whylen)
{
	job_record_t *job_ptr = j->job_ptr;
	struct _wait w;
	int64_t end, when;

	if (!_locality_wait(j, req, pl, true, &w, why, whylen))
		return 0;
	if (!r->free_at)
		return w.v.kind == TOPOML_WAIT_BOX ? -1 : 0;
	if (!r->avail_then && !(r->avail_then = hwloc_bitmap_alloc()))
		return -1;
	end = time(NULL);
	end += topoml_box_wait_peek(&g_box_waits, job_ptr->job_id, end,
				    (int64_t)w.v.bound);
	when = topoml_wait_plan(g_topo, &w.pol, &w.job, &w.v, r->avail_all,
				r->free_at, end, r->avail_then);
	if (when == -2)
		return -1;
	if (when < 0)
		return w.v.kind == TOPOML_WAIT_BOX ? -1 : 0;
	_plan_then(r, req);
	return w.v.kind == TOPOML_WAIT_BOX ? 1 : 2;
}


/* ---- the plans ----------------------------------------------------- */

/* One call's planning state. */
struct _ctx {
	const struct sel_job *j;
	struct sel_req r;
	struct topoml_place_req req;
	/*
	 * Will-run tests (a backfill plan) are many and each cons_tres
	 * will-run simulates job ends: the engine's best choice only.
	 */
	bool will_run;
};

/* What a plan returns: candidates to try, or a verdict. */
enum _verdict {
	_NONE,		/* no candidates in this pass, nor after */
	_CANDS,		/* c: try these (maybe none), then the next pass */
	_LAST,		/* c: try these, and no other pass */
	_WAIT,		/* the job waits (LocalityWait): decline */
};

struct _cands {
	int n;
	struct topoml_placement pl[TOPOML_ATTEMPTS];
};

static void _cands_clear(struct _cands *c)
{
	for (int i = 0; i < c->n; i++)
		topoml_placement_clear(&c->pl[i]);
	c->n = 0;
}

/* The engine's request for the job, as cons_tres would size it. */
static void _req_init(struct _ctx *x, uint32_t min_nodes, uint32_t max_nodes,
		      uint32_t req_nodes)
{
	job_record_t *job_ptr = x->j->job_ptr;
	struct topoml_place_req *req = &x->req;
	struct sel_req *r = &x->r;

	*req = (struct topoml_place_req){ .unscored = true };
	req->nnodes = sel_nodes_wanted(x->j, min_nodes, max_nodes, req_nodes,
				       r->max_cpus);
	req->required = r->required;
	req->hint = x->j->view.hint;
	/* --switches=N[@T]: cons_tres enforces the wait if we cannot. */
	if (job_ptr->req_switch && job_ptr->req_switch < INFINITE16)
		req->max_leaves = job_ptr->req_switch;
	req->df_spread_alltoall = g_conf.df_spread_alltoall;
	/*
	 * Slurm's topology/block refuses what is not aligned, also inside
	 * topology/topoml, which wraps it for a topology.conf of blocks
	 * (the model's own file): a larger group would only be refused.
	 */
	req->block_aligned = !xstrcmp(slurm_conf.topology_plugin,
				      "topology/block") ||
		(!xstrcmp(slurm_conf.topology_plugin, "topology/topoml") &&
		 g_topo->nblocks > 0);
	req->universe = r->part;
	req->torus_curve = g_conf.torus_curve;
	req->partial = r->partial;
	if (r->units && !r->required && req->hint != TOPOML_HINT_ISOLATE) {
		/*
		 * A job that shares nodes: by CPUs or GPUs, partly used
		 * nodes first, on every candidate (one pass).  Isolate
		 * keeps to idle nodes first, as whole-node jobs do.
		 */
		req->nnodes = MAX(MAX(min_nodes, req_nodes), 1);
		if (max_nodes && (uint32_t)req->nnodes > max_nodes)
			req->nnodes = max_nodes;
		req->units = r->units > UINT32_MAX ? UINT32_MAX : r->units;
		req->free_units = r->free_units;
	}
}

/*
 * The candidates of pass 0 (idle nodes: whole-node jobs share with no
 * other job) or pass 1 (every candidate, for jobs that may share
 * nodes): false when pass 1 would offer nothing more.
 */
static bool _pass_avail(struct _ctx *x, int pass)
{
	x->req.avail = pass ? x->r.avail_all : x->r.avail_idle;
	x->req.owner = x->r.owner;
	return !(pass && !x->req.units &&
		 hwloc_bitmap_isequal(x->r.avail_all, x->r.avail_idle));
}

/* The engine's best distinct choices on req, from one call. */
static void _rank(struct _ctx *x, int pass, int max, struct _cands *c,
		  char *why, size_t whylen)
{
	if (g_conf.debug > 1) {
		char *av = topoml_nodeset_format(g_topo, x->req.avail);

		info("%s: %pJ pass %d: %d nodes of %s, hint %s, max_leaves %d, units %u",
		     sel_who, x->j->job_ptr, pass, x->req.nnodes, av,
		     topoml_hint_name(x->req.hint), x->req.max_leaves,
		     x->req.units);
		free(av);
	}
	why[0] = '\0';
	c->n = topoml_place_ranked(g_topo, TOPOML_POLICY_TOPOML, &x->req, max,
				   c->pl, why, whylen);
	/* --ml-parallel: the choices by the job's traffic kinds */
	_hybrid_rank(x->j, &x->req, c->pl, c->n);
}

/*
 * Blocks without topology/block: the engine places nothing for a job a
 * crowded row holds for its aligned group (place_block.c), and with no
 * partition nodes to wait for (an empty universe) it would place the job
 * in a larger group.  Such a job waits, as in topoml sim, rather than
 * take cons_tres's nodes.
 */
static bool _crowded_hold(const struct _ctx *x)
{
	struct topoml_place_req q = x->req;
	struct topoml_placement pl = { 0 };
	hwloc_bitmap_t none;
	char why[160];
	bool held;

	if (g_topo->nblocks <= 0 || q.block_aligned || q.units ||
	    q.required || !(none = hwloc_bitmap_alloc()))
		return false;
	q.universe = none;
	held = !topoml_place(g_topo, TOPOML_POLICY_TOPOML, &q, &pl, why,
			     sizeof(why));
	topoml_placement_clear(&pl);
	hwloc_bitmap_free(none);
	return held;
}

/*
 * Will-run of a job a crowded row holds: the aligned group run-now waits
 * for, as the running jobs end by their limits (the wait's block plan),
 * so that backfill reserves it and later jobs keep off it.  False: no
 * such group frees.
 */
static bool _crowded_plan(struct _ctx *x)
{
	struct sel_req *r = &x->r;
	struct topoml_wait_verdict_info v = { .kind = TOPOML_WAIT_BLOCK };
	struct topoml_wait_job wj = { .nnodes = x->req.nnodes };
	struct topoml_wait_policy pol = { 0 };

	if (!r->free_at ||
	    (!r->avail_then && !(r->avail_then = hwloc_bitmap_alloc())) ||
	    topoml_wait_plan(g_topo, &pol, &wj, &v, r->avail_all, r->free_at,
			     0, r->avail_then) < 0)
		return false;
	_plan_then(r, &x->req);
	x->req.block_aligned = true;
	return true;
}

/*
 * Run-now: the engine's choices in this pass, or _WAIT when the best of
 * the idle nodes misses the job's locality criterion and it waits
 * (_locality_wait), or a crowded block row holds it (_crowded_hold).
 */
static enum _verdict _plan_run_now(struct _ctx *x, int pass,
				   struct _cands *c, char *why, size_t whylen)
{
	struct _wait w;

	c->n = 0;
	if (!_pass_avail(x, pass))
		return _NONE;
	_rank(x, pass, TOPOML_ATTEMPTS, c, why, whylen);
	if (!pass && c->n > 0 &&
	    _locality_wait(x->j, &x->req, &c->pl[0], false, &w, why,
			   whylen)) {
		_cands_clear(c);
		return _WAIT;
	}
	if (!pass && c->n <= 0 && _crowded_hold(x))
		return _WAIT;
	return _CANDS;
}

/*
 * Will-run (backfill's plan, sbatch --test-only): the engine's best
 * choice where the job would start by the running jobs' limits: the idle
 * nodes, else the nodes free soonest; for a job the locality wait or a
 * crowded row holds, the nodes free when what it waits for is (_wait_plan,
 * _crowded_plan: the last plan).
 */
static enum _verdict _plan_will_run(struct _ctx *x, int pass,
				    struct _cands *c, char *why,
				    size_t whylen)
{
	struct sel_req *r = &x->r;
	struct topoml_place_req *req = &x->req;
	int plan;

	c->n = 0;
	if (!_pass_avail(x, pass))
		return _NONE;
	if (pass && !req->units) {
		/*
		 * Without enough idle nodes: the nodes free soonest, as
		 * cons_tres lets jobs end in end-time order; the jobs on
		 * them will have ended by then, so they neither share nor
		 * spoil a leaf.
		 */
		if (!r->avail_then)
			r->avail_then = hwloc_bitmap_alloc();
		if (!r->avail_then ||
		    topoml_job_free_by(r->free_at, r->avail_all, req->nnodes,
				       r->avail_then) < 0)
			return _NONE;
		_plan_then(r, req);
	}
	if (req->units && r->cap_units && r->free_at) {
		/*
		 * On a dragonfly (cap_units is kept there only) for a job
		 * that shares nodes and cannot start now: the units free
		 * once enough are, busy nodes counted whole in end-time
		 * order.  Nodes idle by then hold no job, so the
		 * reservation falls on what frees rather than on idle cores
		 * backfill can fill meanwhile: cons_tres's will-run on a
		 * dragonfly (TopologyParam=dragonfly) spreads one node per
		 * router over them and keeps small jobs waiting.  On a tree
		 * its best fit packs as select/topoml does, and this plan
		 * cost more than it gained there (measured in the simulator
		 * on both families).
		 */
		int v;

		r->avail_then = hwloc_bitmap_alloc();
		if (r->avail_then &&
		    topoml_job_units_free_by(r->free_at, r->cap_units,
					     r->free_units, r->avail_all,
					     req->units, r->avail_then) > 0) {
			hwloc_bitmap_foreach_begin(v, r->avail_then)
				r->owner[v] = 0;
				hwloc_bitmap_clr(r->partial, v);
			hwloc_bitmap_foreach_end();
		}
	}
	_rank(x, pass, 1, c, why, whylen);
	if (!pass && c->n < 1 && _crowded_hold(x)) {
		if (!_crowded_plan(x))
			return _NONE;
		c->n = topoml_place_ranked(g_topo, TOPOML_POLICY_TOPOML,
					   req, 1, c->pl, why, whylen);
		return _LAST;
	}
	if (pass || c->n < 1 ||
	    !(plan = _wait_plan(x->j, r, req, &c->pl[0], why, whylen)))
		return _CANDS;
	/* one plan, on the nodes free when the wait is met */
	_cands_clear(c);
	if (plan > 0) {
		c->n = topoml_place_ranked(g_topo, TOPOML_POLICY_TOPOML, req,
					   1, c->pl, why, whylen);
		/* ranked as run-now ranks, that meets the goal */
		if (plan == 2)
			_hybrid_rank(x->j, req, c->pl, c->n);
	}
	return _LAST;
}

int sel_test(const struct sel_job *j, bitstr_t *bitmap,
	     uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
	     bool will_run, sel_try_fn try, void *arg, char *why,
	     size_t whylen)
{
	struct _ctx x = { .j = j, .will_run = will_run };
	struct _cands c = { 0 };
	enum _verdict v = _CANDS;
	int result = -1, tried = 0;
	const char *bad;

	if ((bad = sel_req_build(j, bitmap, x.will_run, &x.r))) {
		snprintf(why, whylen, "%s", bad);
		goto out;
	}
	_req_init(&x, min_nodes, max_nodes, req_nodes);
	/* jobs that share nodes: every candidate at once (pass 1) */
	for (int pass = x.req.units ? 1 : 0;
	     pass < 2 && v == _CANDS && result < 0; pass++) {
		v = x.will_run ? _plan_will_run(&x, pass, &c, why, whylen)
			       : _plan_run_now(&x, pass, &c, why, whylen);
		if (v == _WAIT) {
			result = SEL_WAITING;
			goto out;
		}
		for (int i = 0; i < c.n && result < 0; i++) {
			bitstr_t *narrow = _engine_choice(&c.pl[i], bitmap,
							  why, whylen);

			if (!narrow)
				break;
			if (try(arg, narrow) == SLURM_SUCCESS) {
				bit_copybits(bitmap, narrow);
				result = tried;
			} else {
				tried++;
			}
			FREE_NULL_BITMAP(narrow);
		}
		_cands_clear(&c);
	}
	if (result < 0 && tried) {
		char engine[128];
		size_t n = strnlen(why, sizeof(engine) - 1);

		/* A long engine reason may be cut: the count comes first. */
		memcpy(engine, why, n);
		engine[n] = '\0';
		if (snprintf(why, whylen,
			     "cons_tres could not fit the job on the engine's %d choice(s)%s%s",
			     tried, engine[0] ? "; engine: " : "",
			     engine) >= (int)whylen)
			why[whylen - 1] = '\0';
	}
out:
	sel_req_free(&x.r);
	return result;
}
