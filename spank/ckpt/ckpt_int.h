/*
 * What the checkpoint files of topoml.so share (one plugin instance per
 * slurmstepd, so one state): ckpt.c runs the SPANK hooks, ckpt_dir.c the
 * checkpoint directory, ckpt_page.c the node's shared page and its
 * directory, ckpt_timer.c the warning timer and the requeue,
 * ckpt_fence.c the fencing of a stale run.  Not for other folders.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_SPANK_CKPT_INT_H
#define TOPOML_SPANK_CKPT_INT_H

#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ckpt.h"
#include "secure.h"

struct ml_ckpt_state {
	bool active;
	uint32_t job_id, step_id, node_id, nnodes;
	uid_t uid;
	gid_t gid;
	long restart;
	int lead;
	/* The run's times from the step's load of the job (at: 0 none). */
	time_t job_start, job_end, job_at;
	int job_batch;			/* -1: not known */
	long interval;
	char dir[PATH_MAX];	/* after user_init: without symlinks */
	int dir_fd;		/* DIR, held from user_init to exit */
	char page_dir[PATH_MAX];	/* <cache_dir>/ckpt/<uid> */
	char page_path[PATH_MAX];
	struct ml_cred cred;
	int page_fd;
	volatile sig_atomic_t page_broken;
	struct topoml_ckpt_page *page;
	pthread_t timer;
	volatile int stop;
	/*
	 * The SIGBUS guard of root's page accesses (ckpt_page.c).  Arm for
	 * this thread:
	 *	ml_ck.bus_thread = pthread_self();
	 *	if (sigsetjmp(ml_ck.bus_jmp, 1)) { the page was truncated }
	 *	ml_ck.bus_armed = 1; ...page accesses...; ml_ck.bus_armed = 0;
	 */
	sigjmp_buf bus_jmp;
	volatile sig_atomic_t bus_armed;
	pthread_t bus_thread;
};

extern struct ml_ckpt_state ml_ck;

/* ckpt_dir.c */
int ml_ckpt__expand_dir(const char *in, uint32_t job, uint32_t array_job,
			uint32_t array_task, const char *user, char *out,
			size_t len);
/*
 * DIR walked and made as the user (call with the user's credentials) and
 * the job's alone: its descriptor, and its path without symlinks in
 * CANON; -1 + err (naming the component and why).
 */
int ml_ckpt__dir_open(const char *dir, const struct ml_cred *cred,
		      char *canon, size_t len, char *err, size_t errlen);

/* ckpt_page.c */
void ml_ckpt__bus_install(void);
void ml_ckpt__bus_uninstall(void);
/* ml_ck.page_path from the job, the host and DIR; 0 or -1 + err. */
int ml_ckpt__page_path(char *err, size_t errlen);
int ml_ckpt__page_open(void);
void ml_ckpt__page_clean_stale(void);
/* Take this slurmstepd off the page; the last one removes it. */
void ml_ckpt__page_leave(void);
void ml_ckpt__raise(uint32_t why);

/* ckpt_timer.c */
int ml_ckpt__timer_start(char *err, size_t errlen);
void ml_ckpt__timer_stop(void);

/*
 * ckpt_health.c: the job's DIR/health.jsonl to slurmctld (root; the
 * job's first node), once per step: when the last of LOCAL tasks exited
 * (before srun and slurmctld hear the step ended), else at exit.
 */
void ml_ckpt__health_task_exit(uint32_t local);
void ml_ckpt__health(void);

/* ckpt_fence.c: true when a newer run owns DIR (this one's tasks are
 * killed then). */
bool ml_ckpt__fence(void);

#endif
