/*
 * topoml checkpoint hook: call it on every training step.
 *
 *	topoml_ckpt_t *ck = topoml_ckpt_open(NULL, err, sizeof(err));
 *	long step = topoml_ckpt_resume_step(ck);  // -1: first start
 *	if (step >= 0) load(topoml_ckpt_resume_path(ck)); else step = 0;
 *	while (++step <= nsteps) {
 *		train(step);
 *		if (topoml_ckpt_should_checkpoint(ck, step)) {
 *			save(topoml_ckpt_begin(ck, step));  // files in a dir
 *			if (topoml_ckpt_commit(ck) == TOPOML_CKPT_STOP)
 *				break;              // job is being requeued
 *		}
 *	}
 *
 * Configuration comes from the environment the SPANK plugin exports
 * (--ml-ckpt): TOPOML_CKPT_DIR, TOPOML_CKPT_EVERY, TOPOML_CKPT_INTERVAL,
 * TOPOML_CKPT_KEEP, TOPOML_CKPT_PAGE, TOPOML_RESTART_COUNT.  Without the
 * plugin the library works alone (private page, own interval timer).
 *
 * Layout of DIR: step-000000000123/ (complete checkpoints), latest -> one
 * of them (a symlink replaced by rename), .tmp-* (in progress), epoch.
 * See topoml-ckpt(7).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_CKPT_H
#define TOPOML_CKPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TOPOML_CKPT_STOP 1	/* commit answered a stop warning: exit */
/* Exit status after the checkpoint that hands a straggler's place to a
 * spare (EX_TEMPFAIL): topoml-run relaunches the step. */
#define TOPOML_CKPT_EXIT_REPLACE 75

typedef struct topoml_ckpt topoml_ckpt_t;

/* The part of the handle the inline hot path reads. */
struct topoml_ckpt_hot {
	long next;		/* first step that needs the slow path */
	const uint64_t *gen;	/* event counter in the shared page */
	uint64_t seen;		/* last event counter handled */
	int timing;		/* straggler timing on (set_exchange) */
};

/*
 * Open the hook.  dir NULL: TOPOML_CKPT_DIR.  Returns NULL and a message in
 * err on error (no directory, bad numbers, unusable page).
 */
topoml_ckpt_t *topoml_ckpt_open(const char *dir, char *err, size_t errlen);
void topoml_ckpt_close(topoml_ckpt_t *c);

/* Override the environment (every/interval 0 = off, keep 0 = all). */
void topoml_ckpt_set_every(topoml_ckpt_t *c, long steps);
void topoml_ckpt_set_interval(topoml_ckpt_t *c, long seconds);
void topoml_ckpt_set_keep(topoml_ckpt_t *c, int keep);

/*
 * Multi-node agreement: fn(local, arg) must return the maximum of `local`
 * over all ranks (one integer all-reduce, e.g. MPI_Allreduce MAX).  It is
 * called at every `every` boundary only (every step when every=0), never in
 * between.  Without it, ranks on one node agree through the shared page.
 */
void topoml_ckpt_set_reduce(topoml_ckpt_t *c, int (*fn)(int local, void *arg),
			    void *arg);

/*
 * The loop's last step: a commit of this step (or a later one) marks the
 * job finished, so a stop warning that arrives meanwhile does not requeue
 * a job that has nothing left to do; that commit returns 0, not
 * TOPOML_CKPT_STOP.  Negative: unknown (the default).
 */
void topoml_ckpt_set_last_step(topoml_ckpt_t *c, long step);
/*
 * The training loop is over (call it after the loop, on every rank or at
 * least on the batch script's node): the plugin no longer requeues the job
 * before its time limit.
 */
void topoml_ckpt_finish(topoml_ckpt_t *c);

/*
 * Sharded checkpoints: every one of `nranks` ranks calls begin() and
 * commit() for the same step and writes its own files into the same
 * directory.  commit() on a rank other than 0 marks its shard complete and
 * waits until rank 0 has committed the step; rank 0's commit() waits until
 * every shard is complete, then commits once.  Both fail with ETIMEDOUT
 * after TOPOML_CKPT_SHARD_TIMEOUT seconds (default 600) and with ESTALE
 * when a newer run owns the directory.  nranks <= 1: off (the default).
 */
void topoml_ckpt_set_shards(topoml_ckpt_t *c, int rank, int nranks);

