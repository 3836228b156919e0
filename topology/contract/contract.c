/*
 * The SPANK plugin's and select/topoml's contract: option names in the
 * job's SPANK environment and their parsers (see topoml/contract.h).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "topoml.h"
#include "topoml/contract.h"

const char *topoml_job_env_value(const char *entry, const char *name)
{
	size_t n = strlen(name);

	if (!entry)
		return NULL;
	if (!strncmp(entry, "SPANK_", 6))
		entry += 6;
	if (strncmp(entry, name, n) || entry[n] != '=')
		return NULL;
	return entry + n + 1;
}

const char *topoml_comm_job_env(const char *entry)
{
	return topoml_job_env_value(entry, TOPOML_COMM_JOB_ENV);
}

const char *topoml_parallel_job_env(const char *entry)
{
	return topoml_job_env_value(entry, TOPOML_PARALLEL_JOB_ENV);
}

const char *topoml_spares_job_env(const char *entry)
{
	return topoml_job_env_value(entry, TOPOML_SPARES_JOB_ENV);
}

const char *topoml_preflight_job_env(const char *entry)
{
	return topoml_job_env_value(entry, TOPOML_PREFLIGHT_JOB_ENV);
}

const char *topoml_job_env_get(const char *const *env, uint32_t n,
			       const char *name)
{
	const char *v = NULL;

	for (uint32_t i = 0; env && i < n; i++) {
		const char *x = topoml_job_env_value(env[i], name);

		if (x)
			v = x;
	}
	return v;
}

static int _given(const char *v, int ok, const char **bad)
{
	if (bad)
		*bad = ok ? NULL : v;
	return ok ? 1 : -1;
}

int topoml_job_comm(const char *const *env, uint32_t n,
		    enum topoml_hint *hint, const char **bad)
{
	const char *v = topoml_job_env_get(env, n, TOPOML_COMM_JOB_ENV);
	enum topoml_hint h;
	int ok;

	if (bad)
		*bad = NULL;
	if (!v)
		return 0;
	ok = !topoml_hint_parse(v, &h);
	if (ok)
		*hint = h;
	return _given(v, ok, bad);
}

int topoml_job_parallel(const char *const *env, uint32_t n,
			struct topoml_parallel *p, const char **bad)
{
	const char *v = topoml_job_env_get(env, n, TOPOML_PARALLEL_JOB_ENV);
	struct topoml_parallel q;
	char err[256];
	int ok;

	if (bad)
		*bad = NULL;
	if (!v)
		return 0;
	ok = !topoml_parallel_parse(v, &q, err, sizeof(err));
	if (ok)
		*p = q;
	return _given(v, ok, bad);
}

int topoml_job_spares(const char *const *env, uint32_t n, int *k,
		      const char **bad)
{
	const char *v = topoml_job_env_get(env, n, TOPOML_SPARES_JOB_ENV);
	int ok, x;

	if (bad)
		*bad = NULL;
	if (!v)
		return 0;
	ok = !topoml_spares_parse(v, &x);
	if (ok)
		*k = x;
	return _given(v, ok, bad);
}

int topoml_spares_parse(const char *s, int *k)
{
	size_t n = s ? strlen(s) : 0;
	long long v = 0;

	/* at most 15 digits (leading zeros allowed): no overflow */
	if (!n || n > 15)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v > TOPOML_SPARES_MAX)
		return -1;
	*k = (int)v;
	return 0;
}
