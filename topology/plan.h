/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "plan/plan.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_PLAN_H
#define TOPOML_FWD_PLAN_H
#include "plan/plan.h"
#endif
