#!/bin/bash
# The Python hook (contrib/ckpt/topoml_ckpt.py): its unit tests, resume
# across SIGTERM interruptions and C/Python interchange (no Slurm needed).
# SPDX-License-Identifier: GPL-2.0-or-later
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
export TOPOML_CKPT_PY=$TOP_SRCDIR/contrib/ckpt
export TRAIN_C=$TOP_BUILDDIR/tests/ckpt/train_c
export TRAIN_PY=$TOP_SRCDIR/tests/ckpt/train_py.py
# The C library for the C/Python shard interchange, and the version the
# module must carry.
export TOPOML_CKPT_LIB=$TOP_BUILDDIR/contrib/ckpt/.libs/libtopoml-ckpt.so
TOPOML_VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' \
	"$TOP_BUILDDIR/topoml_config.h" 2>/dev/null)
export TOPOML_VERSION
exec python3 "$TOP_SRCDIR/tests/ckpt/test_topoml_ckpt.py" -v
