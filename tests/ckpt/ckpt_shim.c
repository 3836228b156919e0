/*
 * Test-only SPANK plugin: --ml-ckpt (and TOPOML_CKPT) wired straight to
 * spank/ckpt.c, for the cluster tests when topoml.so lacks the option.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <slurm/spank.h>

#include "../../spank/ckpt.h"

SPANK_PLUGIN(topoml_ckpt_shim, 1);

static struct ml_ckpt_opts _o;

static int _opt(int val, const char *arg, int remote)
{
	char err[256];

	(void)val;
	(void)remote;
	if (ml_ckpt_parse(arg, &_o, err, sizeof(err)) < 0) {
		slurm_error("topoml: --ml-ckpt: %s", err);
		return -1;
	}
	return 0;
}

static struct spank_option _ckpt_opt = {
	"ml-ckpt", "DIR[,every=N][,interval=S][,keep=K][,lead=S]",
	"checkpoint directory and policy", 1, 0, _opt
};

/* Registered here, not by a spank_options table, which sbatch ignores. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_option_register(sp, &_ckpt_opt) == ESPANK_SUCCESS ? 0 :
	       -1;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_remote(sp))
		return 0;
	if (!_o.set && getenv("TOPOML_CKPT") &&
	    _opt(0, getenv("TOPOML_CKPT"), 0))
		return -1;
	return ml_ckpt_local(sp, &_o);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	char env[4096];

	(void)ac;
	(void)av;
	if (!_o.set && spank_getenv(sp, "TOPOML_CKPT", env, sizeof(env)) ==
	    ESPANK_SUCCESS && _opt(0, env, 1))
		return -1;
	return ml_ckpt_user_init(sp, &_o);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return ml_ckpt_task_init(sp, &_o);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return ml_ckpt_exit(sp, &_o);
}
