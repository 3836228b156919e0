/*
 * The few public Slurm API calls whose signature changed between the
 * releases topoml.so builds against (22.05 to 26.05), behind one name
 * each, so that the plugin's code reads the same for every release.
 *   - hostlist_t: topology/util/hostlist_compat.h.
 *   - slurm_load_job() and slurm_requeue() take a slurm_step_id_t in 26.05.
 *   - job_desc_msg_t names its job by a slurm_step_id_t from 25.11.
 *   - slurm_kill_job_step() gains flags in 23.11 and takes a
 *     slurm_step_id_t by address from 25.11.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_SLURM_COMPAT_H
#define TOPOML_SPANK_SLURM_COMPAT_H

#include <stdint.h>
#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

#include "util/hostlist_compat.h"	/* topoml_hl_t, from libtopoml */

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
static inline slurm_step_id_t ml_job_step_id(uint32_t job_id)
{
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = job_id;
	return id;
}

static inline int ml_load_job(job_info_msg_t **info, uint32_t job_id)
{
	return slurm_load_job(info, ml_job_step_id(job_id), SHOW_ALL);
}

static inline int ml_requeue(uint32_t job_id)
{
	return slurm_requeue(ml_job_step_id(job_id), 0);
}
#else
static inline int ml_load_job(job_info_msg_t **info, uint32_t job_id)
{
	return slurm_load_job(info, job_id, SHOW_ALL);
}

static inline int ml_requeue(uint32_t job_id)
{
	return slurm_requeue(job_id, 0);
}
#endif

/* The job an update (slurm_update_job) is for: a step id from 25.11. */
static inline void ml_job_desc_job(job_desc_msg_t *d, uint32_t job_id)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	d->step_id.job_id = job_id;
#else
	d->job_id = job_id;
#endif
}

/* Through slurmctld, which signals the nodes on its own time. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
static inline int ml_kill_step(uint32_t job_id, uint32_t step_id,
			       uint16_t sig)
{
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = job_id;
	id.step_id = step_id;
	return slurm_kill_job_step(&id, sig, 0);
}
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
static inline int ml_kill_step(uint32_t job_id, uint32_t step_id,
			       uint16_t sig)
{
	return slurm_kill_job_step(job_id, step_id, sig, 0);
}
#else
static inline int ml_kill_step(uint32_t job_id, uint32_t step_id,
			       uint16_t sig)
{
	return slurm_kill_job_step(job_id, step_id, sig);
}
#endif

#endif
