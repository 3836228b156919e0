/*
 * The --ml-ckpt value
 * "DIR[,every=N][,interval=S][,keep=K][,lead=S][,resume=own|any|JOBID]": a
 * pure parser (no Slurm call), shared by every context and fuzzed alone.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"

#define CKPT_DEFAULT_KEEP	3
#define CKPT_DEFAULT_LEAD	60

/* Seconds with an optional s/m/h suffix; -1 when malformed or too large. */
static long _parse_num(const char *s, bool time_suffix, long max)
{
	char *end;
	long v, mul = 1;

	if (!*s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno)
		return -1;
	if (time_suffix && *end) {
		if (!strcmp(end, "s"))
			mul = 1;
		else if (!strcmp(end, "m"))
			mul = 60;
		else if (!strcmp(end, "h"))
			mul = 3600;
		else
			return -1;
		end++;
	}
	if (*end || v > max / mul)
		return -1;
	return v * mul;
}

int ml_ckpt_parse(const char *arg, struct ml_ckpt_opts *o, char *err,
		  size_t errlen)
{
	char *copy = NULL, *tok, *save = NULL;
	bool seen_dir = false, seen[5] = { false };
	static const char *const keys[] = { "every", "interval", "keep",
					    "lead", "resume" };
	int rc = -1;

	memset(o, 0, sizeof(*o));
	o->keep = CKPT_DEFAULT_KEEP;
	o->lead = CKPT_DEFAULT_LEAD;
	if (!arg || !*arg) {
		snprintf(err, errlen, "empty value, expected "
			 "DIR[,every=STEPS][,interval=SECONDS][,keep=K]"
			 "[,lead=SECONDS][,resume=own|any|JOBID]");
		return -1;
	}
	if (!(copy = strdup(arg))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		long v;
		int k;

		/* "/scratch/a=b" is a DIR: no key has a '/' in it. */
		if (eq && memchr(tok, '/', eq - tok))
			eq = NULL;
		if (!eq || !strncmp(tok, "dir=", 4)) {
			const char *d = eq ? eq + 1 : tok;

			if (seen_dir) {
				snprintf(err, errlen, "'%s': DIR given twice",
					 tok);
				goto out;
			}
			if (!*d) {
				snprintf(err, errlen, "empty DIR");
				goto out;
			}
			/* It goes into the tasks' environment and the logs. */
			for (const char *c = d; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f) {
					snprintf(err, errlen, "DIR contains a "
						 "control character");
					goto out;
				}
			if (strlen(d) >= sizeof(o->dir) - 32) {
				snprintf(err, errlen, "DIR too long");
				goto out;
			}
			strcpy(o->dir, d);
			seen_dir = true;
			continue;
		}
		*eq = '\0';
		for (k = 0; k < 5; k++)
			if (!strcmp(tok, keys[k]))
				break;
		if (k == 5) {
			snprintf(err, errlen, "unknown key '%s' (expected "
				 "every, interval, keep, lead or resume)", tok);
			goto out;
		}
		if (seen[k]) {
			snprintf(err, errlen, "'%s' given twice", tok);
			goto out;
		}
		seen[k] = true;
		if (k == 4) {
			if (!strcmp(eq + 1, "own")) {
				o->resume = ML_CKPT_RESUME_OWN;
			} else if (!strcmp(eq + 1, "any")) {
				o->resume = ML_CKPT_RESUME_ANY;
			} else if ((v = _parse_num(eq + 1, false,
						   UINT32_MAX - 1)) > 0) {
				o->resume = ML_CKPT_RESUME_JOB;
				o->resume_job = (uint32_t)v;
			} else {
				snprintf(err, errlen, "resume='%.64s': "
					 "expected own, any or a job id",
					 eq + 1);
				goto out;
			}
			continue;
		}
		switch (k) {
		case 0:
			v = _parse_num(eq + 1, false, LONG_MAX);
			break;
		case 1:
			v = _parse_num(eq + 1, true, 365L * 86400);
			break;
		case 2:
			v = _parse_num(eq + 1, false, 100000);
			break;
		default:
			v = _parse_num(eq + 1, true, 7L * 86400);
			break;
		}
		if (v < 0) {
			snprintf(err, errlen, "%s='%s': expected a non-negative "
				 "integer%s", tok, eq + 1,
				 (k == 1 || k == 3) ?
				 " of seconds (suffix s, m or h allowed)" : "");
			goto out;
		}
		if (k == 0)
			o->every = v;
		else if (k == 1)
			o->interval = v;
		else if (k == 2)
			o->keep = (int)v;
		else
			o->lead = (int)v;
	}
	if (!seen_dir) {
		snprintf(err, errlen, "no DIR given");
		goto out;
	}
	o->set = true;
	rc = 0;
out:
	free(copy);
	return rc;
}
