/*
 * Local context: srun.  Options are validated here, before anything is
 * launched, so a bad value stops srun with the reason.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include "plugin.h"
#include "topoml/contract.h"	/* TOPOML_*_JOB_ENV */

/* Shared with sbatch/salloc: the hint reaches slurmctld under the name
 * Slurm itself uses for --ml-comm, also when it came from TOPOML_COMM. */
int ml_local_common(spank_t sp)
{
	if (ml_options_finish(sp, false))
		return -1;
	if (ml.by_env[ML_OPT_COMM])
		(void)spank_job_control_setenv(sp, TOPOML_COMM_JOB_ENV,
					       ml.arg[ML_OPT_COMM], 1);
	/* The same for select/topoml's --ml-parallel and --ml-spares. */
	if (ml.by_env[ML_OPT_PARALLEL])
		(void)spank_job_control_setenv(sp, TOPOML_PARALLEL_JOB_ENV,
					       ml.arg[ML_OPT_PARALLEL], 1);
	if (ml.by_env[ML_OPT_SPARES])
		(void)spank_job_control_setenv(sp, TOPOML_SPARES_JOB_ENV,
					       ml.arg[ML_OPT_SPARES], 1);
	/*
	 * plugstack.conf's default_comm for a job that gave no hint of its
	 * own: written where --ml-comm would be, so select/topoml places by
	 * it.  Not overwriting: a value the job already carries under this
	 * name stays.  Not for --ml-parallel without --ml-comm, which
	 * select/topoml places as allreduce (its own rule).
	 */
	if (!ml.set[ML_OPT_COMM] && ml.conf.def[ML_OPT_COMM] >= 0 &&
	    !ml.set[ML_OPT_PARALLEL])
		(void)spank_job_control_setenv(sp, TOPOML_COMM_JOB_ENV,
			ml_opt_value_name(ML_OPT_COMM,
					  ml.conf.def[ML_OPT_COMM]), 0);
	if (ml.ckpt.set && ml_ckpt_local(sp, &ml.ckpt))
		return -1;
	return 0;
}

/*
 * A refusal stops srun, sbatch or salloc here, before anything is
 * submitted: under the plugstack keyword `optional` Slurm would ignore
 * an error returned (and under `required` add its own lines to ours).
 * The reason was printed once (ml_log); exit code 1 as Slurm's own
 * "post-option processing failed".
 */
void ml_local_refuse(void)
{
	fflush(stdout);
	fflush(stderr);
	exit(1);
}

int ml_local_post_opt(spank_t sp)
{
	if (ml_local_common(sp))
		ml_local_refuse();
	return 0;
}
