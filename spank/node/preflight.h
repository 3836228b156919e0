/*
 * --ml-preflight=quick: before the first task of a step, the node checks
 * itself against what it should have (the node model, Slurm's GPUs for
 * the step) and the site's limits.  Pure C: preflight.c gathers what
 * NVML and sysfs say (hw_nvml_health, hw_ib_port_health) and judges it;
 * the judge alone is what the unit tests drive.  full adds
 * preflight_ring.c: a compute probe, the ring stream and the judge
 * against the job's median.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_PREFLIGHT_H
#define TOPOML_SPANK_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The node-wide hardware faults among what IN says, which nothing the job
 * controls can make (its GPUs, load or timing): the same bits as
 * TOPOML_HEALTH_PF_* (topoml/health.h), 0 when none.  Every GPU of the
 * model that NVML sees (not only SLURM_GPUS'): uncorrectable ECC errors
 * (ECC), page retirement or row remapping pending or failed (PAGES); a
 * model's HCA port that was up and is DOWN (PORT).  Never clocks,
 * NVLink counts, port rates, a GPU NVML does not see, nor full's probes.
 */
#define ML_PF_ROOT_ECC		0x1u
#define ML_PF_ROOT_PAGES	0x2u
#define ML_PF_ROOT_PORT		0x4u
unsigned ml_preflight_root_faults(const struct ml_pf_input *in);
/* ml_preflight_quick, and its root faults in *ROOT (when not NULL). */
int ml_preflight_quick_root(const struct ml_conf *c,
			    const struct hw_node *node,
			    const char *slurm_gpus, char *why, size_t whylen,
			    unsigned *root);

/*
 * --ml-preflight=full (preflight_ring.c).  The compute probe: a fixed
 * integer workload of ITERS steps, five times, the fastest time (us).
 */
long ml_pf_probe_us(long iters);

/* What one node found: its probe, the stream it received from its
 * predecessor in ring order (kB/s). */
struct ml_pf_rec {
	long probe_us;
	long bw_kbs;
	bool known;
};

/* The step's ring, this node at position ME. */
struct ml_pf_ring {
	int n, me;
	const char *const *names;	/* node names, ring order */
	const char *const *addr;	/* their addresses, ring order */
	int port;			/* each node listens there */
	uint32_t jobid, stepid;
	size_t bytes;			/* streamed to the successor */
	int timeout_ms;			/* for the whole exchange */
	bool privileged;		/* root: ports below 1024 only */
};

/*
 * Stream R->bytes to the successor (from a port below 1024 when
 * privileged; only the predecessor's address and such a port are taken),
 * time the stream from the predecessor, and gather every node's record
 * around the same ring: each node sends to its successor only, n - 1
 * records, so that the cost grows linearly with the nodes.  RECS[n] in
 * ring order, recs[me].probe_us filled in by the caller.  The number of
 * others' records received; err says what was missing (-1: nothing ran).
 */
int ml_pf_ring_run(const struct ml_pf_ring *r, struct ml_pf_rec *recs,
		   char *err, size_t errlen);

/*
 * The stream from the predecessor as its bytes come (ml_pf_ring_run's,
 * and the fuzz target's): a header naming this step, ring size and
 * predecessor, BYTES of bulk, then each other node's record once.  Set
 * n, me, from, jobid, stepid, bytes, recs[n] and order[n]; the rest 0.
 */
struct ml_pf_rx {
	int n, me, from;
	uint32_t jobid, stepid;
	size_t bytes;
	struct ml_pf_rec *recs;
	int *order;			/* records in the order they came */
	int got;			/* of them */
	bool bad;			/* refused: nothing more is taken */
	size_t off;			/* of header and bulk */
	unsigned char hdr[20];
	unsigned char rec[16];
	size_t roff;
};

#define ML_PF_RX_HDR	1		/* the header is complete and right */
#define ML_PF_RX_BULK	2		/* the bulk is complete */

/* Take LEN more bytes: which of the events above they completed. */
int ml_pf_rx_feed(struct ml_pf_rx *x, const void *buf, size_t len);

/*
 * Node ME against the job's medians (of 3 nodes or more): its probe
 * above OUTLIER times the median, or both its ring streams (from its
 * predecessor, to its successor) below the median / RING_OUTLIER.  The
 * count of problems, "; "-joined in WHY.
 */
int ml_pf_ring_judge(const struct ml_pf_rec *recs, int n, int me,
		     const char *const *names, double outlier,
		     double ring_outlier, char *why, size_t whylen);

/* sysfs's port state names: "DOWN", "ACTIVE"; "state N" otherwise. */
const char *ml_pf_port_state(int state, char *buf, size_t len);

#endif
