#!/bin/bash
# Install every package topoml needs to build, test and run, and fetch and
# configure the matching Slurm source tree (headers only, no make) for the
# select plugin.  Idempotent: a second run only checks.
#
# usage: contrib/install-deps.sh [--no-slurm-source]
#        contrib/install-deps.sh --build   only what building needs (a
#        build host: no Slurm daemons, munge, clang, rpm, valgrind)
#        contrib/install-deps.sh --packages "PKG ..."   only these packages
#        (what other scripts need, e.g. contrib/slurm-release.sh)
# Debian packages need none of this: `apt-get build-dep ./` and
# debian/make-orig.sh (doc/admin-guide.md, "Install").
# env:   TOPOML_CACHE  where the Slurm source lives (default /var/cache/topoml)
#        TOPOML_TEST_DEPS=1  also what only the tests need (python3-torch)
set -euo pipefail

CACHE=${TOPOML_CACHE:-/var/cache/topoml}
WANT_SOURCE=1
ONLY=""
BUILD_ONLY=0
[ "${1:-}" = "--no-slurm-source" ] && WANT_SOURCE=0
[ "${1:-}" = "--build" ] && BUILD_ONLY=1
if [ "${1:-}" = "--packages" ]; then
	ONLY=${2:?--packages needs a list}
	WANT_SOURCE=0
fi

# clang + libclang-rt-14-dev: libFuzzer and clang's ASan/UBSan runtimes
# for the fuzz targets (configure --enable-fuzz); gcc's sanitizer
# runtimes come with build-essential.  debhelper, dh-python, rpm, rpmlint,
# python3-{pip,setuptools,wheel} and mandoc (man page lint): the package
# tests (debian/, contrib/topoml.spec, contrib/ckpt/pyproject.toml).
BUILD_PKGS="build-essential autoconf automake libtool pkg-config
      libslurm-dev libhwloc-dev libibverbs-dev libjson-c-dev zlib1g-dev
      python3 dpkg-dev"
# Optional: SimGrid for topoml-netsim (configure builds it when found;
# added before PKGS is made from BUILD_PKGS, so the test suite has it).
BUILD_PKGS="$BUILD_PKGS libsimgrid-dev"
PKGS="$BUILD_PKGS slurmctld slurmd slurm-client munge hwloc check
      valgrind procps clang libclang-rt-14-dev
      debhelper dh-python rpm rpmlint python3-pip python3-setuptools
      python3-wheel mandoc"
[ $BUILD_ONLY = 1 ] && PKGS=$BUILD_PKGS
# The test suite also trains with real PyTorch (gloo on CPU) and runs an
# MPI program (MPICH); the quick-start does not need them.
[ "${TOPOML_TEST_DEPS:-0}" = 1 ] &&
	PKGS="$PKGS python3-torch mpich libmpich-dev"
[ -n "$ONLY" ] && PKGS=$ONLY

log() { echo "install-deps: $*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get)" >&2
	exit 1
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing="$missing $p"
done

if [ -n "$missing" ]; then
	log "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# Debian's slurm packages try to start services; no systemd here.
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
	log "all packages present"
fi

[ $WANT_SOURCE = 1 ] || exit 0

# The select plugin needs Slurm's internal headers of the installed version.
ver=$(dpkg-query -W -f='${Version}' libslurm-dev | sed 's/-.*//')
src="$CACHE/slurm-wlm-$ver"
build="$CACHE/build-$ver"
if [ -f "$build/config.h" ] && [ -f "$src/src/common/select.h" ]; then
	log "slurm source $ver ready in $CACHE"
	exit 0
fi

# Debian 12's Slurm is a security update (22.05.8-4+deb12uN): its source
# is in bookworm-security, which the deb-src lines must name too.
# shellcheck disable=SC2016
src_suites=$(apt-get indextargets --no-release-info --format '$(RELEASE)' \
	'Created-By: Sources' 2>/dev/null | sort -u | paste -sd' ')
case " $src_suites " in
*" bookworm "*" bookworm-security "* | *" bookworm-security "*" bookworm "*) ;;
*)
	log "adding deb-src for bookworm, bookworm-updates, bookworm-security"
	cat > /etc/apt/sources.list.d/topoml-src.sources <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -qq
	;;
esac

mkdir -p "$CACHE"
cd "$CACHE"
if [ ! -d "$src" ]; then
	log "fetching slurm-wlm source $ver"
	apt-get source -qq slurm-wlm="$(dpkg-query -W -f='${Version}' \
		libslurm-dev)" >/dev/null 2>&1 || apt-get source -qq slurm-wlm
	d=$(find . -maxdepth 1 -type d -name 'slurm-wlm-*' ! -name "*-$ver" |
		head -1)
	[ -n "$d" ] && [ ! -d "$src" ] && mv "$d" "$src"
fi
rm -rf "$build"
mkdir -p "$build"
cd "$build"
log "configuring slurm source (headers only)"
"$src/configure" --prefix=/usr --libdir=/usr/lib/x86_64-linux-gnu \
	--sysconfdir=/etc/slurm --enable-multiple-slurmd --disable-debug \
	--without-rpath >configure.log 2>&1 ||
	{ tail -20 configure.log; exit 1; }
log "slurm source $ver ready: --with-slurm-source=$src --with-slurm-build=$build"
