/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; the public header is
 * topoml_contract.h (which topoml.h includes).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_CONTRACT_H
#define TOPOML_FWD_CONTRACT_H
#include "topoml_contract.h"
#endif
