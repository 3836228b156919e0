/*
 * The locality wait (LocalityWait= in topoml.conf(5), topoml sim
 * --box-wait/--hybrid-wait): whether a job whose best placement now misses
 * its family's locality criterion (an exact box on a torus, one aligned
 * group of the job's BlockSizes level on blocks, whole tensor groups and
 * data-parallel rings below the top for --ml-parallel) starts
 * now or waits for a better one, how long, and, for backfill's plan, on
 * which nodes it would start.  One pure module: select/topoml passes it
 * Slurm's facts, the simulator its own, so the simulator measures the
 * code that ships.  No Slurm headers.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_POLICY_WAIT_H
#define TOPOML_POLICY_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/model.h"
#include "topoml/place.h"
#include "topoml/hybrid.h"
#include "topoml/conf.h"

/* ---- the decision -------------------------------------------------- */

/* The criterion a placement misses. */
enum topoml_wait_kind {
	TOPOML_WAIT_NONE = 0,	/* none applies, or it is met: start */
	TOPOML_WAIT_BOX,	/* torus: no exact box, and one is possible */
	TOPOML_WAIT_HYBRID,	/* --ml-parallel: less local than possible */
	TOPOML_WAIT_BLOCK,	/* blocks: outside Slurm's aligned group */
};

/* The site's locality wait for the job's partition (topoml.conf). */
struct topoml_wait_policy {
	double box_wait;	/* seconds for an exact torus box, or an
				 * aligned group of blocks; 0 never */
	double box_span;	/* only placements spanning more than this x
				 * their nodes wait for a box (1: all) */
	double hybrid_wait;	/* seconds for --ml-parallel locality */
	bool torus_curve;	/* TorusPlacement=curve: no box is sought */
	const double *weights;	/* HybridWeights (TOPOML_KIND_COUNT) */
	/* the topoml.conf keys that set box_wait, hybrid_wait (logs; NULL:
	 * "LocalityWait") */
	const char *box_key, *hybrid_key;
};

/*
 * The site's wait for a job in partition part (may be NULL): LocalityWait=
 * and its old names, a partition's LocalityWait= over both (conf/siteconf.c).
 */
void topoml_siteconf_wait(const struct topoml_siteconf *c, const char *part,
			  struct topoml_wait_policy *p);
/*
 * A wait c sets that does nothing on topology t (TorusBoxWait= off a
 * torus): the note in buf, true; false when there is none.
 */
bool topoml_siteconf_wait_inert_on(const struct topoml_siteconf *c,
				   const topoml_topo_t *t, char *buf,
				   size_t len);

/* The job's facts: its request, as the job view has it. */
struct topoml_wait_job {
	int nnodes;		/* nodes asked for: workers and spares */
	bool pinned;		/* required nodes, or shares nodes: never
				 * waits */
	/* --ml-parallel: the workers' shape (NULL: no hybrid job), their
	 * tasks a node; spares: the job's last nodes, not priced */
	const struct topoml_parallel *par;
	int tpn, spares;
	/* which job holds each busy node (0: none; NULL: not known) */
	const uint32_t *owner;
};

/*
 * What the job could get on its universe (its partition's nodes, busy or
 * not): computed at most once while it waits, kept by the caller (the
 * verdict cache below, the simulator's per-size table).
 */
struct topoml_wait_memo {
	int box;		/* -1 unknown, 0 no box there, 1 a box */
	bool hyb_known;
	struct topoml_hybrid_locality best;	/* tp_split -1: none */
	bool computed;		/* set when this call filled something */
};
#define TOPOML_WAIT_MEMO_INIT { .box = -1 }

struct topoml_wait_verdict_info {
	enum topoml_wait_kind kind;
	double bound;		/* its seconds (box_wait, hybrid_wait) */
	struct topoml_hybrid_locality goal;	/* HYBRID: what it waits for */
	/* a criterion applied and is met now: a waiting job found it
	 * (met_what, for logs) */
	bool met;
	char met_what[64];
	char what[64];		/* "torus box of 8 nodes", ... for logs */
	const char *key;	/* the topoml.conf key that set bound */
};

/*
 * Which criterion the job's placement pl (workers first, in rank order)
 * misses where its universe offers better, in the order select/topoml
 * has always checked them (box, then hybrid).  memo carries what is
 * known of the universe and gets what this call computed.
 */
enum topoml_wait_kind topoml_wait_criterion(const topoml_topo_t *t,
					    const struct topoml_wait_policy *p,
					    const struct topoml_wait_job *j,
					    const struct topoml_placement *pl,
					    hwloc_const_bitmap_t universe,
					    struct topoml_wait_memo *memo,
					    struct topoml_wait_verdict_info *v);

/*
 * Seconds still to wait at now for a job whose clock started at since
 * (the first time it could have started), bound being the criterion's
 * seconds: 0 once now - since >= bound (start what there is).
 */
double topoml_wait_left(double since, double now, double bound);

/*
 * The whole decision: criterion, then clock (since < 0: the clock starts
 * now).  Returns the seconds the job still waits, 0: start on pl.
 */
double topoml_wait_decide(const topoml_topo_t *t,
			  const struct topoml_wait_policy *p,
			  const struct topoml_wait_job *j,
			  const struct topoml_placement *pl,
			  hwloc_const_bitmap_t universe,
			  struct topoml_wait_memo *memo, double since,
			  double now, struct topoml_wait_verdict_info *v);

/*
 * Will-run (backfill's plan) of a job that waits (v from the decision):
 * when what it waits for is free at the earliest on avail, each node free
 * from free_at[node] on (0 or less: now), and in then the nodes free by
 * it.  A hybrid plan past deadline (when its wait ends) is no plan.
 * Returns that time (0: now), -1: none, -2: out of memory.
 */
