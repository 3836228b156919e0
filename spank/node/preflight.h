/*
 * --ml-preflight=quick: before the first task of a step, the node checks
 * itself against what it should have (the node model, Slurm's GPUs for
 * the step) and the site's limits.  Pure C: preflight.c gathers what
 * NVML and sysfs say (hw_nvml_health, hw_ib_port_health) and judges it;
 * the judge alone is what the unit tests drive.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_PREFLIGHT_H
#define TOPOML_SPANK_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "hw.h"
#include "ml.h"

/* What the node says now, and what it should be. */
struct ml_pf_input {
	const struct hw_node *node;	/* the model: what it should have */
	const char *slurm_gpus;		/* SLURM_STEP_GPUS / _JOB_GPUS, NULL */
	const char *nvml_err;		/* NULL: NVML answered */
	const struct hw_gpu_health *gpus;
	int ngpus;
	const struct hw_port_health *ports;
	int nports;
	long ib_rate;			/* Mb/s: >0 at least, -1 auto, 0 off */
};

/*
 * The node's problems, "; "-joined in WHY (cut at whylen with "..."):
 * their count, 0 when the node is fit.
 *  - GPUs: every NVIDIA GPU of the model (those of SLURM_GPUS when Slurm
 *    gave the step some) is seen by NVML, with no uncorrectable ECC
 *    error since the driver loaded, no page retirement or row remapping
 *    pending or failed, no thermal or power-brake clock slowdown, and as
 *    many NVLink links up as the node's best GPU;
 *  - HCA ports of the model's verbs NICs that were ACTIVE (or unknown)
 *    when slurmd described the node are ACTIVE, at IB_RATE or more (auto:
 *    the fastest InfiniBand port of the node, for InfiniBand ports).
 */
int ml_preflight_judge(const struct ml_pf_input *in, char *why,
		       size_t whylen);

/* Gather (NVML through c->nvml_lib, sysfs under c->sysfs_root) and judge. */
int ml_preflight_quick(const struct ml_conf *c, const struct hw_node *node,
		       const char *slurm_gpus, char *why, size_t whylen);

/* sysfs's port state names: "DOWN", "ACTIVE"; "state N" otherwise. */
const char *ml_pf_port_state(int state, char *buf, size_t len);

#endif
