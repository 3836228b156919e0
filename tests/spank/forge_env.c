/*
 * LD_PRELOAD shim for srun: a user's own client, which can send
 * slurmstepd any environment.  After libslurm built the step's variables
 * (env_array_for_step overwrites SLURM_STEP_NODELIST, SLURM_STEP_RESV_PORTS
 * ... with the real ones), FORGE_ENV="NAME=VALUE|NAME=VALUE" replaces them,
 * so a test can show that root in slurmstepd does not trust them.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*for_step_fn)(char ***, const void *, void *, uint16_t, bool);
typedef int (*overwrite_fn)(char ***, const char *, const char *);

void env_array_for_step(char ***dest, const void *step, void *launch,
			uint16_t launcher_port, bool preserve_env);

void env_array_for_step(char ***dest, const void *step, void *launch,
			uint16_t launcher_port, bool preserve_env)
{
	for_step_fn real = (for_step_fn)dlsym(RTLD_NEXT, "env_array_for_step");
	overwrite_fn set = (overwrite_fn)dlsym(RTLD_DEFAULT,
					       "env_array_overwrite");
	const char *spec = getenv("FORGE_ENV");
	char *copy, *tok, *save = NULL;

	if (real)
		real(dest, step, launch, launcher_port, preserve_env);
	if (!set || !spec || !(copy = strdup(spec)))
		return;
	for (tok = strtok_r(copy, "|", &save); tok;
	     tok = strtok_r(NULL, "|", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		set(dest, tok, eq + 1);
		fprintf(stderr, "forge_env: %s=%s\n", tok, eq + 1);
	}
	free(copy);
}
