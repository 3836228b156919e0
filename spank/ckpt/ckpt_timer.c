/*
 * The timer thread of a --ml-ckpt step (user_init to exit): the job's end
 * time from slurmctld, the warning `lead` seconds before it and interval
 * events in the page, the batch step's requeue once a checkpoint answered
 * the warning, and the fencing check.  The restart count comes from
 * slurmctld too.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "ckpt_int.h"
#include "ctld_job.h"
#include "slurm_compat.h"
#include "topoml_ckpt_page.h"

#define CKPT_MIN_RUN	10	/* s of a run before its warning, at least */
#define CKPT_POLL_NS	(200 * 1000 * 1000)
#define CKPT_QUIET	2	/* s without RPCs after the timer starts */

/* The current run's start and expected end, from slurmctld. */
static int _job_times(time_t *start, time_t *end)
{
	job_info_msg_t *info = NULL;
	int rc = -1;

	if (ml_load_job(&info, ml_ck.job_id) == SLURM_SUCCESS &&
	    info && info->record_count > 0) {
		*start = info->job_array[0].start_time;
		*end = info->job_array[0].end_time;
		rc = 0;
	}
	if (info)
		slurm_free_job_info_msg(info);
	return rc;
}

static void _timer_loop(void)
{
	struct topoml_ckpt_page *p = ml_ck.page;
	struct timespec ts = { 0, CKPT_POLL_NS };
	bool batch = ml_ck.step_id == SLURM_BATCH_SCRIPT;
	bool warned = false, requeued = false, fenced = false;
	time_t next_poll = 0, next_epoch = 0, end = 0, begin = 0, warn_at = 0;
	int rpc_failed = 0;

	/*
	 * slurmstepd forks the tasks right after user_init: keep out of
	 * Slurm's RPC and log code (and their locks) until that is done.
	 */
	next_poll = next_epoch = time(NULL) + CKPT_QUIET;
	while (!ml_ck.stop) {
		time_t now = time(NULL), base;

		/* No RPC in the second before the warning: it may delay it. */
		if (ml_ck.lead > 0 && now >= next_poll &&
		    !(end && !warned && warn_at >= now && warn_at - now <= 1)) {
			time_t e = 0, b = 0;

			if (_job_times(&b, &e) < 0) {
				if (!rpc_failed++)
					slurm_info("topoml: --ml-ckpt: job %u: "
						   "end time: %s (retrying)",
						   ml_ck.job_id, slurm_strerror(
						   errno));
				next_poll = now + 5;
				goto poll_done;
			}
			/* No time limit: a date years away. */
			end = (e > now && e - now < 10L * 365 * 86400) ? e : 0;
			begin = b;
			p->end_time = end;
			/*
			 * The end moves only with scontrol update: ask again
			 * every 5 min, often when the warning is near.
			 */
			if (end && end - ml_ck.lead - now < 60)
				next_poll = now + 5;
			else if (end && end - ml_ck.lead - now < 600)
				next_poll = now + (end - ml_ck.lead - now) / 2;
			else
				next_poll = now + 300;
		}
poll_done:
		/*
		 * From the job's times, the same on every node, so that all
		 * nodes warn at the same moment.
		 */
		warn_at = end - ml_ck.lead;
		if (warn_at < (begin ? begin : p->start_time) + CKPT_MIN_RUN)
			warn_at = (begin ? begin : p->start_time) +
				  CKPT_MIN_RUN;
		if (end && !warned && now >= warn_at) {
			warned = true;
			ml_ckpt__raise(TOPOML_CKPT_R_LIMIT);
			slurm_info("topoml: --ml-ckpt: job %u ends in %lds: "
				   "checkpoint warning", ml_ck.job_id,
				   (long)(end - now));
		}
		/*
		 * Requeue once a checkpoint answered the warning; failing
		 * that, shortly before the limit if this run committed any
		 * checkpoint.  A run without progress is left to time out:
		 * requeueing it would loop for ever.
		 */
		if (batch && warned && !requeued &&
		    ((__atomic_load_n(&p->commit_reason, __ATOMIC_SEQ_CST) &
		      TOPOML_CKPT_R_LIMIT) ||
		     now >= end - (ml_ck.lead / 4 > 2 ? ml_ck.lead / 4 : 2))) {
			requeued = true;
			/*
			 * The program ended its loop (topoml_ckpt_finish, or
			 * a commit of its last step, which sets `finished`
			 * before commit_reason): a requeue would run no step.
			 */
			if (__atomic_load_n(&p->finished, __ATOMIC_SEQ_CST)) {
				slurm_info("topoml: --ml-ckpt: job %u finished "
					   "its loop: not requeued",
					   ml_ck.job_id);
				__atomic_store_n(&p->requeued, 2,
						 __ATOMIC_SEQ_CST);
				goto requeue_done;
			}
			if (!(__atomic_load_n(&p->commit_reason,
					      __ATOMIC_SEQ_CST) &
			      TOPOML_CKPT_R_LIMIT) && p->commit_time <= 0) {
				slurm_error("topoml: --ml-ckpt: job %u made no "
					    "checkpoint in this run: not "
					    "requeued (does the program call "
					    "the topoml checkpoint hook?)",
					    ml_ck.job_id);
				__atomic_store_n(&p->requeued, 2,
						 __ATOMIC_SEQ_CST);
				goto requeue_done;
			}
			if (ml_requeue(ml_ck.job_id) != SLURM_SUCCESS) {
				slurm_error("topoml: --ml-ckpt: requeue of job "
					    "%u failed: %s (is the job "
					    "requeue-able? JobRequeue=1 or "
					    "--requeue)", ml_ck.job_id,
					    slurm_strerror(errno));
				__atomic_store_n(&p->requeued, 2,
						 __ATOMIC_SEQ_CST);
			} else {
				slurm_info("topoml: --ml-ckpt: job %u requeued "
					   "(checkpoint of step %ld)",
					   ml_ck.job_id, (long)p->commit_step);
				__atomic_store_n(&p->requeued, 1,
						 __ATOMIC_SEQ_CST);
			}
		}
requeue_done:
		if (ml_ck.interval > 0) {
			base = p->commit_time > p->interval_time ?
			       p->commit_time : p->interval_time;
			if (base < p->start_time)
				base = p->start_time;
			if (now - base >= ml_ck.interval) {
				p->interval_time = now;
				ml_ckpt__raise(TOPOML_CKPT_R_INTERVAL);
			}
		}
		if (!fenced && now >= next_epoch) {
			next_epoch = now + 2;
			fenced = ml_ckpt__fence();
		}
		ts.tv_sec = 0;
		ts.tv_nsec = CKPT_POLL_NS;
		if (end && !warned) {
			struct timespec rt;
			long long left;

			/* Wake on the second of the warning, not up to a
			 * poll period after it. */
			clock_gettime(CLOCK_REALTIME, &rt);
			left = ((long long)warn_at - rt.tv_sec) * 1000000000LL -
			       rt.tv_nsec;
			if (left > 0 && left < CKPT_POLL_NS)
				ts.tv_nsec = left;
		}
		nanosleep(&ts, NULL);
	}
}

