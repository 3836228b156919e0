/*
 * select/topoml's pure helpers: what the engine is asked for a job (node
 * count, --ml-comm hint), from plain values, so that they link and are
 * tested without slurmctld (tests/select/check_job_req.c).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_JOB_REQ_H
#define TOPOML_JOB_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml.h"

/*
 * Nodes to ask the engine for: the job's node count (the larger of
 * min_nodes and req_nodes, at least 1), or, for jobs sized by tasks or
 * CPUs (sbatch -n 8 without -N), the fewest nodes of max_cpus CPUs that
 * hold min_cpus, so that cons_tres is not handed too few nodes; never
 * more than max_nodes (0 = no limit).  min_cpus or max_cpus 0: unknown.
 */
uint32_t topoml_job_nodes_wanted(uint32_t min_nodes, uint32_t max_nodes,
				 uint32_t req_nodes, uint32_t min_cpus,
				 uint16_t max_cpus);

/*
 * The job's --ml-comm hint from its SPANK job environment (env[0..n),
 * "TOPOML_COMM=..." with or without the SPANK_ prefix; the last valid
 * one wins), else dflt.  An unknown value leaves the hint as it was and
 * is returned in *bad (may be NULL) for the caller to log.
 */
enum topoml_hint topoml_job_hint(enum topoml_hint dflt,
				 const char *const *env, uint32_t n,
				 const char **bad);

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
 * TorusBoxWait's clock (topoml.conf(5)): the jobs that could start now,
 * but only outside an exact torus box, and when that was first seen.
 * select/topoml keeps it in memory: a restarted slurmctld starts every
 * clock again, which only bounds the wait anew.
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
 * Seconds job still waits for a box at now, wait being TorusBoxWait; the
 * job's clock starts at its first call.  0: place it now (its clock is
 * dropped).  Clocks older than 2 * wait + 3600 s belong to jobs that left
 * the queue while waiting and are dropped too.
 */
int64_t topoml_box_wait_left(struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait);
/* As topoml_box_wait_left, but reads the clock only (backfill's plan):
 * a job without a clock would wait all of wait. */
int64_t topoml_box_wait_peek(const struct topoml_box_waits *w, uint32_t job,
			     int64_t now, int64_t wait);
/* The job got a box, or left: drop its clock (and its verdicts); when it
 * started, or -1. */
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

#endif
