/*
 * The step's checkpoint state (ml_ck), which the hooks (ckpt.c), the page
 * (ckpt_page.c), the timer (ckpt_timer.c) and the fencing check share, and
 * the job's figures from slurmctld that fill it.  Below all of them, so
 * that none of those files needs another that needs it back.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>

#include "ckpt_int.h"
#include "ctld_job.h"

struct ml_ckpt_state ml_ck = { .page_fd = -1, .dir_fd = -1 };

/*
 * The job's restart count, from slurmctld: SLURM_RESTART_COUNT is in the
 * job's environment (a user's srun can set anything there), and Slurm
 * 22.05's S_SLURM_RESTART_COUNT item is never filled in slurmstepd.
 * -1 when slurmctld does not answer.  The step's one load of the job
 * (ctld_job.c), shared with the ring order.  A variable so that unit
 * tests, without a slurmctld, can answer instead.
 */
static long _restart_from_ctld(uint32_t job_id)
{
	const struct ml_ctld_job *j = ml_ctld_job(job_id);

	if (j->state <= 0)
		return -1;
	/* The same load gives the timer its first reading. */
	ml_ck.job_start = j->start_time;
	ml_ck.job_end = j->end_time;
	ml_ck.job_at = j->at;
	ml_ck.job_batch = j->batch;
	return j->restart_cnt;
}

long (*ml_ckpt_restart_lookup)(uint32_t job_id) = _restart_from_ctld;
