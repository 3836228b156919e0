/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "contract/contract.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_CONTRACT_H
#define TOPOML_FWD_CONTRACT_H
#include "contract/contract.h"
#endif
