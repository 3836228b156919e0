/*
 * One load of the job's record from slurmctld per step (see ctld_job.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "ctld_job.h"
#include "topoml/jobcomment.h"
#include "slurm_compat.h"

static struct ml_ctld_job _job;

const struct ml_ctld_job *ml_ctld_job(uint32_t job_id)
{
	job_info_msg_t *info = NULL;
	const slurm_job_info_t *j;

	if (_job.state && _job.job_id == job_id)
		return &_job;
	ml_ctld_job_clear();
	_job.job_id = job_id;
	_job.state = -1;
	if (ml_load_job(&info, job_id) != SLURM_SUCCESS) {
		_job.err = errno;
		goto out;
	}
	if (!info || info->record_count < 1) {
		_job.err = ESLURM_INVALID_JOB_ID;
		goto out;
	}
	j = &info->job_array[0];
	_job.restart_cnt = j->restart_cnt;
	_job.start_time = j->start_time;
	_job.end_time = j->end_time;
	_job.at = time(NULL);
	_job.batch = j->batch_flag != 0;
	/*
	 * SystemComment is written by slurmctld alone: job_desc_msg_t has no
	 * such field (22.05 to 26.05), so no RPC a user sends (sbatch,
	 * scontrol update) sets it; slurmctld's plugins (select/topoml,
	 * burst_buffer/lua) and job_mgr.c write it.  Trusted, but still read
	 * within bounds: a longer one is dropped here.
	 */
	if (j->system_comment &&
	    strnlen(j->system_comment, TOPOML_COMMENT_MAX + 1) <=
	    TOPOML_COMMENT_MAX &&
	    !(_job.system_comment = strdup(j->system_comment))) {
		_job.err = ENOMEM;
		goto out;
	}
	_job.state = 1;
out:
	if (info)
		slurm_free_job_info_msg(info);
	errno = _job.err;
	return &_job;
}

void ml_ctld_job_clear(void)
{
	free(_job.system_comment);
	memset(&_job, 0, sizeof(_job));
}
