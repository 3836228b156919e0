/*
 * libtopoml_sim, the part of the engine that only the CLI and the tests
 * link (select/topoml and topoml.so link the core, topoml.h, alone): job
 * traces and the event-driven trace simulator (FCFS + EASY backfill) that
 * replays a trace on a topology through topoml_place(), one machine state
 * per placement policy; Slurm's own algorithms as baseline policies; the
 * topology writers and generators.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SIM_H
#define TOPOML_SIM_H

#include "topoml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Slurm's baselines -------------------------------------------- */

/*
 * Policy ids of Slurm's algorithms that only libtopoml_sim places, beside
 * the core's (enum topoml_policy, topoml.h): 22.05's cons_tres with
 * topology/tree and with TopologyParam=dragonfly, 26.05's topology/torus3d
 * (its choice among the boxes) and topology/block.
 */
#define TOPOML_POLICY_SLURM_TREE	((enum topoml_policy)1)
#define TOPOML_POLICY_SLURM_DRAGONFLY	((enum topoml_policy)2)
#define TOPOML_POLICY_SLURM_TORUS3D	((enum topoml_policy)5)
#define TOPOML_POLICY_SLURM_BLOCK	((enum topoml_policy)6)
/*
 * Kueue's Topology Aware Scheduling (kubernetes-sigs/kueue, TAS): its
 * BestFit, LeastFreeCapacity and BalancedPlacement algorithms, the job
 * asking for the level a Kueue user writes (sim/baselines/kueue_tas.c).
 */
#define TOPOML_POLICY_KUEUE_BESTFIT	((enum topoml_policy)7)
#define TOPOML_POLICY_KUEUE_LEASTFREE	((enum topoml_policy)8)
#define TOPOML_POLICY_KUEUE_BALANCED	((enum topoml_policy)9)
/* Volcano's network-topology-aware scheduling (sim/baselines/volcano.c) */
#define TOPOML_POLICY_VOLCANO		((enum topoml_policy)10)

/*
 * Make topoml_place() and topoml_place_ranked() run the Slurm baselines
 * above, and topoml_policy_name() and topoml_policy_parse() know their
 * names (without this placing fails with a reason naming this call);
 * topoml_sim_run() calls it itself.  Idempotent.
 */
void topoml_sim_register_baselines(void);

/* ---- writers and generators ---------------------------------------- */

int topoml_write_conf(const topoml_topo_t *t, FILE *f);
int topoml_write_json(const topoml_topo_t *t, FILE *f);

/*
 * Synthetic topologies.  Nodes are named <prefix>1 .. <prefix>N (prefix
 * NULL = "node"), in leaf / router / x-fastest coordinate order, so that
 * they match a local test cluster's CLOUD nodes c[1-N].
 */
topoml_topo_t *topoml_gen_fat_tree(const char *prefix, int nnodes,
				   int per_leaf, int radix, int levels);
topoml_topo_t *topoml_gen_dragonfly(const char *prefix, int groups,
				    int routers, int per_router,
				    enum topoml_df_arrangement arr);
topoml_topo_t *topoml_gen_torus(const char *prefix, int x, int y, int z,
				bool wrap);

/* ---- traces -------------------------------------------------------- */

enum topoml_trace_format {
	TOPOML_TRACE_AUTO = 0,	/* by content, see sim/trace.c */
	TOPOML_TRACE_SWF,	/* Standard Workload Format, gzip too */
	TOPOML_TRACE_CSV,	/* submit,nodes,runtime[,walltime][,hint] */
	TOPOML_TRACE_MTECH,	/* Job_name Submit Runtime Nodes ... */
};

struct topoml_job {
	uint32_t id;		/* from the trace, else line number */
	double submit;		/* seconds after the first submission */
	double runtime;		/* seconds actually run */
	double walltime;	/* requested limit, >= runtime: the estimate */
	int size;		/* processors (SWF) or nodes, as traced */
	int nodes;		/* whole nodes after scaling */
	/*
	 * Cores (SWF processors) the job asks for when the trace is read
	 * with opts.shared; 0: whole nodes, exclusive (the default, and
	 * CSV and MTech traces, which give nodes).  nodes is then
	 * ceil(cores / cores_per_node), the fewest it can use.
	 */
	int cores;
	enum topoml_hint hint;
	int line;		/* line in the trace file */
};

struct topoml_trace {
	char *source;
	enum topoml_trace_format format;
	int njobs;
	struct topoml_job *jobs;	/* sorted by submit time (stable) */
	int nskipped;		/* no processors or no run time */
	int ntoo_large;		/* dropped: larger than the machine */
	double scale;		/* factor applied to job sizes */
	int cores_per_node;	/* as read (opts.cores_per_node or 1) */
	bool shared;		/* opts.shared: SWF jobs kept in cores */
};

