/*
 * State shared by the context files of topoml.so.  One plugin instance per
 * process (srun, sbatch, slurmd, slurmstepd), so one global state.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_PLUGIN_H
#define TOPOML_SPANK_PLUGIN_H

#include <slurm/spank.h>

#include "ckpt.h"
#include "ml.h"


struct ml_state {
	struct ml_conf conf;
	int val[ML_OPT_COUNT];		/* -1 = not given */
	bool set[ML_OPT_COUNT];		/* given by option or env twin */
	bool by_env[ML_OPT_COUNT];
	char arg[ML_OPT_COUNT][256];
	struct ml_ckpt_opts ckpt;
	struct topoml_parallel par;	/* --ml-parallel, when set[] */
	bool par_auto;			/* auto: the planner chooses par */
	char par_model[PATH_MAX];	/* model=FILE, "" none */
	char par_note[512];		/* auto: the layout chosen */
	char par_split[256];		/* verdict: TP groups over domains */
	char par_mem[512];		/* verdict: memory by the estimate */

	/* remote context */
	bool active;			/* any wiring for this step */
	struct hw_node *node;
	struct ml_task_bind *binds;
	int ntasks;
	struct ml_job job;
	int *node_first_rank;		/* unused when slurm order */
	char topo_file[PATH_MAX + 64];
	char node_name[256];
	char *spare_nodes;		/* --ml-spares: "n7,n8", malloc'd */
	/*
	 * A mistake of the job's (a bad option value in its environment, a
	 * checkpoint directory it cannot use), found in slurmstepd before the
	 * tasks start.  Returning an error from those callbacks would fail
	 * the batch step and make slurmctld drain the node, and under the
	 * plugstack keyword `optional` slurmstepd ignores a task_init error:
	 * task_init prints it in the job's output once and ends every task
	 * with exit code 1 before exec, whatever the keyword.
	 */
	char user_error[512];
	bool user_error_node;		/* this node's own (a path): each
					 * node that has it prints it */
	bool preflight_failed;		/* --ml-preflight: this node */
	uint32_t stepid;
};

extern struct ml_state ml;

/*
 * log.c: every line that can carry something of the job's (an option
 * value, its environment, a path, a node name from its request) goes
 * through ml_log or ml_user_error, which escape the whole line
 * (topoml_log_vformat).  slurm_error() and its kin directly only for
 * text the job has no part in (the site's configuration, ids, errno).
 */
enum ml_log_level { ML_LOG_ERROR, ML_LOG_INFO, ML_LOG_VERBOSE, ML_LOG_DEBUG };
void ml_log(enum ml_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ML_ERR(opt, fmt, ...) \
	ml_log(ML_LOG_ERROR, "topoml: --%s: " fmt, ml_opt_name(opt), \
	       ##__VA_ARGS__)

/* options.c */
int ml_options_register(spank_t sp);
/* Env twins (getenv locally, the job env remotely), then site defaults. */
int ml_options_finish(spank_t sp, bool remote);

/* One file per context. */
int ml_local_common(spank_t sp);		/* ctx_local.c */
int ml_local_post_opt(spank_t sp);
/* srun/sbatch/salloc: exit 1 after a refusal (its reason printed). */
void ml_local_refuse(void) __attribute__((noreturn));
int ml_allocator_post_opt(spank_t sp);		/* ctx_allocator.c */
int ml_slurmd_init(spank_t sp);			/* ctx_slurmd.c */
int ml_remote_post_opt(spank_t sp);		/* ctx_remote.c */
int ml_remote_user_init(spank_t sp);
int ml_remote_task_init(spank_t sp);
int ml_remote_exit(spank_t sp);
/* Remote: record the job's mistake (the first one) for task_init, and
 * log it (log.c: escaped in both). */
void ml_user_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* ctx_slurmd.c: file names in the cache directory. */
void ml_cache_path(const struct ml_conf *c, const char *node,
		   const char *suffix, char *buf, size_t len);

#endif
