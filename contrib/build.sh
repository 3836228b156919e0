#!/bin/bash
# Install the dependencies and build topoml out of tree: what the
# quick-start and the test runner both start with.
#
# usage: contrib/build.sh
# env:   BUILD_DIR (default build), JOBS (2),
#        TOPOML_CONFIGURE_FLAGS  extra configure arguments (CI:
#                                --enable-werror), CC (e.g. clang)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
flags=${TOPOML_CONFIGURE_FLAGS:-}

bash "$top/contrib/install-deps.sh"
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
# Configure again when the flags changed since the last configure.
if [ ! -f Makefile ] || [ "$(cat .topoml-configure-flags 2>/dev/null)" != \
     "${CC:-}|$flags" ]; then
	# shellcheck disable=SC2086	# flags are words
	"$top/configure" -q $flags
	echo "${CC:-}|$flags" >.topoml-configure-flags
fi
make -j"${JOBS:-2}" >make.log 2>&1 || { tail -40 make.log; exit 1; }
