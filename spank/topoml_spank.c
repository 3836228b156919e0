/*
 * topoml SPANK plugin (placeholder until the SPANK issue lands).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <slurm/spank.h>

SPANK_PLUGIN(topoml, 1);
