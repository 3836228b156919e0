#!/bin/bash
# The SPANK, checkpoint and select integration tests on real daemons of
# another Slurm release: builds the release (contrib/slurm-release.sh,
# cached), builds topoml.so and the test programs against its headers in
# build-VERSION/, and runs the same test scripts as `make check` with that
# release's slurmctld, slurmd, slurmstepd, srun and sbatch.  When the cache
# holds the release's configured source tree (slurm-VERSION/src and build)
# and select/topoml supports the release (22.05 and later: 22.05, 23.11,
# 24.11, 25.11, 26.05 built here; 23.02, 24.05 guarded, untested),
# select_topoml.so is built against it too and the select tests run;
# from 24.11 topology_topoml.so (TopologyPlugin=topology/topoml) as well.
#
# usage: contrib/test-release.sh [--compile] VERSION [TEST ...]
#        (TEST: a path under tests/, default: the SPANK and ckpt cluster
#        tests, and the select tests with select_topoml.so; --compile: only
#        the release's headers, build the plugins and the test programs,
#        run nothing)
# TOPOML_RELEASE_BUILDDIR: the build directory (default build-VERSION in
# the source tree), so that two people can test one release at once.
# Closes with "N passed, N failed"; exit 0 when none failed.
set -uo pipefail
compile=""
[ "${1:-}" = --compile ] && { compile=--headers; shift; }
ver=${1:?usage: $0 [--compile] VERSION [TEST ...]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(bash "$top/contrib/slurm-release.sh" $compile "$ver" | tail -1) || {
	rc=$?
	[ $rc = 77 ] && { echo "SKIP: no Slurm $ver source"; exit 77; }
	exit $rc
}
build=${TOPOML_RELEASE_BUILDDIR:-$top/build-$ver}
mkdir -p "$build"
cd "$build" || exit 1
build=$(pwd)	# a relative one would no longer hold after this cd
# select_topoml.so needs the release's internal headers: its configured
# source tree beside the prefix, and a release select_compat.h knows.
rel=$(dirname "$prefix")
sel=""
case "$ver" in
22.05.*|2[3-9].*|[3-9]?.*)
	if [ -f "$rel/build/config.h" ] &&
	   { [ -f "$rel/src/src/interfaces/select.h" ] ||
	     [ -f "$rel/src/src/common/select.h" ]; }; then
		sel="--with-slurm-source=$rel/src --with-slurm-build=$rel/build"
	fi ;;
esac
# Reconfigure a tree configured before with the other choice.
if [ -f Makefile ]; then
	had=$(sed -n 's/^SLURM_SRC_CPPFLAGS = -I\([^ ]*\).*/\1/p' \
		select_plugin/Makefile 2>/dev/null)
	[ "$had" = "${sel:+$rel/build}" ] || rm -f Makefile
fi
if [ ! -f Makefile ]; then
	# shellcheck disable=SC2086
	"$top/configure" -q ${sel:---without-slurm-source} \
		CPPFLAGS="-I$prefix/include" >configure.log 2>&1 ||
		{ tail -20 configure.log; exit 1; }
fi
{
	make -j"${JOBS:-2}" -C topology &&
	make -j"${JOBS:-2}" -C contrib/ckpt &&
	make -j"${JOBS:-2}" -C spank &&
	make -j"${JOBS:-2}" -C tests check_ckpt ckpt/train_c spank/spank_dump \
		spank/fakenvml.so spank/fakenvml_nosym.so spank/fakersmi.so \
		spank/forge_env.so &&
	if [ -n "$sel" ]; then
		make -j"${JOBS:-2}" -C select_plugin &&
		make -j"${JOBS:-2}" -C contrib topoml &&
		make -j"${JOBS:-2}" -C tests select_score
	fi
} >make.log 2>&1 || { tail -30 make.log; echo "0 passed, 1 failed"; exit 1; }
if [ -n "$compile" ]; then
	topo=""
	[ -f select_plugin/.libs/topology_topoml.so ] &&
		topo=", topology_topoml.so"
	echo "PASS: topoml.so${sel:+, select_topoml.so}$topo and the tests compile against Slurm $ver"
	echo "1 passed, 0 failed"
	exit 0
fi

if [ $# -eq 0 ]; then
	set -- ckpt/test_ckpt_hostile.sh ckpt/test_ckpt_resume.sh \
		spank/test_spank_srun.sh \
		spank/test_spank_sbatch.sh spank/test_spank_ports.sh \
		spank/test_spank_cache.sh spank/test_spank_gres.sh \
		spank/test_spank_amd.sh spank/test_spank_help.sh \
		spank/test_spank_preflight.sh
	# Those that need a newer release skip themselves (exit 77).
	[ -n "$sel" ] &&
		set -- "$@" select/test_select_exports.sh \
			select/test_select_fattree.sh \
			select/test_select_dragonfly.sh \
			select/test_select_fallback.sh \
			select/test_select_shared.sh \
			select/test_select_willrun.sh \
			select/test_select_willrun_shared.sh \
			spank/test_spank_ring.sh \
			select/test_select_topo_opts.sh \
			place/test_block_slurm.sh \
			select/test_select_torus3d.sh \
			select/test_select_boxwait.sh \
			select/test_select_hybridwait.sh select/test_select_health.sh \
			select/test_select_compare_2605.sh \
			select/test_topo_exports.sh \
			select/test_topo_plugin.sh \
			select/test_topo_block.sh \
			select/test_topo_torus.sh \
			select/test_topo_rank.sh \
			select/test_topo_dragonfly.sh
fi
pass=0 fail=0 skip=0
mkdir -p "$build/tests/release-logs"
for t in "$@"; do
	log=$build/tests/release-logs/$(echo "$t" | tr / _).log
	(cd "$build/tests" && CLUSTER_SLURM_PREFIX=$prefix \
		TOP_BUILDDIR=$build TOP_SRCDIR=$top TESTS_DIR=$top/tests \
		REALDATA=${REALDATA:-$top/../shared/realdata} \
		timeout 1200 bash "$top/tests/$t") >"$log" 2>&1
	case $? in
	0) pass=$((pass + 1)); echo "PASS: $t (Slurm $ver)" ;;
	77) skip=$((skip + 1)); echo "SKIP: $t (Slurm $ver)" ;;
	*) fail=$((fail + 1)); echo "FAIL: $t (Slurm $ver)"
	   grep -v '^\[20' "$log" | tail -15 ;;
	esac
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
