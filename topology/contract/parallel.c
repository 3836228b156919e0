/*
 * --ml-parallel: group sizes of a hybrid-parallel job and Megatron-LM's
 * rank order (see topoml.h).  Parsed here once for the SPANK plugin,
 * select/topoml and the CLI.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml.h"

#define PAR_MAX 65536

int topoml_parallel_parse(const char *s, struct topoml_parallel *p,
			  char *err, size_t errlen)
{
	static const char *const keys[] = { "tp", "pp", "dp", "ep", "cp" };
	int *slot[] = { &p->tp, &p->pp, &p->dp, &p->ep, &p->cp };
	bool seen[5] = { false };
	const char *c = s;

	*p = (struct topoml_parallel){ 1, 1, 0, 1, 1 };
	if (!s || !*s) {
		snprintf(err, errlen, "empty (expected tp=T,pp=P[,ep=E]"
			 "[,cp=C])");
		return -1;
	}
	while (*c) {
		const char *eq = strchr(c, '='), *end;
		char *stop;
		size_t klen;
		long v;
		int k;

		/*
		 * ",model=FILE" ends the value and takes the rest (a path may
		 * hold ','): the SPANK plugin reads the model, the sizes are
		 * all slurmctld needs.
		 */
		if (!strncmp(c, "model=", 6)) {
			if (c == s) {
				snprintf(err, errlen, "model= needs tp=T,... "
					 "before it");
				return -1;
			}
			break;
		}
		end = strchr(c, ',');
		if (!end)
			end = c + strlen(c);
		if (!eq || eq > end) {
			snprintf(err, errlen, "'%.*s': expected KEY=SIZE",
				 (int)(end - c), c);
			return -1;
		}
		klen = (size_t)(eq - c);
		for (k = 0; k < 5; k++)
			if (klen == 2 && !strncmp(c, keys[k], 2))
				break;
		if (k == 5) {
			snprintf(err, errlen, "unknown key '%.*s' (expected "
				 "tp, pp, ep, cp or dp)", (int)klen, c);
			return -1;
		}
		if (seen[k]) {
			snprintf(err, errlen, "%s given twice", keys[k]);
			return -1;
		}
		errno = 0;
		v = (eq[1] >= '0' && eq[1] <= '9') ?
			strtol(eq + 1, &stop, 10) : -1;
		if (v < 1 || v > PAR_MAX || errno || stop != end) {
			snprintf(err, errlen, "%s: '%.*s' is not a size "
				 "1..%d", keys[k], (int)(end - eq - 1), eq + 1,
				 PAR_MAX);
			return -1;
		}
		seen[k] = true;
		*slot[k] = (int)v;
		c = *end ? end + 1 : end;
		if (*end && !*c) {
			snprintf(err, errlen, "trailing ','");
			return -1;
		}
	}
	return 0;
}

int topoml_parallel_resolve(struct topoml_parallel *p, int ntasks,
			    char *err, size_t errlen)
{
	long model = (long)p->tp * p->pp * p->cp;

	if (ntasks < 1 || model > ntasks || ntasks % model) {
		snprintf(err, errlen, "tp=%d x pp=%d x cp=%d = %ld does not "
			 "divide the %d tasks", p->tp, p->pp, p->cp, model,
			 ntasks);
		return -1;
	}
	if (p->dp && p->dp != ntasks / model) {
		snprintf(err, errlen, "dp=%d, but %d tasks / (tp x pp x cp) "
			 "= %ld", p->dp, ntasks, ntasks / model);
		return -1;
	}
	p->dp = (int)(ntasks / model);
	if (((long)p->cp * p->dp) % p->ep) {
		snprintf(err, errlen, "ep=%d does not divide cp x dp = %ld",
			 p->ep, (long)p->cp * p->dp);
		return -1;
	}
	return 0;
}

void topoml_parallel_format(const struct topoml_parallel *p, char *buf,
			    size_t len)
{
	snprintf(buf, len, "tp=%d,pp=%d,dp=%d,ep=%d,cp=%d", p->tp, p->pp,
		 p->dp, p->ep, p->cp);
}

void topoml_parallel_coords(const struct topoml_parallel *p, int rank,
			    int *tp, int *cp, int *dp, int *pp)
{
	int dp_n = p->dp > 0 ? p->dp : 1;

	if (tp)
		*tp = rank % p->tp;
	rank /= p->tp;
	if (cp)
		*cp = rank % p->cp;
	rank /= p->cp;
	if (dp)
		*dp = rank % dp_n;
	if (pp)
		*pp = rank / dp_n;
}

int topoml_parallel_rank(const struct topoml_parallel *p, int tp, int cp,
			 int dp, int pp)
{
	int dp_n = p->dp > 0 ? p->dp : 1;

	return tp + p->tp * (cp + p->cp * (dp + dp_n * pp));
}
