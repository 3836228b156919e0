/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "place/spares.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_SPARES_H
#define TOPOML_FWD_SPARES_H
#include "place/spares.h"
#endif
