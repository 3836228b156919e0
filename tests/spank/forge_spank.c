/*
 * A user's own SPANK plugin for sbatch (through a slurm.conf copy of the
 * user's, SLURM_CONF, naming the user's plugstack.conf): it puts
 * FORGE_ML_COMM in the job's SPANK environment under the name of
 * topoml's --ml-comm, past topoml.so's own check, as any user can.
 * slurmctld's select/topoml reads it from there.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <slurm/spank.h>

SPANK_PLUGIN(forge, 1);

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	const char *v = getenv("FORGE_ML_COMM");

	(void)ac;
	(void)av;
	if (v && spank_context() == S_CTX_ALLOCATOR)
		spank_job_control_setenv(sp,
					 "_SLURM_SPANK_OPTION_topoml_ml_comm",
					 v, 1);
	return 0;
}
