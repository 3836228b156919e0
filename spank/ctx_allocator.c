/*
 * Allocator context: sbatch and salloc (#SBATCH --ml-... included).
 * Validation as for srun; the options travel with the job to its steps.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "plugin.h"


int ml_allocator_post_opt(spank_t sp)
{
	if (ml_local_common(sp))
		ml_local_refuse();	/* whatever the keyword */
	return 0;
}
