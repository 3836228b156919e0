/*
 * What select/topoml's parts share, below all of them (select_int.h),
 * and topology/topoml links too: errors a job can cause, logged once.
 * The ops (select_topoml.c) call the plans (select_plan.c), and both call
 * these: the files call each other in no circle.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "select_int.h"
#include "log_limit.h"

/* Which plugin the shared code logs for, and its plain Slurm setting. */
const char *sel_who = "select/topoml";
const char *sel_plain = "SelectType=select/cons_tres";

/*
 * Errors a job can cause (a forged --ml-comm value in each of many jobs)
 * must not flood the log: each text once while it is recent, at most 5
 * lines of one kind (its format) a minute with the count of the others
 * (log_limit.h), the line escaped whole (its values are the job's).
 */
void sel_error_once(const char *fmt, ...)
{
	static struct topoml_log_limit limit = TOPOML_LOG_LIMIT_INIT(5, 60);
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned long dropped;
	char buf[1024];
	va_list ap;
	bool show;

	va_start(ap, fmt);
	topoml_log_vformat(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	slurm_mutex_lock(&lock);
	show = topoml_log_limit(&limit, fmt, buf, time(NULL), &dropped);
	slurm_mutex_unlock(&lock);
	if (show && dropped)
		error("%s: %s (%lu similar messages suppressed)",
		      sel_who, buf, dropped);
	else if (show)
		error("%s: %s", sel_who, buf);
}

static long _usec_on(clockid_t id, const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(id, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000L +
	       (t1.tv_nsec - t0->tv_nsec) / 1000;
}

long sel_usec_since(const struct timespec *t0)
{
	return _usec_on(CLOCK_MONOTONIC, t0);
}

void sel_clock_start(struct sel_clock *c)
{
	clock_gettime(CLOCK_MONOTONIC, &c->wall);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c->cpu);
}

void sel_clock_add(const struct sel_clock *c, long us[2])
{
	us[0] += _usec_on(CLOCK_MONOTONIC, &c->wall);
	us[1] += _usec_on(CLOCK_THREAD_CPUTIME_ID, &c->cpu);
}
