/*
 * A bound on the log lines that jobs can cause in slurmctld: each text
 * once while it is recent, and at most `burst` lines of one kind (the
 * message's format string) per `interval` seconds, the rest counted and
 * reported with the next line of that kind shown.  Fixed memory, however
 * many jobs or texts.  Pure (no Slurm, no lock: the caller holds one),
 * so tests/select/check_log_limit.c runs it without slurmctld.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_LOG_LIMIT_H
#define TOPOML_LOG_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Kinds kept apart; a further kind shares the last slot with the others. */
#define TOPOML_LOG_LIMIT_KINDS	8
/* Recent texts (their hashes) never shown twice. */
#define TOPOML_LOG_LIMIT_SEEN	256

struct topoml_log_kind {
	const void *key;	/* NULL: slot free */
	time_t start;		/* the current window's start */
	unsigned int shown;	/* lines shown in this window */
	unsigned long dropped;	/* texts dropped since its last line */
};

struct topoml_log_limit {
	unsigned int burst;	/* lines per kind per window (0: none) */
	unsigned int interval;	/* window, seconds */
	struct topoml_log_kind kind[TOPOML_LOG_LIMIT_KINDS];
	uint64_t seen[TOPOML_LOG_LIMIT_SEEN];
	unsigned int nseen, next;	/* ring of the latest texts */
};

#define TOPOML_LOG_LIMIT_INIT(b, i) { .burst = (b), .interval = (i) }

/*
 * Whether to log text, a message of kind key, at now.  When it is shown
 * and *dropped > 0, that many other messages of the kind were dropped
 * since its last line: say so in this one.  A text among the recent ones
 * is dropped without a count (it was said, or counted, already).
 */
bool topoml_log_limit(struct topoml_log_limit *l, const void *key,
		      const char *text, time_t now, unsigned long *dropped);

#endif
