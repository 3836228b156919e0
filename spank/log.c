/*
 * The plugin's log lines and job messages.  Most carry something the job
 * brings (an option value, its environment, a path it chose), and they
 * reach slurmd's log as root's words and the job's output: each whole
 * line goes through topoml_log_vformat, so a newline in a value cannot
 * forge a line of its own and an ESC cannot drive a terminal.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>

#include "plugin.h"
#include "topoml.h"

/* A value of 255 bytes, all escaped, still fits whole. */
#define ML_LOG_LINE 2048

void ml_log(enum ml_log_level level, const char *fmt, ...)
{
	char line[ML_LOG_LINE];
	va_list ap;

	va_start(ap, fmt);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	switch (level) {
	case ML_LOG_ERROR:
		slurm_error("%s", line);
		break;
	case ML_LOG_INFO:
		slurm_info("%s", line);
		break;
	case ML_LOG_VERBOSE:
		slurm_verbose("%s", line);
		break;
	default:
		slurm_debug("%s", line);
		break;
	}
}

void ml_user_error(const char *fmt, ...)
{
	char line[ML_LOG_LINE];
	va_list ap, again;

	va_start(ap, fmt);
	va_copy(again, ap);
	topoml_log_vformat(line, sizeof(line), fmt, ap);
	/* the job's output: the same text, escaped and cut to fit (the first
	 * mistake only) */
	if (!ml.user_error[0])
		topoml_log_vformat(ml.user_error, sizeof(ml.user_error), fmt,
				   again);
	va_end(again);
	va_end(ap);
	/*
	 * slurmd's log only: from user_init on, slurmstepd copies its
	 * error lines into the job's output, where task_init prints the
	 * reason once.  The job's mistake, not the node's: no error.
	 */
	slurm_info("topoml: %s", line);
}
