#!/bin/bash
# The whole test suite on a fresh Debian 12 machine, as root:
# installs what it needs, builds out of tree in build/, runs make check
# (unit tests and integration tests on real local Slurm clusters).
#
# usage: contrib/run-tests.sh [make check arguments, e.g. TESTS=...]
# env:   BUILD_DIR (default build), JOBS (default 2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-2}

BUILD_DIR=$build JOBS=$jobs bash "$top/contrib/build.sh"
cd "$build"

rc=0
make -j"$jobs" check "$@" >check.log 2>&1 || rc=$?
# Every unit test's Check summary, then automake's test-suite summary.
grep -h '^[0-9]*%: Checks:' tests/*.log tests/*/*.log 2>/dev/null || true
echo "Testsuite summary for topoml"
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' check.log || true
if [ $rc -ne 0 ]; then
	grep -E '^(FAIL|ERROR|XPASS)' check.log || true
	for f in $(grep -lE '^:test-result: (FAIL|ERROR)' \
		tests/*.trs tests/*/*.trs 2>/dev/null); do
		echo "===== ${f%.trs}.log"
		tail -40 "${f%.trs}.log"
	done
fi
exit $rc
