#!/bin/bash
# Install the dependencies and build topoml out of tree: what the
# quick-start and the test runner both start with.
#
# usage: contrib/build.sh      env: BUILD_DIR (default build), JOBS (2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}

bash "$top/contrib/install-deps.sh"
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j"${JOBS:-2}" >make.log 2>&1 || { tail -40 make.log; exit 1; }
