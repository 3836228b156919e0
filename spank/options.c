/*
 * The --ml-* SPANK options, built from node/conf.c's option table, their
 * callbacks and the TOPOML_* environment twins (pyxis style: an option on
 * the command line wins over its twin, the twin over the site default of
 * plugstack.conf).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static int _cb(int val, const char *optarg, int remote);

/*
 * Slurm keeps pointers into these: built once from node/conf.c's table,
 * which the plugstack.conf parser reads too.
 */
static struct spank_option _table[ML_OPT_COUNT];
static char _usage[ML_OPT_COUNT][512];

static void _table_build(void)
{
	for (int i = 0; i < ML_OPT_COUNT; i++) {
		snprintf(_usage[i], sizeof(_usage[i]), "[topoml] %s (env: %s)",
			 ml_opt_usage(i), ml_opt_env(i));
		_table[i] = (struct spank_option){
			.name = (char *)ml_opt_name(i),
			.arginfo = (char *)ml_opt_arginfo(i),
			.usage = _usage[i],
			/* --ml-preflight alone: quick (_set) */
			.has_arg = i == ML_OPT_PREFLIGHT ? 2 : 1,
			.val = i,
			.cb = _cb,
		};
	}
}

/* --ml-parallel: auto or the sizes, and the model file. */
static int _parallel(const char *arg, char *err, size_t errlen)
{
	static struct ml_par_opt o;

	if (ml_par_parse(arg, &o, err, errlen))
		return -1;
	ml.par = o.par;
	ml.par_auto = o.automatic;
	snprintf(ml.par_model, sizeof(ml.par_model), "%s", o.model);
	return 0;
}

/*
 * In slurmstepd (remote) a bad value came with the job, past srun/sbatch
 * (e.g. sbatch --export=TOPOML_NCCL=maybe): the job fails, not the node.
 */
static int _set(int opt, const char *arg, const char *what, bool remote)
{
	char err[512];
	int rc;

	if (opt == ML_OPT_PREFLIGHT && !*arg)
		arg = "quick";
	if (opt == ML_OPT_CKPT)
		rc = ml_ckpt_parse(arg, &ml.ckpt, err, sizeof(err));
	else if (opt == ML_OPT_PARALLEL)
		rc = _parallel(arg, err, sizeof(err));
	else if (opt == ML_OPT_SPARES)
		rc = ml_spares_parse(&ml.conf, arg, &ml.val[opt], err,
				     sizeof(err));
	else
		rc = ml_opt_parse(&ml.conf, opt, arg, &ml.val[opt], err,
				  sizeof(err));
	if (rc) {
		if (remote)
			ml_user_error("%s: %s", what, err);
		else
			ml_log(ML_LOG_ERROR, "topoml: %s: %s", what, err);
		return -1;
	}
	ml.set[opt] = true;
	snprintf(ml.arg[opt], sizeof(ml.arg[opt]), "%s", arg);
	return 0;
}

static int _cb(int val, const char *optarg, int remote)
{
	char what[64];

	if (val < 0 || val >= ML_OPT_COUNT)
		return -1;
	snprintf(what, sizeof(what), "--%s", ml_opt_name(val));
	/*
	 * Remote: the mistake is recorded (task_init fails the job with
	 * it).  An error returned here would make Slurm log the value as
	 * it came ("spank: failed to process option ml-...=VALUE"), where
	 * a newline in it forges a line of slurmd's log.
	 */
	if (_set(val, optarg ? optarg : "", what, remote) && !remote)
		return -1;
	return 0;
}

int ml_options_register(spank_t sp)
{
	_table_build();
	for (int i = 0; i < ML_OPT_COUNT; i++) {
		spank_err_t rc = spank_option_register(sp, &_table[i]);

		if (rc != ESPANK_SUCCESS) {
			ml_log(ML_LOG_ERROR, "topoml: --%s: cannot register: "
			       "%s", ml_opt_name(i), spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

int ml_options_finish(spank_t sp, bool remote)
{
	/* --ml-ckpt's DIR may be PATH_MAX - 32 long, with its options */
	char buf[PATH_MAX + 256];

	for (int i = 0; i < ML_OPT_COUNT; i++) {
		const char *v = NULL;
		spank_err_t rc;

		if (ml.set[i])
			continue;
		if (remote) {
			rc = spank_getenv(sp, ml_opt_env(i), buf, sizeof(buf));
			if (rc == ESPANK_SUCCESS) {
				v = buf;
			} else if (rc == ESPANK_NOSPACE) {
				/* not silently unset on the nodes only */
				ml_user_error("%s: value too long",
					      ml_opt_env(i));
				return -1;
			}
		} else {
			v = getenv(ml_opt_env(i));
		}
		if (v && *v) {
			if (_set(i, v, ml_opt_env(i), remote))
				return -1;
			ml.by_env[i] = true;
		}
	}
	for (int i = 0; i < ML_OPT_COUNT; i++)
		if (!ml.set[i] && i != ML_OPT_CKPT && i != ML_OPT_PARALLEL &&
		    i != ML_OPT_SPARES)
			ml.val[i] = ml.conf.def[i];
	return 0;
}
