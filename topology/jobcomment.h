/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "contract/jobcomment.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_JOBCOMMENT_H
#define TOPOML_FWD_JOBCOMMENT_H
#include "contract/jobcomment.h"
#endif
