/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "model/model_int.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_MODEL_INT_H
#define TOPOML_FWD_MODEL_INT_H
#include "model/model_int.h"
#endif
