#!/bin/bash
# The Debian packages on Debian 13 (trixie, Slurm 24.11), the release where
# slurm-wlm-topoml-topology-plugin is built.  In a trixie chroot made by
# debootstrap and kept in $TOPOML_CACHE/trixie (base system, Build-Depends,
# Slurm's daemons, lintian and the downloaded .debs stay between runs):
#   1. the source package of this tree: debian/make-orig.sh with trixie's
#      slurm-wlm orig tarball as the orig-slurm component, dpkg-source -b;
#   2. built from the .dsc, offline (no network), Build-Depends checked,
#      then lintian (errors fail);
#   3. dpkg -i of every .deb beside trixie's slurmctld, slurmd and munge;
#      the topology plugin's Depends name exactly the Slurm release;
#   4. a cluster in the chroot (munged, slurmctld, two slurmd; network,
#      pid and host name of its own: no host port used, no daemon left):
#      slurmctld loads TopologyPlugin=topology/topoml from its PluginDir
#      and wraps topology/tree, srun -N2 hostname is placed by the engine,
#      scontrol show topology shows the engine's model;
#   5. dpkg --purge leaves no file behind.
# A release check, not in CI (.ci/run): it downloads trixie (about 9.5
# minutes from an empty cache, 3.5 to 4.5 with the chroot cached, on 2
# shared cores; doc/admin-guide.md "Tests and CI").  Root only.  Here in
# contrib/ beside test-release.sh, not in tests/: it needs the network
# and debootstrap, and is no part of `make check`.
#
# usage: contrib/test-deb-trixie.sh [--refresh]
#   --refresh  apt-get update and upgrade the cached chroot first
# env: TOPOML_CACHE (default /var/cache/topoml), MIRROR (default
#      http://deb.debian.org/debian), KEEP=1 keeps the build directory
#      ($TOPOML_CACHE/trixie/root/build)
# SPDX-License-Identifier: GPL-2.0-or-later
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${TOPOML_CACHE:-/var/cache/topoml}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
root=$CACHE/trixie/root
refresh=0
[ "${1:-}" = --refresh ] && refresh=1
t0=$(date +%s)
log() { echo "test-deb-trixie: [$(($(date +%s) - t0))s] $*"; }
fail() { echo "test-deb-trixie: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] ||
	{ echo "SKIP: needs root (debootstrap, chroot)"; exit 77; }
command -v debootstrap >/dev/null ||
	apt-get install -y -qq debootstrap >/dev/null ||
	{ echo "SKIP: no debootstrap"; exit 77; }

# in_chroot [-n] CMD...: CMD in the chroot, in mount, pid, ipc and uts
# namespaces of its own (-n: a network one too, with no way out).  /dev,
# /proc, /sys, /run and /tmp are mounted for it and go with it; every
# process it leaves is killed when it ends (its pid namespace ends).
in_chroot() {
	local net=
	[ "$1" = -n ] && { net=--net; shift; }
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	# shellcheck disable=SC2016
	unshare --mount --pid --ipc --uts --fork --kill-child $net -- \
		/bin/bash -euc '
		r=$1 net=$2; shift 2
		mount --rbind /dev "$r/dev"
		mount -t proc proc "$r/proc"
		mount -t sysfs sysfs "$r/sys"
		mount -t tmpfs tmpfs "$r/run"
		mount -t tmpfs tmpfs "$r/tmp"
		if [ -n "$net" ]; then
			# Slurm binds with AI_ADDRCONFIG, which wants an address
			# besides loopback: a veth pair that leads nowhere.
			ip link set lo up
			ip link add tml0 type veth peer name tml1
			ip addr add 10.254.0.1/24 dev tml0
			ip link set tml0 up
			ip link set tml1 up
		fi
		hostname topomltest
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
		' bash "$root" "$net" "$@"
}

# ---- the chroot (cached) ----
if [ ! -f "$root/.topoml-ready" ]; then
	log "debootstrap trixie from $MIRROR into $root"
	rm -rf "$root" "$root.new"
	mkdir -p "$CACHE/trixie"
	debootstrap --variant=minbase trixie "$root.new" "$MIRROR" \
		>"$CACHE/trixie/debootstrap.log" 2>&1 ||
		{ tail -20 "$CACHE/trixie/debootstrap.log"; fail "debootstrap"; }
	mv "$root.new" "$root"
	# Packages start no service in the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	printf '%s\n' "Types: deb deb-src" "URIs: $MIRROR" "Suites: trixie" \
		"Components: main" \
		"Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
		>"$root/etc/apt/sources.list.d/debian.sources"
	rm -f "$root/etc/apt/sources.list"
	echo '127.0.0.1 topomltest' >>"$root/etc/hosts"
	refresh=1
fi
if [ $refresh = 1 ]; then
	log "apt-get update, upgrade and the test's packages"
	in_chroot apt-get update -qq
	in_chroot apt-get -y -qq dist-upgrade >/dev/null
	in_chroot apt-get install -y -qq --no-install-recommends \
		build-essential dpkg-dev debhelper lintian xz-utils \
		procps slurmctld slurmd slurm-client munge >/dev/null
	touch "$root/.topoml-ready"
fi
# slurmctld's version is libslurm-dev's (one source), installed or not yet.
slurm_ver=$(in_chroot dpkg-query -W -f='${Version}' slurmctld)
slurm_up=$(echo "$slurm_ver" | sed 's/^[0-9]*://; s/-[^-]*$//')
log "trixie's Slurm: $slurm_ver"

# ---- the source package ----
rm -rf "$root/build"
mkdir -p "$root/build/src"
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
uver=${ver%-*}
src=$root/build/src/topoml-$uver
mkdir -p "$src"
# The tree as it is (tracked and untracked files, not ignored ones),
# without an unpacked Slurm or earlier package builds.
(cd "$top" && git ls-files -co --exclude-standard 2>/dev/null ||
	find . -path ./.git -prune -o -type f -print) |
	grep -Ev '^(\./)?(slurm|\.git|debian/(tmp|build|slurm-build))(/|$)' |
	grep -Ev '^(\./)?debian/\.debhelper(/|$)' |
	tar -C "$top" -cf - -T - | tar -C "$src" -xf -
# Trixie's slurm-wlm orig tarball from the pool (deb.debian.org may serve
# no .dsc, so not apt-get source): the release libslurm-dev is.
orig=$CACHE/trixie/slurm-wlm_$slurm_up.orig.tar.gz
if [ ! -f "$orig" ]; then
	log "fetching slurm-wlm $slurm_up's orig tarball"
	in_chroot apt-get update -qq
	uri=$(in_chroot apt-get source --print-uris -qq "slurm-wlm=$slurm_ver" |
		awk '$2 ~ /\.orig\.tar\./ { print $1, $2, $4 }' | tr -d "'")
	[ -n "$uri" ] || fail "no orig tarball of slurm-wlm $slurm_ver"
	set -- $uri
	in_chroot /usr/lib/apt/apt-helper -qq -o APT::Sandbox::User=root \
		download-file "$1" "/build/$2" "$3"
	mv "$root/build/$2" "$orig"
fi
cp "$orig" "$root/build/"
log "Build-Depends (apt-get build-dep)"
in_chroot apt-get build-dep -y -qq "/build/src/topoml-$uver" >/dev/null
log "source package (make-orig.sh --slurm-tarball, dpkg-source -b)"
in_chroot -n /bin/bash -ec "cd /build/src/topoml-$uver
	debian/make-orig.sh --unpack \
		--slurm-tarball /build/$(basename "$orig") >/dev/null
	cd .. && dpkg-source -b topoml-$uver >/dev/null
	mv topoml_$uver* /build/"
dsc=topoml_$ver.dsc
[ -f "$root/build/$dsc" ] || fail "no $dsc"

# ---- the binary packages, from the .dsc, offline ----
log "dpkg-buildpackage from $dsc (no network)"
in_chroot -n /bin/bash -ec "cd /build
	dpkg-source -q -x $dsc pkg >/dev/null
	cd pkg && dpkg-buildpackage -us -uc -j${JOBS:-2} >../build.log 2>&1" ||
	{ tail -30 "$root/build/build.log"; fail "dpkg-buildpackage"; }
mapfile -t debs < <(cd "$root/build" && ls ./*.deb)
printf '  %s\n' "${debs[@]#./}"
topo_deb=$(ls "$root"/build/slurm-wlm-topoml-topology-plugin_*.deb) ||
	fail "no slurm-wlm-topoml-topology-plugin .deb"
ma=$(in_chroot dpkg-architecture -qDEB_HOST_MULTIARCH)
files=$(dpkg-deb -c "$topo_deb")
grep -q "\./usr/lib/$ma/slurm-wlm/topology_topoml\.so$" <<<"$files" ||
	fail "topology_topoml.so not in $(basename "$topo_deb")"
dep=$(dpkg-deb -f "$topo_deb" Depends)
next=$(echo "$slurm_up" | awk -F. '{ printf "%s.%s.%d", $1, $2, $3 + 1 }')
bp=slurm-wlm-basic-plugins
case "$dep" in
*"$bp (>= $slurm_up), $bp (<< $next~)"*) ;;
*) fail "topology plugin Depends: $dep" ;;
esac
log "lintian"
in_chroot -n /bin/bash -c "cd /build && HOME=/tmp runuser -u nobody -- \
	lintian --fail-on error topoml_${ver}_*.changes" \
	>"$root/build/lintian.log" 2>&1 ||
	{ cat "$root/build/lintian.log"; fail "lintian errors"; }
sed 's/^/  /' "$root/build/lintian.log"

# ---- install, run, purge ----
cat >"$root/build/check.sh" <<'EOF'
#!/bin/bash
# In the chroot, as PID 1 of its namespaces: no daemon outlives it.
set -eu
fail() { echo "FAIL: $*"; for f in /var/log/topoml-test/*.log; do
	echo "== $f"; tail -15 "$f"; done; exit 1; }
pkgs=$(cd /build && ls ./*.deb | sed 's,^\./,,; s,_.*,,')
snap() {
	find /etc /usr /var /opt -xdev \
		-path /var/lib/dpkg -prune -o -path /var/lib/apt -prune -o \
		-path /var/cache -prune -o -path /var/log -prune -o \
		-path /var/spool -prune -o -path /var/lib/ucf -prune -o \
		-path /var/lib/python -prune -o -print | LC_ALL=C sort
}
# What an interrupted run left; Slurm's configuration (the site's, not
# the packages'); then the snapshot that purge must bring back.
# shellcheck disable=SC2086
dpkg --purge $pkgs >/dev/null 2>&1 || true
rm -rf /var/spool/topoml-test /var/log/topoml-test
d=/etc/slurm
cat >$d/slurm.conf <<'CONF'
ClusterName=trixie
SlurmctldHost=topomltest
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/topoml-test/state
SlurmdSpoolDir=/var/spool/topoml-test/%n
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
SlurmctldLogFile=/var/log/topoml-test/slurmctld.log
SlurmdLogFile=/var/log/topoml-test/slurmd-%n.log
SlurmctldDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
TopologyPlugin=topology/topoml
NodeName=n1 NodeHostname=topomltest NodeAddr=127.0.0.1 Port=17001 CPUs=1
NodeName=n2 NodeHostname=topomltest NodeAddr=127.0.0.1 Port=17002 CPUs=1
PartitionName=p Nodes=n[1-2] Default=YES MaxTime=5 State=UP
CONF
printf 'CgroupPlugin=disabled\n' >$d/cgroup.conf
printf '%s\n' 'SwitchName=s1 Nodes=n1' 'SwitchName=s2 Nodes=n2' \
	'SwitchName=top Switches=s[1-2]' >$d/topology.conf
printf 'Debug=1\n' >$d/topoml.conf
mkdir -p /var/spool/topoml-test/state /var/log/topoml-test
mkdir -p /run/munge && chown munge:munge /run/munge
[ -s /etc/munge/munge.key ] ||
	runuser -u munge -- mungekey --create >/dev/null
runuser -u munge -- munged || fail "munged"
snap >/build/before.lst

cd /build
dpkg -i ./*.deb >/build/install.log 2>&1 ||
	{ cat /build/install.log; fail "dpkg -i"; }
echo "installed: $(echo $pkgs)"

slurmctld || fail "slurmctld"
slurmd -N n1 && slurmd -N n2 || fail "slurmd"
alive() { pgrep -x slurmctld >/dev/null || fail "slurmctld died"; }
for _ in $(seq 60); do
	alive
	[ "$(timeout 10 sinfo -h -o %T 2>/dev/null | sort -u)" = idle ] && break
	sleep 1
done
[ "$(timeout 10 sinfo -h -o %T | sort -u)" = idle ] ||
	fail "nodes not idle: $(timeout 10 sinfo)"

plugdir=$(scontrol show config | awk '$1 == "PluginDir" { print $3 }')
so=$(dpkg -L slurm-wlm-topoml-topology-plugin | grep '/topology_topoml\.so$')
[ "$(dirname "$so")" = "$plugdir" ] ||
	fail "topology_topoml.so in $(dirname "$so"), slurmctld's PluginDir $plugdir"
[ "$(scontrol show config | awk '$1 == "TopologyPlugin" { print $3 }')" = \
  topology/topoml ] || fail "TopologyPlugin is not topology/topoml"
grep -q 'topology/topoml: wraps topology/tree' \
	/var/log/topoml-test/slurmctld.log ||
	fail "slurmctld did not load topology/topoml"
echo "ok: slurmctld loaded $so (wraps topology/tree)"

out=$(timeout 60 srun -N2 -J two hostname) || fail "srun -N2 hostname"
[ "$(echo "$out" | grep -c '^topomltest$')" = 2 ] || fail "srun: '$out'"
grep -q 'topology/topoml: eval_nodes JobId=1 rc=0' \
	/var/log/topoml-test/slurmctld.log ||
	fail "job 1 not placed by the engine: $(grep -i topoml \
		/var/log/topoml-test/slurmctld.log | tail -5)"
echo "ok: srun -N2 hostname, placed by topology/topoml:" \
	"$(scontrol show job 1 | grep -o 'SystemComment=.*')"
topo=$(scontrol show topology)
echo "$topo" | grep -q '^SwitchName=s1 .*Nodes=n1' &&
	echo "$topo" | grep -q '^topoml model: fat-tree: 2 nodes' ||
	fail "scontrol show topology: $topo"
echo "ok: scontrol show topology: $(echo "$topo" | grep '^topoml model')"

# Stop the daemons before the plugins go.
scontrol shutdown >/dev/null
for _ in $(seq 30); do
	pgrep -x 'slurmctld|slurmd' >/dev/null || break
	sleep 1
done
# shellcheck disable=SC2086
dpkg --purge $pkgs >/build/purge.log 2>&1 ||
	{ cat /build/purge.log; fail "dpkg --purge"; }
snap >/build/after.lst
left=$(LC_ALL=C comm -13 /build/before.lst /build/after.lst)
[ -z "$left" ] || fail "left after purge: $left"
gone=$(LC_ALL=C comm -23 /build/before.lst /build/after.lst)
[ -z "$gone" ] || fail "gone after purge: $gone"
echo "ok: dpkg --purge left nothing"
rm -rf /etc/slurm/slurm.conf /etc/slurm/cgroup.conf /etc/slurm/topology.conf \
	/etc/slurm/topoml.conf /var/spool/topoml-test /var/log/topoml-test
EOF
log "install, cluster, purge"
in_chroot -n /bin/bash /build/check.sh || fail "in the chroot"
[ "${KEEP:-0}" = 1 ] || rm -rf "$root/build"
log "PASS"
