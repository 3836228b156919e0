/*
 * The contract between the SPANK plugin (topoml.so in srun, sbatch, salloc
 * and slurmstepd) and select/topoml (slurmctld), in one place: how the
 * --ml-* options that steer placement travel to slurmctld, and the one
 * parser of each value, used on both sides.
 *
 * Slurm keeps a SPANK option in the job's SPANK environment as
 * _SLURM_SPANK_OPTION_<plugin>_<option>=VALUE (Slurm 22.05 plugstack.c,
 * _opt_env_name()).  The SPANK plugin sets the same name, with
 * spank_job_control_setenv() (which adds "SPANK_"), for what Slurm does not
 * carry itself: an option's TOPOML_* twin, and plugstack.conf's
 * default_comm for a job that gave no --ml-comm.  select/topoml reads
 * either form.
 *
 *   --ml-comm=HINT      TOPOML_COMM_JOB_ENV      topoml_hint_parse (topoml.h)
 *   --ml-parallel=SPEC  TOPOML_PARALLEL_JOB_ENV  topoml_parallel_parse
 *   --ml-spares=K       TOPOML_SPARES_JOB_ENV    topoml_spares_parse
 *   --ml-preflight[=quick]  TOPOML_PREFLIGHT_JOB_ENV  (topoml.so's own; a
 *                       requeue that leaves a failed node out reads it)
 *
 * The way back, select/topoml's placement record in the job's
 * SystemComment, is jobcomment.h (the codec); the placement rules behind it
 * (spares last) are in place.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CONTRACT_H
#define TOPOML_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

/* --ml-comm's placement hint. */
enum topoml_hint {
	TOPOML_HINT_ALLREDUCE = 0,
	TOPOML_HINT_ALLTOALL,
	TOPOML_HINT_ISOLATE,
};

/*
 * --ml-parallel=tp=T,pp=P[,ep=E][,cp=C][,dp=D]: the group sizes of a
 * hybrid-parallel job.  Ranks are numbered as Megatron-LM's RankGenerator
 * does by default (order "tp-cp-ep-dp-pp"): tensor parallel fastest, then
 * context, then data, pipeline slowest,
 *	rank = tp + T * (cp + C * (dp + D * pp)),
 * and expert groups are E consecutive tensor groups within the C * D ranks
 * of one stage (Megatron's expert generator, expert tp = tp).
 */
struct topoml_parallel {
	int tp, pp, dp, ep, cp;		/* dp 0: the rest, until resolved */
};

#define TOPOML_COMM_JOB_ENV	"_SLURM_SPANK_OPTION_topoml_ml_comm"
#define TOPOML_PARALLEL_JOB_ENV	"_SLURM_SPANK_OPTION_topoml_ml_parallel"
#define TOPOML_SPARES_JOB_ENV	"_SLURM_SPANK_OPTION_topoml_ml_spares"
#define TOPOML_PREFLIGHT_JOB_ENV "_SLURM_SPANK_OPTION_topoml_ml_preflight"
#define TOPOML_SPARES_MAX	1024

/*
 * The value of one NAME=VALUE entry of a job's SPANK environment when its
 * name is name (with or without "SPANK_"), else NULL.
 */
const char *topoml_job_env_value(const char *entry, const char *name);
/* The same for each option (either form), else NULL. */
const char *topoml_comm_job_env(const char *entry);
const char *topoml_parallel_job_env(const char *entry);
const char *topoml_spares_job_env(const char *entry);
const char *topoml_preflight_job_env(const char *entry);

/*
 * The value of name in a whole SPANK environment env[0..n), the last entry
 * winning (Slurm's own for a repeated name), else NULL.
 */
const char *topoml_job_env_get(const char *const *env, uint32_t n,
			       const char *name);

/*
 * A job's placement options, read from its SPANK environment as
 * select/topoml takes them.  1: given and valid (value filled); 0: not
 * given; -1: given and not valid (*bad, when not NULL, the value as given).
 */
int topoml_job_comm(const char *const *env, uint32_t n,
		    enum topoml_hint *hint, const char **bad);
int topoml_job_parallel(const char *const *env, uint32_t n,
			struct topoml_parallel *p, const char **bad);
int topoml_job_spares(const char *const *env, uint32_t n, int *k,
		      const char **bad);

/* "K", 0 <= K <= TOPOML_SPARES_MAX, decimal digits only: 0, or -1. */
int topoml_spares_parse(const char *s, int *k);

#endif
