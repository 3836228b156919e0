#!/bin/bash
# Build one upstream Slurm release from source into a cache, for building
# and testing topoml against releases other than the installed one:
#
#   $TOPOML_CACHE/slurm-VERSION/src      the unpacked source
#   $TOPOML_CACHE/slurm-VERSION/build    configured and built out of tree
#   $TOPOML_CACHE/slurm-VERSION/inst     installed: bin, sbin, lib, include
#
# Reused when present (a second run only checks).  Sources: an archive of
# the release tag in ../shared/slurm-src (slurm-MAJ-MIN-MICRO-1.tar.gz),
# SRC_TARBALL=FILE, or, for the release Debian 13 ships (24.11.5), its
# orig tarball from Debian's mirror (a deb-src entry for trixie used only
# for that download; its .dsc and debian tarball are not needed).
#
# usage: contrib/slurm-release.sh [--headers] VERSION      e.g. 26.05.3
#        --headers: configure and install the public headers only (enough
#        to compile topoml.so against the release), no daemons
# env:   TOPOML_CACHE (default /var/cache/topoml), JOBS (default 2),
#        SHARED (default ../shared beside the source tree)
# prints the install prefix on its last line.
set -euo pipefail
headers_only=0
[ "${1:-}" = --headers ] && { headers_only=1; shift; }
ver=${1:?usage: $0 [--headers] VERSION (e.g. 26.05.3)}
top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${TOPOML_CACHE:-/var/cache/topoml}
SHARED=${SHARED:-$top/../shared}
d=$CACHE/slurm-$ver
inst=$d/inst
log() { echo "slurm-release: $*" >&2; }

if [ -f "$inst/include/slurm/slurm_version.h" ] &&
   { [ $headers_only = 1 ] ||
     { [ -x "$inst/sbin/slurmctld" ] && [ -f "$d/build/.topoml-done" ]; }; }
then
	log "$ver ready in $inst"
	echo "$inst"
	exit 0
fi

tarball=${SRC_TARBALL:-$SHARED/slurm-src/slurm-${ver//./-}-1.tar.gz}
if [ ! -f "$tarball" ] && [ "$ver" = 24.11.5 ]; then
	tarball=$CACHE/debsrc/slurm-wlm_$ver.orig.tar.gz
	if [ ! -f "$tarball" ]; then
		log "fetching Debian 13's slurm-wlm $ver source"
		list=/etc/apt/sources.list.d/topoml-trixie-src.sources
		printf '%s\n' "Types: deb-src" \
			"URIs: http://deb.debian.org/debian" "Suites: trixie" \
			"Components: main" \
			"Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
			>"$list"
		apt-get update -qq
		mkdir -p "$CACHE/debsrc"
		# apt-get fails on the .dsc and debian tarball (not served);
		# the orig tarball, all that is needed, arrives first.
		(cd "$CACHE/debsrc" && apt-get source --download-only -qq \
			slurm-wlm >/dev/null 2>&1) || true	# trixie's, the newest
		rm -f "$list"
		apt-get update -qq
	fi
fi
[ -f "$tarball" ] || { log "no source for $ver ($tarball)"; exit 77; }
mkdir -p "$d"
if [ ! -f "$d/src/configure" ]; then
	log "unpacking $tarball"
	rm -rf "$d/src"
	mkdir -p "$d/src"
	tar -xzf "$tarball" -C "$d/src" --strip-components=1
fi

# Build dependencies of the daemons and clients a test cluster runs.
bash "$top/contrib/install-deps.sh" --packages "build-essential
      libmunge-dev munge libhwloc-dev libjson-c-dev libyaml-dev libjwt-dev
      libssl-dev pkg-config python3" >&2

mkdir -p "$d/build"
cd "$d/build"
if [ ! -f config.status ]; then
	log "configuring $ver (about 1.5 min on 2 cores)"
	"$d/src/configure" -q --prefix="$inst" --sysconfdir="$inst/etc" \
		--disable-static --disable-debug --without-rpath \
		--enable-multiple-slurmd --with-munge --with-hwloc \
		>configure.log 2>&1 || { tail -30 configure.log; exit 1; }
fi
if [ $headers_only = 1 ]; then
	make install-pkgincludeHEADERS >install.log 2>&1 ||
		{ tail -20 install.log; exit 1; }
	log "$ver headers installed in $inst/include"
	echo "$inst"
	exit 0
fi
log "building $ver (src/ only; about 10 min on 2 cores)"
make -j"${JOBS:-2}" -C src >make.log 2>&1 || { tail -40 make.log; exit 1; }
make -C src install >install.log 2>&1 || { tail -40 install.log; exit 1; }
# The public headers (slurm.h, spank.h, slurm_version.h, ...): the
# top-level Makefile installs them.
make install-pkgincludeHEADERS >>install.log 2>&1 ||
	{ tail -20 install.log; exit 1; }
[ -f "$inst/include/slurm/slurm_version.h" ] ||
	{ log "headers not installed"; exit 1; }
touch .topoml-done
log "$ver installed in $inst"
echo "$inst"
