/*
 * What topoml.so needs from slurmctld's record of the job, asked for once
 * per step in the remote context's init_post_opt (root): the restart count
 * and the run's times (checkpoints, spank/ckpt/) and the SystemComment
 * (select/topoml's ring order, ctx_remote.c).  One RPC serves all; from
 * Slurm 23.11 slurmstepd holds its auth lock during user_init, so the RPC
 * cannot move there.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_CTLD_JOB_H
#define TOPOML_SPANK_CTLD_JOB_H

#include <stdint.h>
#include <time.h>

struct ml_ctld_job {
	int state;		/* 0: not asked, 1: answered, -1: failed */
	int err;		/* errno (Slurm's) of a failed load */
	uint32_t job_id;
	long restart_cnt;
	char *system_comment;	/* NULL: none */
	/* The current run's times when slurmctld answered (at), for the
	 * checkpoint timer's first reading (spank/ckpt/ckpt_timer.c). */
	time_t start_time, end_time, at;
	int batch;		/* the job has a batch script */
};

/* The job's record, loaded on the first call for job_id (one RPC), the
 * same answer (or failure) after.  Never NULL. */
const struct ml_ctld_job *ml_ctld_job(uint32_t job_id);
/* Forget it (slurm_spank_exit). */
void ml_ctld_job_clear(void);

#endif
