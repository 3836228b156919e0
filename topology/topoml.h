/*
 * libtopoml: the network topology model, site topology files and the
 * placement engine shared by select/topoml, the topoml CLI and the simulator.
 * This is the core the plugins link; building a model switch by switch is
 * in topoml/build.h, the simulator, trace readers, Slurm's baselines,
 * writers and generators (libtopoml_sim, CLI and tests only) in sim.h.
 *
 * Pure C.  No Slurm internal headers: host name ranges go through the public
 * slurm_hostlist_* API of <slurm/slurm.h>.  Node sets are hwloc bitmaps
 * indexed by dense node index (0 .. nnodes-1), one implementation everywhere.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_H
#define TOPOML_H

/*
 * The umbrella of libtopoml's public API: each topic has its header in
 * topoml/ (include that one where it is all you need).  Internal headers
 * (model/model_int.h, place/common/place_int.h, util/util.h, ...) are
 * the engine's own, in its layer folders; their functions are named
 * topoml__*, the public ones topoml_*.
 */
#include "topoml/errors.h"
#include "topoml/model.h"
#include "topoml/build.h"
#include "topoml/load.h"
#include "topoml/contract.h"
#include "topoml/place.h"
#include "topoml/torus.h"
#include "topoml/hybrid.h"
#include "topoml/conf.h"
#include "topoml/jobcomment.h"
#include "topoml/jobview.h"
#include "topoml/wait.h"
#include "topoml/plan.h"

#endif /* TOPOML_H */
