#!/bin/bash
# The whole test suite on a fresh Debian 12 machine, as root:
# installs what it needs, builds out of tree in build/, runs make check
# (unit tests and integration tests on real local Slurm clusters).
#
# usage: contrib/run-tests.sh [make check arguments, e.g. TESTS=...]
# env:   BUILD_DIR (default build), JOBS (default 2),
#        TOPOML_CONFIGURE_FLAGS  extra configure arguments (CI: --enable-werror)
#        TOPOML_STAGES  what to run, default "main"; CI (.ci/run) adds:
#          asan  a second build (ASAN_BUILD_DIR, default build-asan) with
#                --enable-sanitizers --enable-werror, whose Check unit tests
#                (check_*, not the cluster tests) run under ASan and UBSan
#          fuzz  a clang build (FUZZ_BUILD_DIR, default build-fuzz) with
#                --enable-fuzz --enable-werror: every fuzz target for
#                FUZZ_TIME seconds (default 20)
#          releases  contrib/test-release.sh for each of TOPOML_RELEASES
#                (default "24.11.5 26.05.3"): builds each release once
#                (cached in /var/cache/topoml; 8-12 min on 2 cores) and
#                runs the plugin tests on its real daemons; then
#                `test-release.sh --compile` for each of
#                TOPOML_COMPILE_RELEASES (default "23.11.11 25.11.7":
#                configure and headers only, the plugins compile)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-2}
stages=" ${TOPOML_STAGES:-main} "
asan_build=${ASAN_BUILD_DIR:-$top/build-asan}
fuzz_build=${FUZZ_BUILD_DIR:-$top/build-fuzz}
export TOPOML_TEST_DEPS=1	# install-deps.sh: python3-torch too
rc=0
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

# Every unit test's Check summary, then automake's test-suite summary.
_summary() {	# _summary TITLE BUILD_DIR LOG RC
	local title=$1 dir=$2 log=$3 src=$4 f
	# (not test-suite.log: it repeats the failed tests' logs)
	grep -h '^[0-9]*%: Checks:' $(ls "$dir"/tests/*.log \
		"$dir"/tests/*/*.log 2>/dev/null | grep -v 'test-suite\.log$') \
		</dev/null 2>/dev/null || true
	echo "Testsuite summary for $title"
	grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$log" || true
	if [ "$src" -ne 0 ]; then
		# a build failure leaves no test result: show the log's end
		grep -q '^# TOTAL:' "$log" || tail -30 "$log"
		grep -E '^(FAIL|ERROR|XPASS)' "$log" || true
		for f in $(grep -lE '^:test-result: (FAIL|ERROR)' \
			"$dir"/tests/*.trs "$dir"/tests/*/*.trs 2>/dev/null); do
			echo "===== ${f%.trs}.log"
			tail -40 "${f%.trs}.log"
		done
	fi
}

if [[ $stages == *" main "* ]]; then
	BUILD_DIR=$build JOBS=$jobs bash "$top/contrib/build.sh"
	r=0
	make -C "$build" -j"$jobs" check "$@" >"$build/check.log" 2>&1 || r=$?
	_summary topoml "$build" "$build/check.log" $r >>"$summary"
	[ $r -eq 0 ] || rc=$r
fi

if [[ $stages == *" asan "* ]]; then
	start=$SECONDS
	r=0
	BUILD_DIR=$asan_build JOBS=$jobs \
		TOPOML_CONFIGURE_FLAGS="--enable-sanitizers --enable-werror" \
		bash "$top/contrib/build.sh" || r=$?
	# LeakSanitizer needs ptrace: some sandboxes forbid it, and then
	# every test would fail at exit.  Probe, and say so.
	leaks=1
	probe=$(mktemp -d)
	echo 'int main(void) { return 0; }' >"$probe/p.c"
	if gcc -fsanitize=address "$probe/p.c" -o "$probe/p" 2>/dev/null &&
	   ! ASAN_OPTIONS=detect_leaks=1 "$probe/p" >/dev/null 2>&1; then
		leaks=0
		echo "run-tests: LeakSanitizer does not work here (ptrace" \
			"restricted?): ASan runs with detect_leaks=0" >>"$summary"
	fi
	rm -rf "$probe"
	# The Check programs only: the shell tests start Slurm clusters.
	units=$(grep -ho '^TESTS += .*' "$top"/tests/*.am |
		grep -o 'check_[a-z0-9_]*' | sort -u | tr '\n' ' ')
	if [ $r -eq 0 ]; then
		ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=0" \
		UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
		make -C "$asan_build" -j"$jobs" check TESTS="$units" \
			>"$asan_build/check.log" 2>&1 || r=$?
	else
		echo "run-tests: the sanitizer build failed" >"$asan_build/check.log"
	fi
	_summary "topoml under ASan+UBSan ($((SECONDS - start)) s)" \
		"$asan_build" "$asan_build/check.log" $r >>"$summary"
	[ $r -eq 0 ] || rc=$r
fi

if [[ $stages == *" fuzz "* ]]; then
	start=$SECONDS
	r=0
	CC=clang BUILD_DIR=$fuzz_build JOBS=$jobs \
		TOPOML_CONFIGURE_FLAGS="--enable-fuzz --enable-werror" \
		bash "$top/contrib/build.sh" || r=$?
	if [ $r -eq 0 ]; then
		make -C "$fuzz_build" fuzz FUZZ_TIME="${FUZZ_TIME:-20}" \
			>"$fuzz_build/fuzz.log" 2>&1 || r=$?
	else
		echo "run-tests: the fuzz build failed" >"$fuzz_build/fuzz.log"
	fi
	{
		echo "Fuzz summary ($((SECONDS - start)) s)"
		grep -E '^fuzz [a-z]+: ' "$fuzz_build/fuzz.log" || true
		[ $r -eq 0 ] || tail -40 "$fuzz_build/fuzz.log"
	} >>"$summary"
	[ $r -eq 0 ] || rc=$r
fi

if [[ $stages == *" releases "* ]]; then
	for v in ${TOPOML_RELEASES-24.11.5 26.05.3} \
		 ${TOPOML_COMPILE_RELEASES-23.11.11 25.11.7}; do
		start=$SECONDS
		r=0
		how=""
		[[ " ${TOPOML_RELEASES-24.11.5 26.05.3} " == *" $v "* ]] ||
			how=--compile
		bash "$top/contrib/test-release.sh" $how "$v" \
			>"$top/release-$v.log" 2>&1 || r=$?
		{
			echo "Slurm $v${how:+ (compile only)} ($((SECONDS - start)) s)"
			grep -E '^(PASS|FAIL|SKIP):|passed, .* failed' \
				"$top/release-$v.log" || true
			# test-release.sh prints each failed test's tail
			[ $r -eq 0 ] || [ $r -eq 77 ] ||
				tail -40 "$top/release-$v.log"
		} >>"$summary"
		[ $r -eq 0 ] || [ $r -eq 77 ] || rc=$r
	done
fi

cat "$summary"
exit $rc
