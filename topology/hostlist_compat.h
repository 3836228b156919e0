/*
 * Forwarding header: code outside topology/ (spank/, select_plugin/,
 * contrib/, tests/) includes it by this name; topology/ itself writes
 * the path with its layer, "util/hostlist_compat.h".
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TOPOML_FWD_HOSTLIST_COMPAT_H
#define TOPOML_FWD_HOSTLIST_COMPAT_H
#include "util/hostlist_compat.h"
#endif