struct topoml_trace_opts {
	enum topoml_trace_format format;
	int cores_per_node;	/* SWF processors per node, 0 = 1 */
	/*
	 * Keep SWF jobs in cores (job.cores) rather than rounding them up
	 * to whole nodes: small jobs share nodes in the simulator.
	 */
	bool shared;
	/*
	 * Size scaling: nodes = max(1, round(nodes * scale)); scale_fit
	 * picks the factor that makes the largest job exactly machine_nodes;
	 * trace_nodes (the traced machine's size) gives machine_nodes /
	 * trace_nodes, which keeps the offered load.  Jobs still larger than
	 * machine_nodes (when > 0) are dropped.
	 */
	double scale;		/* 0 = 1 */
	bool scale_fit;
	int trace_nodes;
	int machine_nodes;
	int max_jobs;		/* keep the first N usable jobs, 0 = all */
};

/* NULL on failure with every problem in err ("FILE:LINE: ..."). */
struct topoml_trace *topoml_trace_read(const char *path,
				       const struct topoml_trace_opts *o,
				       topoml_errors_t *err);
void topoml_trace_free(struct topoml_trace *tr);
const char *topoml_trace_format_name(enum topoml_trace_format f);
int topoml_trace_format_parse(const char *s, enum topoml_trace_format *f);

/* ---- simulator ----------------------------------------------------- */

struct topoml_sim_opts {
	bool df_spread_alltoall;	/* passed to topoml_place */
	bool torus_curve;		/* to topoml_place; no box_wait */
	bool no_backfill;		/* plain FCFS */
	bool no_fragmentation;		/* skip the per-event metric */
	/*
	 * Slurm baselines: nodes no job has used yet count as powered
	 * down (slurmctld's boot penalty in the scheduling weight), so
	 * Slurm prefers nodes used before, as on a test cluster of CLOUD
	 * nodes that never boot.  Off: every node has the same weight.
	 */
	bool cloud_power;
	/* Fill topoml_sim_jobout.nodes (free with topoml_sim_jobout_free). */
	bool record_nodes;
	/* topoml on a torus: a job whose placement is no exact box (a box
	 * of its size exists) waits for one up to box_wait s from the first
	 * time it could start (retried at each event); 0 = never waits. */
	double box_wait;
	/* with box_wait: only placements spanning more than box_wait_span
	 * x the job's nodes wait (LocalityWaitSpan=; 1 or less: all) */
	double box_wait_span;
	/*
	 * Called after every event with the jobs submitted so far and those
	 * waiting, for a progress display (may be NULL; must be cheap).
	 */
	void (*progress)(void *arg, int submitted, int queued, int njobs);
	void *progress_arg;
	/*
	 * topoml policy, whole-node jobs: when set, places trace job `job'
	 * instead of topoml_place(), with the same contract (out scored,
	 * 0 or -1 with why), e.g. the CLI's --hybrid gives each job
	 * topoml_place_hybrid for its shape, as select/topoml ranks an
	 * --ml-parallel job's choices.  May be NULL.
	 */
	int (*place)(void *arg, const topoml_topo_t *t, int job,
		     const struct topoml_place_req *req,
		     struct topoml_placement *out, char *why, size_t whylen);
	void *place_arg;
	/*
	 * topoml policy, the locality wait of select/topoml (topoml/wait.h,
	 * LocalityWait=): a placement that splits more tensor groups over
	 * NVLink domains, or sends more data-parallel traffic through the
	 * top, than the job's shape gets on the free machine is not started;
	 * the job waits for a better one up to hold_wait s from the first
	 * time it could start (retried at each event, the clock box_wait
	 * uses), then takes what there is.  wait_job gives job size n's
	 * --ml-parallel shape and tasks a node (false: none; NULL: no job
	 * has one); hybrid_weights: HybridWeights.  arg: place_arg.
	 */
	bool (*wait_job)(void *arg, int n, struct topoml_parallel *p,
			 int *tasks_per_node);
	const double *hybrid_weights;
	double hold_wait;
};

/*
 * Metrics of one policy.  Definitions (also in topoml-sim(1)):
 * - wait = start - submit; mean and 95th percentile (nearest rank) over
 *   started jobs.
 * - makespan = last end - first submit; utilization = busy node-seconds /
 *   (nodes x makespan).
 * - span_over_lower_bound: mean over jobs of score.span /
 *   score.span_lower_bound (leaves, groups, or box volume).
 * - ring_cost = sum over jobs of score.ring_cost x run time (hop-seconds);
 *   ring_cost_over_lower_bound divides it by the same sum of
 *   score.ring_lower_bound (1 when every job is at its bound).
 * - ..._over_free_lower_bound: the same against the bounds on the nodes
 *   free when the job started (score.*_lower_bound_free): what the best
 *   placement possible then would have reached.
 * - sharing: node-hours during which a multi-unit job shares a unit with
 *   another running multi-unit job.  Units: leaf switches (fat-tree),
 *   groups (dragonfly); on a torus every job of >= 2 nodes is multi-unit
 *   and two jobs share when their bounding boxes intersect (their
 *   dimension-ordered routes can use the same links).
 * - contiguous_isolated (torus): multi-node jobs given an exact box
 *   (bounding box volume = size) that no other running job's bounding box
 *   intersects at start, over all multi-node jobs; ..._when_possible
 *   counts only the jobs for which, when they started, the free nodes
 *   held an exact box of their size (box_possible of them).
 * - fragmentation: time-weighted mean over the makespan of
 *   1 - L / F, with F the free nodes and L the engine's largest job still
 *   placeable at the best level on them (score.largest_free_after of an
 *   empty placement, see cost/cost.c); 0 while nothing is free.
 */
