/*
 * topoml SPANK plugin: GPU/NVLink/NIC affinity, NCCL and torch.distributed
 * wiring, checkpoint hooks.  This file is the dispatcher: every SPANK entry
 * point hands over to the file of the context it runs in (ctx_local.c for
 * srun, ctx_allocator.c for sbatch/salloc, ctx_slurmd.c, ctx_remote.c for
 * slurmstepd), as NVIDIA/pyxis does.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "plugin.h"

SPANK_PLUGIN(topoml, 1);

struct ml_state ml;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[512];
	spank_context_t ctx = spank_context();

	memset(&ml, 0, sizeof(ml));
	for (int i = 0; i < ML_OPT_COUNT; i++)
		ml.val[i] = -1;
	ml_conf_init(&ml.conf);
	if (ml_conf_parse(&ml.conf, ac, av, err, sizeof(err))) {
		ml_log(ML_LOG_ERROR, "topoml: plugstack.conf: %s", err);
		return -1;
	}
	switch (ctx) {
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
	case S_CTX_REMOTE:
		return ml_options_register(sp);
	case S_CTX_SLURMD:
		return ml_slurmd_init(sp);
	default:
		return 0;
	}
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	switch (spank_context()) {
	case S_CTX_LOCAL:
		return ml_local_post_opt(sp);
	case S_CTX_ALLOCATOR:
		return ml_allocator_post_opt(sp);
	case S_CTX_REMOTE:
		return ml_remote_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	return ml_remote_user_init(sp);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	return ml_remote_task_init(sp);
}

/* --ml-ckpt: the job's health report leaves with the last local task
 * (before srun or slurmctld hears that the step ended). */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || !ml.ckpt.set)
		return 0;
	return ml_ckpt_task_exit(sp, &ml.ckpt);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	int rc = 0;

	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		rc = ml_remote_exit(sp);
	return rc;
}
