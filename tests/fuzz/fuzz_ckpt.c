/*
 * libFuzzer target: the --ml-ckpt / TOPOML_CKPT value (ml_ckpt_parse in
 * spank/ckpt/ckpt_opts.c, linked alone: it is pure).  What it accepts must
 * obey the documented limits: a directory fits PATH_MAX, counts not negative,
 * resume=JOBID a job id.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fuzz_util.h"
#include "ckpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ml_ckpt_opts o;
	char err[512], *s;

	s = fuzz_str(data, size);
	memset(&o, 0, sizeof(o));
	if (ml_ckpt_parse(s, &o, err, sizeof(err)) == 0) {
		if (strnlen(o.dir, sizeof(o.dir)) == sizeof(o.dir) ||
		    o.every < 0 || o.interval < 0 || o.keep < 0 || o.lead < 0)
			abort();
		/* resume=JOBID names a job (never 0, "no job recorded") */
		if ((o.resume == ML_CKPT_RESUME_JOB) != (o.resume_job != 0) ||
		    o.resume < ML_CKPT_RESUME_OWN ||
		    o.resume > ML_CKPT_RESUME_JOB)
			abort();
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort();	/* a refusal must say why */
	}
	free(s);
	return 0;
}
