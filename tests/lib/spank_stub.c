/*
 * A stubbed SPANK handle for the tests of spank/ckpt/ (spank_stub.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "spank_stub.h"

#define STUB_NENV 16

struct spank_stub spank_stub = {
	.job_id = 4242,
	.step_id = 7,
	.array_job = 0,
	.array_task = NO_VAL,
	.restarts = 0,
	.uid = -1,
	.gid = -1,
};

static char _env[STUB_NENV][2][PATH_MAX];
static int _nenv;

int spank_remote(spank_t sp)
{
	(void)sp;
	return 1;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	spank_err_t rc = ESPANK_SUCCESS;
	va_list ap;

	(void)sp;
	va_start(ap, item);
	switch (item) {
	case S_JOB_UID:
		*va_arg(ap, uid_t *) = spank_stub.uid < 0 ? getuid() :
				       (uid_t)spank_stub.uid;
		break;
	case S_JOB_GID:
		*va_arg(ap, gid_t *) = spank_stub.gid < 0 ? getgid() :
				       (gid_t)spank_stub.gid;
		break;
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = spank_stub.job_id;
		break;
	case S_JOB_STEPID:
		*va_arg(ap, uint32_t *) = spank_stub.step_id;
		break;
	case S_JOB_NODEID:
		*va_arg(ap, uint32_t *) = 0;
		break;
	case S_JOB_ARRAY_ID:
		*va_arg(ap, uint32_t *) = spank_stub.array_job;
		break;
	case S_JOB_ARRAY_TASK_ID:
		*va_arg(ap, uint32_t *) = spank_stub.array_task;
		break;
	default:
		rc = ESPANK_BAD_ARG;
	}
	va_end(ap);
	return rc;
}

const char *spank_stub_env(const char *var)
{
	for (int i = 0; i < _nenv; i++)
		if (!strcmp(_env[i][0], var))
			return _env[i][1];
	return NULL;
}

void spank_stub_env_clear(void)
{
	_nenv = 0;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	const char *v = spank_stub_env(var);

	(void)sp;
	if (!v)
		return ESPANK_ENV_NOEXIST;
	snprintf(buf, len, "%s", v);
	return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val,
			 int overwrite)
{
	int i;

	(void)sp;
	(void)overwrite;
	for (i = 0; i < _nenv; i++)
		if (!strcmp(_env[i][0], var))
			break;
	if (i == STUB_NENV)
		return ESPANK_ERROR;
	if (i == _nenv)
		_nenv++;
	snprintf(_env[i][0], PATH_MAX, "%s", var);
	snprintf(_env[i][1], PATH_MAX, "%s", val);
	return ESPANK_SUCCESS;
}

long spank_stub_restart(uint32_t job_id)
{
	(void)job_id;
	return spank_stub.restarts;
}
