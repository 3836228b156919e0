/*
 * select/topoml's parts, as cons_tres separates glue, state and planning:
 *   select_topoml.c  the ops: init/fini, forwarding to cons_tres, job_test
 *   select_util.c    errors logged once, timing
 *   select_conf.c    site configuration, reload, the node map
 *   select_job.c     the job view and candidates, from job_record_t
 *   select_plan.c    run-now and will-run plans, the locality wait
 *   select_publish.c the job's SystemComment
 *   select_health.c  node health reports: the table, avoid and drain
 * Include after Slurm's headers (slurm_xlator.h first).  Everything below
 * the globals is read or changed with g_lock held.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SELECT_INT_H
#define TOPOML_SELECT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "select_compat.h"
#include "topoml.h"
#include "topoml/jobview.h"
#include "topoml/wait.h"

#define TOPOML_ATTEMPTS	3	/* engine choices before plain cons_tres */

/* Site configuration and topology, replaced as a whole on reconfigure
 * (select_conf.c). */
extern pthread_mutex_t g_lock;
extern struct topoml_siteconf g_conf;
extern topoml_topo_t *g_topo;
extern char *g_topo_path;
extern struct topoml_torus3d *g_t3d;	/* torus3d's boxes g_topo is bound
					 * to, or NULL */
extern int *g_map;		/* Slurm node index -> engine node, or -1 */
extern int *g_rmap;		/* engine node -> Slurm node index, or -1 */
extern int g_map_count;		/* node_record_count g_map was built for */
extern uint64_t g_map_gen;	/* bumped when g_topo or g_map change */

/* When slurmctld last changed its partitions; weak (the clients lack it). */
extern time_t last_part_update __attribute__((weak));

/* ---- select_util.c ------------------------------------------------- */

/* The plugin the shared code logs for ("select/topoml", "topology/topoml")
 * and the slurm.conf line that runs without it. */
extern const char *sel_who;
extern const char *sel_plain;

/* An error a job can cause, logged once while recent and rate-limited. */
void sel_error_once(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
long sel_usec_since(const struct timespec *t0);
/*
 * A call's cost: wall time, and this thread's CPU time, which is what the
 * plugin's own work costs slurmctld whatever else runs on the host.
 */
struct sel_clock {
	struct timespec wall, cpu;
};
void sel_clock_start(struct sel_clock *c);
/* Adds the time since c to us[0] (wall) and us[1] (CPU), in us. */
void sel_clock_add(const struct sel_clock *c, long us[2]);

/* ---- select_conf.c ------------------------------------------------- */

/* Read topoml.conf and its topology; at start-up a failure is fatal. */
int sel_conf_load(bool at_start);
/* The Slurm <-> engine node maps by name, rebuilt when Slurm's changed. */
void sel_map_nodes(void);
void sel_conf_clear(void);

/* ---- select_job.c: the job view ------------------------------------ */

/* Built once per call (the job's SPANK environment is scanned once). */
struct sel_job {
	job_record_t *job_ptr;
	struct topoml_job_view view;	/* topoml/jobview.h */
	bool whole;		/* takes whole nodes */
	uint64_t gpus;		/* shares nodes: GPUs it asks, 0 none */
	uint32_t min_cpus;	/* 0: unknown */
};
void sel_job_init(struct sel_job *j, job_record_t *job_ptr);

/* The candidates of one call as engine node sets. */
struct sel_req {
	uint16_t max_cpus;		/* most CPUs of a candidate node */
	hwloc_bitmap_t avail_idle;	/* candidates with no job */
	hwloc_bitmap_t avail_all;	/* every candidate */
	hwloc_bitmap_t partial;		/* candidates other jobs use in part */
	hwloc_bitmap_t required;
	uint32_t *owner;
	uint32_t *used_cpus;		/* per engine node */
	uint32_t *free_units;		/* per engine node: CPUs or GPUs */
	uint32_t *cap_units;		/* will-run, shared job: the same once
					 * the node's jobs have ended */
	uint64_t units;			/* shared job: CPUs or GPUs; 0 = whole
					 * nodes */
	int64_t *free_at;		/* will-run: per engine node, when its
					 * jobs end (0 = idle) */
	hwloc_bitmap_t avail_then;	/* will-run: free soonest */
	hwloc_bitmap_t part;		/* blocks: the partition's nodes */
};
/* NULL, or why the engine is not used. */
const char *sel_req_build(const struct sel_job *j, bitstr_t *bitmap,
			  bool will_run, struct sel_req *r);
void sel_req_free(struct sel_req *r);
uint32_t sel_nodes_wanted(const struct sel_job *j, uint32_t min_nodes,
			  uint32_t max_nodes, uint32_t req_nodes,
			  uint16_t max_cpus);
/* The job's partition's nodes, busy or not (NULL: no memory). */
hwloc_bitmap_t sel_part_nodes(job_record_t *job_ptr);

/* ---- select_plan.c ------------------------------------------------- */

#define SEL_WAITING	(-2)	/* sel_test: the job waits (LocalityWait) */
/*
 * Tries one of the engine's choices with Slurm's own placement (cons_tres's
 * job_test for select/topoml, the wrapped topology plugin's eval_nodes for
 * topology/topoml): SLURM_SUCCESS when the job fits, narrow then holding
 * the nodes taken; else whatever it changed is undone.
 */
typedef int (*sel_try_fn)(void *arg, bitstr_t *narrow);
/*
 * The engine's plan tried with try: on success bitmap holds the nodes
 * taken and the number of engine choices that did not fit before is
 * returned (choice=); else -1 with the reason in why, or SEL_WAITING.
 */
int sel_test(const struct sel_job *j, bitstr_t *bitmap,
	     uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
	     bool will_run, sel_try_fn try, void *arg, char *why,
	     size_t whylen);
void sel_plan_clear(void);

/* ---- select_publish.c ---------------------------------------------- */

/* The last run-now decision, for the job's SystemComment at job_begin:
 * choice -1 = plain cons_tres. */
void sel_publish_note(uint32_t job_id, int choice, enum topoml_hint hint,
		      const char *why);
/* At job_begin: the job's node_bitmap. */
void sel_publish(job_record_t *job_ptr);
/* The SystemComment for the job on node_bitmap (topology/topoml: the
 * nodes eval_nodes chose). */
void sel_publish_on(job_record_t *job_ptr, bitstr_t *node_bitmap);
/* The job's engine nodes in its tasks' order; returns its spares. */
int sel_job_order(const struct sel_job *j, int *nodes, int n);

/* ---- select_health.c: node health (topoml/health.h) ------------- */

/* The site's HealthPolicy and HealthAvoidTime; PLACING: this slurmctld
 * places (the table is loaded the first time). */
void sel_health_conf(bool placing, int policy, int avoid_time);
void sel_health_fini(void);
/* At job end: the job's health part of its AdminComment. */
void sel_health_job_fini(job_record_t *job_ptr);
/* BITMAP without the avoided nodes when some are in it and MIN_NODES
 * remain (a copy to try first), else NULL. */
bitstr_t *sel_health_prefer(bitstr_t *bitmap, uint32_t min_nodes);

#endif
