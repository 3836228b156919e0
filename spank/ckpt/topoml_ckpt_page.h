/*
 * The per-node shared page of a --ml-ckpt job: written by the SPANK plugin
 * (slurmstepd) and by every process using the hook (C library and
 * topoml_ckpt.py, which mirrors these offsets with struct.unpack_from).
 * One 4096-byte file per job and node, TOPOML_CKPT_PAGE names it.
 *
 * Writers take flock(LOCK_EX) on the file, except signal handlers, which
 * only do atomic OR/ADD on `reason` and `gen`.  Readers of the hot path only
 * load `gen`.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CKPT_PAGE_H
#define TOPOML_CKPT_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define TOPOML_CKPT_PAGE_MAGIC	0x4b43504c4d4f5054ULL	/* "TPOMLPCK" */
#define TOPOML_CKPT_PAGE_VERSION 1
#define TOPOML_CKPT_PAGE_SIZE	4096
#define TOPOML_CKPT_PAGE_PIDS	64
#define TOPOML_CKPT_PAGE_STEPDS	32

/* Why an event was raised (bits of `reason`). */
#define TOPOML_CKPT_R_INTERVAL	0x1	/* interval= elapsed */
#define TOPOML_CKPT_R_REQUEST	0x2	/* SIGUSR1: checkpoint, go on */
#define TOPOML_CKPT_R_LIMIT	0x4	/* lead= s before the time limit */
#define TOPOML_CKPT_R_TERM	0x8	/* SIGTERM: requeue, preemption */
#define TOPOML_CKPT_R_STOP	(TOPOML_CKPT_R_LIMIT | TOPOML_CKPT_R_TERM)

struct topoml_ckpt_page {
	uint64_t magic;		/*   0 */
	uint32_t version;	/*   8 */
	uint32_t size;		/*  12 */
	uint64_t gen;		/*  16 bumped once per event */
	uint32_t reason;	/*  24 TOPOML_CKPT_R_* seen so far */
	uint32_t requeued;	/*  28 plugin called slurm_requeue */
	int64_t target_step;	/*  32 agreed checkpoint step, -1 none */
	uint64_t target_gen;	/*  40 gen that target_step answers */
	int64_t commit_step;	/*  48 last committed step, -1 none */
	int64_t commit_time;	/*  56 its time (unix s), 0 none */
	uint64_t commit_gen;	/*  64 gen seen by the last commit */
	uint32_t commit_reason;	/*  72 reason the last commit answered */
	uint32_t nstepd;	/*  76 entries of stepd[] */
	int64_t start_time;	/*  80 page created (interval base) */
	int64_t end_time;	/*  88 job end time, 0 unknown */
	int64_t interval_time;	/*  96 last interval event (unix s) */
	int32_t npids;		/* 104 */
	int32_t pad;		/* 108 */
	int32_t pids[TOPOML_CKPT_PAGE_PIDS];	/* 112 hook processes */
	/* 368: the slurmstepds using the page */
	int32_t stepd[TOPOML_CKPT_PAGE_STEPDS];
	/*
	 * 496: the program ended its training loop (topoml_ckpt_finish(),
	 * a commit of the last step): the plugin must not requeue the job,
	 * the next run would have no step to do.  Added in the spare space
	 * after version 1's fields (zero there), so the version stays 1.
	 */
	uint32_t finished;
};

_Static_assert(sizeof(struct topoml_ckpt_page) <= TOPOML_CKPT_PAGE_SIZE,
	       "the page is one 4096-byte file");
/* topoml_ckpt.py reads the page at fixed offsets. */
_Static_assert(offsetof(struct topoml_ckpt_page, stepd) == 368 &&
	       offsetof(struct topoml_ckpt_page, finished) == 496,
	       "page offsets are mirrored in topoml_ckpt.py");

#endif