/* Latest complete checkpoint at open time: path and step, NULL/-1 none. */
const char *topoml_ckpt_resume_path(const topoml_ckpt_t *c);
long topoml_ckpt_resume_step(const topoml_ckpt_t *c);
const char *topoml_ckpt_dir(const topoml_ckpt_t *c);

int topoml_ckpt_should_slow(topoml_ckpt_t *c, long step);
void topoml_ckpt_step_time(topoml_ckpt_t *c, long step);

/*
 * Stragglers: each rank times its compute per step, from the end of
 * should_checkpoint() to topoml_ckpt_mark_compute_done() (call it when the
 * step's gradients are ready, just before the gradient collective).  Every
 * TOPOML_STRAGGLER_EVERY steps (20; 0 off) the ranks exchange one record
 * each (a collective: call set_exchange on every rank or on none): gather(mine, all, size, arg) must copy every rank's `size` bytes
 * into all[rank * size] (MPI_Allgather of MPI_BYTE) and return 0.  Rank 0
 * names a node whose compute stays at TOPOML_STRAGGLER_THRESHOLD (1.2)
 * times the job's median or more over TOPOML_STRAGGLER_WINDOW (50) steps:
 * a line on stderr and a JSON line appended to TOPOML_HEALTH_REPORT
 * (default DIR/health.jsonl).  The node is SLURMD_NODENAME or the host
 * name.  Per step: two clock reads (vDSO, no system call).  Returns 0, or
 * -1 + errno (EINVAL: a bad TOPOML_STRAGGLER_* value or rank; ENOMEM).
 * TOPOML_STRAGGLER_POLICY=replace (topoml-run --on-straggler=replace sets
 * it while a spare is left): every rank runs the detection on the same
 * gathered records, so all know at the same exchange step; that step is
 * checkpointed on every rank, the commit writes DIR/replace-request and
 * returns TOPOML_CKPT_STOP: exit with TOPOML_CKPT_EXIT_REPLACE, and
 * topoml-run relaunches the step with a spare in the node's place.
 */
int topoml_ckpt_set_exchange(topoml_ckpt_t *c, int rank, int nranks,
			      int (*gather)(const void *mine, void *all,
					    size_t size, void *arg),
			      void *arg);
void topoml_ckpt_mark_compute_done(topoml_ckpt_t *c);

/*
 * True (1) when this step must be checkpointed: `every` steps passed, or
 * an event (interval, warning before the time limit, SIGTERM of requeue or
 * preemption, SIGUSR1) was seen on this node and this step is the agreed
 * one.  Nothing pending: one compare, one load, no system call.
 */
static inline int topoml_ckpt_should_checkpoint(topoml_ckpt_t *c, long step)
{
	struct topoml_ckpt_hot *h = (struct topoml_ckpt_hot *)c;

	if (__builtin_expect(h->timing, 0))
		topoml_ckpt_step_time(c, step);
	if (__builtin_expect(step < h->next, 1) &&
	    __builtin_expect(__atomic_load_n(h->gen, __ATOMIC_RELAXED) ==
			     h->seen, 1))
		return 0;
	return topoml_ckpt_should_slow(c, step);
}

/* 1 when an event is waiting for its step (for a loop's own collective). */
int topoml_ckpt_pending(const topoml_ckpt_t *c);
/*
 * 1 once a stop warning (time limit, SIGTERM) arrived on this node, or a
 * straggler is to be replaced (topoml_ckpt_replacing).
 */
int topoml_ckpt_stopping(const topoml_ckpt_t *c);
/* 1 when a straggler ends the step (policy replace): exit after the
 * checkpoint with TOPOML_CKPT_EXIT_REPLACE. */
int topoml_ckpt_replacing(const topoml_ckpt_t *c);

/*
 * Start checkpoint `step`: returns an empty temporary directory to write
 * the state into (several ranks may write there; one commits after a
 * barrier), NULL + errno on error.
 */
const char *topoml_ckpt_begin(topoml_ckpt_t *c, long step);
/*
 * fsync the files and the directory, rename it to step-N, point `latest`
 * at it (symlink + rename + fsync), prune to `keep`.  0, TOPOML_CKPT_STOP
 * when the job is stopping (the caller should exit; never for the last
 * step, see topoml_ckpt_set_last_step), or -1 + errno (ESTALE: a newer run
 * of the job owns the directory; ETIMEDOUT: a shard never came).
 */
int topoml_ckpt_commit(topoml_ckpt_t *c);
/* Drop the checkpoint begun (remove the temporary directory). */
void topoml_ckpt_abort(topoml_ckpt_t *c);

#ifdef __cplusplus
}
#endif
#endif