int64_t topoml_wait_plan(const topoml_topo_t *t,
			 const struct topoml_wait_policy *p,
			 const struct topoml_wait_job *j,
			 const struct topoml_wait_verdict_info *v,
			 hwloc_const_bitmap_t avail, const int64_t *free_at,
			 int64_t deadline, hwloc_bitmap_t then);

/* ---- free-by planners (will-run) ----------------------------------- */

/*
 * Will-run (backfill's plan, sbatch --test-only): the nodes of avail that
 * are free soonest, enough for n.  free_at[i] is when node i's jobs end
 * (0 = idle now).  With T the n-th smallest free_at over avail, out gets
 * every node of avail free by T: those the job can start on at the time
 * cons_tres's will-run finds by letting jobs end in end-time order.
 * Returns T, or -1 (out empty) when avail holds fewer than n nodes.
 */
int64_t topoml_job_free_by(const int64_t *free_at, hwloc_const_bitmap_t avail,
			   int n, hwloc_bitmap_t out);

/*
 * The same for a job that shares nodes and needs `units' CPUs or GPUs:
 * fu[i] is what node i offers now, cap[i] what it offers once all its
 * jobs have ended (at free_at[i]).  When avail offers fewer than units
 * now, busy nodes are counted whole in end-time order until they do, at
 * T; every node of avail free by T gets fu[i] = cap[i] and its bit in
 * idle_then (it is idle then: no job to share with, no leaf to spoil).
 * Returns 0 (enough now: nothing changed), T, or -1 (never enough:
 * nothing changed).
 */
int64_t topoml_job_units_free_by(const int64_t *free_at, const uint32_t *cap,
				 uint32_t *fu, hwloc_const_bitmap_t avail,
				 uint64_t units, hwloc_bitmap_t idle_then);

/* ---- the clocks and the verdict cache (select/topoml) -------------- */

/*
 * Beside each job's clock (below), TOPOML_WAIT_SLOTS verdicts the caller
 * computes once while the job waits (e.g. whether its partition could ever
 * give it a box: a full placement, too dear for every scheduling try), each
 * under a key the caller builds from the verdict's inputs; a different
 * key misses, so a verdict is recomputed when its inputs change.  Key 0
 * is never kept.
 */
#define TOPOML_WAIT_SLOTS	2
#define TOPOML_WAIT_VALS	2
struct topoml_wait_verdict {
	uint64_t key;			/* 0: none */
	int64_t val[TOPOML_WAIT_VALS];
};

/*
 * LocalityWait's clock (topoml.conf(5)): the jobs that could start now,
 * but only short of their locality criterion, and when that was first
 * seen.  select/topoml keeps it in memory: a restarted slurmctld starts
 * every clock again, which only bounds the wait anew.
 */
struct topoml_box_waits {
	uint32_t *job;
	int64_t *since;
	struct topoml_wait_verdict *verdict;	/* TOPOML_WAIT_SLOTS each */
	int n, cap;
	/*
	 * Every user may keep jobs waiting, so no call costs more than
	 * O(1) in their number: an index by job id (open addressing, slot
	 * + 1, 0 empty; nidx a power of two over 2 * cap), the stale clocks
	 * swept at most once a minute.
	 */
	int *idx, nidx;
	int64_t swept;
};

/*
 * Seconds job still waits at now, wait being its criterion's seconds
 * (topoml_wait_left); the job's clock starts at its first call.  0: place
 * it now (its clock is dropped).  Clocks older than 2 * wait + 3600 s
 * belong to jobs that left the queue while waiting and are dropped too.
 */
int64_t topoml_box_wait_left(struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait);
/* As topoml_box_wait_left, but reads the clock only (backfill's plan):
 * a job without a clock would wait all of wait. */
int64_t topoml_box_wait_peek(const struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait);
/* The job got its placement, or left: drop its clock (and its verdicts);
 * when it started, or -1. */
int64_t topoml_box_wait_forget(struct topoml_box_waits *w, uint32_t job);
void topoml_box_waits_clear(struct topoml_box_waits *w);

/*
 * The job's verdict in slot (0..TOPOML_WAIT_SLOTS) if kept under key:
 * true and val[0..TOPOML_WAIT_VALS) filled; false (a miss) without a
 * clock, or with another key.
 */
bool topoml_box_wait_verdict_get(const struct topoml_box_waits *w,
				 uint32_t job, int slot, uint64_t key,
				 int64_t val[TOPOML_WAIT_VALS]);
/* Keep a verdict with the job's clock, replacing the slot's; false (not
 * kept) when the job has no clock or key is 0. */
bool topoml_box_wait_verdict_set(struct topoml_box_waits *w, uint32_t job,
				 int slot, uint64_t key,
				 const int64_t val[TOPOML_WAIT_VALS]);
/* A key from n values: a different value gives another key (but for
 * chance, 2^-64); never 0. */
uint64_t topoml_wait_key(const uint64_t *v, int n);

/*
 * The memo of job's universe from its verdicts (a miss leaves it
 * unknown), and back once the job has a clock.  salt: the universe's
 * identity (partition, its last change, the topology in use), 0 when it
 * cannot be trusted (nothing is kept).
 */
void topoml_wait_memo_load(const struct topoml_box_waits *w, uint32_t job,
			   uint64_t salt, const struct topoml_wait_job *j,
			   struct topoml_wait_memo *memo);
void topoml_wait_memo_save(struct topoml_box_waits *w, uint32_t job,
			   uint64_t salt, const struct topoml_wait_job *j,
			   const struct topoml_wait_memo *memo);

#endif