static void *_timer(void *arg)
{
	(void)arg;
	ml_ck.bus_thread = pthread_self();
	if (sigsetjmp(ml_ck.bus_jmp, 1)) {
		slurm_error("topoml: --ml-ckpt: job %u: %s was truncated: no "
			    "more checkpoint warnings in this step",
			    ml_ck.job_id, ml_ck.page_path);
		return NULL;
	}
	ml_ck.bus_armed = 1;
	_timer_loop();
	ml_ck.bus_armed = 0;
	return NULL;
}

int ml_ckpt__timer_start(char *err, size_t errlen)
{
	ml_ck.stop = 0;
	if (pthread_create(&ml_ck.timer, NULL, _timer, NULL) != 0) {
		snprintf(err, errlen, "no timer thread: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void ml_ckpt__timer_stop(void)
{
	ml_ck.stop = 1;
	pthread_join(ml_ck.timer, NULL);
}

/*
 * The job's restart count, from slurmctld: SLURM_RESTART_COUNT is in the
 * job's environment (a user's srun can set anything there), and Slurm
 * 22.05's S_SLURM_RESTART_COUNT item is never filled in slurmstepd.
 * -1 when slurmctld does not answer.  The step's one load of the job
 * (ctld_job.c), shared with the ring order.  A variable so that unit
 * tests, without a slurmctld, can answer instead.
 */
static long _restart_from_ctld(uint32_t job_id)
{
	const struct ml_ctld_job *j = ml_ctld_job(job_id);

	return j->state > 0 ? j->restart_cnt : -1;
}

long (*ml_ckpt_restart_lookup)(uint32_t job_id) = _restart_from_ctld;
