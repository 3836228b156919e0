/*
 * Checkpoint hooks of the topoml SPANK plugin (--ml-ckpt / TOPOML_CKPT).
 * The SPANK options (spank/options.c) and the context files
 * (spank/ctx_*.c) call these at the matching points; ckpt_int.h says
 * which file of spank/ckpt/ does what.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_CKPT_H
#define TOPOML_SPANK_CKPT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <slurm/spank.h>

struct ml_ckpt_opts {
	bool set;
	char dir[PATH_MAX];
	long every;		/* steps, 0 = off */
	long interval;		/* seconds, 0 = off */
	int keep;		/* checkpoints kept, 0 = all */
	int lead;		/* warning seconds before the time limit */
	int resume;		/* ML_CKPT_RESUME_* */
	uint32_t resume_job;	/* resume=JOBID */
};

/*
 * Whose checkpoints a job resumes (resume=): its own run only (the
 * default: a requeue or a relaunch keeps the job id), any run DIR holds,
 * or the run of the job JOBID.
 */
enum { ML_CKPT_RESUME_OWN, ML_CKPT_RESUME_ANY, ML_CKPT_RESUME_JOB };

/* Parse "DIR[,every=N][,interval=S][,keep=K][,lead=S][,resume=R]"; -1 +
 * err. */
int ml_ckpt_parse(const char *arg, struct ml_ckpt_opts *o, char *err,
		  size_t errlen);
/* local/allocator context, after options (srun, sbatch, salloc). */
int ml_ckpt_local(spank_t sp, const struct ml_ckpt_opts *o);
/*
 * remote context, slurm_spank_init_post_opt (root): the user's page
 * directory under CACHE_DIR.  0, or -1 with a message for the job's output.
 */
int ml_ckpt_post_opt(spank_t sp, const struct ml_ckpt_opts *o,
		     const char *cache_dir, char *err, size_t errlen);
/*
 * remote context, slurm_spank_user_init (the job's user; root threads
 * switch credentials): directory, epoch, page, timer.  0, or -1 with a
 * message for the job's output.
 */
int ml_ckpt_user_init(spank_t sp, const struct ml_ckpt_opts *o, char *err,
		      size_t errlen);
/* After user_init: which checkpoint the job resumes and why, for the
 * job's output; "" when it starts afresh. */
const char *ml_ckpt_resume_note(void);
/* Where the restart count comes from (slurmctld); tests replace it. */
extern long (*ml_ckpt_restart_lookup)(uint32_t job_id);
/* remote context, slurm_spank_task_init (per task, as the user). */
int ml_ckpt_task_init(spank_t sp, const struct ml_ckpt_opts *o);
/* remote context, slurm_spank_task_exit (root): after the last local
 * task, the job's health report (ckpt_health.c). */
int ml_ckpt_task_exit(spank_t sp, const struct ml_ckpt_opts *o);
/* remote context, root: --ml-preflight found node-wide hardware faults
 * CHECKS (TOPOML_HEALTH_PF_*) on NODE: into job JOBID's AdminComment
 * part "topoml-health: preflight=NODE:ecc" (ckpt_health.c). */
void ml_health_preflight(uint32_t jobid, const char *node, unsigned checks);
/* remote context, slurm_spank_exit. */
int ml_ckpt_exit(spank_t sp, const struct ml_ckpt_opts *o);

#endif
