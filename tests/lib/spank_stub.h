/*
 * A SPANK handle good enough for spank/ckpt/'s user_init/exit, so that
 * the tests link spank/ckpt/ without slurmstepd: spank_remote,
 * spank_get_item, spank_getenv and spank_setenv on a small table, and a
 * stand-in for slurmctld's restart count.  Each test sets the ids it
 * wants in spank_stub.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_TESTS_SPANK_STUB_H
#define TOPOML_TESTS_SPANK_STUB_H

#include <stdint.h>

/* What spank_get_item and spank_stub_restart answer. */
struct spank_stub {
	uint32_t job_id;	/* S_JOB_ID (default 4242) */
	uint32_t step_id;	/* S_JOB_STEPID (default 7) */
	uint32_t array_job;	/* S_JOB_ARRAY_ID (default 0: none) */
	uint32_t array_task;	/* S_JOB_ARRAY_TASK_ID (default NO_VAL) */
	long restarts;		/* spank_stub_restart (default 0) */
	long uid, gid;		/* S_JOB_UID/GID (default -1: getuid(),
				 * getgid()) */
};

extern struct spank_stub spank_stub;

/* The job's environment as spank_setenv left it: NULL if unset. */
const char *spank_stub_env(const char *var);

/* Empty the job's environment. */
void spank_stub_env_clear(void);

/* For ml_ckpt_restart_lookup: spank_stub.restarts. */
long spank_stub_restart(uint32_t job_id);

#endif
