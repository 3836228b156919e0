/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "model/topoml_build.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_TOPOML_BUILD_H
#define TOPOML_FWD_TOPOML_BUILD_H
#include "model/topoml_build.h"
#endif
