/*
 * The timer thread of a --ml-ckpt step (user_init to exit): the job's end
 * time from slurmctld, the warning `lead` seconds before it and interval
 * events in the page, the batch step's requeue once a checkpoint answered
 * the warning, and the fencing check.  The restart count comes from
 * slurmctld too (ckpt_state.c).
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
#include "slurm_compat.h"
#include "topoml_ckpt_page.h"

#define CKPT_MIN_RUN	10	/* s of a run before its warning, at least */
#define CKPT_POLL_NS	(200 * 1000 * 1000)
#define CKPT_QUIET	2	/* s without RPCs after the timer starts */
/*
 * How often slurmctld is asked for the job's end time (it moves only with
 * scontrol update, or suspend): the step's load of the job gives the
 * first reading, and every slurmstepd asks again once shortly before its
 * warning when that reading is older than CKPT_CONFIRM s (so an extension
 * is honoured), spread over up to CKPT_SPREAD s by node so that a large
 * job does not ask all at once.  Besides, one leader per job (the batch
 * step, or node 0 of each step of a job without one) asks every
 * CKPT_GAP_MIN to CKPT_GAP_MAX s (a shortened limit), until its warning,
 * and the batch step until its requeue.  After a failure, each asks after
 * an exponential back-off from CKPT_GAP_MIN to CKPT_FAIL_MAX s.
 * slurmctld serves these as root, outside per-user RPC limits: the rate
 * is bounded whatever the job's options and size.
 */
#define CKPT_GAP_MIN	60
#define CKPT_GAP_MAX	300
#define CKPT_FAIL_MAX	600
#define CKPT_CONFIRM	30
#define CKPT_SPREAD	20
#define CKPT_NEVER	((time_t)1 << 62)

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

/*
 * The warning's moment, from the job's times, the same on every node, so
 * that all nodes warn at the same moment.
 */
static time_t _warn_at(time_t end, time_t begin, time_t page_start)
{
	time_t w = end - ml_ck.lead, b = begin ? begin : page_start;

	return w < b + CKPT_MIN_RUN ? b + CKPT_MIN_RUN : w;
}

/* The end time of a reading: 0 for none (no time limit: a date years
 * away, or already past). */
static time_t _end_of(time_t e, time_t now)
{
	return (e > now && e - now < 10L * 365 * 86400) ? e : 0;
}

/* A leader's next reading after one at now (see CKPT_GAP_MIN). */
static time_t _leader_next(time_t now, time_t end, time_t warn_at)
{
	time_t gap;

	if (!end)
		return now + CKPT_GAP_MAX;
	gap = (warn_at - now) / 2;
	return now + (gap < CKPT_GAP_MIN ? CKPT_GAP_MIN :
		      gap > CKPT_GAP_MAX ? CKPT_GAP_MAX : gap);
}

static void _timer_loop(void)
{
	struct topoml_ckpt_page *p = ml_ck.page;
	struct timespec ts = { 0, CKPT_POLL_NS };
	bool batch = ml_ck.step_id == SLURM_BATCH_SCRIPT;
	bool leader = batch || (ml_ck.node_id == 0 && ml_ck.job_batch != 1);
	bool warned = false, requeued = false, fenced = false;
	time_t next_poll, retry_at, next_epoch, end = 0, begin = 0, warn_at;
	time_t read_at = 0;
	uint32_t spread = 1 + (ml_ck.nnodes / 50 < CKPT_SPREAD ?
			       ml_ck.nnodes / 50 : CKPT_SPREAD);
	time_t jitter = 3 + (ml_ck.node_id + ml_ck.step_id) % spread;
	int rpc_failed = 0;

	/*
	 * slurmstepd forks the tasks right after user_init: keep out of
	 * Slurm's RPC and log code (and their locks) until that is done.
	 */
	next_epoch = retry_at = time(NULL) + CKPT_QUIET;
	next_poll = retry_at;
	if (ml_ck.job_at && ml_ck.lead > 0) {
		/* The step's load of the job: no RPC of ours. */
		end = _end_of(ml_ck.job_end, ml_ck.job_at);
		begin = ml_ck.job_start;
		read_at = ml_ck.job_at;
		p->end_time = end;
		warn_at = _warn_at(end, begin, p->start_time);
		next_poll = leader ? _leader_next(read_at, end, warn_at) :
			    CKPT_NEVER;
	}
	while (!ml_ck.stop) {
		time_t now = time(NULL), base;
		bool ask;

		warn_at = _warn_at(end, begin, p->start_time);
		/* Before the warning: the leader's schedule, or a reading
		 * too old for the warning to go by; the batch step's
		 * requeue after it. */
		if (!warned)
			ask = now >= next_poll ||
			      (end && read_at < warn_at - CKPT_CONFIRM &&
			       now >= warn_at - jitter);
		else
			ask = batch && !requeued && now >= next_poll;
		/* No RPC in the second before the warning: it may delay it. */
		if (ml_ck.lead > 0 && ask && now >= retry_at &&
		    !(end && !warned && warn_at >= now && warn_at - now <= 1)) {
			time_t e = 0, b = 0;

			if (_job_times(&b, &e) < 0) {
				int k = rpc_failed < 4 ? rpc_failed : 4;

				if (!rpc_failed++)
					slurm_info("topoml: --ml-ckpt: job %u: "
						   "end time: %s (retrying)",
						   ml_ck.job_id, slurm_strerror(
						   errno));
				retry_at = now + (CKPT_GAP_MIN << k <
						  CKPT_FAIL_MAX ?
						  CKPT_GAP_MIN << k :
						  CKPT_FAIL_MAX);
				goto poll_done;
			}
			rpc_failed = 0;
			read_at = now;
			end = _end_of(e, now);
			begin = b;
			p->end_time = end;
			warn_at = _warn_at(end, begin, p->start_time);
			if (warned)
				next_poll = now + CKPT_GAP_MIN;
			else
				next_poll = leader ?
					    _leader_next(now, end, warn_at) :
					    CKPT_NEVER;
		}
poll_done:
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