struct topoml_sim_metrics {
	enum topoml_policy policy;
	int jobs;			/* started and finished */
	int unplaced;			/* never placeable, dropped */
	double mean_wait_s;
	double p95_wait_s;
	double max_wait_s;
	double utilization;
	double makespan_s;
	double span_over_lower_bound;
	double span_over_free_lower_bound;
	double mean_span;
	double ring_cost;
	double ring_lower_bound;
	double ring_cost_over_lower_bound;
	double ring_cost_over_free_lower_bound;
	double global_ring_hops;	/* dragonfly: sum x run time */
	double mean_pair_hops;		/* mean over multi-node jobs */
	double sharing;			/* node-hours */
	double sharing_fraction;	/* of all busy node-hours */
	double contiguous_isolated;	/* torus: fraction of multi-node
					 * jobs given an exact box sharing
					 * no link at start */
	int box_possible;		/* torus: multi-node jobs for which
					 * an all-free exact box existed */
	double contiguous_isolated_when_possible;	/* of those */
	double fragmentation;
	int backfilled;			/* started out of FCFS order */
	long placements;		/* topoml_place calls */
	double cpu_s;			/* simulation time */
};

/* Per job outcome, for tests and the SVG. */
struct topoml_sim_jobout {
	double start;		/* -1 when never started */
	bool backfilled;
	int span;
	double ring_cost;
	int nnodes;		/* nodes the job ran on */
	hwloc_bitmap_t nodes;	/* with opts.record_nodes, else NULL */
	int *units;		/* with opts.record_nodes: units taken on
				 * each node of nodes, in index order */
};

void topoml_sim_jobout_free(struct topoml_sim_jobout *jo, int n);

/*
 * Jobs that share nodes (a trace read with opts.shared): nodes have
 * cores_per_node cores (the trace's); a job of job.cores > 0 takes cores
 * on partly used nodes as well as idle ones, other jobs take whole idle
 * nodes.  Policy topoml narrows the candidates with topoml_place() (units
 * = cores, partly used nodes marked) as select/topoml does, then Slurm's
 * own node choice spreads the cores over that set, as cons_tres does
 * behind the plugin.  The Slurm baselines follow cons_tres 22.05 for a
 * job of -n CORES (one node at least, no --exclusive): slurm-tree
 * _eval_nodes_topo (best-fit leaf by nodes with free cores, nodes in index
 * order), slurm-dragonfly _eval_nodes_dfly (the leaf with the most such
 * nodes, then round robin over leaves), linear _eval_nodes (best fit over
 * runs of consecutive nodes, a single node by fewest free cores when one
 * holds the job), slurm-hilbert the same along the Hilbert curve on a
 * torus.  The Kueue baselines place cores one-core pods by their own
 * algorithm (sim/baselines/kueue_tas.c); volcano, slurm-block and
 * slurm-torus3d, reproduced for whole nodes only, give their shared jobs
 * linear's _eval_nodes.  Utilization is then in cores, sharing and spans
 * in nodes.
 *
 * Replay tr on t with one policy.  jobout (may be NULL) has tr->njobs
 * entries.  0 on success, -1 with err on an internal failure.
 */
int topoml_sim_run(const topoml_topo_t *t, const struct topoml_trace *tr,
		   enum topoml_policy policy,
		   const struct topoml_sim_opts *o,
		   struct topoml_sim_metrics *m,
		   struct topoml_sim_jobout *jobout, topoml_errors_t *err);

#ifdef __cplusplus
}
#endif
/*
 * The hybrid shape `topoml sim --hybrid` gives a trace job of `nodes'
 * nodes with `per_node' ranks each (doc/results.md): tensor parallel
 * `tp' (per_node when tp does not divide the ranks: TP within a node),
 * pipeline parallel the largest of 8, 4, 2, 1 that leaves data parallel
 * >= 2 (or 1), data parallel the rest.  Returns false when none resolves.
 */
bool topoml_sim_hybrid_shape(int nodes, int per_node, int tp,
			     struct topoml_parallel *p);

#endif /* TOPOML_SIM_H */
